//! `ToDevice(DEVNAME)` — packets leave the graph on an interface.
//!
//! Ports: 1 agnostic input (normally pull, behind a Queue), no outputs. The functional run
//! assumes the interface keeps up: after each input packet it pulls until the queue is empty.
//! Read handler `count`. Costs: 6 instructions, reads 8 B of meta-data (length, buffer). The
//! transmit DMA moves the packet bytes without the processor, so no packet-data access is
//! charged (seed 000 Table 2 counts only what the tasks touch: 23 B of packet buffer for Router).
use crate::conf::{unquote, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Role};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "ToDevice",
    summary: "packets leave on an interface",
    make,
};

struct ToDevice {
    dev: String,
    count: u64,
    bytes: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse(
        "ToDevice",
        config,
        &["DEVNAME", "BURST", "QUIET", "METHOD", "DEBUG"],
    );
    let dev = unquote(
        &a.keyword_or_positional("DEVNAME")
            .ok_or("ToDevice: missing argument DEVNAME")?,
    );
    for k in ["BURST", "QUIET", "METHOD", "DEBUG"] {
        a.keyword(k);
    }
    a.take_all_positional();
    Ok(Box::new(ToDevice {
        dev,
        count: 0,
        bytes: 0,
    }))
}

impl Element for ToDevice {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 0)
    }
    fn role(&self) -> Role {
        Role::Sink
    }
    fn device(&self) -> Option<&str> {
        Some(&self.dev)
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(6);
        cx.read_meta(8);
        self.count += 1;
        self.bytes += p.len() as u64;
        cx.output(p);
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"device": self.dev, "count": self.count, "byte_count": self.bytes})
    }
    fn code_size(&self) -> u32 {
        40
    }
}
