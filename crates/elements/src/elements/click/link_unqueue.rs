//! `LinkUnqueue(LATENCY, BANDWIDTH)` — a serial link: pulls packets from its input, sends them
//! one at a time at BANDWIDTH (a Click bandwidth: bytes per second, or `10Mbps`, `1MBps`, ...)
//! and delivers each LATENCY seconds after its last bit left, pushing it on.
//!
//! In simulated time (the functional run has no wall clock): the link takes a packet of L
//! bytes when it is free at the time t of the packet being processed; transmission starts at
//! t and ends at t + L / BANDWIDTH (the link is busy until then); the packet's timestamp
//! annotation becomes that end time plus LATENCY, and it is pushed on at once (its fate does
//! not wait: only its timestamp says when it arrives). While the link is busy, packets wait in
//! the queue upstream.
//! Ports: 1 pull input, 1 push output. Read handler `count`.
//! Costs: 8 instructions, a 2 B meta-data read (length), an 8 B meta-data write (timestamp),
//! and an 8 B read and write of the busy-until time (dynamic state object 0).
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Processing};
use crate::elements::click::shaper::parse_bandwidth;
use crate::elements::nat::flow::parse_seconds;
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "LinkUnqueue",
    summary: "a serial link of LATENCY and BANDWIDTH between a queue and the next element",
    make,
};

struct Link {
    latency_ns: u64,
    bytes_per_s: f64,
    free_at_ns: u64,
    count: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "LinkUnqueue";
    let mut a = Args::parse(c, config, &["LATENCY", "BANDWIDTH"]);
    let latency_ns = parse_seconds(
        &a.keyword_or_positional("LATENCY")
            .ok_or("LinkUnqueue: missing argument LATENCY")?,
    )
    .map_err(|e| format!("{c}: LATENCY: {e}"))?;
    let bytes_per_s = parse_bandwidth(
        &a.keyword_or_positional("BANDWIDTH")
            .ok_or("LinkUnqueue: missing argument BANDWIDTH")?,
    )
    .map_err(|e| format!("{c}: BANDWIDTH: {e}"))?;
    a.finish()?;
    Ok(Box::new(Link {
        latency_ns,
        bytes_per_s,
        free_at_ns: 0,
        count: 0,
    }))
}

impl Element for Link {
    fn ports(&self) -> Ports {
        Ports {
            inputs: (1, 1),
            outputs: (1, 1),
            input_processing: Processing::Pull,
            output_processing: Processing::Push,
        }
    }
    fn pulls_actively(&self) -> bool {
        true
    }
    fn pull_ready(&mut self, now_ns: u64) -> bool {
        self.free_at_ns <= now_ns
    }
    fn push(&mut self, _port: usize, mut p: Packet, cx: &mut Cx) {
        cx.instr(8);
        cx.read_meta(2);
        cx.dynamic_state(Read, 0, 0, 8);
        let start = self.free_at_ns.max(cx.now_ns);
        let tx = (p.len() as f64 / self.bytes_per_s * 1e9).ceil() as u64;
        self.free_at_ns = start.saturating_add(tx);
        cx.dynamic_state(Write, 0, 0, 8);
        p.anno.timestamp_ns = self.free_at_ns.saturating_add(self.latency_ns);
        cx.write_meta(8);
        self.count += 1;
        cx.emit(0, p);
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count})
    }
    fn code_size(&self) -> u32 {
        32
    }
}
