//! Ctrl-C (the process-wide cancellation flag): a functional run and synthetic trace writing
//! stop with `interrupted` and leave no output file. In a test binary of its own because the
//! flag is global.
use pktflow_model::cancel;
use pktflow_profile::run::{profile, write_synthetic, Run, Source};

#[test]
fn interrupted_runs_stop_and_leave_no_files() {
    let d = std::env::temp_dir().join(format!("pktflow-cancel-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let cfg = d.join("dump.click");
    std::fs::write(&cfg, "InfiniteSource -> ToDump(out.pcap);\n").unwrap();

    cancel::request();
    let e = profile(
        "router",
        &Source::Synthetic {
            packets: 50_000,
            seed: 1,
        },
        &d,
        |_| {},
    )
    .unwrap_err();
    assert_eq!(e, cancel::MESSAGE);
    let e = profile(cfg.to_str().unwrap(), &Source::Auto { seed: 1 }, &d, |_| {}).unwrap_err();
    assert_eq!(e, cancel::MESSAGE);
    let f = d.join("t.pcap");
    let e = write_synthetic(f.to_str().unwrap(), 50_000, 1, "router", false).unwrap_err();
    assert_eq!(e, cancel::MESSAGE);
    let left: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        left,
        vec!["dump.click".to_string()],
        "no output, no partial file"
    );

    // A run interrupted part-way stops within a few thousand packets.
    cancel::reset();
    let mut run = Run::start(
        "router",
        &Source::Synthetic {
            packets: 100_000,
            seed: 1,
        },
        &d,
    )
    .unwrap();
    let mut n = 0u64;
    let err = loop {
        if n == 3000 {
            cancel::request();
        }
        match run.next_trace() {
            Ok(Some(_)) => n += 1,
            Ok(None) => panic!("ran to the end despite the request"),
            Err(e) => break e,
        }
    };
    assert_eq!(err, cancel::MESSAGE);
    assert!(n < 3000 + 2048, "stopped after {n} packets");
    cancel::reset();
}
