//! `SetTCPChecksum([FIXOFF])`, `SetUDPChecksum` — recompute the TCP / UDP checksum (with
//! the pseudo-header) from scratch; `CheckTCPHeader([VERBOSE, DETAILS])`,
//! `CheckUDPHeader([VERBOSE, DETAILS])` — verify the TCP / UDP header lengths and checksum.
//! Each follows Click 2.1's element of the same name (elements/tcpudp/*.cc), checked against
//! Click's output on the same packets (`crates/elements/tests/click21_elements.rs`):
//!
//! - The pseudo-header's destination is the final destination of a loose or strict source
//!   route option (the option's last address), as Click's `click_in_cksum_pseudohdr` does
//!   (RFC 791); otherwise the header's destination. Its protocol is the header's.
//! - SetTCPChecksum sums the IP payload (total length minus header length), whatever the
//!   protocol or fragment; a payload shorter than 20 bytes or longer than the bytes present
//!   is dropped (reason `bad lengths`). FIXOFF (default false) first repairs the data offset:
//!   below 5 words it becomes 5; past the payload (unfragmented packets) the payload's words.
//! - SetUDPChecksum sums the UDP length field's bytes; fragments (MF or an offset), packets
//!   with fewer than 8 transport bytes or a UDP length past them go to output 1 if it is
//!   connected, else are dropped (reason `fragment or short packet`). A computed 0 is stored
//!   as 0 (Click does not substitute 0xffff).
//! - CheckTCPHeader: not TCP, then a data offset below 20 bytes or past the IP payload, or an
//!   IP total length past the packet (`bad packet length`), then the checksum over the IP
//!   payload (`bad TCP checksum`). Fragments are checked like any packet.
//! - CheckUDPHeader: not UDP, then a UDP length below 8 or past the packet (`bad packet
//!   length`), then, unless the checksum field is 0, the checksum over the UDP length's bytes
//!   (`bad UDP checksum`).
//! - The checkers send bad packets to output 1 when it is connected, else drop them with the
//!   reason as drop reason. Their statistics are `drops` and, with DETAILS true,
//!   `drop_details` (one `COUNT<TAB>REASON` line per reason, as Click's handler). VERBOSE is
//!   accepted (Click prints a message per drop; pktflow counts them).
//!
//! Ports: 1 agnostic input; output 0 agnostic; output 1 (optional, except SetTCPChecksum)
//! push. Need the IP header annotation (packets without it are dropped, `no IP header`).
//!
//! Costs: 10 instructions plus 1 per 16-bit word summed; 4 B meta-data read; packet reads of
//! protocol/fragment/length (5 B), addresses (8 B) and the segment; the 2 B checksum write
//! (Set*). No persistent state.
use super::hdr::{be16, put16, PROTO_TCP, PROTO_UDP};
use crate::conf::{parse_bool, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Processing};
use crate::registry::ClassInfo;
use pktflow_traffic::checksum::l4_checksum;
use pktflow_traffic::Packet;

pub const SET_TCP: ClassInfo = ClassInfo {
    name: "SetTCPChecksum",
    summary: "recompute the TCP checksum",
    make: make_set_tcp,
};
pub const SET_UDP: ClassInfo = ClassInfo {
    name: "SetUDPChecksum",
    summary: "recompute the UDP checksum; fragments and short packets to output 1",
    make: make_set_udp,
};
pub const CHECK_TCP: ClassInfo = ClassInfo {
    name: "CheckTCPHeader",
    summary: "check TCP lengths and checksums; bad packets to output 1 or dropped",
    make: make_check_tcp,
};
pub const CHECK_UDP: ClassInfo = ClassInfo {
    name: "CheckUDPHeader",
    summary: "check UDP lengths and checksums; bad packets to output 1 or dropped",
    make: make_check_udp,
};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    SetTcp { fixoff: bool },
    SetUdp,
    CheckTcp,
    CheckUdp,
}

struct L4 {
    kind: Kind,
    nout: usize,
    drops: u64,
    /// Per-reason counts (not TCP/UDP, bad packet length, bad checksum) when DETAILS.
    details: Option<[u64; 3]>,
}

fn bool_kw(a: &mut Args, class: &str, k: &str) -> Result<bool, String> {
    match a.keyword(k) {
        Some(v) => parse_bool(&v).map_err(|e| format!("{class}: {k}: {e}")),
        None => Ok(false),
    }
}

