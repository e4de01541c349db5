//! Hand-built TCP/UDP/ICMP packets and small-graph helpers for the NAT tests.
#![allow(dead_code)]
use pktflow_elements::{Router, RouterOptions};
use pktflow_model::{AppGraph, Fate, PacketTrace, Span};
use pktflow_traffic::checksum::{ip_checksum, l4_checksum, l4_checksum_ok};
use pktflow_traffic::Packet;

pub const TCP: u8 = 6;
pub const UDP: u8 = 17;
pub const ICMP: u8 = 1;

pub fn be16(b: &[u8], o: usize) -> u16 {
    u16::from_be_bytes([b[o], b[o + 1]])
}

/// A raw IPv4 packet (no Ethernet header) with valid checksums. TCP gets a 20-byte header
/// with `flags`; UDP an 8-byte header (checksum 0 when `udp_nosum`); ICMP an echo header.
pub fn ip_packet(
    proto: u8,
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    payload: &[u8],
    flags: u8,
) -> Vec<u8> {
    let l4 = match proto {
        TCP => 20,
        UDP => 8,
        _ => 8,
    };
    let tot = 20 + l4 + payload.len();
    let mut v = vec![0u8; tot];
    v[0] = 0x45;
    v[2..4].copy_from_slice(&(tot as u16).to_be_bytes());
    v[4..6].copy_from_slice(&0x4242u16.to_be_bytes());
    v[8] = 64;
    v[9] = proto;
    v[12..16].copy_from_slice(&src);
    v[16..20].copy_from_slice(&dst);
    let s = ip_checksum(&v[..20]);
    v[10..12].copy_from_slice(&s.to_be_bytes());
    v[20 + l4..].copy_from_slice(payload);
    match proto {
        TCP => {
            v[20..22].copy_from_slice(&sport.to_be_bytes());
            v[22..24].copy_from_slice(&dport.to_be_bytes());
            v[24..28].copy_from_slice(&1000u32.to_be_bytes());
            v[32] = 0x50;
            v[33] = flags;
            v[34..36].copy_from_slice(&8192u16.to_be_bytes());
            let c = l4_checksum(src, dst, TCP, &v[20..]);
            v[36..38].copy_from_slice(&c.to_be_bytes());
        }
        UDP => {
            v[20..22].copy_from_slice(&sport.to_be_bytes());
            v[22..24].copy_from_slice(&dport.to_be_bytes());
            v[24..26].copy_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
            let c = pktflow_traffic::checksum::udp_checksum(src, dst, &v[20..]);
            v[26..28].copy_from_slice(&c.to_be_bytes());
        }
        _ => {
            v[20] = 8; // echo request
            v[24..26].copy_from_slice(&sport.to_be_bytes()); // identifier
            let c = ip_checksum(&v[20..]);
            v[22..24].copy_from_slice(&c.to_be_bytes());
        }
    }
    v
}

/// A packet with the IP header annotation set (offset 0) and timestamp `t_s` seconds.
pub fn pkt(bytes: &[u8], t_s: f64) -> Packet {
    let mut p = Packet::from_bytes(bytes);
    p.set_ip_header(0, ((bytes[0] & 0x0f) as usize) * 4);
    p.anno.timestamp_ns = (t_s * 1e9) as u64;
    p
}

/// (saddr, sport, daddr, dport) of a raw IP packet.
pub fn flow(v: &[u8]) -> ([u8; 4], u16, [u8; 4], u16) {
    (
        [v[12], v[13], v[14], v[15]],
        be16(v, 20),
        [v[16], v[17], v[18], v[19]],
        be16(v, 22),
    )
}

/// IP checksum valid and (TCP/UDP) L4 checksum valid, recomputed from scratch.
pub fn checksums_ok(v: &[u8]) -> bool {
    let hl = ((v[0] & 0x0f) as usize) * 4;
    if ip_checksum(&v[..hl]) != 0 {
        return false;
    }
    let src = [v[12], v[13], v[14], v[15]];
    let dst = [v[16], v[17], v[18], v[19]];
    match v[9] {
        TCP => l4_checksum_ok(src, dst, TCP, &v[hl..]),
        UDP => be16(v, hl + 6) == 0 || l4_checksum_ok(src, dst, UDP, &v[hl..]),
        _ => ip_checksum(&v[hl..]) == 0,
    }
}

pub fn graph(elems: &[(&str, &str, &str)], conns: &[(usize, usize, usize, usize)]) -> AppGraph {
    let mut g = AppGraph::new("t.click");
    for (i, (n, c, cfg)) in elems.iter().enumerate() {
        g.add_element(n, c, cfg, Span::new("t.click", i as u32 + 1, 1));
    }
    for (i, &(a, ap, b, bp)) in conns.iter().enumerate() {
        g.connect(a, ap, b, bp, Span::new("t.click", 100 + i as u32, 1));
    }
    g
}

pub fn router(g: AppGraph) -> Router {
    match Router::new(g, &RouterOptions::default()) {
        Ok(r) => r,
        Err(e) => panic!(
            "{}",
            e.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        ),
    }
}

/// Inject `p` on interface `iface`; returns (trace, packets that left: (sink element, bytes)).
pub fn send(r: &mut Router, iface: usize, p: Packet) -> (PacketTrace, Vec<(u32, Vec<u8>)>) {
    r.set_tap(true);
    let t = r.inject(iface, p).unwrap().clone();
    let out = r
        .take_departed()
        .map(|(e, p)| (e, p.data().to_vec()))
        .collect();
    (t, out)
}

pub fn drop_reasons(t: &PacketTrace) -> Vec<&'static str> {
    t.fates
        .iter()
        .filter_map(|f| match f {
            Fate::Drop { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect()
}
