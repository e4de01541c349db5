//! `Counter` — counts packets and bytes passing through.
//!
//! Ports: 1 agnostic input, 1 agnostic output. Read handlers `count`, `byte_count`.
//! Costs: 8 instructions; reads the packet length from meta-data (4 B); reads and writes its
//! two counters (persistent static state object 0, keys 0 and 8, 8 B each) — shared state
//! written by every packet, so replicas of a Counter need a critical section.
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "Counter",
    summary: "count packets and bytes",
    make,
};

struct Counter {
    count: u64,
    bytes: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("Counter", config, &[]).finish()?;
    Ok(Box::new(Counter { count: 0, bytes: 0 }))
}

impl Element for Counter {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(2);
        cx.read_meta(4);
        cx.static_state(Read, 0, 0, 8);
        cx.static_state(Read, 0, 8, 8);
        cx.instr(6);
        cx.static_state(Write, 0, 0, 8);
        cx.static_state(Write, 0, 8, 8);
        self.count += 1;
        self.bytes += p.len() as u64;
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count, "byte_count": self.bytes})
    }
    fn code_size(&self) -> u32 {
        24
    }
}