fn make_set_tcp(c: &str, _e: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("SetTCPChecksum", c, &["FIXOFF"]);
    let fixoff = match a.keyword_or_positional("FIXOFF") {
        Some(v) => parse_bool(&v).map_err(|e| format!("SetTCPChecksum: FIXOFF: {e}"))?,
        None => false,
    };
    a.finish()?;
    Ok(el(Kind::SetTcp { fixoff }, None))
}
fn make_set_udp(c: &str, _e: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("SetUDPChecksum", c, &[]).finish()?;
    Ok(el(Kind::SetUdp, None))
}
fn make_check(class: &str, c: &str, kind: Kind) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse(class, c, &["VERBOSE", "DETAILS"]);
    bool_kw(&mut a, class, "VERBOSE")?;
    let details = bool_kw(&mut a, class, "DETAILS")?;
    a.finish()?;
    Ok(el(kind, details.then_some([0; 3])))
}
fn make_check_tcp(c: &str, _e: &InitEnv) -> Result<Box<dyn Element>, String> {
    make_check("CheckTCPHeader", c, Kind::CheckTcp)
}
fn make_check_udp(c: &str, _e: &InitEnv) -> Result<Box<dyn Element>, String> {
    make_check("CheckUDPHeader", c, Kind::CheckUdp)
}
fn el(kind: Kind, details: Option<[u64; 3]>) -> Box<dyn Element> {
    Box::new(L4 {
        kind,
        nout: 1,
        drops: 0,
        details,
    })
}

/// The pseudo-header destination of the IP header at the start of `h` (`hl` bytes): the last
/// address of the first loose or strict source route option (length at least 7), else the
/// header's destination. Malformed options end the search, as in Click 2.1
/// (lib/in_cksum.c, click_in_cksum_pseudohdr_hard).
pub fn pseudo_dst(h: &[u8], hl: usize) -> [u8; 4] {
    let end = hl.min(h.len());
    let mut i = 20;
    while i < end {
        match h[i] {
            1 => i += 1,
            0 => break,
            ty => {
                if i + 1 >= end {
                    break;
                }
                let len = h[i + 1] as usize;
                if len < 2 || i + len > end {
                    break;
                }
                if (ty == 131 || ty == 137) && len >= 7 {
                    let a = i + len - 4;
                    return [h[a], h[a + 1], h[a + 2], h[a + 3]];
                }
                i += len;
            }
        }
    }
    [h[16], h[17], h[18], h[19]]
}

/// The TCP/UDP checksum of `seg` (its checksum field included as it is) for the IP header
/// `h`: 0 when `seg` verifies.
fn sum_of(h: &[u8], hl: usize, seg: &[u8]) -> u16 {
    let src = [h[12], h[13], h[14], h[15]];
    l4_checksum(src, pseudo_dst(h, hl), h[9], seg)
}

const R_PROTO: usize = 0;
const R_LEN: usize = 1;
const R_SUM: usize = 2;

