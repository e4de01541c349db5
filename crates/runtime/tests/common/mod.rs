//! Helpers shared by the runtime's integration tests.
use pktflow_traffic::TracePacket;

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
