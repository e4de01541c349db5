//! The SOSP two-interface IP router (`apps/router.click`, parsed by pktflow-click) run on
//! hand-built packets: ARP answered and resolved, forwarding, bad headers dropped with their
//! reason, TTL expiry answered from the right interface, options, fragmentation, ICMP needfrag,
//! redirect and parameter problem, and the per-packet costs of a plain forwarded packet.
mod router_common;

use pktflow_elements::net;
use pktflow_elements::{Router, RouterOptions};
use pktflow_model::{MemType, PacketTrace};
use pktflow_traffic::packet::PacketType;
use pktflow_traffic::Packet;
use router_common::*;

const A: [u8; 4] = [10, 0, 0, 2];
const A2: [u8; 4] = [10, 0, 0, 3];
const B: [u8; 4] = [192, 168, 1, 7];

struct Net {
    r: Router,
    ts: u64,
}

/// What one injected packet caused: its trace and the frames that left, per device.
struct Sent {
    trace: PacketTrace,
    out: Vec<(String, Vec<u8>)>,
}

impl Net {
    fn new() -> Net {
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../apps/router.click"
        ))
        .unwrap();
        let parsed =
            pktflow_click::parse_str(&text, "router.click").unwrap_or_else(|d| panic!("{d:?}"));
        let mut r = Router::new(parsed.graph, &RouterOptions::default()).unwrap_or_else(|d| {
            panic!("{:?}", d.iter().map(|x| x.to_string()).collect::<Vec<_>>())
        });
        r.set_tap(true);
        Net { r, ts: 1_000_000 }
    }

    fn send_pkt(&mut self, dev: &str, mut p: Packet) -> Sent {
        self.ts += 1_000_000;
        p.anno.timestamp_ns = self.ts;
        let iface = self.r.source_index_of_device(dev).unwrap();
        let trace = self.r.inject(iface, p).unwrap().clone();
        let names: Vec<String> = self.r.element_names().map(String::from).collect();
        let out = self
            .r
            .take_departed()
            .map(|(e, p)| (names[e as usize].clone(), p.data().to_vec()))
            .collect();
        assert_eq!(self.r.conservation_errors, 0);
        Sent { trace, out }
    }

    fn send(&mut self, dev: &str, frame: Vec<u8>) -> Sent {
        self.send_pkt(dev, Packet::from_bytes(&frame))
    }

    /// Teach the router's ARP tables: a reply from (ip, eth) arriving on `dev`.
    fn learn(&mut self, dev: &str, ip: [u8; 4], eth: [u8; 6]) {
        let (my_ip, my_eth) = if dev == "eth0" {
            ([10, 0, 0, 1], ETH0)
        } else {
            ([192, 168, 1, 1], ETH1)
        };
        let s = self.send(dev, arp(net::ARP_OP_REPLY, eth, ip, my_eth, my_ip, my_eth));
        assert!(s.out.is_empty());
    }
}

fn ip_frame(to: [u8; 6], from: [u8; 6], ip: Vec<u8>) -> Vec<u8> {
    ether(to, from, net::ETHERTYPE_IP, &ip)
}

fn only_out<'a>(s: &'a Sent, dev: &str) -> &'a [u8] {
    assert_eq!(
        s.out.len(),
        1,
        "expected one frame out, got {:?} (fates {:?})",
        s.out.iter().map(|o| &o.0).collect::<Vec<_>>(),
        s.trace.fates
    );
    assert_eq!(s.out[0].0, dev);
    &s.out[0].1
}

#[test]
fn arp_requests_for_the_router_are_answered() {
    let mut n = Net::new();
    let s = n.send(
        "eth0",
        arp(
            net::ARP_OP_REQUEST,
            HOST_A,
            A,
            [0; 6],
            [10, 0, 0, 1],
            net::ETHER_BROADCAST,
        ),
    );
    let d = only_out(&s, "todev0");
    assert_eq!((net::ether_dst(d), net::ether_src(d)), (HOST_A, ETH0));
    let a = &d[14..];
    assert_eq!(
        (
            net::arp_op(a),
            net::arp_sha(a),
            net::arp_spa(a),
            net::arp_tpa(a)
        ),
        (2, ETH0, [10, 0, 0, 1], A)
    );
    // Not for us: no answer.
    let s = n.send(
        "eth1",
        arp(
            net::ARP_OP_REQUEST,
            HOST_B,
            B,
            [0; 6],
            [192, 168, 1, 99],
            net::ETHER_BROADCAST,
        ),
    );
    assert!(s.out.is_empty());
    assert!(drops(&s.trace).contains(&"arp not answered"));
}