impl L4 {
    fn reason(&self, r: usize) -> &'static str {
        match (self.kind, r) {
            (Kind::CheckTcp, R_PROTO) => "not TCP",
            (Kind::CheckUdp, R_PROTO) => "not UDP",
            (_, R_LEN) => "bad packet length",
            (Kind::CheckTcp, _) => "bad TCP checksum",
            _ => "bad UDP checksum",
        }
    }

    /// CheckTCPHeader / CheckUDPHeader: `Err(reason index)` for a bad packet.
    fn check(&self, h: &[u8], hl: usize, cx: &mut Cx) -> Result<(), usize> {
        cx.read_pkt(5);
        let tcp = self.kind == Kind::CheckTcp;
        if h[9] != if tcp { PROTO_TCP } else { PROTO_UDP } {
            return Err(R_PROTO);
        }
        // Bytes summed: the IP payload (TCP) or the UDP length (UDP).
        let len = if tcp {
            let ip_len = be16(h, 2) as usize;
            let doff = match h.get(hl + 12) {
                Some(b) => ((b >> 4) as usize) * 4,
                None => return Err(R_LEN),
            };
            cx.read_pkt(1);
            if ip_len < hl || doff < 20 || ip_len - hl < doff || h.len() < ip_len {
                return Err(R_LEN);
            }
            ip_len - hl
        } else {
            if h.len() < hl + 6 {
                return Err(R_LEN);
            }
            cx.read_pkt(2);
            let ulen = be16(h, hl + 4) as usize;
            if ulen < 8 || h.len() < hl + ulen {
                return Err(R_LEN);
            }
            if be16(h, hl + 6) == 0 {
                return Ok(());
            }
            ulen
        };
        cx.read_pkt(8 + len as u32);
        cx.instr(len as u32 / 2);
        if sum_of(h, hl, &h[hl..hl + len]) != 0 {
            return Err(R_SUM);
        }
        Ok(())
    }

    /// SetTCPChecksum / SetUDPChecksum on the header `h`: `Err(())` for a packet whose
    /// lengths do not allow it.
    fn set(&self, h: &mut [u8], hl: usize, cx: &mut Cx) -> Result<(), ()> {
        cx.read_pkt(5);
        let avail = h.len().saturating_sub(hl);
        let (len, sum_at) = match self.kind {
            Kind::SetTcp { fixoff } => {
                let ip_len = be16(h, 2) as usize;
                if ip_len < hl || ip_len - hl < 20 || ip_len - hl > avail {
                    return Err(());
                }
                let plen = ip_len - hl;
                if fixoff {
                    let off = ((h[hl + 12] >> 4) as usize) * 4;
                    let frag = be16(h, 6) & 0x3fff != 0;
                    if off < 20 {
                        h[hl + 12] = (5 << 4) | (h[hl + 12] & 0x0f);
                    } else if off > plen && !frag {
                        h[hl + 12] = (((plen >> 2) as u8) << 4) | (h[hl + 12] & 0x0f);
                    }
                    cx.write_pkt(1);
                }
                (plen, hl + 16)
            }
            _ => {
                if be16(h, 6) & 0x3fff != 0 || avail < 8 {
                    return Err(());
                }
                cx.read_pkt(2);
                let ulen = be16(h, hl + 4) as usize;
                if ulen > avail {
                    return Err(());
                }
                (ulen, hl + 6)
            }
        };
        put16(h, sum_at, 0);
        cx.read_pkt(8 + len as u32);
        cx.instr(len as u32 / 2);
        let s = sum_of(h, hl, &h[hl..hl + len]);
        put16(h, sum_at, s);
        cx.write_pkt(2);
        Ok(())
    }

    fn bad(&mut self, p: Packet, reason: &'static str, cx: &mut Cx) {
        self.drops += 1;
        if self.nout > 1 && !matches!(self.kind, Kind::SetTcp { .. }) {
            cx.emit(1, p);
        } else {
            cx.drop_packet(p, reason);
        }
    }
}

impl Element for L4 {
    fn ports(&self) -> Ports {
        match self.kind {
            Kind::SetTcp { .. } => Ports::agnostic(1, 1),
            _ => Ports::agnostic(1, 1).with_outputs(1, 2),
        }
    }
    fn output_processing_of(&self, port: usize) -> Processing {
        if port == 0 {
            Processing::Agnostic
        } else {
            Processing::Push
        }
    }
    fn set_port_counts(&mut self, _i: usize, o: usize) {
        self.nout = o.max(1);
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(10);
        cx.read_meta(4);
        let hl = match p.ip_header() {
            Some(h) if h.len() >= 20 => (((h[0] & 0x0f) as usize) * 4).max(20),
            _ => {
                self.drops += 1;
                cx.drop_packet(p, "no IP header");
                return None;
            }
        };
        match self.kind {
            Kind::CheckTcp | Kind::CheckUdp => {
                let h = p.ip_header().expect("checked");
                if let Err(r) = self.check(h, hl, cx) {
                    if let Some(d) = self.details.as_mut() {
                        d[r] += 1;
                    }
                    let why = self.reason(r);
                    self.bad(p, why, cx);
                    return None;
                }
            }
            Kind::SetTcp { .. } | Kind::SetUdp => {
                let h = p.ip_header_mut().expect("checked");
                if self.set(h, hl, cx).is_err() {
                    let why = if self.kind == Kind::SetUdp {
                        "fragment or short packet"
                    } else {
                        "bad lengths"
                    };
                    self.bad(p, why, cx);
                    return None;
                }
            }
        }
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        match self.details {
            Some(d) => {
                let text: String = (0..3)
                    .map(|r| format!("{}\t{}\n", d[r], self.reason(r)))
                    .collect();
                serde_json::json!({"drops": self.drops, "drop_details": text})
            }
            None => serde_json::json!({"drops": self.drops}),
        }
    }
    fn code_size(&self) -> u32 {
        60
    }
}
