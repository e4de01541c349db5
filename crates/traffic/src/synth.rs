//! Seeded synthetic Ethernet/IPv4 traces: TCP, UDP and ICMP flows with Zipf popularity and
//! heavy-tailed sizes, ARP, a choice of packet-size mixes, destinations drawn from a routing
//! table, and optional error cases (IP options, bad checksum, bad length, TTL 1, DF,
//! fragments) to exercise a router's error paths. Same configuration and seed, same bytes.
//!
//! # Traffic model
//! - **Interfaces.** Packet `k` arrives on an input interface; its Ethernet destination is
//!   that interface's MAC (ARP requests: broadcast), its source MAC is derived from the
//!   sending host's IP (`02:00:a:b:c:d`, locally administered, no draws).
//! - **Flows.** There are `flows` flow *slots*; slot `r` (0-based) is picked with probability
//!   proportional to `1/(r+1)^zipf_s` (Zipf popularity). Each slot holds one live flow; a
//!   flow lives for a heavy-tailed number of packets (Pareto or lognormal, capped at
//!   `max_flow_packets`), then the slot starts a fresh flow (new 5-tuple) on its next pick.
//!   Memory is `O(flows)`, independent of the number of packets.
//! - **Flow 5-tuple.** Input interface uniform; protocol by the TCP/UDP/ICMP weights;
//!   source a host of the interface's source prefix (default: the interface's own subnet);
//!   destination: a prefix of the routing table drawn by [`PrefixWeighting`], then a uniform
//!   host inside it (network and broadcast addresses excluded for prefixes up to /30;
//!   0/8, 127/8 and 224/3 redrawn), so a longest-prefix-match lookup sees realistic hits
//!   including more-specific prefixes nested in the drawn one. With an empty table the
//!   destination is a host of another interface's subnet (of the same one if only one).
//!   TCP flows start with SYN, end with FIN|ACK, carry ACK|PSH between, sequence numbers
//!   advance by the payload; ICMP flows are echo requests (id = flow's source port field).
//! - **Sizes.** [`SizeMix`] gives *wire* frame lengths including the 4-byte FCS; the pcap
//!   frame is 4 bytes shorter (a 64 B minimum frame is 60 bytes in the file) and the IP
//!   total length is the wire length minus 18. Packets too small for their headers (e.g.
//!   with IP options) grow to the minimum that holds them; ARP frames are 60 bytes.
//! - **Timestamps.** `start_ns + k * 1e9 / rate_pps` (rounded), or with
//!   `exponential_arrivals` exponential inter-arrival times of mean `1/rate_pps`.
//! - **Error cases**, independently per IP packet, at the configured rates: a record-route
//!   option (type 7, 39 bytes with 9 empty slots, then end-of-options: IHL 15); TTL 1; a
//!   total length 1..=64 bytes longer than what the frame holds (header checksum valid); a
//!   wrong header checksum (the correct one with its low byte inverted); DF set;
//!   fragmentation of the datagram into two fragments (first: MF, offset 0, payload the
//!   first half rounded down to 8 bytes; second: the rest, without the record-route option,
//!   whose copy bit is 0), emitted back to back; fragments never carry DF. TCP/UDP/ICMP
//!   checksums are always valid for the (reassembled) datagram.
//!
//! # Stream of draws
//! Four independent `ChaCha8Rng` streams are seeded with `seed` (`seed_from_u64`) and
//! `set_stream(0..=3)`, plus stream 4 for set-up, so changing one aspect (say the error
//! rates) does not change the others (say the flows):
//! - stream 4 (set-up, once): the Fisher-Yates shuffle that ranks the routing-table
//!   prefixes for [`PrefixWeighting::Zipf`] (`gen_range(0..=i)` for i from the last down).
//! - stream 0 (time), per packet: one `f64` (only with exponential inter-arrivals).
//! - stream 1 (packet), per packet: `u` = one `f64` for ARP-or-IP; ARP: interface
//!   (`gen_range`), request-or-reply (`gen_bool(0.5)`), host (see hosts below); IP: slot
//!   (one `f64` into the Zipf table), frame size (one `f64` into the size table).
//! - stream 2 (flow), per new flow: interface (`gen_range`), protocol (`f64`), source host,
//!   destination prefix (`f64`) and host, source port (`gen_range(1024..=65535)`),
//!   destination port (`f64` into the per-protocol port table), flow length (one Pareto or
//!   lognormal sample), initial TTL (`f64`), hops (`gen_range(0..16)`), TCP initial sequence
//!   (`u32`). A host is `gen_range` over the host part, redrawn while it is excluded
//!   (at most 8 times, then the last draw is kept with its lowest bit flipped).
//! - stream 3 (errors), per IP packet (fragments: per datagram): seven `f64`s, always all
//!   seven, in this order: options, TTL 1, bad length, bad checksum, DF, fragment, and the
//!   bad-length excess.

use std::fmt;
use std::net::Ipv4Addr;
use std::path::Path;
use std::str::FromStr;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, LogNormal, Pareto};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::checksum::{ip_checksum, l4_checksum, udp_checksum};
use crate::pcap::{PcapOptions, PcapWriter, TracePacket, LINKTYPE_ETHERNET};
use crate::pcapng::{PcapngOptions, PcapngWriter};
use crate::routes::{mask, RouteTable};
use crate::TrafficError;

/// An Ethernet address; (de)serialised as `"00:00:c0:3b:71:ef"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MacAddr(pub [u8; 6]);

impl fmt::Display for MacAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let m = self.0;
        write!(
            f,
            "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}",
            m[0], m[1], m[2], m[3], m[4], m[5]
        )
    }
}

impl FromStr for MacAddr {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut m = [0u8; 6];
        let parts: Vec<&str> = s.split([':', '-']).collect();
        if parts.len() != 6 {
            return Err(format!(
                "bad MAC address {s:?}: expected six hex bytes like 00:00:c0:3b:71:ef"
            ));
        }
        for (i, p) in parts.iter().enumerate() {
            m[i] = u8::from_str_radix(p, 16)
                .map_err(|_| format!("bad MAC address {s:?}: {p:?} is not a hex byte"))?;
        }
        Ok(MacAddr(m))
    }
}

impl Serialize for MacAddr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MacAddr {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// An IPv4 prefix; (de)serialised as `"18.26.4.0/24"`. Host bits are ignored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Ipv4Prefix {
    pub addr: Ipv4Addr,
    pub len: u8,
}

impl fmt::Display for Ipv4Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.addr, self.len)
    }
}

impl FromStr for Ipv4Prefix {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (a, l) = s
            .split_once('/')
            .ok_or_else(|| format!("bad prefix {s:?}: expected a.b.c.d/len"))?;
        let addr = a
            .parse()
            .map_err(|_| format!("bad prefix {s:?}: {a:?} is not an IPv4 address"))?;
        let len = match l.parse::<u8>() {
            Ok(v) if v <= 32 => v,
            _ => return Err(format!("bad prefix {s:?}: length must be 0..=32")),
        };
        Ok(Ipv4Prefix { addr, len })
    }
}

impl Serialize for Ipv4Prefix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Ipv4Prefix {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

/// One input interface of the device under test.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InterfaceConfig {
    /// The interface's MAC: the destination of (non-broadcast) frames arriving on it.
    pub mac: MacAddr,
    /// The interface's IP address (target of ARP requests).
    pub ip: Ipv4Addr,
    /// Length of the directly connected subnet `ip/prefix_len`.
    pub prefix_len: u8,
    /// Where sources of packets arriving here live (default: the connected subnet).
    #[serde(default)]
    pub src_prefix: Option<Ipv4Prefix>,
}

