//! `pktflow run CONFIG --threads N` on a configuration's own tasks, as `click -j N` runs them
//! (`pktflow_runtime::tasks`): Click's multithreaded replay configuration (one FromDump per
//! thread, StaticThreadSched, a DriverManager printing the counters) runs on its threads with
//! every output equal to the one-thread run of the same file, per-thread counts right; a
//! pipeline whose queue is pulled on another thread hands its packets over through the rings;
//! bad thread hints are refused in one line.
mod common;

use pktflow_profile::app::load_app;
use pktflow_profile::run::{packets, Source};
use pktflow_runtime::api::{run, Request};
use pktflow_traffic::{PcapReader, TracePacket};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

fn tmp(name: &str) -> PathBuf {
    common::tmp_dir("tk", name)
}

use common::write_trace;

/// `n` synthetic router packets (IPv4 over Ethernet, some ARP), seed `seed`.
fn trace(path: &Path, n: u64, seed: u64) -> u64 {
    let a = load_app("router").unwrap();
    let pkts: Vec<TracePacket> = packets(&a, &Source::Synthetic { packets: n, seed })
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    write_trace(path, &pkts);
    pkts.len() as u64
}

/// One router-like pipeline `k`: FromDump of `tK.pcap`, a Counter, the IP path, a Queue and a
/// ToDump pulling from it (a pull task), IP and non-IP packets counted apart.
fn pipeline(k: usize) -> String {
    format!(
        "fd{k} :: FromDump(t{k}.pcap, STOP true) -> c{k} :: Counter -> cl{k} :: Classifier(12/0800, -);
         cl{k} [0] -> Strip(14) -> CheckIPHeader -> ttl{k} :: DecIPTTL
           -> EtherEncap(0x0800, 00:00:00:00:00:0{k}, 00:00:00:00:01:0{k}) -> ip{k} :: Counter
           -> q{k} :: Queue(100000) -> td{k} :: ToDump(out{k}.pcap);
         cl{k} [1] -> other{k} :: Counter -> Discard;
         ttl{k} [1] -> expired{k} :: Counter -> Discard;\n"
    )
}

/// The two-pipeline configuration with the thread hints `sched`, in `dir` beside its traces.
fn config(dir: &Path, sched: &str) -> PathBuf {
    let text = format!(
        "{}{}StaticThreadSched({sched});
         DriverManager(wait, wait, print \"c0 $(c0.count) c1 $(c1.count) sum $(add $(c0.count) $(c1.count))\", stop);\n",
        pipeline(0),
        pipeline(1)
    );
    let p = dir.join(format!("two-{}.click", sched.len()));
    std::fs::write(&p, text).unwrap();
    p
}

fn go(config: &Path, out: &Path, threads: usize) -> Result<Value, String> {
    let v = json!({
        "app": config.display().to_string(),
        "out_dir": out.display().to_string(),
        "threads": threads,
        "ring_slots": 4,
        "batch": 3,
    });
    let r = run(&Request::from_json(&v.to_string())?, &mut |_| {})?;
    assert_eq!(r["balance"]["conserved"], true, "{}", r["balance"]);
    Ok(r)
}

fn stat(r: &Value, element: &str, key: &str) -> u64 {
    r["element_stats"][element][key]
        .as_u64()
        .unwrap_or_else(|| panic!("{element}.{key} in {}", r["element_stats"]))
}

/// Click's recorded behaviour on the two-pipeline configuration of
/// [`two_pipelines_one_per_thread_do_what_one_thread_does`] (`click -j 2`, Click 2.1 userlevel,
/// multithread build, on the same traces): what its DriverManager printed, and per output file
/// the records and a digest of their bytes ([`digest`]; Click's ToDump stamps packets of time 0
/// with the wall clock, so the timestamps are left out).
const CLICK_J2_LINE: &str = "c0 1500 c1 2100 sum 3600";
const CLICK_J2_OUTPUTS: [(&str, usize, u64); 2] = [
    ("out0.pcap", 1490, 0x670f780dc3422e1d),
    ("out1.pcap", 2085, 0xaf64116ccbc23e64),
];

/// FNV-1a (64 bits) over each record's length (4 bytes, little-endian) and bytes.
fn digest(records: &[Vec<u8>]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for r in records {
        for b in (r.len() as u32).to_le_bytes().iter().chain(r) {
            h ^= *b as u64;
            h = h.wrapping_mul(0x100000001b3);
        }
    }
    h
}

/// The lines the DriverManager printed.
fn printed(r: &Value) -> Vec<String> {
    r["element_stats"]
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.starts_with("DriverManager"))
        .and_then(|(_, v)| v["output"].as_array())
        .map(|a| a.iter().map(|l| l.as_str().unwrap().to_string()).collect())
        .unwrap_or_default()
}

