//! The IPClassifier/IPFilter syntax forms Click accepts and its configurations use: port
//! names after a protocol (`dst tcp ssh`), ICMP type names after `icmp` (`icmp echo-reply`),
//! `proto icmp`, `ip len`, byte tests `ip[9] = 17`, `port != 53` with Click's meaning
//! (neither port is 53), comments inside patterns.
mod nat_common;
use nat_common::*;
use pktflow_elements::elements::nat::ipfilter::parse_pattern;

const A: [u8; 4] = [10, 0, 0, 2];
const B: [u8; 4] = [192, 168, 1, 9];

fn m(pattern: &str, pkt: &[u8]) -> bool {
    parse_pattern(pattern)
        .unwrap_or_else(|e| panic!("'{pattern}': {e}"))
        .matches(pkt)
}

#[test]
fn click_forms() {
    let ssh = ip_packet(TCP, A, B, 40000, 22, b"x", 0x02);
    let www = ip_packet(TCP, A, B, 40000, 80, b"x", 0x02);
    let dns = ip_packet(UDP, B, A, 53, 5353, b"x", 0);
    let other = ip_packet(UDP, B, A, 1000, 2000, b"xyz", 0);
    let mut reply = ip_packet(ICMP, A, B, 0, 0, b"x", 0);
    reply[20] = 0; // ICMP type 0: echo reply
    let request = ip_packet(ICMP, A, B, 0, 0, b"x", 0);
    let mut request = request;
    request[20] = 8;
    assert!(m("dst tcp ssh", &ssh));
    assert!(!m("dst tcp ssh", &www));
    assert!(m("dst tcp www or https", &www));
    assert!(m("src or dst port dns", &dns));
    assert!(m("icmp echo-reply", &reply));
    assert!(!m("icmp echo-reply", &request));
    assert!(m("icmp type echo", &request));
    assert!(m("proto icmp", &reply));
    assert!(!m("proto icmp", &dns));
    // ip len: total length field; `other` is 20 + 8 + 3 = 31 bytes.
    assert!(m("ip len 31", &other));
    assert!(m("ip len > 30", &other));
    assert!(!m("ip len < 31", &other));
    // ip[9] is the protocol byte.
    assert!(m("ip[9] = 17", &dns));
    assert!(!m("ip[9] = 17", &ssh));
    assert!(m("ip[9] == 6", &ssh));
    // port != 53: neither port is 53 (Click), and the packet must be TCP or UDP.
    assert!(!m("port != 53", &dns));
    assert!(m("port != 53", &other));
    assert!(!m("port != 53", &reply));
    assert!(m("udp port 1234 /* a comment */ or udp port 2000", &other));
}