impl InterfaceConfig {
    /// An interface `(mac, ip, prefix_len)` whose senders live in its own subnet.
    pub fn new(mac: [u8; 6], ip: Ipv4Addr, prefix_len: u8) -> Self {
        InterfaceConfig {
            mac: MacAddr(mac),
            ip,
            prefix_len,
            src_prefix: None,
        }
    }
    fn subnet(&self) -> (u32, u8) {
        (u32::from(self.ip) & mask(self.prefix_len), self.prefix_len)
    }
    fn src_net(&self) -> (u32, u8) {
        match self.src_prefix {
            Some(p) => (u32::from(p.addr) & mask(p.len), p.len),
            None => self.subnet(),
        }
    }
}

/// Relative weights of the flow protocols (need not sum to 1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProtocolMix {
    pub tcp: f64,
    pub udp: f64,
    pub icmp: f64,
}

impl Default for ProtocolMix {
    fn default() -> Self {
        ProtocolMix {
            tcp: 0.85,
            udp: 0.13,
            icmp: 0.02,
        }
    }
}

/// Packet-size distribution, in wire frame lengths *including* the 4-byte FCS.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SizeMix {
    /// Every frame `frame_len` bytes on the wire (64 = minimum frame, 60 bytes in pcap).
    Fixed { frame_len: u16 },
    /// "Simple IMIX": 7:4:1 of IP datagrams of 40 (padded to the 46-byte minimum), 576 and
    /// 1500 bytes, i.e. wire frames of 64, 594 and 1518 bytes (60, 590, 1514 in pcap).
    Imix,
    /// Trimodal mix of the three modes seen in backbone traces (minimum frames, the 576-byte
    /// default datagram, full-MTU frames): 64/594/1518-byte wire frames at 50:15:35 (weights
    /// our choice; use `Custom` for others).
    Trimodal,
    /// Any list of `(wire frame length, weight)`.
    Custom { sizes: Vec<(u16, f64)> },
}

impl SizeMix {
    fn table(&self) -> Vec<(u16, f64)> {
        match self {
            SizeMix::Fixed { frame_len } => vec![(*frame_len, 1.0)],
            SizeMix::Imix => vec![(64, 7.0), (594, 4.0), (1518, 1.0)],
            SizeMix::Trimodal => vec![(64, 50.0), (594, 15.0), (1518, 35.0)],
            SizeMix::Custom { sizes } => sizes.clone(),
        }
    }
}

/// Flow length distribution, in packets (rounded up, at least 1).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FlowSize {
    /// Pareto with shape `alpha` and scale `min_packets` (heavy-tailed for alpha < 2).
    Pareto { alpha: f64, min_packets: f64 },
    /// Lognormal: `exp(N(mu, sigma^2))` packets.
    LogNormal { mu: f64, sigma: f64 },
}

/// How destination prefixes are picked from the routing table.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum PrefixWeighting {
    /// Every prefix equally likely.
    Uniform,
    /// Proportional to the addresses a prefix covers (2^(32-len)): traffic spread evenly
    /// over the announced address space, favouring short prefixes.
    AddressSpace,
    /// Zipf over the prefixes in a seeded random order: the prefix of rank r has weight
    /// 1/r^s, so a few destinations networks receive most of the traffic, as in measured
    /// traces (the default, s = 1).
    Zipf { s: f64 },
    /// Every next-hop port of the table receives the same share, split evenly among its
    /// prefixes: a router's output interfaces are equally loaded (a symmetric test set-up).
    PerPort,
    /// Transit traffic: Zipf(1) over the prefixes reached through a next-hop router, as on a
    /// backbone link where a router forwards nearly every packet to another router and its ARP
    /// cache holds a few neighbours. Which routes name a gateway is the caller's knowledge
    /// (`pktflow_profile::hints` passes only those); here it draws as `Zipf { s: 1.0 }` over
    /// the table it is given.
    Transit,
}

/// Configuration of a synthetic trace. Every field has a default (`{}` in JSON is valid):
/// 10,000 packets at 1 Mpps on the two interfaces of Click's example IP router, 1,000 flows
/// with Zipf(1) popularity and Pareto(1.2) lengths, Simple IMIX sizes, 1% ARP, no errors.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SynthConfig {
    pub seed: u64,
    pub packets: u64,
    pub interfaces: Vec<InterfaceConfig>,
    pub protocols: ProtocolMix,
    /// Fraction of packets that are ARP (half requests for the interface's address, half
    /// replies to the interface from a host of its subnet).
    pub arp_fraction: f64,
    pub flows: u32,
    /// Zipf exponent of flow popularity (0 = uniform).
    pub zipf_s: f64,
    pub flow_size: FlowSize,
    pub max_flow_packets: u64,
    pub sizes: SizeMix,
    pub dst_weighting: PrefixWeighting,
    /// Packets per second.
    pub rate_pps: f64,
    pub exponential_arrivals: bool,
    /// Timestamp of the first packet (nanoseconds).
    pub start_ns: u64,
    pub ip_options_rate: f64,
    pub ttl1_rate: f64,
    pub bad_ip_length_rate: f64,
    pub bad_ip_checksum_rate: f64,
    pub df_rate: f64,
    pub fragment_rate: f64,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            seed: 1,
            packets: 10_000,
            // The two interfaces of the example IP router in Click's documentation.
            interfaces: vec![
                InterfaceConfig::new(
                    [0x00, 0x00, 0xc0, 0x3b, 0x71, 0xef],
                    Ipv4Addr::new(18, 26, 4, 24),
                    24,
                ),
                InterfaceConfig::new(
                    [0x00, 0x00, 0xc0, 0x4f, 0x71, 0xef],
                    Ipv4Addr::new(18, 26, 7, 1),
                    24,
                ),
            ],
            protocols: ProtocolMix::default(),
            arp_fraction: 0.01,
            flows: 1000,
            zipf_s: 1.0,
            flow_size: FlowSize::Pareto {
                alpha: 1.2,
                min_packets: 1.0,
            },
            max_flow_packets: 1_000_000,
            sizes: SizeMix::Imix,
            dst_weighting: PrefixWeighting::Zipf { s: 1.0 },
            rate_pps: 1e6,
            exponential_arrivals: false,
            start_ns: 0,
            ip_options_rate: 0.0,
            ttl1_rate: 0.0,
            bad_ip_length_rate: 0.0,
            bad_ip_checksum_rate: 0.0,
            df_rate: 0.0,
            fragment_rate: 0.0,
        }
    }
}

impl SynthConfig {
    /// Replace the interfaces by `(mac, ip, prefix_len)` triples.
    pub fn with_interfaces(mut self, ifs: &[([u8; 6], Ipv4Addr, u8)]) -> Self {
        self.interfaces = ifs
            .iter()
            .map(|&(m, ip, l)| InterfaceConfig::new(m, ip, l))
            .collect();
        self
    }