fn records(p: &Path) -> Vec<Vec<u8>> {
    PcapReader::open(p)
        .unwrap()
        .map(|t| t.unwrap().data)
        .collect()
}

/// The inputs of a two-pipeline run: 1,500 and 2,100 packets.
fn inputs(tag: &str) -> (PathBuf, u64, u64) {
    let dir = tmp(tag);
    let n0 = trace(&dir.join("t0.pcap"), 1500, 1);
    let n1 = trace(&dir.join("t1.pcap"), 2100, 2);
    (dir, n0, n1)
}

#[test]
fn two_pipelines_one_per_thread_do_what_one_thread_does() {
    let (dir, n0, n1) = inputs("share-nothing");
    let conf = config(&dir, "fd0 0, fd1 1, td1 1");
    let one = go(&conf, &dir.join("one"), 1).unwrap();
    let two = go(&conf, &dir.join("two"), 2).unwrap();
    // Every output file byte for byte.
    for f in ["out0.pcap", "out1.pcap"] {
        let (a, b) = (
            std::fs::read(dir.join("one").join(f)).unwrap(),
            std::fs::read(dir.join("two").join(f)).unwrap(),
        );
        assert!(a.len() > 24 * 10, "{f}: packets written");
        assert!(a == b, "{f} differs from the one-thread run");
    }
    // Every counter, and the DriverManager's line, as on one thread.
    for r in [&one, &two] {
        assert_eq!(stat(r, "c0", "count"), n0);
        assert_eq!(stat(r, "c1", "count"), n1);
    }
    assert_eq!(printed(&one), printed(&two));
    let line = printed(&two)[0].clone();
    assert_eq!(line, format!("c0 {n0} c1 {n1} sum {}", n0 + n1));
    // And what Click does with the same file on two threads.
    assert_eq!(line, CLICK_J2_LINE);
    for (f, n, h) in CLICK_J2_OUTPUTS {
        let r = records(&dir.join("two").join(f));
        assert_eq!((r.len(), digest(&r)), (n, h), "{f} against click -j 2");
    }
    for r in [&one, &two] {
        assert_eq!(r["source"], "the configuration's own sources (fd0, fd1)");
    }
    // Per thread: its own source's packets, its own tasks, nothing handed between threads.
    assert_eq!(two["packets"]["per_thread_from_source"], json!([n0, n1]));
    let th = &two["timing"]["threads"];
    assert_eq!(th[0]["tasks"], json!(["fd0", "td0"]));
    assert_eq!(th[1]["tasks"], json!(["fd1", "td1"]));
    assert_eq!(two["balance"]["handed_between_threads"], 0);
    assert_eq!(two["timing"]["rings"], json!([]));
    let stages = &two["placement"]["stages"];
    assert!(stages[1]["elements"]
        .as_array()
        .unwrap()
        .contains(&json!("q1")));
    assert!(two["settings"]["dispatch"]
        .as_str()
        .unwrap()
        .contains("StaticThreadSched"));
    // Per-thread element statistics: each thread's own pipeline.
    let per = two["element_stats_per_thread"].as_array().unwrap();
    assert_eq!(per[0]["c0"]["count"], n0);
    assert!(per[0].get("c1").is_none());
    assert_eq!(per[1]["c1"]["count"], n1);
}

