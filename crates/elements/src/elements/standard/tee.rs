//! `Tee([N])` — sends a copy of each packet to each of its N outputs (default 2).
//!
//! Ports: 1 push input, N push outputs. Output 0 gets the original, outputs 1..N clones.
//! Costs: 6 instructions plus 10 per clone; each clone writes its meta-data (32 B of
//! annotations; Click clones share the data buffer, so no packet data is copied).
use crate::conf::{parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "Tee",
    summary: "copy each packet to every output",
    make,
};

struct Tee {
    n: usize,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("Tee", config, &["N"]);
    let n = match a.keyword_or_positional("N") {
        Some(s) => parse_uint(&s).map_err(|e| format!("Tee: N: {e}"))? as usize,
        None => 2,
    };
    a.finish()?;
    if n == 0 {
        return Err("Tee: N must be at least 1".into());
    }
    Ok(Box::new(Tee { n }))
}

impl Element for Tee {
    fn ports(&self) -> Ports {
        Ports::push(1, self.n)
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(6);
        for i in 1..self.n {
            cx.instr(10);
            cx.write_meta(32);
            let c = cx.copy_packet(&p);
            cx.emit(i, c);
        }
        cx.emit(0, p);
    }
    fn code_size(&self) -> u32 {
        30
    }
}
