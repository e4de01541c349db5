//! Hand-built packets and helpers shared by the router integration tests.
#![allow(dead_code)]
use pktflow_elements::net;
use pktflow_model::{AppGraph, Fate, PacketTrace, Span};
use pktflow_traffic::Packet;

pub const ETH0: [u8; 6] = [0x00, 0x00, 0xc0, 0xae, 0x67, 0xef];
pub const ETH1: [u8; 6] = [0x00, 0x00, 0xc0, 0x4f, 0x71, 0xef];
pub const HOST_A: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0a];
pub const HOST_B: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0b];

/// An IPv4 header + UDP-like payload of `payload` bytes (pattern bytes), with options.
pub fn ipv4(src: [u8; 4], dst: [u8; 4], ttl: u8, opts: &[u8], payload: usize, df: bool) -> Vec<u8> {
    assert_eq!(opts.len() % 4, 0);
    let hl = 20 + opts.len();
    let mut v = vec![0u8; hl + payload];
    v[0] = 0x40 | (hl / 4) as u8;
    net::set_be16(&mut v, 2, (hl + payload) as u16);
    net::set_be16(&mut v, 4, 0x1234);
    if df {
        net::set_be16(&mut v, 6, net::IP_DF);
    }
    v[8] = ttl;
    v[9] = net::IP_PROTO_UDP;
    net::set_ip_src(&mut v, src);
    net::set_ip_dst(&mut v, dst);
    v[20..hl].copy_from_slice(opts);
    for (i, b) in v[hl..].iter_mut().enumerate() {
        *b = (i * 7 + 3) as u8;
    }
    net::set_ip_checksum(&mut v);
    v
}

pub fn ether(dst: [u8; 6], src: [u8; 6], ty: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = vec![0u8; 14];
    net::write_ether(&mut v, dst, src, ty);
    v.extend_from_slice(payload);
    v
}

pub fn arp(
    op: u16,
    sha: [u8; 6],
    spa: [u8; 4],
    tha: [u8; 6],
    tpa: [u8; 4],
    eth_dst: [u8; 6],
) -> Vec<u8> {
    let mut a = [0u8; 28];
    net::write_arp(&mut a, op, sha, spa, tha, tpa);
    ether(eth_dst, sha, net::ETHERTYPE_ARP, &a)
}

pub fn pkt(bytes: &[u8]) -> Packet {
    Packet::from_bytes(bytes)
}

pub fn drops(t: &PacketTrace) -> Vec<&'static str> {
    t.fates
        .iter()
        .filter_map(|f| match f {
            Fate::Drop { reason, .. } => Some(*reason),
            _ => None,
        })
        .collect()
}

pub fn outputs(t: &PacketTrace) -> usize {
    t.fates
        .iter()
        .filter(|f| matches!(f, Fate::Output { .. }))
        .count()
}

/// A graph from (name, class, config) and (from, port, to, port).
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

/// Reassemble IP fragments (a test reassembler: sorts by offset, checks contiguity and that
/// exactly the last has MF clear). Returns (first fragment's header with MF cleared and the
/// total length fixed, payload).
pub fn reassemble(frags: &[Vec<u8>]) -> (Vec<u8>, Vec<u8>) {
    let mut fs: Vec<&Vec<u8>> = frags.iter().collect();
    fs.sort_by_key(|f| net::ip_frag_offset(f));
    let mut payload = Vec::new();
    for (i, f) in fs.iter().enumerate() {
        assert!(net::ip_header_ok(f), "fragment {i} header");
        assert_eq!(net::ip_header_sum(f), 0, "fragment {i} checksum");
        assert_eq!(net::ip_frag_offset(f), payload.len(), "fragment {i} offset");
        let mf = net::ip_frag_field(f) & net::IP_MF != 0;
        assert_eq!(mf, i + 1 < fs.len(), "MF of fragment {i}");
        let hl = net::ip_hl(f);
        payload.extend_from_slice(&f[hl..net::ip_total_len(f)]);
    }
    let first = fs[0];
    let mut h = first[..net::ip_hl(first)].to_vec();
    let ff = net::ip_frag_field(&h) & !net::IP_MF;
    net::set_be16(&mut h, 6, ff);
    let total = (h.len() + payload.len()) as u16;
    net::set_ip_total_len(&mut h, total);
    net::set_ip_checksum(&mut h);
    (h, payload)
}
