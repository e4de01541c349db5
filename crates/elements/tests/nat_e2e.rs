//! The NAT gateway `apps/nat.click` (parsed by pktflow-click, with the IP router's ARP,
//! CheckIPHeader, lookup and TTL elements) run end to end on hand-built Ethernet frames:
//! inside->outside flows leave with the public address and a port from the range, replies
//! come back rewritten to the inside host, checksums valid everywhere, unsolicited traffic
//! dropped, and every packet accounted for.
mod nat_common;
use nat_common::*;
use pktflow_elements::{Router, RouterOptions};
use pktflow_model::{MemType, PacketTrace};
use pktflow_traffic::Packet;

const IN_MAC: [u8; 6] = [0x00, 0x00, 0xc0, 0xae, 0x67, 0xef];
const OUT_MAC: [u8; 6] = [0x00, 0x00, 0xc0, 0x4f, 0x71, 0xef];
const HOST_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x0a];
const GW_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0xfe];
const HOST: [u8; 4] = [10, 0, 0, 2];
const PUBLIC: [u8; 4] = [1, 0, 0, 1];
const GW: [u8; 4] = [1, 0, 0, 254];
const SERVER: [u8; 4] = [8, 8, 8, 8];

struct Nat {
    r: Router,
    ts: u64,
}

