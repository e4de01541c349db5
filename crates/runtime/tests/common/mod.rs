//! Helpers shared by the runtime's integration tests (each test file uses some of them).
#![allow(dead_code)]
use pktflow_runtime::api::Request;
use pktflow_traffic::{PcapWriter, TracePacket, LINKTYPE_ETHERNET};
use std::path::{Path, PathBuf};

/// A fresh, empty folder `pktflow-{prefix}-PID-{name}` in the temporary directory.
pub fn tmp_dir(prefix: &str, name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pktflow-{prefix}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Write `pkts` to an Ethernet pcap at `path`.
pub fn write_trace(path: &Path, pkts: &[TracePacket]) {
    let mut w = PcapWriter::create(path, LINKTYPE_ETHERNET).unwrap();
    for p in pkts {
        w.write(p).unwrap();
    }
    w.finish().unwrap();
}

/// A run request for `app` on `trace`, outputs in `out`, on `threads` threads with small rings
/// (4 slots of 3-packet batches, so hand-overs wait often), plus the keys of `extra`.
pub fn request_with(
    app: &str,
    trace: &Path,
    out: &Path,
    threads: usize,
    extra: serde_json::Value,
) -> Request {
    let mut v = serde_json::json!({
        "app": app,
        "trace": trace.to_str().unwrap(),
        "out_dir": out.to_str().unwrap(),
        "threads": threads,
        "ring_slots": 4,
        "batch": 3,
    });
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    Request::from_json(&v.to_string()).unwrap()
}

/// One hot flow: `n` copies of the first TCP/UDP packet of `pkts`, 1 us apart, each numbered in
/// its last 4 bytes (big-endian), so the order in which they leave can be read back.
pub fn numbered_hot_flow(pkts: &[TracePacket], n: u32) -> Vec<TracePacket> {
    let base = pkts
        .iter()
        .find(|p| p.data.len() >= 60 && p.data[12..14] == [8, 0] && matches!(p.data[23], 6 | 17))
        .expect("a TCP/UDP packet")
        .clone();
    (0..n)
        .map(|i| {
            let mut p = base.clone();
            p.timestamp_ns = 1_000 * i as u64;
            let len = p.data.len();
            p.data[len - 4..].copy_from_slice(&i.to_be_bytes());
            p
        })
        .collect()
}
