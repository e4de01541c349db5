//! The side-by-side inputs for Click (`pktflow_runtime::clickref`), checked by running the
//! written configuration with pktflow itself: it parses, reads every packet of the device files
//! (the trace and the ARP replies put first), holds no packet for an unknown address (the
//! caches are warm), and sends out the same IPv4 packets as `pktflow run` on the trace.
use pktflow_profile::app::load_app;
use pktflow_profile::run::Source;
use pktflow_runtime::api::{run, Request};
use pktflow_runtime::clickref::{write_click_ref, write_click_threads, Sinks};
use pktflow_traffic::{PcapReader, PcapWriter, LINKTYPE_ETHERNET};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pktflow-cr-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn synthetic_trace(app: &str, n: u64, path: &Path) {
    let a = load_app(app).unwrap();
    let src = Source::Synthetic {
        packets: n,
        seed: 3,
    };
    let mut w = PcapWriter::create(path, LINKTYPE_ETHERNET).unwrap();
    for tp in pktflow_profile::run::packets(&a, &src).unwrap() {
        w.write(&tp.unwrap()).unwrap();
    }
    w.finish().unwrap();
}

/// Every IPv4 frame of the pcaps `files`, counted by (file's device, bytes).
fn ipv4(files: &[(String, PathBuf)]) -> BTreeMap<(String, Vec<u8>), u32> {
    let mut m = BTreeMap::new();
    for (dev, f) in files {
        for tp in PcapReader::open(f).unwrap() {
            let tp = tp.unwrap();
            if tp.data.get(12..14) == Some(&[0x08, 0x00][..]) {
                *m.entry((dev.clone(), tp.data)).or_insert(0) += 1;
            }
        }
    }
    m
}

fn go(v: serde_json::Value) -> serde_json::Value {
    let r = run(&Request::from_json(&v.to_string()).unwrap(), &mut |_| {}).unwrap();
    assert_eq!(r["balance"]["conserved"], true, "{}", r["balance"]);
    r
}

#[test]
fn the_click_configuration_does_what_pktflow_run_does_on_the_trace() {
    for app in ["router", "nat"] {
        let dir = tmp(app);
        let trace = dir.join("in.pcap");
        synthetic_trace(app, 1500, &trace);
        let cr = write_click_ref(app, &trace, &dir.join("click"), "x", Sinks::Dump).unwrap();
        assert!(cr.arp_replies > 0, "{app}: the trace makes ARP queries");
        assert_eq!(cr.packets, 1500 + cr.arp_replies);
        for f in std::fs::read_dir(dir.join("click")).unwrap() {
            let f = f.unwrap().file_name().into_string().unwrap();
            assert!(
                !f.ends_with(".tmp") && !f.contains("arp-run"),
                "{app}: {f} left behind"
            );
        }
        let text = std::fs::read_to_string(&cr.config).unwrap();
        assert!(
            !text.contains("FromDevice(") && !text.contains("ToDevice(") && !text.contains('@')
        );
        // pktflow on the trace, the neighbours answering ARP (the far ends off, as in Click).
        let out = dir.join("out");
        go(json!({"app": app, "trace": trace.display().to_string(),
                  "out_dir": out.display().to_string(), "reply_every": 0}));
        // pktflow on the written configuration: its own FromDump sources, no neighbours.
        let r = go(json!({"app": cr.config.display().to_string()}));
        assert_eq!(r["packets"]["from_source"], cr.packets, "{app}");
        // No neighbour answers here: a packet held for an unknown address would stay held.
        // (A query may still be sent: a poll of an entry older than POLL_TIMEOUT.)
        for (k, v) in r["element_stats"].as_object().unwrap() {
            if k.contains("arpq") {
                assert_eq!(v["held"], 0, "{app} {k}: warm from the first packet");
            }
        }
        let devs: Vec<String> = cr.inputs.iter().map(|(d, _)| d.clone()).collect();
        let trace_out: Vec<(String, PathBuf)> = devs
            .iter()
            .map(|d| (d.clone(), out.join(format!("{d}.pcap"))))
            .collect();
        let click_out: Vec<(String, PathBuf)> = devs
            .iter()
            .map(|d| (d.clone(), dir.join("click").join(format!("x-out-{d}.pcap"))))
            .collect();
        let (a, b) = (ipv4(&trace_out), ipv4(&click_out));
        assert!(a.values().sum::<u32>() > 1000, "{app}: packets forwarded");
        assert_eq!(a, b, "{app}: the same IPv4 packets leave each device");
    }
}

#[test]
fn configurations_that_stop_or_feed_themselves_are_refused() {
    let dir = tmp("refused");
    let conf = dir.join("own.click");
    std::fs::write(
        &conf,
        "FromDevice(eth0) -> Queue -> ToDevice(eth0); DriverManager(wait, stop);",
    )
    .unwrap();
    let trace = dir.join("in.pcap");
    synthetic_trace("router", 10, &trace);
    let e = write_click_ref(conf.to_str().unwrap(), &trace, &dir, "x", Sinks::Discard).unwrap_err();
    assert!(e.contains("DriverManager") && !e.contains('\n'), "{e}");
}

/// The two-thread file of the benchmark (`write_click_threads`): two copies of the pipeline,
/// one per thread. `pktflow run --threads 2` runs each copy's FromDumps on its thread and
/// prints the packets of both; each copy forwards what the one-pipeline file forwards.
#[test]
fn the_two_thread_file_runs_one_copy_per_thread() {
    for app in ["router", "nat"] {
        let dir = tmp(&format!("threads-{app}"));
        let trace = dir.join("in.pcap");
        synthetic_trace(app, 1500, &trace);
        let cr = write_click_ref(app, &trace, &dir.join("click"), "x", Sinks::Discard).unwrap();
        let conf = write_click_threads(app, &cr, 2, false).unwrap();
        let text = std::fs::read_to_string(&conf).unwrap();
        assert!(text.contains("StaticThreadSched(p0_"), "{text}");
        if app == "nat" {
            // Pattern names are the configuration's: defined once (Click refuses a second).
            assert_eq!(text.matches("IPRewriterPatterns(").count(), 1);
        }
        let one = go(json!({"app": cr.config.display().to_string()}));
        let two = go(json!({"app": conf.display().to_string(), "threads": 2}));
        assert_eq!(
            two["packets"]["per_thread_from_source"],
            json!([cr.packets, cr.packets]),
            "{app}"
        );
        let st = |r: &serde_json::Value, e: &str| r["element_stats"][e].clone();
        let mut compared = 0;
        for (name, v) in one["element_stats"].as_object().unwrap() {
            if v.get("count").is_some() || v.get("drops").is_some() {
                for k in 0..2 {
                    let copy = format!("p{k}_{}", name.replace('@', "_a"));
                    let c = st(&two, &copy);
                    assert_eq!(c.get("count"), v.get("count"), "{app}: {copy}");
                    assert_eq!(c.get("drops"), v.get("drops"), "{app}: {copy}");
                    compared += 1;
                }
            }
        }
        assert!(compared >= 2, "{app}: counters compared");
        let printed = two["element_stats"]
            .as_object()
            .unwrap()
            .iter()
            .find(|(k, _)| k.starts_with("DriverManager"))
            .map(|(_, v)| v["output"].clone())
            .unwrap();
        assert_eq!(
            printed,
            json!([format!("packets {}", 2 * cr.packets)]),
            "{app}"
        );
    }
}
