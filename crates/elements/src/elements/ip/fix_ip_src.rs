//! `FixIPSrc(IPADDR)` — when the packet's fix-source annotation is set (ICMPError sets it on
//! the errors it builds), rewrites the IP source address to IPADDR, clears the annotation and
//! recomputes the header checksum. Other packets pass unchanged.
//!
//! Placed on each output path, it makes router-generated packets carry the address of the
//! interface they leave by (RFC 1812 4.3.2.4). The IP header is the network-header annotation,
//! or the front of the packet when it is unset.
//!
//! Ports: 1 agnostic input, 1 agnostic output.
//! Costs: 2 instructions and a 1-byte meta-data read; a rewrite adds 8 instructions plus one per
//! 16-bit header word summed, a 1-byte meta-data write, a packet-data read of the header
//! (checksum) and a 6-byte packet-data write (address and checksum).
use super::ip_header_offset;
use crate::conf::{parse_ip, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "FixIPSrc",
    summary: "set the source of router-generated packets to this interface's address",
    make,
};

struct FixIPSrc {
    addr: [u8; 4],
    fixed: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("FixIPSrc", config, &["IPADDR"]);
    let s = a
        .keyword_or_positional("IPADDR")
        .ok_or("FixIPSrc: missing argument IPADDR")?;
    a.finish()?;
    Ok(Box::new(FixIPSrc {
        addr: parse_ip(&s).map_err(|e| format!("FixIPSrc: IPADDR: {e}"))?,
        fixed: 0,
    }))
}

impl Element for FixIPSrc {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(2);
        cx.read_meta(1);
        if !p.anno.fix_ip_src {
            return Some(p);
        }
        p.anno.fix_ip_src = false;
        cx.write_meta(1);
        let off = ip_header_offset(&p);
        let h = &mut p.data_mut()[off..];
        if !net::ip_min_len_ok(h) || net::ip_hl(h) > h.len() || net::ip_hl(h) < 20 {
            cx.drop_packet(p, "bad IP header");
            return None;
        }
        let hl = net::ip_hl(h);
        net::set_ip_src(h, self.addr);
        net::set_ip_checksum(h);
        cx.instr(8 + hl as u32 / 2);
        cx.read_pkt(hl as u32);
        cx.write_pkt(6);
        self.fixed += 1;
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"fixed": self.fixed})
    }
    fn code_size(&self) -> u32 {
        40
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::net;
    use pktflow_traffic::Packet;

    #[test]
    fn rewrites_only_flagged_packets() {
        let mut e = make("FixIPSrc", "192.168.1.1");
        let b = ipv4([10, 0, 0, 1], [10, 0, 0, 2], 255, &[], 8, 0);
        let (out, _) = push(e.as_mut(), 0, Packet::from_bytes(&b));
        assert_eq!(out[0].1.data(), &b[..]);
        let mut p = Packet::from_bytes(&b);
        p.anno.fix_ip_src = true;
        let (out, _) = push(e.as_mut(), 0, p);
        let d = out[0].1.data();
        assert_eq!(net::ip_src(d), [192, 168, 1, 1]);
        assert_eq!(net::ip_header_sum(d), 0);
        assert!(!out[0].1.anno.fix_ip_src);
    }
}
