//! `Idle` — never produces packets; drops any packet pushed to it (reason `Idle`).
//!
//! Ports: any number of agnostic inputs and outputs. Used to terminate unused ports.
//! Costs: 2 instructions per packet pushed to it.
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "Idle",
    summary: "never sends packets; drops what it receives",
    make,
};

struct Idle;

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("Idle", config, &[]).finish()?;
    Ok(Box::new(Idle))
}

impl Element for Idle {
    fn ports(&self) -> Ports {
        Ports::agnostic(0, 0)
            .with_inputs(0, usize::MAX)
            .with_outputs(0, usize::MAX)
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(2);
        cx.drop_packet(p, "Idle");
    }
    fn is_storage(&self) -> bool {
        true
    }
    fn code_size(&self) -> u32 {
        4
    }
}
