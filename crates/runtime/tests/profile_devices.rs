//! `pktflow profile --out-dir` and `pktflow run --out-dir` write the same device pcaps: the
//! functional run (`pktflow_profile::run::Run::write_devices`, cost recording on) against the
//! runtime's driver on the fast build, one thread, same synthetic input: every file byte for byte.
use pktflow_profile::app::load_app;
use pktflow_profile::run::{packets, Run, Source};
use pktflow_runtime::driver::Driver;
use pktflow_runtime::engine::Fast;
use pktflow_traffic::PcapReader;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pktflow-pd-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn pcaps(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "pcap"))
        .map(|p| {
            (
                p.file_name().unwrap().to_str().unwrap().to_string(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

fn same_device_pcaps(app: &str, n: u64) {
    let src = Source::Synthetic {
        packets: n,
        seed: 11,
    };
    let (pd, rd) = (tmp(&format!("{app}-profile")), tmp(&format!("{app}-run")));

    let mut run = Run::start(app, &src, &pd).unwrap();
    run.write_devices(&pd).unwrap();
    while run.next_trace().unwrap().is_some() {}
    let written = run.device_outputs.clone();
    assert!(
        !written.is_empty(),
        "{app}: the functional run wrote no device pcap"
    );

    let a = load_app(app).unwrap();
    let fast = Fast::new(&a.graph, &a.base_dir, &rd, Arc::default()).unwrap();
    let mut d = Driver::new(fast, &a.graph, Some(&rd), None).unwrap();
    let mut it = packets(&a, &src).unwrap();
    d.run_stream(it.as_mut(), |_| {}).unwrap();
    let rt_written = d.finish().unwrap();
    assert_eq!(written.len(), rt_written.len());

    let (p, r) = (pcaps(&pd), pcaps(&rd));
    assert_eq!(p.keys().collect::<Vec<_>>(), r.keys().collect::<Vec<_>>());
    let mut records = 0;
    for (k, v) in &p {
        assert!(
            v == &r[k],
            "{app}: {k} differs between pktflow profile and pktflow run"
        );
        records += PcapReader::open(pd.join(k)).unwrap().count();
    }
    assert!(
        records > (n as usize) / 2,
        "{app}: only {records} packets left through devices"
    );
    // No temporary file left behind.
    for d in [&pd, &rd] {
        for e in std::fs::read_dir(d).unwrap() {
            let name = e.unwrap().file_name().into_string().unwrap();
            assert!(
                !name.ends_with(".partial"),
                "{name} left in {}",
                d.display()
            );
        }
    }
    let _ = std::fs::remove_dir_all(&pd);
    let _ = std::fs::remove_dir_all(&rd);
}

#[test]
fn router_device_pcaps_same_in_profile_and_run() {
    same_device_pcaps("router", 2000);
}

#[test]
fn nat_device_pcaps_same_in_profile_and_run() {
    same_device_pcaps("nat", 2000);
}

#[test]
fn an_interrupted_functional_run_leaves_no_device_pcap() {
    let src = Source::Synthetic {
        packets: 3000,
        seed: 3,
    };
    let dir = tmp("dropped");
    {
        let mut run = Run::start("router", &src, &dir).unwrap();
        run.write_devices(&dir).unwrap();
        for _ in 0..100 {
            run.next_trace().unwrap();
        }
        // Dropped before the end of its source (an error or Ctrl-C): nothing is renamed.
    }
    assert!(pcaps(&dir).is_empty());
    let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}
