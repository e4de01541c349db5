//! The fast build against the recording build, and several threads against one: same outputs.
mod common;

use pktflow_profile::app::load_app;
use pktflow_profile::run::{packets, Source};
use pktflow_runtime::api::{run, Request};
use pktflow_runtime::driver::Driver;
use pktflow_runtime::engine::{Engine, Fast, Recording};
use pktflow_traffic::{PcapReader, TracePacket};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn tmp(name: &str) -> PathBuf {
    common::tmp_dir("rt", name)
}

fn drive<E: Engine>(e: E, app: &str, src: &Source, out: &Path) -> Driver<E> {
    let a = load_app(app).unwrap();
    let mut d = Driver::new(e, &a.graph, Some(out), None).unwrap();
    let mut it = packets(&a, src).unwrap();
    d.run_stream(it.as_mut(), |_| {}).unwrap();
    d.finish().unwrap();
    d
}

fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            (
                p.file_name().unwrap().to_str().unwrap().to_string(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect()
}

fn same_outputs(app: &str, n: u64) {
    let src = Source::Synthetic {
        packets: n,
        seed: 7,
    };
    same_outputs_from(app, &src, app);
}

/// The recording and the fast build write the same files from `src`; the fast run's element
/// statistics.
fn same_outputs_from(app: &str, src: &Source, tag: &str) -> serde_json::Value {
    let a = load_app(app).unwrap();
    let (ra, fa) = (tmp(&format!("{tag}-rec")), tmp(&format!("{tag}-fast")));
    let rec = Recording::new(&a.graph, &a.base_dir, &ra).unwrap();
    drive(rec, app, src, &ra);
    let fast = Fast::new(&a.graph, &a.base_dir, &fa, Arc::default()).unwrap();
    let d = drive(fast, app, src, &fa);
    assert!(d.engine.balance().conserved(), "{:?}", d.engine.balance());
    let (r, f) = (files(&ra), files(&fa));
    assert!(!r.is_empty(), "the recording run wrote nothing");
    assert_eq!(
        r.keys().collect::<Vec<_>>(),
        f.keys().collect::<Vec<_>>(),
        "different output files"
    );
    for (k, v) in &r {
        assert!(v.len() > 24, "{k} holds no packet");
        assert!(
            v == &f[k],
            "{k} differs between the recording and the fast build"
        );
    }
    d.engine.stats()
}

#[test]
fn router_outputs_identical_to_the_recording_run() {
    same_outputs("router", 1500);
}

#[test]
fn nat_outputs_identical_to_the_recording_run() {
    same_outputs("nat", 1500);
}

/// The packets the router's elements make besides ARP queries and copies of replies, which
/// the fast build makes in reused buffers: ICMP errors (time exceeded, fragmentation needed,
/// redirect), fragments, and PaintTee's copies. Synthetic traffic, all entering on eth0 (so
/// packets routed back out of eth0 draw redirects), with some packets' TTL set to 1 and some
/// grown past the 1500-byte MTU, half of those with don't-fragment set.
#[test]
fn router_made_packets_identical_to_the_recording_run() {
    let (dir, trace, _) = edited_router_trace("router-made-in", 1500, |i, d| {
        match i % 6 {
            1 => d[14 + 8] = 1,
            2 | 3 => {
                let total = usize::from(u16::from_be_bytes([d[16], d[17]])) + 1600;
                d.resize(14 + total, 0x61);
                d[16..18].copy_from_slice(&(total as u16).to_be_bytes());
                if i % 6 == 3 {
                    d[14 + 6] |= 0x40;
                }
            }
            _ => return false,
        }
        true
    });
    let src = Source::Pcap {
        path: trace.to_str().unwrap().to_string(),
        input_port: pktflow_profile::run::InputPort::Fixed(0),
    };
    let st = same_outputs_from("router", &src, "router-made");
    let _ = std::fs::remove_dir_all(&dir);
    let sum = |class: &str, key: &str| -> u64 {
        st.as_object()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.starts_with(class))
            .filter_map(|(_, v)| v[key].as_u64())
            .sum()
    };
    eprintln!(
        "ICMP errors sent {}, fragments {}, PaintTee copies {}",
        sum("ICMPError", "sent"),
        sum("fr", "fragments"),
        sum("cp", "copies")
    );
    assert!(sum("ICMPError", "sent") > 100, "{st}");
    assert!(sum("fr", "fragments") > 100, "{st}");
    assert!(sum("cp", "copies") > 100, "{st}");
}