#[test]
fn a_queue_pulled_on_another_thread_gets_its_packets_through_the_rings() {
    // td1, not named, runs on thread 0 (Click's default): pipeline 1's queue with it, so
    // thread 1 hands every packet for q1 to thread 0.
    let (dir, n0, n1) = inputs("cross");
    let conf = config(&dir, "fd0 0, fd1 1");
    let one = go(&conf, &dir.join("one"), 1).unwrap();
    let two = go(&conf, &dir.join("two"), 2).unwrap();
    for f in ["out0.pcap", "out1.pcap"] {
        assert_eq!(
            records(&dir.join("one").join(f)),
            records(&dir.join("two").join(f)),
            "{f}"
        );
    }
    let ip1 = stat(&one, "ip1", "count");
    assert!(ip1 > 1000);
    assert_eq!(stat(&two, "ip1", "count"), ip1);
    assert_eq!(stat(&two, "c1", "count"), n1);
    assert_eq!(stat(&two, "c0", "count"), n0);
    assert_eq!(two["balance"]["handed_between_threads"], ip1);
    assert_eq!(two["balance"]["received_from_threads"], ip1);
    assert_eq!(
        two["timing"]["threads"][0]["tasks"],
        json!(["fd0", "td0", "td1"])
    );
    let rings = two["timing"]["rings"].as_array().unwrap();
    assert_eq!(rings.len(), 1, "{rings:?}");
    assert_eq!(
        (rings[0]["from"].clone(), rings[0]["to_thread"].clone()),
        (json!(1), json!(0))
    );
}

#[test]
fn two_sources_into_one_thread_safe_queue() {
    // Click's ThreadSafeQueue: two threads push, one pulls (Unqueue on thread 1).
    let dir = tmp("tsq");
    let text =
        "a :: InfiniteSource(LIMIT 3000, BURST 7) -> ca :: Counter -> q :: ThreadSafeQueue(100000);
                b :: InfiniteSource(LIMIT 2000) -> cb :: Counter -> q;
                q -> u :: Unqueue -> cu :: Counter -> Discard;
                StaticThreadSched(a 0, b 1, u 1);";
    let conf = dir.join("tsq.click");
    std::fs::write(&conf, text).unwrap();
    let r = go(&conf, &dir.join("out"), 2).unwrap();
    assert_eq!(stat(&r, "ca", "count"), 3000);
    assert_eq!(stat(&r, "cb", "count"), 2000);
    assert_eq!(stat(&r, "cu", "count"), 5000);
    assert_eq!(r["packets"]["per_thread_from_source"], json!([3000, 2000]));
    assert_eq!(r["balance"]["handed_between_threads"], 3000);
    // Without hints every task runs on thread 0, as in Click; thread 1 has nothing to do.
    let text = "a :: InfiniteSource(LIMIT 300) -> ca :: Counter -> Discard;
                b :: InfiniteSource(LIMIT 200) -> cb :: Counter -> Discard;";
    let conf = dir.join("plain.click");
    std::fs::write(&conf, text).unwrap();
    let r = go(&conf, &dir.join("out2"), 2).unwrap();
    assert_eq!(r["packets"]["per_thread_from_source"], json!([500, 0]));
    assert_eq!(stat(&r, "cb", "count"), 200);
}