#[test]
fn forwarding_waits_for_arp_then_releases() {
    let mut n = Net::new();
    let orig = ipv4(A, B, 64, &[], 100, false);
    let s = n.send("eth0", ip_frame(ETH0, HOST_A, orig.clone()));
    let q = only_out(&s, "todev1");
    assert_eq!(net::ether_type(q), net::ETHERTYPE_ARP);
    assert_eq!(
        (
            net::arp_op(&q[14..]),
            net::arp_spa(&q[14..]),
            net::arp_tpa(&q[14..])
        ),
        (1, [192, 168, 1, 1], B)
    );
    assert_eq!(n.r.held(), vec![("arpq1".to_string(), 1)]);
    // The reply releases the held packet on eth1.
    let s = n.send(
        "eth1",
        arp(net::ARP_OP_REPLY, HOST_B, B, ETH1, [192, 168, 1, 1], ETH1),
    );
    let d = only_out(&s, "todev1");
    assert_eq!(
        (net::ether_dst(d), net::ether_src(d), net::ether_type(d)),
        (HOST_B, ETH1, 0x0800)
    );
    let ip = &d[14..];
    assert_eq!(net::ip_ttl(ip), 63);
    assert_eq!(net::ip_header_sum(ip), 0);
    assert_eq!(&ip[20..], &orig[20..]);
    assert!(n.r.held().is_empty());
    // Now resolved: the next packet goes straight through.
    let s = n.send(
        "eth0",
        ip_frame(ETH0, HOST_A, ipv4(A, B, 64, &[], 10, false)),
    );
    assert_eq!(net::ether_dst(only_out(&s, "todev1")), HOST_B);
    assert_eq!(n.r.stats()["todev1"]["count"], 3);
}

#[test]
fn bad_headers_are_dropped_with_their_reason() {
    let mut n = Net::new();
    let mut bad_sum = ipv4(A, B, 64, &[], 20, false);
    bad_sum[10] ^= 0x55;
    let s = n.send("eth0", ip_frame(ETH0, HOST_A, bad_sum));
    assert!(s.out.is_empty());
    assert_eq!(drops(&s.trace), vec!["bad IP checksum"]);
    let mut bad_len = ipv4(A, B, 64, &[], 20, false);
    net::set_ip_total_len(&mut bad_len, 400);
    net::set_ip_checksum(&mut bad_len);
    let s = n.send("eth0", ip_frame(ETH0, HOST_A, bad_len));
    assert_eq!(drops(&s.trace), vec!["bad IP length"]);
    let s = n.send(
        "eth0",
        ip_frame(
            ETH0,
            HOST_A,
            ipv4([10, 255, 255, 255], B, 64, &[], 20, false),
        ),
    );
    assert_eq!(drops(&s.trace), vec!["bad source address"]);
    // Non-IP, non-ARP frames: printed (counted) and discarded.
    let s = n.send("eth0", ether(ETH0, HOST_A, 0x86dd, &[0; 40]));
    assert_eq!(drops(&s.trace), vec!["Discard"]);
    // Link-level broadcasts are not forwarded.
    let mut p = Packet::from_bytes(&ip_frame(
        net::ETHER_BROADCAST,
        HOST_A,
        ipv4(A, B, 64, &[], 20, false),
    ));
    p.anno.packet_type = PacketType::Broadcast;
    let s = n.send_pkt("eth0", p);
    assert_eq!(drops(&s.trace), vec!["link broadcast"]);
}

