//! `EtherEncap(ETHERTYPE, SRC, DST)` — prepends an Ethernet header (SRC and DST Ethernet
//! addresses, ETHERTYPE as a 16-bit number, e.g. `0x0800`).
//!
//! Ports: 1 agnostic input, 1 agnostic output.
//! Costs: 6 instructions, a 14-byte packet-data write and a 2-byte meta-data write (the data
//! offset).
use crate::conf::{parse_ether, parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "EtherEncap",
    summary: "prepend an Ethernet header",
    make,
};

struct EtherEncap {
    ty: u16,
    src: [u8; 6],
    dst: [u8; 6],
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("EtherEncap", config, &["ETHERTYPE", "SRC", "DST"]);
    let ty = a
        .keyword_or_positional("ETHERTYPE")
        .ok_or("EtherEncap: missing argument ETHERTYPE")?;
    let src = a
        .keyword_or_positional("SRC")
        .ok_or("EtherEncap: missing argument SRC")?;
    let dst = a
        .keyword_or_positional("DST")
        .ok_or("EtherEncap: missing argument DST")?;
    a.finish()?;
    let ty = parse_uint(&ty).map_err(|e| format!("EtherEncap: ETHERTYPE: {e}"))?;
    if ty > 0xffff {
        return Err("EtherEncap: ETHERTYPE must fit in 16 bits".into());
    }
    Ok(Box::new(EtherEncap {
        ty: ty as u16,
        src: parse_ether(&src).map_err(|e| format!("EtherEncap: SRC: {e}"))?,
        dst: parse_ether(&dst).map_err(|e| format!("EtherEncap: DST: {e}"))?,
    }))
}

impl Element for EtherEncap {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(6);
        p.push_front(net::ETHER_LEN);
        net::write_ether(p.data_mut(), self.dst, self.src, self.ty);
        cx.write_pkt(14);
        cx.write_meta(2);
        Some(p)
    }
    fn code_size(&self) -> u32 {
        20
    }
}