#[test]
fn a_stop_on_one_thread_stops_every_thread() {
    let dir = tmp("stop");
    let text = "a :: InfiniteSource(LIMIT -1) -> ca :: Counter(COUNT_CALL 5000 stop) -> Discard;
                b :: InfiniteSource(LIMIT -1) -> cb :: Counter -> Discard;
                StaticThreadSched(a 0, b 1);";
    let conf = dir.join("stop.click");
    std::fs::write(&conf, text).unwrap();
    let r = go(&conf, &dir.join("out"), 2).unwrap();
    assert_eq!(stat(&r, "ca", "count"), 5000);
    // Thread 1 stopped too, long before its 1,000,000-packet cap.
    assert!(stat(&r, "cb", "count") < 1_000_000);
}

#[test]
fn bad_thread_hints_are_one_line() {
    let (dir, _, _) = inputs("bad");
    for (sched, want) in [
        (
            "fd0 0, fd1 2",
            "thread 2 for 'fd1' is out of range: --threads 2 runs threads 0 to 1",
        ),
        ("fd0 0, nosuch 1", "'nosuch' does not name an element"),
    ] {
        let conf = config(&dir, sched);
        let e = go(&conf, &dir.join("out"), 2).unwrap_err();
        assert!(e.contains(want), "{e}");
        assert!(e.contains(".click:"), "names the file and line: {e}");
        assert!(!e.contains('\n'), "one line: {e}");
        // No file is left behind.
        assert!(!dir.join("out").join("out0.pcap").exists());
    }
}

/// Thread hints on a configuration fed from `--trace`: the I/O thread hands each device's
/// packets to the thread its FromDevice is on; each device's output as on one thread.
#[test]
fn hints_on_trace_fed_devices() {
    let dir = tmp("devices");
    let t = dir.join("in.pcap");
    let n = trace(&t, 3000, 5);
    let text = "fd0 :: FromDevice(eth0) -> c0 :: Counter -> Queue(100000) -> td0 :: ToDevice(eth0);
                fd1 :: FromDevice(eth1) -> c1 :: Counter -> Queue(100000) -> td1 :: ToDevice(eth1);
                StaticThreadSched(fd0 1, td0 1, fd1 0, td1 0);";
    let conf = dir.join("dev.click");
    std::fs::write(&conf, text).unwrap();
    let run_on = |threads: usize, out: &str| {
        let v = json!({
            "app": conf.display().to_string(),
            "trace": t.display().to_string(),
            "input_port": "round-robin",
            "out_dir": dir.join(out).display().to_string(),
            "threads": threads,
        });
        let r = run(&Request::from_json(&v.to_string()).unwrap(), &mut |_| {}).unwrap();
        assert_eq!(r["balance"]["conserved"], true, "{}", r["balance"]);
        r
    };
    let one = run_on(1, "one");
    let two = run_on(2, "two");
    let (c0, c1) = (stat(&one, "c0", "count"), stat(&one, "c1", "count"));
    // The trace's packets, and the neighbours' answers to ARP queries leaving a device.
    assert_eq!(one["packets"]["from_source"], n);
    assert_eq!(
        c0 + c1,
        n + one["packets"]["neighbor_arp_replies"].as_u64().unwrap()
    );
    assert!(c0 > 0 && c1 > 0, "both devices get packets");
    assert_eq!(stat(&two, "c0", "count"), c0);
    assert_eq!(stat(&two, "c1", "count"), c1);
    // Thread 1 runs eth0's pipeline, thread 0 eth1's: each processes its device's packets.
    let th = &two["timing"]["threads"];
    assert_eq!(th[0]["tasks"], json!(["fd1", "td1"]));
    assert_eq!(th[1]["tasks"], json!(["fd0", "td0"]));
    assert_eq!(th[0]["packets_processed"], c1);
    assert_eq!(th[1]["packets_processed"], c0);
    assert_eq!(two["balance"]["handed_between_threads"], 0);
    for f in ["eth0.pcap", "eth1.pcap"] {
        assert_eq!(
            std::fs::read(dir.join("one").join(f)).unwrap(),
            std::fs::read(dir.join("two").join(f)).unwrap(),
            "{f}"
        );
    }
}
