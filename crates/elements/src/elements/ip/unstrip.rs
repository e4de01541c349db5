//! `Unstrip(LENGTH)` — puts LENGTH bytes back on the front of each packet (the bytes a
//! previous `Strip` removed; fresh headroom bytes are zero).
//!
//! Ports: 1 agnostic input, 1 agnostic output.
//! Costs: 2 instructions and a 2-byte meta-data write (the data offset).
use super::strip::parse_length;
use crate::conf::InitEnv;
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "Unstrip",
    summary: "restore bytes at the front of packets",
    make,
};

struct Unstrip {
    n: usize,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Ok(Box::new(Unstrip {
        n: parse_length("Unstrip", config)?,
    }))
}

impl Element for Unstrip {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(2);
        p.push_front(self.n);
        cx.write_meta(2);
        Some(p)
    }
    fn code_size(&self) -> u32 {
        8
    }
}
