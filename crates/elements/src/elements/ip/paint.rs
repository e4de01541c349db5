//! `Paint(COLOR [, ANNO])` — sets the packet's paint annotation to COLOR (0..255).
//!
//! Ports: 1 agnostic input, 1 agnostic output. Only the paint annotation is supported as
//! ANNO (`PAINT`, the default).
//! Costs: 2 instructions and a 1-byte meta-data write.
use crate::conf::{parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "Paint",
    summary: "set the paint annotation",
    make,
};

struct Paint {
    color: u8,
}

/// Parse COLOR and the optional ANNO of Paint/PaintTee.
pub fn parse_color(class: &str, config: &str) -> Result<u8, String> {
    let mut a = Args::parse(class, config, &["COLOR", "ANNO"]);
    let c = a
        .keyword_or_positional("COLOR")
        .ok_or_else(|| format!("{class}: missing argument COLOR"))?;
    let c = parse_uint(&c).map_err(|e| format!("{class}: COLOR: {e}"))?;
    if c > 255 {
        return Err(format!("{class}: COLOR must be between 0 and 255"));
    }
    if let Some(an) = a.keyword_or_positional("ANNO") {
        if an != "PAINT" {
            return Err(format!(
                "{class}: ANNO: pktflow supports only the PAINT annotation, found '{an}'"
            ));
        }
    }
    a.finish()?;
    Ok(c as u8)
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Ok(Box::new(Paint {
        color: parse_color("Paint", config)?,
    }))
}

impl Element for Paint {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(2);
        p.anno.paint = self.color;
        cx.write_meta(1);
        Some(p)
    }
    fn code_size(&self) -> u32 {
        8
    }
}