/// A configuration with its own source: FromDump makes each packet in the buffer of one that
/// left (a TTL of 1 dropped, the others written by ToDump), and the files are byte for byte
/// those of the recording run, which makes every packet anew.
#[test]
fn from_dump_config_identical_to_the_recording_run() {
    // Every fifth IPv4 packet expires at DecIPTTL (dropped, its buffer freed).
    let (dir, trace, n) = edited_router_trace("from-dump-in", 1200, |i, d| {
        if i % 5 != 0 {
            return false;
        }
        d[14 + 8] = 1;
        true
    });
    let conf = dir.join("fd.click");
    std::fs::write(
        &conf,
        format!(
            "FromDump({}, STOP true) -> c :: Classifier(12/0800, -);\n\
             c[0] -> Strip(14) -> CheckIPHeader -> dt :: DecIPTTL -> Unstrip(14) -> ToDump(ip.pcap);\n\
             dt[1] -> Discard;\n\
             c[1] -> ToDump(other.pcap);\n",
            trace.display()
        ),
    )
    .unwrap();
    let a = load_app(conf.to_str().unwrap()).unwrap();
    /// The configuration's own packets through `e`; the driver and the files it wrote.
    fn generated<E: Engine>(
        e: E,
        graph: &pktflow_model::AppGraph,
        out: &Path,
        n: usize,
    ) -> (Driver<E>, BTreeMap<String, Vec<u8>>) {
        let mut d = Driver::new(e, graph, Some(out), None).unwrap();
        d.run_generators().unwrap();
        d.finish().unwrap();
        assert_eq!(d.next_id, n as u64, "packets from the FromDump");
        (d, files(out))
    }
    let (ra, fa) = (tmp("from-dump-rec"), tmp("from-dump-fast"));
    let (_, rec) = generated(
        Recording::new(&a.graph, &a.base_dir, &ra).unwrap(),
        &a.graph,
        &ra,
        n,
    );
    let fast_engine = Fast::new(&a.graph, &a.base_dir, &fa, Arc::default()).unwrap();
    let (d, fast) = generated(fast_engine, &a.graph, &fa, n);
    assert!(d.engine.balance().conserved(), "{:?}", d.engine.balance());
    for x in [&dir, &ra, &fa] {
        let _ = std::fs::remove_dir_all(x);
    }
    assert_eq!(rec.keys().collect::<Vec<_>>(), ["ip.pcap", "other.pcap"]);
    assert!(rec["ip.pcap"].len() > 100_000, "{}", rec["ip.pcap"].len());
    assert!(
        rec == fast,
        "the files differ between the recording and the fast build"
    );
}

fn read(path: &Path) -> Vec<TracePacket> {
    PcapReader::open(path)
        .unwrap()
        .map(|r| r.unwrap())
        .collect()
}

/// IPv4 output records grouped by flow (the dispatch hash), in file order. Non-IPv4 frames
/// (ARP) are left out: each thread's copy of the graph has its own ARP table and asks for
/// the next hops itself.
fn per_flow(dir: &Path) -> BTreeMap<(String, u64), Vec<Vec<u8>>> {
    let mut m: BTreeMap<(String, u64), Vec<Vec<u8>>> = BTreeMap::new();
    for (name, _) in files(dir) {
        for tp in read(&dir.join(&name)) {
            if pktflow_runtime::flow::flow_hash(&tp.data) == 0 {
                continue;
            }
            m.entry((name.clone(), pktflow_runtime::flow::flow_hash(&tp.data)))
                .or_default()
                .push(tp.data);
        }
    }
    m
}

