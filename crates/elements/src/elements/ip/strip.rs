//! `Strip(LENGTH)` — removes LENGTH bytes from the front of each packet (all of it if shorter).
//!
//! Ports: 1 agnostic input, 1 agnostic output. Annotations (the network header offset) are
//! kept, so a later `Unstrip` restores the bytes.
//! Costs: 2 instructions and a 2-byte meta-data write (the data offset).
use crate::conf::{parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "Strip",
    summary: "remove bytes from the front of packets",
    make,
};

struct Strip {
    n: usize,
}

/// Parse the LENGTH argument of Strip/Unstrip.
pub fn parse_length(class: &str, config: &str) -> Result<usize, String> {
    let mut a = Args::parse(class, config, &["LENGTH"]);
    let n = a
        .keyword_or_positional("LENGTH")
        .ok_or_else(|| format!("{class}: missing argument LENGTH"))?;
    a.finish()?;
    Ok(parse_uint(&n).map_err(|e| format!("{class}: LENGTH: {e}"))? as usize)
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Ok(Box::new(Strip {
        n: parse_length("Strip", config)?,
    }))
}

impl Element for Strip {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(2);
        p.strip_front(self.n);
        cx.write_meta(2);
        Some(p)
    }
    fn code_size(&self) -> u32 {
        8
    }
}
