//! NAT-specific header helpers: reading a packet's flow id and rewriting addresses and ports
//! in place with RFC 1624 incremental checksum updates of the IP header checksum and the
//! TCP/UDP checksum (whose pseudo-header covers the addresses). A UDP checksum of zero means
//! "no checksum" and stays zero; an updated UDP checksum that comes out as zero is sent as
//! 0xffff (RFC 768).
use super::flow::FlowKey;
use crate::cx::Cx;
use pktflow_traffic::checksum::Delta;

pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;

pub use crate::net::{be16, be32, set_be16 as put16, set_be32 as put32};

/// IP header length in bytes, if the header at the start of `h` is plausible (version 4,
/// IHL >= 5, inside `h`).
#[inline]
pub fn ip_hl(h: &[u8]) -> Option<usize> {
    if h.len() < 20 || h[0] >> 4 != 4 {
        return None;
    }
    let hl = ((h[0] & 0x0f) as usize) * 4;
    (hl >= 20 && hl <= h.len()).then_some(hl)
}

/// True for the first fragment (or an unfragmented packet).
#[inline]
pub fn first_fragment(h: &[u8]) -> bool {
    be16(h, 6) & 0x1fff == 0
}

/// Offset of the L4 checksum within the L4 header, and the minimum L4 header bytes needed to
/// rewrite ports and checksum.
#[inline]
pub fn l4_layout(proto: u8) -> Option<(usize, usize)> {
    match proto {
        PROTO_TCP => Some((16, 18)),
        PROTO_UDP => Some((6, 8)),
        _ => None,
    }
}

/// The flow id of a TCP/UDP packet (ports 0 for other protocols / later fragments).
pub fn flow_key(h: &[u8], hl: usize, with_ports: bool) -> FlowKey {
    let (sport, dport) = if with_ports && h.len() >= hl + 4 {
        (be16(h, hl), be16(h, hl + 2))
    } else {
        (0, 0)
    };
    FlowKey {
        saddr: be32(h, 12),
        daddr: be32(h, 16),
        sport,
        dport,
        proto: h[9],
    }
}

/// Rewrite the addresses (and, when `ports`, the ports) of the IP packet at the start of `h`
/// to those of `to`, updating checksums incrementally. `l4` says whether the TCP/UDP header
/// is present (first fragment, long enough) so its checksum can be updated.
///
/// Costs: 10 instructions; read and write of the IP checksum (2 B each); when there is an L4
/// checksum, its read and write (2 B each); per changed field 6 instructions and the write
/// of the field (address 4 B, port 2 B).
pub fn rewrite(h: &mut [u8], hl: usize, to: &FlowKey, ports: bool, l4: bool, cx: &mut Cx) {
    cx.instr(10);
    let proto = h[9];
    let l4sum_off = match (l4, l4_layout(proto)) {
        (true, Some((off, need))) if h.len() >= hl + need => Some(hl + off),
        _ => None,
    };
    let ipsum = be16(h, 10);
    cx.read_pkt(2);
    let l4sum = l4sum_off.map(|o| be16(h, o));
    if l4sum.is_some() {
        cx.read_pkt(2);
    }
    // A UDP packet without checksum keeps none.
    let udp_nosum = proto == PROTO_UDP && l4sum == Some(0);
    // The words changed, summed once for each checksum (the L4 checksum covers the addresses
    // through its pseudo-header, and the ports).
    let mut d_ip = Delta::default();
    for (off, new) in [(12usize, to.saddr), (16, to.daddr)] {
        let old = be32(h, off);
        if old != new {
            cx.instr(6);
            put32(h, off, new);
            cx.write_pkt(4);
            d_ip.word32(old, new);
        }
    }
    let mut d_l4 = d_ip;
    if ports && l4sum_off.is_some() {
        for (off, new) in [(hl, to.sport), (hl + 2, to.dport)] {
            let old = be16(h, off);
            if old != new {
                cx.instr(6);
                put16(h, off, new);
                cx.write_pkt(2);
                d_l4.word(old, new);
            }
        }
    }
    put16(h, 10, d_ip.apply(ipsum));
    cx.write_pkt(2);
    if let (Some(o), Some(s)) = (l4sum_off, l4sum) {
        let mut s = d_l4.apply(s);
        if udp_nosum {
            s = 0;
        } else if proto == PROTO_UDP && s == 0 {
            s = 0xffff;
        }
        put16(h, o, s);
        cx.write_pkt(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktflow_traffic::checksum::{ip_checksum, l4_checksum_ok};

    fn tcp_packet() -> Vec<u8> {
        let mut p = vec![0u8; 20 + 20 + 5];
        p[0] = 0x45;
        put16(&mut p, 2, 45);
        p[8] = 64;
        p[9] = PROTO_TCP;
        put32(&mut p, 12, 0x0a00_0002);
        put32(&mut p, 16, 0x0808_0808);
        let s = ip_checksum(&p[..20]);
        put16(&mut p, 10, s);
        put16(&mut p, 20, 1234);
        put16(&mut p, 22, 80);
        p[32] = 0x50;
        p[33] = 0x02;
        p[40..45].copy_from_slice(b"hello");
        let s = pktflow_traffic::checksum::l4_checksum([10, 0, 0, 2], [8, 8, 8, 8], 6, &p[20..]);
        put16(&mut p, 36, s);
        p
    }

    #[test]
    fn rewrite_keeps_checksums_valid() {
        let mut p = tcp_packet();
        let mut cx = Cx::new();
        let to = FlowKey {
            saddr: 0x0100_0001,
            daddr: 0x0808_0808,
            sport: 50000,
            dport: 80,
            proto: 6,
        };
        rewrite(&mut p, 20, &to, true, true, &mut cx);
        assert_eq!(flow_key(&p, 20, true), to);
        assert_eq!(ip_checksum(&p[..20]), 0);
        assert!(l4_checksum_ok([1, 0, 0, 1], [8, 8, 8, 8], 6, &p[20..]));
    }
}