fn request(app: &str, trace: &Path, out: &Path, threads: usize) -> Request {
    common::request_with(app, trace, out, threads, serde_json::json!({}))
}

use common::write_trace;

/// `n` packets of `router`'s synthetic traffic written to `<tmp tag>/in.pcap`, each IPv4 one
/// first given to `edit(index, frame)`; an edited frame (`edit` returns true) gets its IP
/// header checksum and wire length made right again. The folder, the trace and `n`.
fn edited_router_trace(
    tag: &str,
    n: u64,
    mut edit: impl FnMut(usize, &mut Vec<u8>) -> bool,
) -> (PathBuf, PathBuf, usize) {
    let dir = tmp(tag);
    let trace = dir.join("in.pcap");
    let mut pkts = synthetic("router", n);
    for (i, p) in pkts.iter_mut().enumerate() {
        let d = &mut p.data;
        if d.len() < 34 || d[12..14] != [0x08, 0x00] || !edit(i, d) {
            continue;
        }
        let hl = usize::from(d[14] & 0xf) * 4;
        d[24..26].fill(0);
        let s = pktflow_traffic::ip_checksum(&d[14..14 + hl]);
        d[24..26].copy_from_slice(&s.to_be_bytes());
        p.orig_len = d.len() as u32;
    }
    write_trace(&trace, &pkts);
    (dir, trace, pkts.len())
}

fn synthetic(app: &str, n: u64) -> Vec<TracePacket> {
    let a = load_app(app).unwrap();
    packets(
        &a,
        &Source::Synthetic {
            packets: n,
            seed: 11,
        },
    )
    .unwrap()
    .map(|r| r.unwrap())
    .collect()
}

/// Many flows: N threads give, per flow, the packets of one thread in the same order, and every
/// packet is accounted for.
#[test]
fn router_threads_keep_per_flow_order_many_flows() {
    let dir = tmp("many");
    let trace = dir.join("in.pcap");
    let pkts = synthetic("router", 3000);
    write_trace(&trace, &pkts);
    let (o1, o3) = (tmp("many-1"), tmp("many-3"));
    let r1 = run(&request("router", &trace, &o1, 1), &mut |_| {}).unwrap();
    let r3 = run(&request("router", &trace, &o3, 3), &mut |_| {}).unwrap();
    for r in [&r1, &r3] {
        assert_eq!(r["balance"]["conserved"], true, "{}", r["balance"]);
        assert_eq!(r["packets"]["from_source"], 3000);
    }
    let per: Vec<u64> =
        serde_json::from_value(r3["packets"]["per_thread_from_source"].clone()).unwrap();
    assert_eq!(per.len(), 3);
    assert!(per.iter().filter(|&&c| c > 0).count() >= 2, "{per:?}");
    let (f1, f3) = (per_flow(&o1), per_flow(&o3));
    assert!(!f1.is_empty());
    assert_eq!(f1, f3);
}

/// One hot flow: everything goes to one thread, in order, nothing lost.
#[test]
fn router_threads_one_hot_flow() {
    let dir = tmp("hot");
    let trace = dir.join("in.pcap");
    let pkts = synthetic("router", 200);
    let hot = common::numbered_hot_flow(&pkts, 2000);
    write_trace(&trace, &hot);
    let (o1, o2) = (tmp("hot-1"), tmp("hot-2"));
    run(&request("router", &trace, &o1, 1), &mut |_| {}).unwrap();
    let r2 = run(&request("router", &trace, &o2, 2), &mut |_| {}).unwrap();
    assert_eq!(r2["balance"]["conserved"], true);
    let per: Vec<u64> =
        serde_json::from_value(r2["packets"]["per_thread_from_source"].clone()).unwrap();
    assert!(
        per.contains(&2000),
        "one thread takes the hot flow: {per:?}"
    );
    // The sequence numbers leave in order.
    let out = files(&o2);
    let mut seqs = Vec::new();
    for name in out.keys() {
        for tp in read(&o2.join(name)) {
            if tp.data.len() == hot[0].data.len() {
                let n = tp.data.len();
                seqs.push(u32::from_be_bytes(tp.data[n - 4..].try_into().unwrap()));
            }
        }
    }
    assert!(seqs.len() > 1000, "{} of 2000 forwarded", seqs.len());
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "hot flow reordered");
    assert_eq!(per_flow(&o1), per_flow(&o2));
}

