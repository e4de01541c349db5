//! Seeded traffic for the NetThreads thesis's benchmark applications (Labrecque, PhD thesis,
//! University of Toronto, 2011, Table 3.1), as the thesis describes each input. Every generator
//! is deterministic for a seed; timestamps start at 0.
//!
//! - [`Workload::Classifier`] and [`Workload::Nat`]: the thesis used a 2007 trans-Pacific
//!   trace (not redistributable) "with HTTP server replies added to packets presumably coming
//!   from an HTTP server". Here: `FLOWS` (256) concurrent TCP flows, each packet from a random
//!   flow; a flow ends after a geometric number of packets (mean 20) and is replaced. 40% of the
//!   flows are HTTP servers (source port 80) whose first segments carry an HTTP reply header
//!   (`HTTP/1.1 200 OK`, a `Server:` line, `Content-Type:`), cut at random into segments; the
//!   others carry random bytes. Payloads 0 to 1,400 bytes (uniform), 20 µs apart. The NAT
//!   workload is the same stream from inside hosts (10.0.0.0/16) to outside servers.
//! - [`Workload::Udhcp`]: DHCP clients of a 20,000-host network. The thesis models "the
//!   expected DHCP message distribution" after Bahlmann (2005); that distribution is not in the
//!   thesis, so pktflow's assumption is stated instead: each packet comes with probability 0.5
//!   from a host already seen (uniform among them), otherwise from a new host; a new host sends
//!   DISCOVER; a host that discovered at least 1 s ago sends REQUEST (selecting: option 54, no
//!   option 50), otherwise retransmits DISCOVER; a bound host renews (REQUEST, 90%) or releases
//!   (RELEASE, 10%, after which it is new again). Packets 10 ms apart.
//! - [`Workload::Intruder`]: quoted: "256 flows sending random messages of at most 128 bytes,
//!   broken randomly in at most 4 fragments, containing 10% of 'known attacks'. The fragments
//!   are shuffled with a sliding window of 16 and encapsulated in IP packets." Messages of 1 to
//!   128 random lower-case letters and spaces from a random flow; an attack message has one
//!   word of [`INTRUDER_DICTIONARY`] inserted at a random place; fragments cut at random
//!   points; each packet sent is a uniformly chosen member of a 16-fragment window. IPv4
//!   protocol 253 (reserved for experiments), with the 12-byte fragment header the
//!   `IntruderDetector` elements read. 10 µs apart.
//! - [`Workload::Echo`]: copies of one 64-byte ICMP echo request ("Libnet 1.4 copies of one
//!   ping packet"), 10 µs apart.
use crate::pcap::TracePacket;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Attack signatures the Intruder workload inserts and the detectors search for. They contain
/// characters a random message (lower-case letters and spaces) never does, so no clean message
/// matches by accident.
pub const INTRUDER_DICTIONARY: &[&str] = &[
    "/bin/sh -i",
    "cmd.exe /c",
    "%00%2e%2e/",
    "<script>alert(",
    "' OR '1'='1",
    "\\x90\\x90\\x90",
    "USER anonymous;",
    "../../etc/passwd",
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    Classifier,
    Nat,
    Udhcp,
    Intruder,
    Echo,
}

impl Workload {
    /// The workload an element class of a configuration asks for.
    pub fn for_element_class(class: &str) -> Option<Workload> {
        Some(match class {
            "RegexFlowClassifier" => Workload::Classifier,
            "FlowStatsNAT" => Workload::Nat,
            "DHCPServer" => Workload::Udhcp,
            "IntruderDetector" | "IntruderDetector2" => Workload::Intruder,
            "EchoBack" => Workload::Echo,
            _ => return None,
        })
    }
}

/// `packets` packets of workload `w` for `seed`.
pub fn generate(w: Workload, packets: u64, seed: u64) -> Box<dyn Iterator<Item = TracePacket>> {
    let r = ChaCha8Rng::seed_from_u64(seed ^ 0x7e5e_5eed);
    match w {
        Workload::Classifier | Workload::Nat => {
            Box::new(Tcp::new(r, w == Workload::Nat).take(packets as usize))
        }
        Workload::Udhcp => Box::new(Dhcp::new(r).take(packets as usize)),
        Workload::Intruder => Box::new(Intruder::new(r).take(packets as usize)),
        Workload::Echo => Box::new((0..packets).map(|i| TracePacket {
            timestamp_ns: i * 10_000,
            iface: 0,
            data: echo_frame(),
            orig_len: 64,
        })),
    }
}

