//! `PaintTee(COLOR [, ANNO])` — sends every packet to output 0, and a copy to output 1 when
//! its paint annotation equals COLOR (used to catch packets leaving on the interface they
//! arrived on, for ICMP redirects).
//!
//! Ports: 1 push input, 2 push outputs. As in Click, the copy leaves on output 1 before the
//! original leaves on output 0 (this order decides which is processed, and queued, first).
//! Costs: 4 instructions and a 1-byte meta-data read; a copy adds 10 instructions and a 32-byte
//! meta-data write (annotations of the clone; the data buffer is shared as in Click).
use super::paint::parse_color;
use crate::conf::InitEnv;
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "PaintTee",
    summary: "copy packets with a given paint annotation to output 1",
    make,
};

struct PaintTee {
    color: u8,
    copies: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Ok(Box::new(PaintTee {
        color: parse_color("PaintTee", config)?,
        copies: 0,
    }))
}

impl PaintTee {
    /// The packet leaves by the interface it came in on: a copy out of output 1 (Click pushes
    /// it before returning the original to output 0). Out of line: the rare case.
    #[cold]
    #[inline(never)]
    fn copy_out(&mut self, p: Packet, cx: &mut Cx) {
        cx.instr(10);
        cx.write_meta(32);
        self.copies += 1;
        let c = cx.copy_packet(&p);
        cx.emit(1, c);
        cx.emit(0, p);
    }
}

impl Element for PaintTee {
    fn ports(&self) -> Ports {
        Ports::push(1, 2)
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(4);
        cx.read_meta(1);
        if p.anno.paint == self.color {
            self.copy_out(p, cx);
        } else {
            cx.emit(0, p);
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"copies": self.copies})
    }
    fn code_size(&self) -> u32 {
        30
    }
}
