//! IP router elements: the classes of Click's IP router (Kohler et al., TOCS 2000) that operate
//! on Ethernet/IPv4/ARP/ICMP bytes: classification, ARP, header checks, routing-table lookup
//! (with a 16-8-8 multibit trie that handles full BGP tables), options, TTL, fragmentation,
//! ICMP errors, encapsulation. Every element's doc header states its Click semantics, ports
//! and cost rule.
pub(crate) mod arp_querier;
mod arp_responder;
pub mod arp_table;
pub mod check_ip_header;
pub mod classifier;
pub mod dec_ip_ttl;
mod drop_broadcasts;
mod ether_encap;
mod fix_ip_src;
mod get_ip_address;
pub mod icmp_error;
mod ip_fragmenter;
pub mod ip_lookup;
pub mod ipgw_options;
pub mod lpm;
mod paint;
mod paint_tee;
mod print;
mod strip;
mod unstrip;

use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

/// Offset of the IP header in `p.data()`: the network-header annotation when it is set and
/// inside the data, else 0 (the packet starts with the IP header).
#[inline]
pub fn ip_header_offset(p: &Packet) -> usize {
    p.ip_offset().unwrap_or(0)
}

pub static CLASSES: &[ClassInfo] = &[
    classifier::CLASS,
    arp_responder::CLASS,
    arp_querier::CLASS,
    arp_table::CLASS,
    paint::CLASS,
    paint_tee::CLASS,
    strip::CLASS,
    unstrip::CLASS,
    check_ip_header::CLASS,
    get_ip_address::CLASS,
    ip_lookup::LOOKUP_IP_ROUTE,
    ip_lookup::STATIC_IP_LOOKUP,
    ip_lookup::RADIX_IP_LOOKUP,
    drop_broadcasts::CLASS,
    ipgw_options::CLASS,
    fix_ip_src::CLASS,
    dec_ip_ttl::CLASS,
    ip_fragmenter::CLASS,
    icmp_error::CLASS,
    ether_encap::CLASS,
    print::CLASS,
];

/// Helpers for the element unit tests: build elements by class name, push a packet, and
/// look at what came out.
#[cfg(test)]
pub(crate) mod testutil {
    use crate::conf::InitEnv;
    use crate::cx::Cx;
    use crate::element::Element;
    use crate::net;
    use pktflow_model::PacketTrace;
    use pktflow_traffic::Packet;

    pub fn make(class: &str, config: &str) -> Box<dyn Element> {
        let c = crate::registry::find(class).expect("class");
        (c.make)(config, &InitEnv::default()).unwrap_or_else(|e| panic!("{class}({config}): {e}"))
    }

    /// Push `p` into input `port` of `e` at time `now_ns`; returns what it emitted and the trace.
    pub fn push_at(
        e: &mut dyn Element,
        port: usize,
        p: Packet,
        now_ns: u64,
    ) -> (Vec<(usize, Packet)>, PacketTrace) {
        let mut cx = Cx::new();
        cx.now_ns = now_ns;
        e.push(port, p, &mut cx);
        (cx.take_emitted(), cx.trace.clone())
    }
    pub fn push(
        e: &mut dyn Element,
        port: usize,
        p: Packet,
    ) -> (Vec<(usize, Packet)>, PacketTrace) {
        push_at(e, port, p, 0)
    }

    pub fn drop_reasons(t: &PacketTrace) -> Vec<&'static str> {
        t.fates
            .iter()
            .filter_map(|f| match f {
                pktflow_model::Fate::Drop { reason, .. } => Some(*reason),
                _ => None,
            })
            .collect()
    }

    /// IPv4 header (+options) and `payload` pattern bytes, valid checksum.
    pub fn ipv4(
        src: [u8; 4],
        dst: [u8; 4],
        ttl: u8,
        opts: &[u8],
        payload: usize,
        frag: u16,
    ) -> Vec<u8> {
        let hl = 20 + opts.len();
        let mut v = vec![0u8; hl + payload];
        v[0] = 0x40 | (hl / 4) as u8;
        net::set_be16(&mut v, 2, (hl + payload) as u16);
        net::set_be16(&mut v, 4, 0xbeef);
        net::set_be16(&mut v, 6, frag);
        v[8] = ttl;
        v[9] = net::IP_PROTO_UDP;
        net::set_ip_src(&mut v, src);
        net::set_ip_dst(&mut v, dst);
        v[20..hl].copy_from_slice(opts);
        for (i, b) in v[hl..].iter_mut().enumerate() {
            *b = (i * 13 + 5) as u8;
        }
        net::set_ip_checksum(&mut v);
        v
    }

    pub fn arp(op: u16, sha: [u8; 6], spa: [u8; 4], tha: [u8; 6], tpa: [u8; 4]) -> Vec<u8> {
        let mut v = vec![0u8; 42];
        net::write_ether(
            &mut v,
            if op == 1 { net::ETHER_BROADCAST } else { tha },
            sha,
            net::ETHERTYPE_ARP,
        );
        net::write_arp(&mut v[14..], op, sha, spa, tha, tpa);
        v
    }
}