/// NAT with threads sharing the rewriters' tables: the same flows get mappings as on one
/// thread, every mapping made once. ICMP goes through the IPAddrRewriter, whose mappings are
/// keyed by the inside address alone while packets are spread by the symmetric (source,
/// destination) hash: pings of one inside host to two destinations run on two threads, and
/// only a table shared by the copies keeps them on one mapping (with a table per copy, each
/// thread mapped that host again: one mapping more than on one thread).
#[test]
fn nat_threads_same_set_of_mappings() {
    let dir = tmp("nat");
    let trace = dir.join("in.pcap");
    write_trace(&trace, &synthetic("nat", 3000));
    let (o1, o2) = (tmp("nat-1"), tmp("nat-2"));
    // The far ends' replies are counted per thread (every second IP packet a thread sends):
    // off here, so both runs see the same packets.
    let off = serde_json::json!({"reply_every": 0});
    let r1 = run(
        &common::request_with("nat", &trace, &o1, 1, off.clone()),
        &mut |_| {},
    )
    .unwrap();
    let r2 = run(
        &common::request_with("nat", &trace, &o2, 2, off),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r2["balance"]["conserved"], true);
    // Per rewriter: (mappings made, summed over the threads; live table size, the largest a
    // thread reports: one shared table, so all report the same).
    let created = |r: &serde_json::Value| -> BTreeMap<String, (u64, u64)> {
        let stats: Vec<serde_json::Value> = match r.get("element_stats_per_thread") {
            Some(v) => serde_json::from_value(v.clone()).unwrap(),
            None => vec![r["element_stats"].clone()],
        };
        let mut m: BTreeMap<String, (u64, u64)> = BTreeMap::new();
        for s in &stats {
            for (name, e) in s.as_object().unwrap() {
                if let (Some(c), Some(t)) = (e.get("created"), e.get("table_size")) {
                    let x = m.entry(name.clone()).or_default();
                    x.0 += c.as_u64().unwrap();
                    x.1 = x.1.max(t.as_u64().unwrap());
                }
            }
        }
        m
    };
    let (m1, m2) = (created(&r1), created(&r2));
    eprintln!("per rewriter (mappings made, live table): one thread {m1:?}, two threads {m2:?}");
    assert!(m1["rw"].0 > 10, "the trace made {:?} mappings", m1["rw"]);
    assert!(
        m1["irw"].0 > 0,
        "the trace has ICMP that the IPAddrRewriter maps: {m1:?}"
    );
    // IPRewriter's mappings: the same made and live. IPAddrRewriter's pattern hands out one fixed
    // address, and as in Click a new inside host replaces the mapping that holds it, so how many
    // mappings it makes depends on how the hosts' packets interleave across the threads (38 or
    // 40 on this trace): only its live table must agree.
    assert_eq!(
        m1["rw"], m2["rw"],
        "IPRewriter mappings made and live, one thread against two"
    );
    assert_eq!(m1.len(), m2.len(), "{m1:?} {m2:?}");
    assert_eq!(
        m1["irw"].1, m2["irw"].1,
        "IPAddrRewriter live table: {m1:?} {m2:?}"
    );
    assert!(m2["irw"].0 > 0);
    assert!(per_flow(&o2).len() >= per_flow(&o1).len());
}