const ROUTER_MAC: [u8; 6] = [0x00, 0x00, 0xc0, 0xae, 0x67, 0xef];

fn host_mac(id: u32) -> [u8; 6] {
    let b = id.to_be_bytes();
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

fn ip_frame(
    dmac: [u8; 6],
    smac: [u8; 6],
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    l4: &[u8],
) -> Vec<u8> {
    let mut f = Vec::with_capacity(34 + l4.len());
    f.extend_from_slice(&dmac);
    f.extend_from_slice(&smac);
    f.extend_from_slice(&[0x08, 0x00]);
    let total = (20 + l4.len()) as u16;
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&[0, 0, 0x40, 0, 64, proto, 0, 0]);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let c = crate::ip_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(l4);
    f
}

fn l4_fixed(src: [u8; 4], dst: [u8; 4], proto: u8, mut seg: Vec<u8>) -> Vec<u8> {
    let at = if proto == 6 { 16 } else { 6 };
    let mut c = crate::l4_checksum(src, dst, proto, &seg);
    if proto == 17 && c == 0 {
        c = 0xffff;
    }
    seg[at..at + 2].copy_from_slice(&c.to_be_bytes());
    seg
}

fn echo_frame() -> Vec<u8> {
    let mut icmp = vec![8, 0, 0, 0, 0x12, 0x34, 0, 1];
    icmp.resize(64 - 34, 0xa5);
    let c = crate::ip_checksum(&icmp);
    icmp[2..4].copy_from_slice(&c.to_be_bytes());
    ip_frame(
        ROUTER_MAC,
        host_mac(1),
        [10, 0, 0, 2],
        [10, 0, 0, 1],
        1,
        &icmp,
    )
}

// ---- TCP flows (Classifier, NAT) ----

struct Flow {
    client: [u8; 4],
    server: [u8; 4],
    cport: u16,
    sport: u16,
    seq: u32,
    http: Vec<u8>,
    left: u32,
}

struct Tcp {
    r: ChaCha8Rng,
    flows: Vec<Flow>,
    nat: bool,
    t: u64,
}

const HTTP_REPLY: &[u8] = b"HTTP/1.1 200 OK\r\nServer: Apache/2.2.3\r\nDate: Mon, 15 Jan 2007 12:00:00 GMT\r\nContent-Type: text/html\r\nContent-Length: 1024\r\n\r\n<html><body>";

impl Tcp {
    fn new(mut r: ChaCha8Rng, nat: bool) -> Tcp {
        let flows = (0..256).map(|_| Self::flow(&mut r)).collect();
        Tcp {
            r,
            flows,
            nat,
            t: 0,
        }
    }
    fn flow(r: &mut ChaCha8Rng) -> Flow {
        let http = r.gen_bool(0.4);
        Flow {
            client: [10, 0, r.gen(), r.gen_range(1..255)],
            server: [r.gen_range(1..224), r.gen(), r.gen(), r.gen_range(1..255)],
            cport: r.gen_range(1024..65535),
            sport: if http { 80 } else { r.gen_range(1..65535) },
            seq: r.gen(),
            http: if http {
                HTTP_REPLY.to_vec()
            } else {
                Vec::new()
            },
            left: 1 + (r.gen::<f64>().ln() / (1.0f64 - 1.0 / 20.0).ln()) as u32,
        }
    }
}

