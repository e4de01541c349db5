//! `Discard` — drops every packet it receives (push) or pulls (pull).
//!
//! Ports: 1 agnostic input, no outputs. Drop reason `Discard`.
//! Costs: 3 instructions per packet, no memory access.
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Role};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "Discard",
    summary: "drop every packet",
    make,
};

struct Discard {
    count: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("Discard", config, &[]).finish()?;
    Ok(Box::new(Discard { count: 0 }))
}

impl Element for Discard {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 0)
    }
    fn role(&self) -> Role {
        Role::Sink
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(3);
        self.count += 1;
        cx.drop_packet(p, "Discard");
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count})
    }
    fn code_size(&self) -> u32 {
        8
    }
}