    /// Check every parameter; the message names the offending field.
    pub fn validate(&self) -> Result<(), TrafficError> {
        let bad = |m: String| Err(TrafficError::Config(m));
        if self.interfaces.is_empty() || self.interfaces.len() > 65536 {
            return bad(format!(
                "interfaces: need 1..=65536, got {}",
                self.interfaces.len()
            ));
        }
        for (i, f) in self.interfaces.iter().enumerate() {
            if f.prefix_len > 32 {
                return bad(format!("interfaces[{i}].prefix_len {} > 32", f.prefix_len));
            }
            if let Some(p) = f.src_prefix {
                if p.len > 32 {
                    return bad(format!("interfaces[{i}].src_prefix length {} > 32", p.len));
                }
            }
        }
        let rates = [
            ("arp_fraction", self.arp_fraction),
            ("ip_options_rate", self.ip_options_rate),
            ("ttl1_rate", self.ttl1_rate),
            ("bad_ip_length_rate", self.bad_ip_length_rate),
            ("bad_ip_checksum_rate", self.bad_ip_checksum_rate),
            ("df_rate", self.df_rate),
            ("fragment_rate", self.fragment_rate),
        ];
        for (name, r) in rates {
            if !(0.0..=1.0).contains(&r) {
                return bad(format!("{name} = {r}: must be a fraction in [0, 1]"));
            }
        }
        let p = self.protocols;
        if [p.tcp, p.udp, p.icmp]
            .iter()
            .any(|w| !w.is_finite() || *w < 0.0)
            || p.tcp + p.udp + p.icmp <= 0.0
        {
            return bad(format!(
                "protocols: weights must be >= 0 with a positive sum, got {p:?}"
            ));
        }
        if self.flows == 0 {
            return bad("flows must be at least 1".into());
        }
        if !(self.zipf_s >= 0.0 && self.zipf_s.is_finite()) {
            return bad(format!("zipf_s = {}: must be >= 0", self.zipf_s));
        }
        if self.max_flow_packets == 0 {
            return bad("max_flow_packets must be at least 1".into());
        }
        match self.flow_size {
            FlowSize::Pareto { alpha, min_packets }
                if !(alpha > 0.0
                    && min_packets > 0.0
                    && alpha.is_finite()
                    && min_packets.is_finite()) =>
            {
                return bad(format!("flow_size: Pareto needs alpha > 0 and min_packets > 0, got {alpha}, {min_packets}"));
            }
            FlowSize::LogNormal { mu, sigma }
                if !(sigma >= 0.0 && sigma.is_finite() && mu.is_finite()) =>
            {
                return bad(format!(
                    "flow_size: lognormal needs finite mu and sigma >= 0, got {mu}, {sigma}"
                ));
            }
            _ => {}
        }
        let sizes = self.sizes.table();
        if sizes.is_empty() || sizes.iter().map(|s| s.1).sum::<f64>() <= 0.0 {
            return bad("sizes: need at least one size with a positive weight".into());
        }
        for &(len, w) in &sizes {
            if !((64..=9022).contains(&len) && w >= 0.0 && w.is_finite()) {
                return bad(format!("sizes: frame length {len} (weight {w}) must be 64..=9022 bytes with a weight >= 0"));
            }
        }
        if let PrefixWeighting::Zipf { s } = self.dst_weighting {
            if !(s >= 0.0 && s.is_finite()) {
                return bad(format!("dst_weighting: Zipf s = {s} must be >= 0"));
            }
        }
        if !(self.rate_pps > 0.0 && self.rate_pps.is_finite()) {
            return bad(format!("rate_pps = {}: must be positive", self.rate_pps));
        }
        Ok(())
    }
}

/// A cumulative weight table sampled with one `f64` draw.
struct Cdf(Vec<f64>);

impl Cdf {
    fn new(weights: impl Iterator<Item = f64>) -> Self {
        let mut acc = 0.0;
        Cdf(weights
            .map(|w| {
                acc += w;
                acc
            })
            .collect())
    }
    fn sample(&self, u: f64) -> usize {
        let total = *self.0.last().unwrap_or(&0.0);
        let x = u * total;
        self.0
            .partition_point(|&c| c <= x)
            .min(self.0.len().saturating_sub(1))
    }
}

const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const PROTO_ICMP: u8 = 1;

/// Destination ports by protocol with weights (our choice: web dominates TCP, DNS UDP).
const TCP_PORTS: [(u16, f64); 6] = [
    (443, 45.0),
    (80, 35.0),
    (22, 5.0),
    (25, 5.0),
    (8080, 5.0),
    (993, 5.0),
];
const UDP_PORTS: [(u16, f64); 5] = [
    (53, 40.0),
    (443, 30.0),
    (123, 10.0),
    (5060, 10.0),
    (4500, 10.0),
];

#[derive(Clone, Copy, Debug, Default)]
struct Flow {
    iface: u16,
    proto: u8,
    src: u32,
    dst: u32,
    sport: u16,
    dport: u16,
    ttl: u8,
    seq: u32,
    sent: u64,
    remaining: u64,
}

/// The streaming generator: an iterator of exactly `config.packets` packets.
pub struct SynthTrace {
    cfg: SynthConfig,
    r_time: ChaCha8Rng,
    r_pkt: ChaCha8Rng,
    r_flow: ChaCha8Rng,
    r_err: ChaCha8Rng,
    slot_cdf: Cdf,
    size_cdf: Cdf,
    sizes: Vec<u16>,
    proto_cdf: Cdf,
    tcp_port_cdf: Cdf,
    udp_port_cdf: Cdf,
    /// Destination prefixes (in rank order for Zipf) and their weights.
    dst_prefixes: Vec<(u32, u8)>,
    dst_cdf: Cdf,
    slots: Vec<Flow>,
    /// Flow-size distributions (constructed once).
    pareto: Option<Pareto<f64>>,
    lognormal: Option<LogNormal<f64>>,
    emitted: u64,
    t_exp_ns: f64,
    ip_id: u16,
    pending: Option<TracePacket>,
    /// Scratch buffer for datagrams that get fragmented (reused).
    scratch: Vec<u8>,
}

fn rng(seed: u64, stream: u64) -> ChaCha8Rng {
    let mut r = ChaCha8Rng::seed_from_u64(seed);
    r.set_stream(stream);
    r
}

