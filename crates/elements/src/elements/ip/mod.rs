//! IP router elements: the classes of Click's IP router (Kohler et al., TOCS 2000) that operate
//! on Ethernet/IPv4/ARP/ICMP bytes: classification, ARP, header checks, routing-table lookup
//! (with a 16-8-8 multibit trie that handles full BGP tables), options, TTL, fragmentation,
//! ICMP errors, encapsulation. Every element's doc header states its Click semantics, ports
//! and cost rule.
mod arp_querier;
mod arp_responder;
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