#[test]
fn ttl_expiry_is_answered_from_the_outgoing_interface_address() {
    let mut n = Net::new();
    n.learn("eth1", B, HOST_B);
    // From B on eth1 towards 10.0.0.5 (via eth0) with TTL 1.
    let orig = ipv4(B, [10, 0, 0, 5], 1, &[], 40, false);
    let s = n.send("eth1", ip_frame(ETH1, HOST_B, orig.clone()));
    assert!(drops(&s.trace).contains(&"icmp error sent"));
    let d = only_out(&s, "todev1");
    assert_eq!(net::ether_dst(d), HOST_B);
    let ip = &d[14..];
    // ICMPError(10.0.0.1, ...) built it; FixIPSrc on the eth1 path made the source eth1's.
    assert_eq!(
        (net::ip_src(ip), net::ip_dst(ip), net::ip_proto(ip)),
        ([192, 168, 1, 1], B, 1)
    );
    assert_eq!(net::ip_header_sum(ip), 0);
    assert_eq!(
        net::ip_ttl(ip),
        199,
        "the error's own TTL (200, Click's) was decremented on the way out"
    );
    assert_eq!((ip[20], ip[21]), (11, 0));
    assert_eq!(pktflow_traffic::checksum::ip_checksum(&ip[20..]), 0);
    // The whole original (60 bytes) is quoted: it fits in the 576-byte limit.
    assert_eq!(&ip[28..], &orig[..]);
}

#[test]
fn record_route_option_is_filled_with_the_outgoing_address() {
    let mut n = Net::new();
    n.learn("eth0", A, HOST_A);
    let rr = [7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0];
    let orig = ipv4(B, A, 30, &rr, 16, false);
    let s = n.send("eth1", ip_frame(ETH1, HOST_B, orig.clone()));
    let ip = &only_out(&s, "todev0")[14..];
    assert_eq!(ip[22], 8, "pointer advanced");
    assert_eq!(&ip[23..27], &[10, 0, 0, 1]);
    assert_eq!(net::ip_header_sum(ip), 0);
    assert_eq!(&ip[32..], &orig[32..]);
    // A malformed option gets a parameter problem pointing at it, sent back to B on eth1.
    n.learn("eth1", B, HOST_B);
    let bad = ipv4(B, A, 30, &[7, 7, 2, 0, 0, 0, 0, 0], 16, false);
    let s = n.send("eth1", ip_frame(ETH1, HOST_B, bad));
    let ip = &only_out(&s, "todev1")[14..];
    assert_eq!((net::ip_src(ip), net::ip_dst(ip)), ([192, 168, 1, 1], B));
    assert_eq!((ip[20], ip[21], ip[24]), (12, 0, 22));
}

#[test]
fn large_packets_are_fragmented_at_the_mtu_and_df_gets_needfrag() {
    let mut n = Net::new();
    n.learn("eth1", B, HOST_B);
    n.learn("eth0", A, HOST_A);
    let orig = ipv4(A, B, 64, &[], 3200, false);
    let s = n.send("eth0", ip_frame(ETH0, HOST_A, orig.clone()));
    assert_eq!(s.out.len(), 3);
    let frags: Vec<Vec<u8>> = s
        .out
        .iter()
        .map(|(dev, f)| {
            assert_eq!(dev, "todev1");
            assert!(f.len() - 14 <= 1500);
            assert_eq!(net::ether_dst(f), HOST_B);
            f[14..].to_vec()
        })
        .collect();
    let (h, payload) = reassemble(&frags);
    assert_eq!(payload, &orig[20..]);
    let mut want = orig[..20].to_vec();
    want[8] -= 1;
    net::set_ip_checksum(&mut want);
    assert_eq!(
        h, want,
        "reassembled header = original with TTL decremented"
    );
    // DF: an ICMP unreachable/needfrag goes back to A from eth0's address.
    let s = n.send(
        "eth0",
        ip_frame(ETH0, HOST_A, ipv4(A, B, 64, &[], 3200, true)),
    );
    let ip = &only_out(&s, "todev0")[14..];
    assert_eq!((net::ip_src(ip), net::ip_dst(ip)), ([10, 0, 0, 1], A));
    assert_eq!((ip[20], ip[21]), (3, 4));
}

#[test]
fn redirect_when_leaving_by_the_arrival_interface() {
    let mut n = Net::new();
    n.learn("eth0", A, HOST_A);
    n.learn("eth0", A2, [2, 0, 0, 0, 0, 3]);
    let s = n.send(
        "eth0",
        ip_frame(ETH0, HOST_A, ipv4(A, A2, 64, &[], 16, false)),
    );
    assert_eq!(s.out.len(), 2, "{:?}", s.trace.fates);
    // PaintTee sends its copy (which becomes the redirect) before the original, as Click
    // does, so the redirect is queued first.
    let fwd = &s.out[1].1;
    assert_eq!(net::ether_dst(fwd), [2, 0, 0, 0, 0, 3]);
    let red = &s.out[0].1[14..];
    assert_eq!((net::ip_src(red), net::ip_dst(red)), ([10, 0, 0, 1], A));
    assert_eq!((red[20], red[21]), (5, 1));
    assert_eq!(&red[24..28], &A2, "gateway = the next hop");
}

