//! The element-group executor allocates nothing per packet on its way from the trace to a worker
//! or for its batches: on one thread, `--model pipeline` makes no more heap allocations per
//! packet than the plain run, apart from one buffer per neighbour answer (handed to the worker
//! as a packet of its own instead of reusing the driver's spare buffers). Counted with a
//! counting allocator (a binary of its own: the allocator is global) as the difference between
//! a run of 20,000 and one of 60,000 packets, so setup costs cancel; the batches a ring makes
//! before it has its working set depend on the threads' timing, and are few.
use pktflow_profile::app::load_app;
use pktflow_profile::run::{packets, Source};
use pktflow_runtime::api::{run, Request};
use pktflow_traffic::{PcapWriter, LINKTYPE_ETHERNET};
use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

struct Counting;
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: the system allocator's, with a count of allocations.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// Allocations of one run, and its JSON result.
fn counted(trace: &Path, model: &str) -> (u64, Value) {
    let req = Request::from_json(
        &json!({"app": "router", "trace": trace.to_str().unwrap(), "threads": 1, "model": model})
            .to_string(),
    )
    .unwrap();
    let a0 = ALLOCATIONS.load(Ordering::Relaxed);
    let r = run(&req, &mut |_| {}).unwrap();
    (ALLOCATIONS.load(Ordering::Relaxed) - a0, r)
}

fn find_u64(v: &Value, key: &str) -> Option<u64> {
    match v {
        Value::Object(m) => m
            .get(key)
            .and_then(Value::as_u64)
            .or_else(|| m.values().find_map(|x| find_u64(x, key))),
        Value::Array(a) => a.iter().find_map(|x| find_u64(x, key)),
        _ => None,
    }
}

#[test]
fn pipeline_on_one_thread_allocates_per_packet_only_for_the_answers() {
    let dir = std::env::temp_dir().join(format!("pktflow-staged-allocs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let app = load_app("router").unwrap();
    let sizes = [20_000u64, 60_000];
    let mut per = Vec::new();
    for n in sizes {
        let trace = dir.join(format!("router-{n}.pcap"));
        let mut w = PcapWriter::create(&trace, LINKTYPE_ETHERNET).unwrap();
        for p in packets(
            &app,
            &Source::Synthetic {
                packets: n,
                seed: 1,
            },
        )
        .unwrap()
        {
            w.write(&p.unwrap()).unwrap();
        }
        w.finish().unwrap();
        let (plain, _) = counted(&trace, "rtc");
        let (staged, r) = counted(&trace, "pipeline");
        let answers = find_u64(&r, "neighbor_arp_replies").unwrap()
            + find_u64(&r, "far_end_ip_replies").unwrap_or(0);
        per.push((plain, staged, answers));
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Per packet: the growth from the short run to the long one.
    let packets = (sizes[1] - sizes[0]) as f64;
    let per_packet =
        |f: fn(&(u64, u64, u64)) -> u64| (f(&per[1]) as f64 - f(&per[0]) as f64) / packets;
    let plain = per_packet(|x| x.0);
    let staged = per_packet(|x| x.1);
    let answers = per_packet(|x| x.2);
    println!("allocations per packet: pipeline {staged:.4}, plain run {plain:.4}, neighbour answers {answers:.4}");
    assert!(
        staged <= plain + answers + 0.02,
        "allocations per packet: pipeline {staged:.3}, plain run {plain:.3}, neighbour answers {answers:.3}: {per:?}"
    );
}
