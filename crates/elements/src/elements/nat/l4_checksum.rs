//! `SetTCPChecksum`, `SetUDPChecksum` — recompute the TCP / UDP checksum (with the
//! pseudo-header) from scratch; `CheckTCPHeader`, `CheckUDPHeader` — verify the TCP / UDP
//! header (length, data offset) and checksum.
//!
//! Ports: 1 agnostic input, 1 agnostic output. Need the IP header annotation. The segment is
//! the IP payload (IP total length minus header length, bounded by the packet). Packets that
//! are not of the element's protocol, are later fragments, or have a truncated header are
//! dropped (reasons `not TCP`/`not UDP`, `fragment`, `bad TCP header`/`bad UDP header`);
//! the checkers also drop packets with a wrong checksum (same reasons). A computed UDP
//! checksum of 0 is stored as 0xffff; a UDP packet with checksum 0 (none) passes
//! CheckUDPHeader. (Click's optional second output for bad packets is not provided.)
//! SetTCPChecksum accepts Click's FIXOFF keyword (no effect).
//!
//! Costs: 10 instructions plus 1 per 16-bit word summed; 4 B meta-data read; packet reads of
//! protocol/fragment/length (5 B), addresses (8 B) and the segment; the 2 B checksum write
//! (Set*). No persistent state.
use super::hdr::{be16, first_fragment, ip_hl, put16, PROTO_TCP, PROTO_UDP};
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::checksum::{l4_checksum, l4_checksum_ok};
use pktflow_traffic::Packet;

pub const SET_TCP: ClassInfo = ClassInfo {
    name: "SetTCPChecksum",
    summary: "recompute the TCP checksum",
    make: make_set_tcp,
};
pub const SET_UDP: ClassInfo = ClassInfo {
    name: "SetUDPChecksum",
    summary: "recompute the UDP checksum",
    make: make_set_udp,
};
pub const CHECK_TCP: ClassInfo = ClassInfo {
    name: "CheckTCPHeader",
    summary: "drop TCP packets with bad headers or checksums",
    make: make_check_tcp,
};
pub const CHECK_UDP: ClassInfo = ClassInfo {
    name: "CheckUDPHeader",
    summary: "drop UDP packets with bad headers or checksums",
    make: make_check_udp,
};

struct L4 {
    proto: u8,
    set: bool,
    drops: u64,
}

fn mk(
    class: &str,
    config: &str,
    kws: &[&str],
    proto: u8,
    set: bool,
) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse(class, config, kws);
    for k in kws {
        a.keyword(k);
    }
    a.finish()?;
    Ok(Box::new(L4 {
        proto,
        set,
        drops: 0,
    }))
}
fn make_set_tcp(c: &str, _e: &InitEnv) -> Result<Box<dyn Element>, String> {
    mk("SetTCPChecksum", c, &["FIXOFF"], PROTO_TCP, true)
}
fn make_set_udp(c: &str, _e: &InitEnv) -> Result<Box<dyn Element>, String> {
    mk("SetUDPChecksum", c, &[], PROTO_UDP, true)
}
fn make_check_tcp(c: &str, _e: &InitEnv) -> Result<Box<dyn Element>, String> {
    mk(
        "CheckTCPHeader",
        c,
        &["VERBOSE", "DETAILS"],
        PROTO_TCP,
        false,
    )
}
fn make_check_udp(c: &str, _e: &InitEnv) -> Result<Box<dyn Element>, String> {
    mk(
        "CheckUDPHeader",
        c,
        &["VERBOSE", "DETAILS"],
        PROTO_UDP,
        false,
    )
}

impl L4 {
    fn check(&self, p: &Packet, cx: &mut Cx) -> Result<(usize, usize), &'static str> {
        let tcp = self.proto == PROTO_TCP;
        let bad = if tcp {
            "bad TCP header"
        } else {
            "bad UDP header"
        };
        let h = p.ip_header().ok_or(bad)?;
        let hl = ip_hl(h).ok_or(bad)?;
        cx.read_pkt(5);
        if h[9] != self.proto {
            return Err(if tcp { "not TCP" } else { "not UDP" });
        }
        if !first_fragment(h) {
            return Err("fragment");
        }
        let end = (be16(h, 2) as usize).min(h.len());
        if end < hl {
            return Err(bad);
        }
        let seg = end - hl;
        let min = if tcp { 20 } else { 8 };
        if seg < min {
            return Err(bad);
        }
        if tcp {
            cx.read_pkt(1);
            let doff = ((h[hl + 12] >> 4) as usize) * 4;
            if doff < 20 || doff > seg {
                return Err(bad);
            }
        } else {
            cx.read_pkt(2);
            let ulen = be16(h, hl + 4) as usize;
            if ulen < 8 || ulen > seg {
                return Err(bad);
            }
        }
        Ok((hl, end))
    }
}

impl Element for L4 {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(10);
        cx.read_meta(4);
        let (hl, end) = match self.check(&p, cx) {
            Ok(x) => x,
            Err(reason) => {
                self.drops += 1;
                cx.drop_packet(p, reason);
                return None;
            }
        };
        let tcp = self.proto == PROTO_TCP;
        let off = hl + if tcp { 16 } else { 6 };
        let h = p.ip_header_mut().expect("checked");
        let src = [h[12], h[13], h[14], h[15]];
        let dst = [h[16], h[17], h[18], h[19]];
        cx.read_pkt(8);
        cx.read_pkt((end - hl) as u32);
        cx.instr(((end - hl) / 2) as u32);
        if self.set {
            h[off] = 0;
            h[off + 1] = 0;
            let mut s = l4_checksum(src, dst, self.proto, &h[hl..end]);
            if !tcp && s == 0 {
                s = 0xffff;
            }
            put16(h, off, s);
            cx.write_pkt(2);
        } else {
            let none = !tcp && be16(h, off) == 0;
            if !none && !l4_checksum_ok(src, dst, self.proto, &h[hl..end]) {
                self.drops += 1;
                cx.drop_packet(
                    p,
                    if tcp {
                        "bad TCP header"
                    } else {
                        "bad UDP header"
                    },
                );
                return None;
            }
        }
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"drops": self.drops})
    }
    fn code_size(&self) -> u32 {
        60
    }
}
