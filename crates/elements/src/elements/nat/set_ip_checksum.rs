//! `SetIPChecksum` — recomputes the IP header checksum from scratch.
//!
//! Ports: 1 agnostic input, 1 agnostic output. Needs the IP header annotation; a packet
//! without it, or whose header is not IPv4 with a length inside the packet, is dropped with
//! reason `bad IP header` (Click: "Expects an IP packet as input").
//! Costs: 8 instructions plus 1 per 16-bit word summed; a 4 B meta-data read (annotation);
//! the header read (its length) and the 2 B checksum write.
use super::hdr::{ip_hl, put16};
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::checksum::ip_checksum;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "SetIPChecksum",
    summary: "recompute the IP header checksum",
    make,
};

struct SetIPChecksum;

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("SetIPChecksum", config, &[]).finish()?;
    Ok(Box::new(SetIPChecksum))
}

impl Element for SetIPChecksum {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(8);
        cx.read_meta(4);
        let hl = match p.ip_header().and_then(ip_hl) {
            Some(hl) => hl,
            None => {
                cx.drop_packet(p, "bad IP header");
                return None;
            }
        };
        let h = p.ip_header_mut().expect("checked");
        cx.read_pkt(hl as u32);
        cx.instr(hl as u32 / 2);
        h[10] = 0;
        h[11] = 0;
        let s = ip_checksum(&h[..hl]);
        put16(h, 10, s);
        cx.write_pkt(2);
        Some(p)
    }
    fn code_size(&self) -> u32 {
        40
    }
}