fn host_mac(ip: u32) -> [u8; 6] {
    let b = ip.to_be_bytes();
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

/// A uniform host of `net/len`: network and broadcast excluded up to /30, addresses in
/// 0/8, 127/8, 224/3 and `avoid` redrawn (at most 8 times; then the lowest bit is flipped).
fn draw_host(r: &mut ChaCha8Rng, net: u32, len: u8, avoid: u32) -> u32 {
    let span: u64 = 1u64 << (32 - len as u32);
    let (lo, hi) = if len <= 30 { (1, span - 1) } else { (0, span) };
    let mut a = net;
    for _ in 0..8 {
        a = net | r.gen_range(lo..hi) as u32;
        let first = a >> 24;
        if a != avoid && first != 0 && first != 127 && first < 224 {
            return a;
        }
    }
    if a == avoid && len < 32 {
        a ^= 1;
    }
    a
}

impl SynthTrace {
    /// A generator for `cfg` drawing destinations from `routes` (an empty table means
    /// "hosts of the other interfaces' subnets").
    pub fn new(cfg: SynthConfig, routes: &RouteTable) -> Result<Self, TrafficError> {
        cfg.validate()?;
        let seed = cfg.seed;
        let n_slots = cfg.flows as usize;
        let slot_cdf = Cdf::new((0..n_slots).map(|r| 1.0 / ((r + 1) as f64).powf(cfg.zipf_s)));
        let table = cfg.sizes.table();
        let size_cdf = Cdf::new(table.iter().map(|s| s.1));
        let sizes = table.iter().map(|s| s.0).collect();
        let p = cfg.protocols;
        let proto_cdf = Cdf::new([p.tcp, p.udp, p.icmp].into_iter());
        let mut dst_prefixes: Vec<(u32, u8)> =
            routes.entries.iter().map(|r| (r.prefix, r.len)).collect();
        let dst_cdf = if dst_prefixes.is_empty() {
            Cdf(Vec::new())
        } else {
            match cfg.dst_weighting {
                PrefixWeighting::Uniform => Cdf::new(dst_prefixes.iter().map(|_| 1.0)),
                PrefixWeighting::AddressSpace => Cdf::new(
                    dst_prefixes
                        .iter()
                        .map(|&(_, l)| (1u64 << (32 - l as u32)) as f64),
                ),
                PrefixWeighting::PerPort => {
                    let mut per_port: std::collections::HashMap<u16, usize> = Default::default();
                    for r in &routes.entries {
                        *per_port.entry(r.next_hop_port).or_default() += 1;
                    }
                    Cdf::new(
                        routes
                            .entries
                            .iter()
                            .map(|r| 1.0 / per_port[&r.next_hop_port] as f64),
                    )
                }
                PrefixWeighting::Zipf { .. } | PrefixWeighting::Transit => {
                    let s = match cfg.dst_weighting {
                        PrefixWeighting::Zipf { s } => s,
                        _ => 1.0,
                    };
                    let mut r4 = rng(seed, 4);
                    for i in (1..dst_prefixes.len()).rev() {
                        let j = r4.gen_range(0..=i);
                        dst_prefixes.swap(i, j);
                    }
                    Cdf::new((0..dst_prefixes.len()).map(|r| 1.0 / ((r + 1) as f64).powf(s)))
                }
            }
        };
        let (pareto, lognormal) = match cfg.flow_size {
            FlowSize::Pareto { alpha, min_packets } => (
                Some(
                    Pareto::new(min_packets, alpha)
                        .map_err(|e| TrafficError::Config(format!("flow_size: {e}")))?,
                ),
                None,
            ),
            FlowSize::LogNormal { mu, sigma } => (
                None,
                Some(
                    LogNormal::new(mu, sigma)
                        .map_err(|e| TrafficError::Config(format!("flow_size: {e}")))?,
                ),
            ),
        };
        Ok(SynthTrace {
            r_time: rng(seed, 0),
            r_pkt: rng(seed, 1),
            r_flow: rng(seed, 2),
            r_err: rng(seed, 3),
            slot_cdf,
            size_cdf,
            sizes,
            proto_cdf,
            tcp_port_cdf: Cdf::new(TCP_PORTS.iter().map(|p| p.1)),
            udp_port_cdf: Cdf::new(UDP_PORTS.iter().map(|p| p.1)),
            dst_prefixes,
            dst_cdf,
            slots: vec![Flow::default(); n_slots],
            pareto,
            lognormal,
            emitted: 0,
            t_exp_ns: cfg.start_ns as f64,
            ip_id: 0,
            pending: None,
            scratch: Vec::new(),
            cfg,
        })
    }

    pub fn config(&self) -> &SynthConfig {
        &self.cfg
    }

    /// Write the whole trace to a pcap file (nanosecond timestamps, Ethernet); returns the
    /// number of packets written.
    pub fn write_pcap(self, path: impl AsRef<Path>) -> Result<u64, TrafficError> {
        let mut w = PcapWriter::create_with(
            path,
            PcapOptions {
                linktype: LINKTYPE_ETHERNET,
                ..Default::default()
            },
        )?;
        for p in self {
            w.write(&p)?;
        }
        let n = w.count();
        w.finish()?;
        Ok(n)
    }

    /// Write the whole trace to a pcapng file, one interface description per input
    /// interface, so the input interface of every packet is kept.
    pub fn write_pcapng(self, path: impl AsRef<Path>) -> Result<u64, TrafficError> {
        let n_if = self.cfg.interfaces.len() as u16;
        let mut w = PcapngWriter::create_with(
            path,
            PcapngOptions {
                interfaces: n_if,
                ..Default::default()
            },
        )?;
        for p in self {
            w.write(&p)?;
        }
        let n = w.count();
        w.finish()?;
        Ok(n)
    }

    fn next_timestamp(&mut self) -> u64 {
        let k = self.emitted;
        if self.cfg.exponential_arrivals {
            let t = self.t_exp_ns;
            let u: f64 = self.r_time.gen();
            self.t_exp_ns += -(1.0 - u).ln() * 1e9 / self.cfg.rate_pps;
            t.round() as u64
        } else {
            self.cfg.start_ns + (k as f64 * 1e9 / self.cfg.rate_pps).round() as u64
        }
    }

    fn new_flow(&mut self) -> Flow {
        let r = &mut self.r_flow;
        let n_if = self.cfg.interfaces.len();
        let iface = r.gen_range(0..n_if);
        let proto = [PROTO_TCP, PROTO_UDP, PROTO_ICMP][self.proto_cdf.sample(r.gen())];
        let ifc = &self.cfg.interfaces[iface];
        let (snet, slen) = ifc.src_net();
        let src = draw_host(r, snet, slen, u32::from(ifc.ip));
        let dst = if self.dst_prefixes.is_empty() {
            let j = if n_if > 1 {
                (iface + 1 + r.gen_range(0..n_if - 1)) % n_if
            } else {
                iface
            };
            let o = &self.cfg.interfaces[j];
            let (net, len) = o.subnet();
            draw_host(r, net, len, u32::from(o.ip))
        } else {
            let (net, len) = self.dst_prefixes[self.dst_cdf.sample(r.gen())];
            draw_host(r, net, len, u32::MAX)
        };
        let sport = r.gen_range(1024..=65535u16);
        let u: f64 = r.gen();
        let dport = match proto {
            PROTO_TCP => TCP_PORTS[self.tcp_port_cdf.sample(u)].0,
            PROTO_UDP => UDP_PORTS[self.udp_port_cdf.sample(u)].0,
            _ => 0,
        };
        let x = match (&self.pareto, &self.lognormal) {
            (Some(p), _) => p.sample(r),
            (_, Some(l)) => l.sample(r),
            _ => 1.0,
        };
        let remaining = if x.is_finite() {
            (x.ceil() as u64).clamp(1, self.cfg.max_flow_packets)
        } else {
            self.cfg.max_flow_packets
        };
        // Initial TTL 64 (60%), 128 (35%) or 255 (5%), as sent by common operating systems.
        let u: f64 = r.gen();
        let init_ttl: u8 = if u < 0.6 {
            64
        } else if u < 0.95 {
            128
        } else {
            255
        };
        let ttl = init_ttl - r.gen_range(0..16u8);
        let seq: u32 = r.gen();
        Flow {
            iface: iface as u16,
            proto,
            src,
            dst,
            sport,
            dport,
            ttl,
            seq,
            sent: 0,
            remaining,
        }
    }

    fn arp(&mut self, ts: u64) -> TracePacket {
        let r = &mut self.r_pkt;
        let iface = r.gen_range(0..self.cfg.interfaces.len());
        let request = r.gen_bool(0.5);
        let ifc = &self.cfg.interfaces[iface];
        let (net, len) = ifc.subnet();
        let me = u32::from(ifc.ip);
        let host = draw_host(r, net, len, me);
        let hmac = host_mac(host);
        let mut f = Vec::with_capacity(60);
        f.extend_from_slice(if request { &[0xff; 6] } else { &ifc.mac.0 });
        f.extend_from_slice(&hmac);
        f.extend_from_slice(&[
            0x08,
            0x06,
            0,
            1,
            0x08,
            0x00,
            6,
            4,
            0,
            if request { 1 } else { 2 },
        ]);
        f.extend_from_slice(&hmac);
        f.extend_from_slice(&host.to_be_bytes());
        f.extend_from_slice(if request { &[0; 6] } else { &ifc.mac.0 });
        f.extend_from_slice(&me.to_be_bytes());
        f.resize(60, 0);
        TracePacket {
            timestamp_ns: ts,
            iface: iface as u16,
            orig_len: 60,
            data: f,
        }
    }

    /// Write the L4 header and payload of `flow`'s next packet (`l4_len` bytes) to `out`,
    /// with a valid checksum; updates the flow's TCP state.
    fn l4(flow: &mut Flow, last: bool, l4_len: usize, out: &mut Vec<u8>) {
        let start = out.len();
        match flow.proto {
            PROTO_TCP => {
                let payload = l4_len - 20;
                let first = flow.sent == 0;
                let flags: u8 = if first {
                    0x02
                } else if last {
                    0x11
                } else if payload > 0 {
                    0x18
                } else {
                    0x10
                };
                let ack = if first { 0 } else { flow.seq ^ 0x5a5a_5a5a };
                out.extend_from_slice(&flow.sport.to_be_bytes());
                out.extend_from_slice(&flow.dport.to_be_bytes());
                out.extend_from_slice(&flow.seq.to_be_bytes());
                out.extend_from_slice(&ack.to_be_bytes());
                out.extend_from_slice(&[0x50, flags, 0xff, 0xff, 0, 0, 0, 0]);
                flow.seq = flow
                    .seq
                    .wrapping_add(payload as u32 + (flags & 0x03 != 0) as u32);
            }
            PROTO_UDP => {
                out.extend_from_slice(&flow.sport.to_be_bytes());
                out.extend_from_slice(&flow.dport.to_be_bytes());
                out.extend_from_slice(&(l4_len as u16).to_be_bytes());
                out.extend_from_slice(&[0, 0]);
            }
            _ => {
                out.extend_from_slice(&[8, 0, 0, 0]);
                out.extend_from_slice(&flow.sport.to_be_bytes());
                out.extend_from_slice(&(flow.sent as u16).to_be_bytes());
            }
        }
        let hdr = out.len() - start;
        out.extend((0..l4_len - hdr).map(|i| i as u8));
        let (s, d) = (flow.src.to_be_bytes(), flow.dst.to_be_bytes());
        let seg = &mut out[start..];
        let (off, c) = match flow.proto {
            PROTO_TCP => (16, l4_checksum(s, d, PROTO_TCP, seg)),
            PROTO_UDP => (6, udp_checksum(s, d, seg)),
            _ => (2, ip_checksum(seg)),
        };
        seg[off..off + 2].copy_from_slice(&c.to_be_bytes());
    }

    fn ip_packet(&mut self, ts: u64) -> TracePacket {
        let u_slot: f64 = self.r_pkt.gen();
        let slot = self.slot_cdf.sample(u_slot);
        let wire = self.sizes[self.size_cdf.sample(self.r_pkt.gen())] as usize;
        if self.slots[slot].remaining == 0 {
            self.slots[slot] = self.new_flow();
        }
        let e: [f64; 7] = std::array::from_fn(|_| self.r_err.gen());
        let c = &self.cfg;
        let options = e[0] < c.ip_options_rate;
        let ttl1 = e[1] < c.ttl1_rate;
        let bad_len = e[2] < c.bad_ip_length_rate;
        let bad_sum = e[3] < c.bad_ip_checksum_rate;
        let df = e[4] < c.df_rate;
        let frag = e[5] < c.fragment_rate && self.cfg.packets - self.emitted >= 2;
        let excess = 1 + (e[6] * 64.0) as u16 % 64;

        let mut flow = self.slots[slot];
        let ihl = if options { 60 } else { 20 };
        let l4_min = if flow.proto == PROTO_TCP { 20 } else { 8 };
        let ip_len = (wire - 18).max(ihl + l4_min);
        let l4_len = ip_len - ihl;
        let last = flow.remaining == 1;
        let ifc = &self.cfg.interfaces[flow.iface as usize];
        let mut eth = [0u8; 14];
        eth[..6].copy_from_slice(&ifc.mac.0);
        eth[6..12].copy_from_slice(&host_mac(flow.src));
        eth[12..].copy_from_slice(&[0x08, 0x00]);
        let id = self.ip_id;
        self.ip_id = self.ip_id.wrapping_add(1);
        let ttl = if ttl1 { 1 } else { flow.ttl };
        let (proto, src, dst) = (flow.proto, flow.src, flow.dst);

        // IP header with the given length fields; checksum computed, then corrupted on request.
        let ip_header =
            |out: &mut Vec<u8>, hl: usize, total: usize, frag_field: u16, with_opts: bool| {
                let s = out.len();
                let claimed = if bad_len {
                    total as u16 + excess
                } else {
                    total as u16
                };
                out.push(0x40 | (hl / 4) as u8);
                out.push(0);
                out.extend_from_slice(&claimed.to_be_bytes());
                out.extend_from_slice(&id.to_be_bytes());
                out.extend_from_slice(&frag_field.to_be_bytes());
                out.extend_from_slice(&[ttl, proto, 0, 0]);
                out.extend_from_slice(&src.to_be_bytes());
                out.extend_from_slice(&dst.to_be_bytes());
                if with_opts {
                    out.extend_from_slice(&[7, 39, 4]);
                    out.extend_from_slice(&[0; 37]);
                }
                let mut sum = ip_checksum(&out[s..s + hl]);
                if bad_sum {
                    sum ^= 0x00ff;
                }
                out[s + 10..s + 12].copy_from_slice(&sum.to_be_bytes());
            };
        let frame = |out: &mut Vec<u8>| {
            out.extend_from_slice(&eth);
        };
        let pad = |out: &mut Vec<u8>| {
            if out.len() < 60 {
                out.resize(60, 0);
            }
        };

        let pkt = if frag && l4_len >= 16 {
            let mut seg = std::mem::take(&mut self.scratch);
            seg.clear();
            Self::l4(&mut flow, last, l4_len, &mut seg);
            let first_len = (l4_len / 2) & !7;
            let mut a = Vec::with_capacity((14 + ihl + first_len).max(60));
            frame(&mut a);
            ip_header(&mut a, ihl, ihl + first_len, 0x2000, options);
            a.extend_from_slice(&seg[..first_len]);
            pad(&mut a);
            let rest = l4_len - first_len;
            let mut b = Vec::with_capacity((14 + 20 + rest).max(60));
            frame(&mut b);
            ip_header(&mut b, 20, 20 + rest, (first_len / 8) as u16, false);
            b.extend_from_slice(&seg[first_len..]);
            pad(&mut b);
            self.scratch = seg;
            self.pending = Some(TracePacket {
                timestamp_ns: 0,
                iface: flow.iface,
                orig_len: b.len() as u32,
                data: b,
            });
            a
        } else {
            let mut a = Vec::with_capacity((14 + ip_len).max(60));
            frame(&mut a);
            ip_header(&mut a, ihl, ip_len, if df { 0x4000 } else { 0 }, options);
            Self::l4(&mut flow, last, l4_len, &mut a);
            pad(&mut a);
            a
        };
        flow.sent += 1;
        flow.remaining -= 1;
        self.slots[slot] = flow;
        TracePacket {
            timestamp_ns: ts,
            iface: flow.iface,
            orig_len: pkt.len() as u32,
            data: pkt,
        }
    }
}

impl Iterator for SynthTrace {
    type Item = TracePacket;

    fn next(&mut self) -> Option<TracePacket> {
        if self.emitted >= self.cfg.packets {
            return None;
        }
        let ts = self.next_timestamp();
        let p = if let Some(mut p) = self.pending.take() {
            p.timestamp_ns = ts;
            p
        } else {
            let u: f64 = self.r_pkt.gen();
            if u < self.cfg.arp_fraction {
                self.arp(ts)
            } else {
                self.ip_packet(ts)
            }
        };
        self.emitted += 1;
        Some(p)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = (self.cfg.packets - self.emitted) as usize;
        (n, Some(n))
    }
}

impl ExactSizeIterator for SynthTrace {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checksum::l4_checksum_ok;
    use crate::pcap::PcapReader;
    use std::collections::HashMap;

    /// What the tests need to know about a generated frame.
    #[derive(Debug)]
    struct Ip {
        ihl: usize,
        total_field: usize,
        id: u16,
        frag: u16,
        ttl: u8,
        proto: u8,
        src: u32,
        dst: u32,
        hdr_ok: bool,
        /// Bytes of the frame after the IP header, up to the real datagram end.
        payload: Vec<u8>,
    }

    fn parse_ip(f: &[u8]) -> Option<Ip> {
        if f[12..14] != [0x08, 0x00] {
            return None;
        }
        let ip = &f[14..];
        assert_eq!(ip[0] >> 4, 4);
        let ihl = (ip[0] & 15) as usize * 4;
        let total_field = u16::from_be_bytes([ip[2], ip[3]]) as usize;
        let hdr_ok = ip_checksum(&ip[..ihl]) == 0;
        let real_end = total_field.min(ip.len());
        Some(Ip {
            ihl,
            total_field,
            id: u16::from_be_bytes([ip[4], ip[5]]),
            frag: u16::from_be_bytes([ip[6], ip[7]]),
            ttl: ip[8],
            proto: ip[9],
            src: u32::from_be_bytes([ip[12], ip[13], ip[14], ip[15]]),
            dst: u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]]),
            hdr_ok,
            payload: ip[ihl..real_end.max(ihl)].to_vec(),
        })
    }

    fn l4_ok(proto: u8, src: u32, dst: u32, seg: &[u8]) -> bool {
        match proto {
            1 => ip_checksum(seg) == 0,
            p => l4_checksum_ok(src.to_be_bytes(), dst.to_be_bytes(), p, seg),
        }
    }

    fn gen(cfg: SynthConfig) -> Vec<TracePacket> {
        SynthTrace::new(cfg, &RouteTable::default())
            .unwrap()
            .collect()
    }

    fn cfg(packets: u64) -> SynthConfig {
        SynthConfig {
            packets,
            ..Default::default()
        }
    }

    #[test]
    fn same_seed_same_bytes_different_seed_different() {
        let table = RouteTable::generate(500, 3, 4);
        let c = SynthConfig {
            packets: 3000,
            ip_options_rate: 0.05,
            fragment_rate: 0.05,
            exponential_arrivals: true,
            ..Default::default()
        };
        let a: Vec<_> = SynthTrace::new(c.clone(), &table).unwrap().collect();
        let b: Vec<_> = SynthTrace::new(c.clone(), &table).unwrap().collect();
        assert_eq!(a.len(), 3000);
        assert_eq!(a, b);
        let d: Vec<_> = SynthTrace::new(SynthConfig { seed: 2, ..c }, &table)
            .unwrap()
            .collect();
        assert_ne!(a, d);
        let differing = a.iter().zip(&d).filter(|(x, y)| x.data != y.data).count();
        assert!(differing > 2900, "only {differing} packets differ");
    }

    #[test]
    fn error_rates_do_not_disturb_the_flows() {
        let a = gen(cfg(2000));
        let b = gen(SynthConfig {
            bad_ip_checksum_rate: 0.5,
            ttl1_rate: 0.5,
            df_rate: 0.5,
            ..cfg(2000)
        });
        let mut changed = 0;
        for (x, y) in a.iter().zip(&b) {
            assert_eq!(x.data.len(), y.data.len());
            assert_eq!(x.iface, y.iface);
            if let (Some(p), Some(q)) = (parse_ip(&x.data), parse_ip(&y.data)) {
                assert_eq!(
                    (p.src, p.dst, p.proto, &p.payload),
                    (q.src, q.dst, q.proto, &q.payload)
                );
                changed += (p.ttl != q.ttl) as usize;
            }
        }
        assert!(changed > 500);
    }

    #[test]
    fn all_checksums_valid_by_default_and_frames_well_formed() {
        let c = SynthConfig {
            packets: 5000,
            ip_options_rate: 0.1,
            df_rate: 0.3,
            ..Default::default()
        };
        let ifs = c.interfaces.clone();
        let mut n_ip = 0;
        for p in gen(c) {
            assert!(p.data.len() >= 60 && p.data.len() <= 1514);
            assert_eq!(p.orig_len as usize, p.data.len());
            let ifc = &ifs[p.iface as usize];
            if let Some(ip) = parse_ip(&p.data) {
                n_ip += 1;
                assert_eq!(
                    p.data[..6],
                    ifc.mac.0,
                    "IP frames are addressed to the input interface"
                );
                assert_eq!(p.data[6..12], host_mac(ip.src));
                assert!(ip.hdr_ok, "header checksum");
                assert_eq!(14 + ip.total_field, p.data.len().max(14 + ip.total_field));
                assert!(
                    l4_ok(ip.proto, ip.src, ip.dst, &ip.payload),
                    "L4 checksum of {:?}",
                    ip
                );
                assert!(ip.ttl > 1);
                let (net, len) = ifc.subnet();
                assert_eq!(ip.src & mask(len), net, "source in the interface subnet");
                assert_ne!(ip.src, u32::from(ifc.ip));
                // Empty table: destinations in the other interface's subnet.
                let other = &ifs[1 - p.iface as usize];
                assert_eq!(
                    ip.dst & mask(other.prefix_len),
                    u32::from(other.ip) & mask(other.prefix_len)
                );
            }
        }
        assert!(n_ip > 4800);
    }

    #[test]
    fn fixed_and_imix_and_trimodal_size_proportions() {
        let base = SynthConfig {
            arp_fraction: 0.0,
            packets: 12_000,
            ..Default::default()
        };
        let fixed = gen(SynthConfig {
            sizes: SizeMix::Fixed { frame_len: 64 },
            ..base.clone()
        });
        assert!(
            fixed.iter().all(|p| p.data.len() == 60),
            "64-byte wire frames are 60 bytes in pcap"
        );
        let check = |mix: SizeMix, want: &[(usize, f64)]| {
            let v = gen(SynthConfig {
                sizes: mix.clone(),
                ..base.clone()
            });
            let mut h: HashMap<usize, usize> = HashMap::new();
            for p in &v {
                *h.entry(p.data.len()).or_default() += 1;
            }
            assert_eq!(h.len(), want.len(), "{mix:?}: {h:?}");
            for &(len, frac) in want {
                let got = h.get(&len).copied().unwrap_or(0) as f64 / v.len() as f64;
                assert!(
                    (got - frac).abs() < 0.015,
                    "{mix:?} {len}: {got:.3} vs {frac:.3}"
                );
            }
        };
        check(
            SizeMix::Imix,
            &[(60, 7.0 / 12.0), (590, 4.0 / 12.0), (1514, 1.0 / 12.0)],
        );
        check(SizeMix::Trimodal, &[(60, 0.5), (590, 0.15), (1514, 0.35)]);
        check(
            SizeMix::Custom {
                sizes: vec![(128, 1.0), (256, 3.0)],
            },
            &[(124, 0.25), (252, 0.75)],
        );
    }

    /// Flow counts by 5-tuple, most popular first.
    fn flow_counts(v: &[TracePacket]) -> Vec<usize> {
        let mut h: HashMap<(u32, u32, u8, Vec<u8>), usize> = HashMap::new();
        for p in v {
            if let Some(ip) = parse_ip(&p.data) {
                // Ports for TCP/UDP, the echo identifier for ICMP.
                let key = if ip.proto == 1 {
                    ip.payload[4..6].to_vec()
                } else {
                    ip.payload[..4].to_vec()
                };
                *h.entry((ip.src, ip.dst, ip.proto, key)).or_default() += 1;
            }
        }
        let mut c: Vec<usize> = h.into_values().collect();
        c.sort_unstable_by(|a, b| b.cmp(a));
        c
    }

    #[test]
    fn zipf_popularity_is_measurable() {
        // Flows that never end, so each slot keeps one 5-tuple.
        let base = SynthConfig {
            packets: 40_000,
            flows: 100,
            arp_fraction: 0.0,
            flow_size: FlowSize::LogNormal {
                mu: 30.0,
                sigma: 0.0,
            },
            ..Default::default()
        };
        let c = flow_counts(&gen(SynthConfig {
            zipf_s: 1.0,
            ..base.clone()
        }));
        assert_eq!(c.len(), 100);
        // Zipf(1): rank 1 vs rank 10 about 10x; estimate s from ranks 1..20 by least squares.
        let r = c[0] as f64 / c[9] as f64;
        assert!((7.0..14.0).contains(&r), "rank1/rank10 = {r}");
        let pts: Vec<(f64, f64)> = (0..20)
            .map(|i| (((i + 1) as f64).ln(), (c[i] as f64).ln()))
            .collect();
        let mx = pts.iter().map(|p| p.0).sum::<f64>() / 20.0;
        let my = pts.iter().map(|p| p.1).sum::<f64>() / 20.0;
        let slope = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>()
            / pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
        assert!((-slope - 1.0).abs() < 0.15, "estimated s = {}", -slope);
        let u = flow_counts(&gen(SynthConfig {
            zipf_s: 0.0,
            ..base
        }));
        assert!(
            (u[0] as f64 / u[99] as f64) < 1.8,
            "s = 0 is uniform: {} vs {}",
            u[0],
            u[99]
        );
    }

    #[test]
    fn flow_sizes_are_heavy_tailed() {
        let c = flow_counts(&gen(SynthConfig {
            packets: 30_000,
            flows: 300,
            arp_fraction: 0.0,
            ..Default::default()
        }));
        let median = c[c.len() / 2];
        assert!(median <= 3, "median flow {median} packets");
        assert!(c[0] >= 300, "largest flow only {} packets", c[0]);
        // TCP flows open with SYN.
        let v = gen(SynthConfig {
            packets: 500,
            protocols: ProtocolMix {
                tcp: 1.0,
                udp: 0.0,
                icmp: 0.0,
            },
            arp_fraction: 0.0,
            ..Default::default()
        });
        let ip = parse_ip(&v[0].data).unwrap();
        assert_eq!(ip.payload[13], 0x02);
    }

    #[test]
    fn error_cases_at_their_rates() {
        let n = 20_000;
        let c = SynthConfig {
            packets: n,
            arp_fraction: 0.0,
            ip_options_rate: 0.1,
            ttl1_rate: 0.1,
            bad_ip_length_rate: 0.1,
            bad_ip_checksum_rate: 0.1,
            df_rate: 0.1,
            ..Default::default()
        };
        let (mut opt, mut ttl1, mut badlen, mut badsum, mut df) = (0, 0, 0, 0, 0);
        for p in gen(c) {
            let ip = parse_ip(&p.data).unwrap();
            let frame_ip_len = p.data.len() - 14;
            if ip.ihl == 60 {
                opt += 1;
                assert_eq!(p.data[14 + 20..14 + 23], [7, 39, 4], "record route");
            }
            ttl1 += (ip.ttl == 1) as u32;
            if ip.total_field > frame_ip_len {
                badlen += 1;
                assert!(ip.total_field - frame_ip_len <= 64);
            } else if frame_ip_len == ip.total_field {
                assert!(l4_ok(ip.proto, ip.src, ip.dst, &ip.payload));
            }
            badsum += (!ip.hdr_ok) as u32;
            df += (ip.frag == 0x4000) as u32;
        }
        for (name, k) in [
            ("options", opt),
            ("ttl1", ttl1),
            ("bad length", badlen),
            ("bad checksum", badsum),
            ("df", df),
        ] {
            let f = k as f64 / n as f64;
            assert!((f - 0.1).abs() < 0.015, "{name}: {f}");
        }
    }

    #[test]
    fn fragments_reassemble_to_valid_datagrams() {
        let c = SynthConfig {
            packets: 4000,
            arp_fraction: 0.0,
            fragment_rate: 0.3,
            ip_options_rate: 0.3,
            ..Default::default()
        };
        let v = gen(c);
        let mut i = 0;
        let mut datagrams = 0;
        while i < v.len() {
            let a = parse_ip(&v[i].data).unwrap();
            if a.frag & 0x2000 != 0 {
                let b = parse_ip(&v[i + 1].data).unwrap();
                assert_eq!((a.id, a.src, a.dst, a.proto), (b.id, b.src, b.dst, b.proto));
                assert_eq!(a.frag & 0x1fff, 0);
                assert_eq!((b.frag & 0x1fff) as usize * 8, a.payload.len());
                assert_eq!(b.frag & 0xe000, 0, "last fragment: no MF, no DF");
                assert_eq!(b.ihl, 20, "record route is not copied");
                assert!(a.hdr_ok && b.hdr_ok);
                let mut whole = a.payload.clone();
                whole.extend_from_slice(&b.payload);
                assert!(
                    l4_ok(a.proto, a.src, a.dst, &whole),
                    "reassembled L4 checksum"
                );
                datagrams += 1;
                i += 2;
            } else {
                i += 1;
            }
        }
        assert!(datagrams > 600, "{datagrams} fragmented datagrams");
    }

    #[test]
    fn arp_requests_and_replies() {
        let c = SynthConfig {
            packets: 5000,
            arp_fraction: 0.2,
            ..Default::default()
        };
        let ifs = c.interfaces.clone();
        let (mut req, mut rep) = (0, 0);
        for p in gen(c) {
            if p.data[12..14] != [0x08, 0x06] {
                continue;
            }
            let ifc = &ifs[p.iface as usize];
            assert_eq!(p.data.len(), 60);
            let arp = &p.data[14..42];
            assert_eq!(arp[..6], [0, 1, 8, 0, 6, 4]);
            let sender_ip = u32::from_be_bytes([arp[14], arp[15], arp[16], arp[17]]);
            assert_eq!(
                sender_ip & mask(ifc.prefix_len),
                u32::from(ifc.ip) & mask(ifc.prefix_len)
            );
            assert_eq!(
                arp[24..28],
                ifc.ip.octets(),
                "target is the interface address"
            );
            match arp[7] {
                1 => {
                    req += 1;
                    assert_eq!(p.data[..6], [0xff; 6]);
                }
                2 => {
                    rep += 1;
                    assert_eq!(p.data[..6], ifc.mac.0);
                    assert_eq!(arp[18..24], ifc.mac.0);
                }
                op => panic!("ARP op {op}"),
            }
        }
        let f = (req + rep) as f64 / 5000.0;
        assert!((f - 0.2).abs() < 0.02, "ARP fraction {f}");
        assert!(req > 350 && rep > 350);
    }

    #[test]
    fn destinations_follow_the_routing_table() {
        let table = RouteTable::generate(3000, 11, 4);
        // One-packet flows, so each packet is an independent destination draw.
        let base = SynthConfig {
            packets: 20_000,
            arp_fraction: 0.0,
            flow_size: FlowSize::LogNormal {
                mu: 0.0,
                sigma: 0.0,
            },
            ..Default::default()
        };
        let share_of_top = |w: PrefixWeighting| {
            let v: Vec<_> = SynthTrace::new(
                SynthConfig {
                    dst_weighting: w,
                    ..base.clone()
                },
                &table,
            )
            .unwrap()
            .collect();
            let mut h: HashMap<(u32, u8), usize> = HashMap::new();
            for p in &v {
                let ip = parse_ip(&p.data).unwrap();
                let r = table
                    .lookup_linear(ip.dst)
                    .expect("every destination is routed");
                *h.entry((r.prefix, r.len)).or_default() += 1;
            }
            *h.values().max().unwrap() as f64 / v.len() as f64
        };
        let zipf = share_of_top(PrefixWeighting::Zipf { s: 1.0 });
        let uniform = share_of_top(PrefixWeighting::Uniform);
        assert!(zipf > 0.05, "Zipf top prefix share {zipf}");
        assert!(zipf > 5.0 * uniform, "Zipf {zipf} vs uniform {uniform}");
        // Address-space weighting favours short prefixes.
        let v: Vec<_> = SynthTrace::new(
            SynthConfig {
                dst_weighting: PrefixWeighting::AddressSpace,
                ..base.clone()
            },
            &table,
        )
        .unwrap()
        .collect();
        let short = v
            .iter()
            .filter(|p| {
                table
                    .lookup_linear(parse_ip(&p.data).unwrap().dst)
                    .unwrap()
                    .len
                    <= 16
            })
            .count();
        assert!(short as f64 / v.len() as f64 > 0.3, "{short}");
        // Per port: each next-hop port gets half, however many prefixes it has.
        let ports = RouteTable {
            entries: vec![
                crate::routes::Route {
                    prefix: 0x0a00_0000,
                    len: 8,
                    next_hop_port: 1,
                    asn: 0,
                },
                crate::routes::Route {
                    prefix: 0x0b00_0000,
                    len: 8,
                    next_hop_port: 1,
                    asn: 0,
                },
                crate::routes::Route {
                    prefix: 0x0c00_0000,
                    len: 8,
                    next_hop_port: 1,
                    asn: 0,
                },
                crate::routes::Route {
                    prefix: 0xc0a8_0100,
                    len: 24,
                    next_hop_port: 2,
                    asn: 0,
                },
            ],
        };
        let v: Vec<_> = SynthTrace::new(
            SynthConfig {
                dst_weighting: PrefixWeighting::PerPort,
                ..base.clone()
            },
            &ports,
        )
        .unwrap()
        .collect();
        let port2 = v
            .iter()
            .filter(|p| {
                ports
                    .lookup_linear(parse_ip(&p.data).unwrap().dst)
                    .unwrap()
                    .next_hop_port
                    == 2
            })
            .count() as f64
            / v.len() as f64;
        assert!((port2 - 0.5).abs() < 0.02, "{port2}");
    }

    #[test]
    fn timestamps_fixed_and_exponential() {
        let v = gen(SynthConfig {
            packets: 1000,
            rate_pps: 3e6,
            start_ns: 5,
            ..Default::default()
        });
        for (k, p) in v.iter().enumerate() {
            assert_eq!(p.timestamp_ns, 5 + (k as f64 * 1e9 / 3e6).round() as u64);
        }
        let v = gen(SynthConfig {
            packets: 20_000,
            rate_pps: 1e5,
            exponential_arrivals: true,
            ..Default::default()
        });
        assert!(v.windows(2).all(|w| w[0].timestamp_ns <= w[1].timestamp_ns));
        let mean =
            (v.last().unwrap().timestamp_ns - v[0].timestamp_ns) as f64 / (v.len() - 1) as f64;
        assert!((mean / 10_000.0 - 1.0).abs() < 0.03, "mean gap {mean} ns");
        let gaps: Vec<u64> = v
            .windows(2)
            .map(|w| w[1].timestamp_ns - w[0].timestamp_ns)
            .collect();
        let below_mean =
            gaps.iter().filter(|&&g| (g as f64) < mean).count() as f64 / gaps.len() as f64;
        assert!(
            (below_mean - (1.0 - (-1.0f64).exp())).abs() < 0.02,
            "exponential: P(gap < mean) = {below_mean}"
        );
    }

    #[test]
    fn interfaces_from_triples_and_spread() {
        let c = SynthConfig {
            packets: 6000,
            ..Default::default()
        }
        .with_interfaces(&[
            ([2, 0, 0, 0, 0, 1], Ipv4Addr::new(10, 0, 1, 1), 24),
            ([2, 0, 0, 0, 0, 2], Ipv4Addr::new(10, 0, 2, 1), 24),
            ([2, 0, 0, 0, 0, 3], Ipv4Addr::new(10, 0, 3, 1), 30),
        ]);
        let mut per = [0usize; 3];
        for p in gen(c) {
            per[p.iface as usize] += 1;
            if p.data[12..14] == [0x08, 0x00] {
                assert_eq!(p.data[..6], [2, 0, 0, 0, 0, p.iface as u8 + 1]);
            }
        }
        // Flows are spread uniformly; packets follow flow popularity, so allow slack.
        assert!(per.iter().all(|&k| k > 600), "{per:?}");
    }

    #[test]
    fn config_serde_defaults_and_validation() {
        let d: SynthConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(d, SynthConfig::default());
        let j = serde_json::to_string(&d).unwrap();
        assert!(j.contains("\"mac\":\"00:00:c0:3b:71:ef\""), "{j}");
        assert_eq!(serde_json::from_str::<SynthConfig>(&j).unwrap(), d);
        let c: SynthConfig = serde_json::from_str(
            r#"{"packets": 5, "sizes": {"kind": "fixed", "frame_len": 128},
                "interfaces": [{"mac": "02:00:00:00:00:01", "ip": "10.0.0.1", "prefix_len": 8, "src_prefix": "192.0.2.0/24"}]}"#,
        )
        .unwrap();
        assert_eq!(
            c.interfaces[0].src_prefix,
            Some("192.0.2.0/24".parse().unwrap())
        );
        let v = gen(SynthConfig {
            arp_fraction: 0.0,
            ..c
        });
        assert!(v
            .iter()
            .all(|p| p.data.len() == 124 && parse_ip(&p.data).unwrap().src >> 8 == 0xc00002));
        let err = |c: SynthConfig| {
            SynthTrace::new(c, &RouteTable::default())
                .err()
                .unwrap()
                .to_string()
        };
        assert!(err(SynthConfig {
            arp_fraction: 2.0,
            ..Default::default()
        })
        .contains("arp_fraction"));
        assert!(err(SynthConfig {
            interfaces: vec![],
            ..Default::default()
        })
        .contains("interfaces"));
        assert!(err(SynthConfig {
            sizes: SizeMix::Fixed { frame_len: 20 },
            ..Default::default()
        })
        .contains("frame length 20"));
        assert!(err(SynthConfig {
            flows: 0,
            ..Default::default()
        })
        .contains("flows"));
        assert!("00:11".parse::<MacAddr>().is_err());
        assert!("1.2.3.4/40".parse::<Ipv4Prefix>().is_err());
    }

    #[test]
    fn pcap_and_pcapng_files_hold_the_trace() {
        let dir =
            std::env::temp_dir().join(format!("pktflow-traffic-synth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let c = SynthConfig {
            packets: 500,
            ..Default::default()
        };
        let v = gen(c.clone());
        assert_eq!(
            SynthTrace::new(c.clone(), &RouteTable::default())
                .unwrap()
                .write_pcap(dir.join("s.pcap"))
                .unwrap(),
            500
        );
        let back: Vec<_> = PcapReader::open(dir.join("s.pcap"))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back.len(), 500);
        for (a, b) in v.iter().zip(&back) {
            assert_eq!(
                (a.timestamp_ns, &a.data, a.orig_len),
                (b.timestamp_ns, &b.data, b.orig_len)
            );
        }
        SynthTrace::new(c, &RouteTable::default())
            .unwrap()
            .write_pcapng(dir.join("s.pcapng"))
            .unwrap();
        let back: Vec<_> = PcapReader::open(dir.join("s.pcapng"))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(back, v, "pcapng keeps the interface too");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