#[test]
fn plain_forwarded_packet_costs() {
    let mut n = Net::new();
    n.learn("eth1", B, HOST_B);
    // Warm the ARP entry, then measure a 64-byte frame eth0 -> eth1.
    let frame = ip_frame(ETH0, HOST_A, ipv4(A, B, 64, &[], 26, false));
    assert_eq!(frame.len(), 60);
    let s = n.send("eth0", frame);
    only_out(&s, "todev1");
    let t = &s.trace;
    let mut bytes = [0u64; 5];
    for a in &t.accesses {
        bytes[a.mem as usize] += a.bytes as u64;
    }
    eprintln!(
        "router, 60-byte frame eth0->eth1: {} visits, {} instructions; bytes: packet data {}, meta {}, static {}, dynamic {}, stack {}",
        t.visits.len(),
        t.instructions(),
        bytes[MemType::PacketData as usize],
        bytes[MemType::PacketMeta as usize],
        bytes[MemType::StaticState as usize],
        bytes[MemType::DynamicState as usize],
        bytes[MemType::Stack as usize]
    );
    let names: Vec<String> = n.r.element_names().map(String::from).collect();
    for v in &t.visits {
        let acc: Vec<String> = t
            .accesses_of(v)
            .iter()
            .map(|a| format!("{}:{:?}{}", a.mem.name(), a.kind, a.bytes))
            .collect();
        eprintln!(
            "  {:<24} {:>4} instr  {}",
            names[v.element as usize],
            v.instructions,
            acc.join(" ")
        );
    }
    // Seed 000: ~16 tasks per packet; Table 2 ballpark (meta 42 B, static 5 B, dynamic 44 B).
    assert!(
        (14..=18).contains(&t.visits.len()),
        "{} visits",
        t.visits.len()
    );
    assert!((20..=80).contains(&bytes[MemType::PacketMeta as usize]));
    assert!((4..=16).contains(&bytes[MemType::StaticState as usize]));
    assert!((30..=80).contains(&bytes[MemType::DynamicState as usize]));
    assert!((100..=600).contains(&t.instructions()));
    // Persistent accesses name their object and key: the ARP entry of B.
    let key = u32::from_be_bytes(B) as u64;
    assert!(t
        .accesses
        .iter()
        .any(|a| a.mem == MemType::DynamicState && a.key == key));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
    /// Damaged frames (valid IP/ARP frames with random bytes overwritten and random lengths)
    /// never panic the router, and every packet is accounted for.
    #[test]
    fn damaged_frames_are_handled(seeds in proptest::collection::vec((0u8..4, proptest::prelude::any::<u64>(), 0usize..6, 0usize..120), 1..12)) {
        let mut n = Net::new();
        n.learn("eth1", B, HOST_B);
        n.learn("eth0", A, HOST_A);
        for (kind, r, flips, cut) in seeds {
            let mut f = match kind {
                0 => ip_frame(ETH0, HOST_A, ipv4(A, B, (r % 4) as u8, &[7, 7, 4, 0, 0, 0, 0, 0], 60, r & 1 == 1)),
                1 => ip_frame(ETH1, HOST_B, ipv4(B, A, 64, &[68, 12, 5, 1, 0, 0, 0, 0, 0, 0, 0, 0], 1600, false)),
                2 => arp(net::ARP_OP_REPLY, HOST_B, B, ETH1, [192, 168, 1, 1], ETH1),
                _ => arp(net::ARP_OP_REQUEST, HOST_A, A, [0; 6], [10, 0, 0, 1], net::ETHER_BROADCAST),
            };
            let mut x = r;
            for _ in 0..flips {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let i = 12 + (x >> 33) as usize % (f.len() - 12);
                f[i] = (x >> 17) as u8;
            }
            f.truncate(f.len().saturating_sub(cut).max(1));
            let dev = if kind == 1 || kind == 2 { "eth1" } else { "eth0" };
            n.send(dev, f);
        }
        proptest::prop_assert_eq!(n.r.conservation_errors, 0);
    }
}