fn ether(dst: [u8; 6], src: [u8; 6], ty: u16, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(14 + payload.len());
    v.extend_from_slice(&dst);
    v.extend_from_slice(&src);
    v.extend_from_slice(&ty.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

fn arp_reply(sha: [u8; 6], spa: [u8; 4], tha: [u8; 6], tpa: [u8; 4]) -> Vec<u8> {
    let mut a = vec![0, 1, 8, 0, 6, 4, 0, 2];
    a.extend_from_slice(&sha);
    a.extend_from_slice(&spa);
    a.extend_from_slice(&tha);
    a.extend_from_slice(&tpa);
    ether(tha, sha, 0x0806, &a)
}

impl Nat {
    fn new() -> Nat {
        let text =
            std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../apps/nat.click"))
                .unwrap();
        let parsed =
            pktflow_click::parse_str(&text, "nat.click").unwrap_or_else(|d| panic!("{d:?}"));
        let mut r = Router::new(parsed.graph, &RouterOptions::default()).unwrap_or_else(|d| {
            panic!("{:?}", d.iter().map(|x| x.to_string()).collect::<Vec<_>>())
        });
        r.set_tap(true);
        let mut n = Nat { r, ts: 0 };
        // Teach both ARP tables: the inside host and the upstream router.
        let s = n.send(
            "eth0",
            arp_reply(HOST_MAC, HOST, IN_MAC, [10, 0, 0, 1]),
            0.0,
        );
        assert!(s.1.is_empty(), "{:?}", s.0.fates);
        let s = n.send("eth1", arp_reply(GW_MAC, GW, OUT_MAC, PUBLIC), 0.0);
        assert!(s.1.is_empty(), "{:?}", s.0.fates);
        n
    }

    /// Inject a frame on `dev` at time `t` s; returns the trace and the frames that left.
    fn send(&mut self, dev: &str, frame: Vec<u8>, t: f64) -> (PacketTrace, Vec<Vec<u8>>) {
        let mut p = Packet::from_bytes(&frame);
        self.ts = self.ts.max((t * 1e9) as u64);
        p.anno.timestamp_ns = self.ts;
        let iface = self.r.source_index_of_device(dev).unwrap();
        let trace = self.r.inject(iface, p).unwrap().clone();
        let out = self
            .r
            .take_departed()
            .map(|(_, p)| p.data().to_vec())
            .collect();
        assert_eq!(self.r.conservation_errors, 0);
        (trace, out)
    }

    /// An IP packet from the inside host; returns the IP packet that left on the outside.
    fn outbound(&mut self, ip: Vec<u8>, t: f64) -> (PacketTrace, Vec<u8>) {
        let (tr, out) = self.send("eth0", ether(IN_MAC, HOST_MAC, 0x0800, &ip), t);
        assert_eq!(out.len(), 1, "fates {:?}", tr.fates);
        assert_eq!(
            &out[0][..12],
            &[GW_MAC, OUT_MAC].concat()[..],
            "to the upstream router, from the outside interface"
        );
        (tr, out[0][14..].to_vec())
    }

    fn inbound(&mut self, ip: Vec<u8>, t: f64) -> (PacketTrace, Vec<Vec<u8>>) {
        let (tr, out) = self.send("eth1", ether(OUT_MAC, GW_MAC, 0x0800, &ip), t);
        (tr, out)
    }
}

#[test]
fn inside_to_outside_and_back_through_the_whole_nat() {
    let mut n = Nat::new();
    for (proto, sport) in [(UDP, 5353u16), (TCP, 40000)] {
        let (_, o) = n.outbound(
            ip_packet(proto, HOST, SERVER, sport, 53, b"request", 0x18),
            1.0,
        );
        let (sa, sp, da, dp) = flow(&o);
        assert_eq!((sa, da, dp), (PUBLIC, SERVER, 53));
        assert!(sp >= 50000, "port {sp} from the range 50000-65535");
        assert_eq!(o[8], 63, "TTL decremented");
        assert!(checksums_ok(&o), "outbound checksums");

        let (tr, back) = n.inbound(
            ip_packet(proto, SERVER, PUBLIC, 53, sp, b"response", 0x18),
            2.0,
        );
        assert_eq!(back.len(), 1, "fates {:?}", tr.fates);
        assert_eq!(&back[0][..12], &[HOST_MAC, IN_MAC].concat()[..]);
        let ip = &back[0][14..];
        assert_eq!(flow(ip), (SERVER, 53, HOST, sport));
        assert_eq!(ip[8], 63);
        assert!(checksums_ok(ip), "inbound checksums");
    }
    // ICMP goes through the IPAddrRewriter.
    let (_, o) = n.outbound(ip_packet(ICMP, HOST, SERVER, 99, 0, b"ping", 0), 3.0);
    assert_eq!(&o[12..20], &[PUBLIC, SERVER].concat()[..]);
    assert!(checksums_ok(&o));
    let (_, back) = n.inbound(ip_packet(ICMP, SERVER, PUBLIC, 99, 0, b"pong", 0), 3.5);
    assert_eq!(&back[0][14 + 12..14 + 20], &[SERVER, HOST].concat()[..]);
    // Unsolicited outside traffic has no mapping.
    let (tr, back) = n.inbound(ip_packet(UDP, SERVER, PUBLIC, 53, 61000, b"x", 0), 4.0);
    assert!(back.is_empty());
    assert_eq!(drop_reasons(&tr), vec!["no mapping"]);
    // Traffic for other outside addresses is not NAT's.
    let (tr, back) = n.inbound(
        ip_packet(UDP, SERVER, [1, 0, 0, 7], 53, 61000, b"x", 0),
        4.0,
    );
    assert!(back.is_empty());
    assert!(!drop_reasons(&tr).is_empty());
    let st = n.r.stats();
    let rw = st
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.as_str() == "rw")
        .unwrap()
        .1;
    assert_eq!(rw["table_size"], 2);
}

#[test]
fn mappings_expire_in_the_whole_nat() {
    let mut n = Nat::new();
    let (_, o) = n.outbound(ip_packet(UDP, HOST, SERVER, 7000, 53, b"q", 0), 1.0);
    let sp = flow(&o).1;
    // Click's default UDP timeout is 5 minutes.
    let (_, back) = n.inbound(ip_packet(UDP, SERVER, PUBLIC, 53, sp, b"a", 0), 290.0);
    // The inside ARP entry learned at 0 s is older than POLL_TIMEOUT (60 s): the packet goes,
    // followed by a unicast ARP poll for the host, as in Click.
    assert_eq!(back.len(), 2);
    assert_eq!(&back[0][12..14], &[0x08, 0x00]);
    assert_eq!(&back[1][12..14], &[0x08, 0x06]);
    assert_eq!(&back[1][..6], &HOST_MAC);
    let (tr, back) = n.inbound(ip_packet(UDP, SERVER, PUBLIC, 53, sp, b"a", 0), 600.0);
    assert!(back.is_empty());
    assert_eq!(drop_reasons(&tr), vec!["no mapping"]);
}

/// The per-packet cost of a translated packet, by memory type (printed with --nocapture).
#[test]
fn per_packet_costs_of_translated_packets() {
    let mut n = Nat::new();
    let mut rows = Vec::new();
    let (t_new, o) = n.outbound(
        ip_packet(UDP, HOST, SERVER, 8000, 53, b"0123456789", 0),
        1.0,
    );
    let sp = flow(&o).1;
    let (t_hit, _) = n.outbound(
        ip_packet(UDP, HOST, SERVER, 8000, 53, b"0123456789", 0),
        1.1,
    );
    let (t_rep, _) = n.inbound(
        ip_packet(UDP, SERVER, PUBLIC, 53, sp, b"0123456789", 0),
        1.2,
    );
    for (name, t) in [
        ("new flow out", &t_new),
        ("known flow out", &t_hit),
        ("reply in", &t_rep),
    ] {
        let mut by = [0u64; 5];
        for a in &t.accesses {
            by[a.mem as usize] += a.bytes as u64;
        }
        let shared: u64 = t
            .visits
            .iter()
            .filter(|v| t.accesses_of(v).iter().any(|a| a.mem.is_persistent()))
            .map(|v| v.instructions as u64)
            .sum();
        rows.push(format!(
            "{name:15} visits {:2} instr {:4} (in visits touching persistent state {:4}) bytes: meta {:3} pkt {:4} static {:3} dynamic {:3} stack {:3}",
            t.visits.len(),
            t.instructions(),
            shared,
            by[MemType::PacketMeta as usize],
            by[MemType::PacketData as usize],
            by[MemType::StaticState as usize],
            by[MemType::DynamicState as usize],
            by[MemType::Stack as usize],
        ));
        assert!(
            by[MemType::DynamicState as usize] > 0,
            "{name}: the flow table is dynamic state"
        );
    }
    println!("{}", rows.join("\n"));
    // A new flow writes more dynamic state than a known one.
    let dyn_w = |t: &PacketTrace| {
        t.accesses
            .iter()
            .filter(|a| {
                a.mem == MemType::DynamicState && a.kind == pktflow_model::AccessKind::Write
            })
            .map(|a| a.bytes)
            .sum::<u32>()
    };
    assert!(dyn_w(&t_new) > dyn_w(&t_hit));
}