impl Iterator for Tcp {
    type Item = TracePacket;
    fn next(&mut self) -> Option<TracePacket> {
        let i = self.r.gen_range(0..self.flows.len());
        let len = self.r.gen_range(0..=1400usize);
        let f = &mut self.flows[i];
        let mut payload: Vec<u8> = if !f.http.is_empty() {
            let take = self.r.gen_range(1..=f.http.len()).min(len.max(1));
            f.http.drain(..take).collect()
        } else {
            (0..len).map(|_| self.r.gen()).collect()
        };
        if f.sport == 80 && f.http.is_empty() && payload.is_empty() {
            payload = b"<p>".to_vec();
        }
        // Classifier: server -> client (the replies); NAT: client (inside) -> server.
        let (src, dst, sp, dp) = if self.nat {
            (f.client, f.server, f.cport, f.sport)
        } else {
            (f.server, f.client, f.sport, f.cport)
        };
        let mut seg = Vec::with_capacity(20 + payload.len());
        seg.extend_from_slice(&sp.to_be_bytes());
        seg.extend_from_slice(&dp.to_be_bytes());
        seg.extend_from_slice(&f.seq.to_be_bytes());
        seg.extend_from_slice(&[0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
        seg.extend_from_slice(&payload);
        f.seq = f.seq.wrapping_add(payload.len() as u32);
        f.left = f.left.saturating_sub(1);
        if f.left == 0 {
            self.flows[i] = Self::flow(&mut self.r);
        }
        let data = ip_frame(
            ROUTER_MAC,
            host_mac(u32::from_be_bytes(src)),
            src,
            dst,
            6,
            &l4_fixed(src, dst, 6, seg),
        );
        self.t += 20_000;
        Some(TracePacket {
            timestamp_ns: self.t - 20_000,
            iface: 0,
            orig_len: data.len() as u32,
            data,
        })
    }
}

// ---- DHCP clients (UDHCP) ----

#[derive(Clone, Copy, PartialEq)]
enum HostState {
    Discovering(u64),
    Bound,
}

struct Dhcp {
    r: ChaCha8Rng,
    seen: Vec<(u32, HostState)>,
    t: u64,
    xid: u32,
}

/// DHCP server address the UDHCP workload's clients talk to (the `udhcp` application's).
pub const DHCP_SERVER: [u8; 4] = [10, 0, 0, 1];

impl Dhcp {
    fn new(r: ChaCha8Rng) -> Dhcp {
        Dhcp {
            r,
            seen: Vec::new(),
            t: 0,
            xid: 0,
        }
    }
    fn frame(&mut self, host: u32, kind: u8, opts: &[u8]) -> Vec<u8> {
        self.xid = self.xid.wrapping_add(1);
        let mac = host_mac(host);
        let mut b = vec![0u8; 236];
        b[0] = 1;
        b[1] = 1;
        b[2] = 6;
        b[4..8].copy_from_slice(&(host ^ 0x5a5a_0000).to_be_bytes());
        b[10] = if kind == 1 { 0x80 } else { 0 };
        b[28..34].copy_from_slice(&mac);
        b.extend_from_slice(&[99, 130, 83, 99, 53, 1, kind]);
        b.extend_from_slice(opts);
        b.push(255);
        b.resize(300, 0);
        let mut u = vec![0, 68, 0, 67];
        u.extend_from_slice(&((8 + b.len()) as u16).to_be_bytes());
        u.extend_from_slice(&[0, 0]);
        u.extend_from_slice(&b);
        let (src, dst) = ([0; 4], [255; 4]);
        ip_frame([0xff; 6], mac, src, dst, 17, &l4_fixed(src, dst, 17, u))
    }
}

impl Iterator for Dhcp {
    type Item = TracePacket;
    fn next(&mut self) -> Option<TracePacket> {
        let now = self.t;
        self.t += 10_000_000;
        let sid = [
            54,
            4,
            DHCP_SERVER[0],
            DHCP_SERVER[1],
            DHCP_SERVER[2],
            DHCP_SERVER[3],
        ];
        let data = if !self.seen.is_empty() && self.r.gen_bool(0.5) {
            let k = self.r.gen_range(0..self.seen.len());
            let (host, st) = self.seen[k];
            match st {
                HostState::Discovering(t0) if now >= t0 + 1_000_000_000 => {
                    self.seen[k].1 = HostState::Bound;
                    self.frame(host, 3, &sid)
                }
                HostState::Discovering(_) => self.frame(host, 1, &[]),
                HostState::Bound => {
                    if self.r.gen_bool(0.9) {
                        self.frame(host, 3, &[])
                    } else {
                        self.seen.swap_remove(k);
                        self.frame(host, 7, &sid)
                    }
                }
            }
        } else {
            let host = self.r.gen_range(0..20_000u32);
            match self.seen.iter().position(|s| s.0 == host) {
                Some(k) => {
                    let st = self.seen[k].1;
                    if st == HostState::Bound {
                        self.frame(host, 3, &[])
                    } else {
                        self.frame(host, 1, &[])
                    }
                }
                None => {
                    self.seen.push((host, HostState::Discovering(now)));
                    self.frame(host, 1, &[])
                }
            }
        };
        Some(TracePacket {
            timestamp_ns: now,
            iface: 0,
            orig_len: data.len() as u32,
            data,
        })
    }
}

// ---- Intruder ----

struct Intruder {
    r: ChaCha8Rng,
    window: Vec<Vec<u8>>,
    msg_no: Vec<u16>,
    t: u64,
}

impl Intruder {
    fn new(r: ChaCha8Rng) -> Intruder {
        Intruder {
            r,
            window: Vec::new(),
            msg_no: vec![0; 256],
            t: 0,
        }
    }
    fn message(&mut self) {
        let flow = self.r.gen_range(0..256u32);
        let msg = self.msg_no[flow as usize];
        self.msg_no[flow as usize] = msg.wrapping_add(1);
        let attack = self.r.gen_bool(0.1);
        let len = self.r.gen_range(1..=128usize);
        let mut m: Vec<u8> = (0..len)
            .map(|_| {
                let c = self.r.gen_range(0..27u8);
                if c == 26 {
                    b' '
                } else {
                    b'a' + c
                }
            })
            .collect();
        if attack {
            let w = INTRUDER_DICTIONARY[self.r.gen_range(0..INTRUDER_DICTIONARY.len())].as_bytes();
            let keep = m.len().saturating_sub(w.len());
            m.truncate(keep);
            let at = self.r.gen_range(0..=m.len());
            m.splice(at..at, w.iter().copied());
        }
        let nfrag = self.r.gen_range(1..=4usize).min(m.len());
        let mut cuts: Vec<usize> = (0..nfrag - 1)
            .map(|_| self.r.gen_range(1..m.len()))
            .collect();
        cuts.sort_unstable();
        cuts.dedup();
        let mut bounds = vec![0];
        bounds.extend(cuts);
        bounds.push(m.len());
        let n = bounds.len() - 1;
        let src = [10, 1, (flow >> 8) as u8, flow as u8];
        for i in 0..n {
            let mut p = flow.to_be_bytes().to_vec();
            p.extend_from_slice(&msg.to_be_bytes());
            p.extend_from_slice(&[i as u8, n as u8]);
            p.extend_from_slice(&(m.len() as u16).to_be_bytes());
            p.extend_from_slice(&(bounds[i] as u16).to_be_bytes());
            p.extend_from_slice(&m[bounds[i]..bounds[i + 1]]);
            self.window.push(ip_frame(
                ROUTER_MAC,
                host_mac(flow),
                src,
                [10, 0, 0, 1],
                253,
                &p,
            ));
        }
    }
}

impl Iterator for Intruder {
    type Item = TracePacket;
    fn next(&mut self) -> Option<TracePacket> {
        while self.window.len() < 16 {
            self.message();
        }
        let k = self.r.gen_range(0..self.window.len());
        let data = self.window.swap_remove(k);
        self.t += 10_000;
        Some(TracePacket {
            timestamp_ns: self.t - 10_000,
            iface: 0,
            orig_len: data.len() as u32,
            data,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deterministic_per_seed_and_well_formed() {
        for w in [
            Workload::Classifier,
            Workload::Nat,
            Workload::Udhcp,
            Workload::Intruder,
            Workload::Echo,
        ] {
            let a: Vec<_> = generate(w, 300, 5).collect();
            let b: Vec<_> = generate(w, 300, 5).collect();
            assert_eq!(a, b);
            assert_eq!(a.len(), 300);
            for p in &a {
                assert_eq!(crate::ip_checksum(&p.data[14..34]), 0);
                let proto = p.data[23];
                if proto == 6 || proto == 17 {
                    let src = p.data[26..30].try_into().unwrap();
                    let dst = p.data[30..34].try_into().unwrap();
                    assert!(crate::checksum::l4_checksum_ok(
                        src,
                        dst,
                        proto,
                        &p.data[34..]
                    ));
                }
            }
        }
        let c: Vec<_> = generate(Workload::Intruder, 300, 6).collect();
        assert_ne!(c, generate(Workload::Intruder, 300, 5).collect::<Vec<_>>());
    }

    #[test]
    fn intruder_messages_follow_the_thesis_description() {
        let mut frags = std::collections::HashMap::new();
        for p in generate(Workload::Intruder, 4000, 1) {
            let h = &p.data[34..];
            let len = u16::from_be_bytes([h[8], h[9]]);
            assert!((1..=128).contains(&len) && (1..=4).contains(&h[7]));
            assert!(u32::from_be_bytes([h[0], h[1], h[2], h[3]]) < 256);
            frags
                .entry((h[0..6].to_vec(), h[7]))
                .or_insert_with(Vec::new)
                .push(h[12..].to_vec());
        }
        let attacks = frags
            .values()
            .filter(|v| {
                let all: Vec<u8> = v.concat();
                INTRUDER_DICTIONARY
                    .iter()
                    .any(|w| all.windows(w.len()).any(|x| x == w.as_bytes()))
            })
            .count();
        let share = attacks as f64 / frags.len() as f64;
        assert!((0.05..0.16).contains(&share), "{share}");
    }
}
