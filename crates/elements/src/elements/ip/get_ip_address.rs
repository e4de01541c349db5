//! `GetIPAddress(OFFSET)` — copies the 4 bytes at OFFSET of the packet data into the
//! destination IP annotation (OFFSET 16 reads the destination of an IP header at the front).
//!
//! Ports: 1 agnostic input, 1 agnostic output. A packet shorter than OFFSET + 4 is dropped with
//! reason `packet too short`.
//! Costs: 3 instructions, a 4-byte packet-data read and a 4-byte meta-data write.
use crate::conf::{parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "GetIPAddress",
    summary: "set the destination IP annotation from packet bytes",
    make,
};

struct GetIPAddress {
    off: usize,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("GetIPAddress", config, &["OFFSET"]);
    let off = a
        .keyword_or_positional("OFFSET")
        .ok_or("GetIPAddress: missing argument OFFSET")?;
    a.finish()?;
    Ok(Box::new(GetIPAddress {
        off: parse_uint(&off).map_err(|e| format!("GetIPAddress: OFFSET: {e}"))? as usize,
    }))
}

impl Element for GetIPAddress {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(3);
        let d = p.data();
        if d.len() < self.off + 4 {
            cx.drop_packet(p, "packet too short");
            return None;
        }
        let a = [
            d[self.off],
            d[self.off + 1],
            d[self.off + 2],
            d[self.off + 3],
        ];
        cx.read_pkt(4);
        p.anno.dst_ip = a;
        cx.write_meta(4);
        Some(p)
    }
    fn code_size(&self) -> u32 {
        10
    }
}
