//! UDP traffic generators of Click's userlevel/linuxmodule groups:
//!
//! - `FastUDPSource(RATE, LIMIT, LENGTH, SRCETH, SRCIP, SPORT, DSTETH, DSTIP, DPORT
//!   [, CHECKSUM, INTERVAL, ACTIVE])`: copies of one Ethernet/IPv4/UDP frame of LENGTH bytes
//!   (at least 60; LENGTH includes the 14-byte Ethernet header), built as Click builds it:
//!   IP version 4, header length 5, TOS 0, total length LENGTH-14, id 0, no fragment bits,
//!   TTL 250, protocol 17, header checksum; UDP length LENGTH-34, checksum over the
//!   pseudo-header when CHECKSUM (default true) else 0. The payload bytes are zero (Click
//!   leaves them uninitialized). With INTERVAL N > 0, after every N packets both ports are
//!   incremented by one more (SPORT+k, DPORT+k, 16-bit wrap) and the UDP checksum recomputed,
//!   as Click does. LIMIT -1 for no limit. Packet i is stamped i / RATE seconds.
//! - `FastUDPFlows(RATE, LIMIT, LENGTH, SRCETH, SRCIP, DSTETH, DSTIP, FLOWS, FLOWSIZE
//!   [, CHECKSUM, ACTIVE])`: the same frames for FLOWS concurrent flows, taken round-robin;
//!   each flow has pseudo-random source and destination ports (from the configuration's
//!   seed, see RandomSeed) and gets new ones after FLOWSIZE packets. Click draws its ports
//!   from its own random generator, so the port values differ from Click's.
//!
//! Generators: no inputs, 1 push output. The IP header annotation and the destination IP
//! annotation are set. Read handler `count`; write handlers `active`, `reset`, `limit`.
//! Costs: the runtime's source visit (4 instructions, 16 B meta-data write).
use crate::conf::{parse_bool, parse_ether, parse_ip, parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Role};
use crate::elements::click::switches::splitmix;
use crate::net;
use crate::registry::ClassInfo;
use pktflow_traffic::checksum::udp_checksum;
use pktflow_traffic::Packet;

pub const FAST_UDP_SOURCE: ClassInfo = ClassInfo {
    name: "FastUDPSource",
    summary: "generate one UDP/IP/Ethernet frame at RATE packets per second",
    make: make_source,
};
pub const FAST_UDP_FLOWS: ClassInfo = ClassInfo {
    name: "FastUDPFlows",
    summary: "generate UDP/IP/Ethernet frames of FLOWS concurrent flows",
    make: make_flows,
};

/// Click's FastUDPSource frame: Ethernet + IPv4 (TTL 250, id 0) + UDP, `len` bytes in all.
#[allow(clippy::too_many_arguments)]
pub fn udp_frame(
    len: usize,
    seth: [u8; 6],
    sip: [u8; 4],
    sport: u16,
    deth: [u8; 6],
    dip: [u8; 4],
    dport: u16,
    cksum: bool,
) -> Vec<u8> {
    let mut f = vec![0u8; len];
    net::write_ether(&mut f, deth, seth, net::ETHERTYPE_IP);
    let ip = &mut f[14..];
    ip[0] = 0x45;
    net::set_be16(ip, 2, (len - 14) as u16);
    ip[8] = 250;
    ip[9] = net::IP_PROTO_UDP;
    net::set_ip_src(ip, sip);
    net::set_ip_dst(ip, dip);
    net::set_ip_checksum(ip);
    set_ports(&mut f, sport, dport, cksum);
    f
}

fn set_ports(f: &mut [u8], sport: u16, dport: u16, cksum: bool) {
    let (sip, dip) = (net::ip_src(&f[14..]), net::ip_dst(&f[14..]));
    let udp = &mut f[34..];
    let ulen = udp.len() as u16;
    net::set_be16(udp, 0, sport);
    net::set_be16(udp, 2, dport);
    net::set_be16(udp, 4, ulen);
    net::set_be16(udp, 6, 0);
    if cksum {
        let c = udp_checksum(sip, dip, udp);
        net::set_be16(udp, 6, c);
    }
}

struct Gen {
    frame: Vec<u8>,
    rate: u64,
    limit: Option<u64>,
    cksum: bool,
    active: bool,
    count: u64,
    base: (u16, u16),
    interval: u64,
    /// FastUDPFlows: per flow (sport, dport, packets sent), the next flow, flow size, rng.
    flows: Vec<(u16, u16, u64)>,
    next_flow: usize,
    flowsize: u64,
    rng: u64,
}

struct Common {
    rate: u64,
    limit: Option<u64>,
    len: usize,
}

fn common(c: &str, a: &mut Args) -> Result<Common, String> {
    let rate = parse_uint(&a.required("RATE")?).map_err(|e| format!("{c}: RATE: {e}"))?;
    if rate == 0 {
        return Err(format!("{c}: RATE must be positive"));
    }
    let l = a.required("LIMIT")?;
    let limit = if l.trim() == "-1" {
        None
    } else {
        Some(parse_uint(&l).map_err(|e| format!("{c}: LIMIT: {e}"))?)
    };
    let len = parse_uint(&a.required("LENGTH")?).map_err(|e| format!("{c}: LENGTH: {e}"))?;
    if !(60..=65535 + 14).contains(&len) {
        return Err(format!(
            "{c}: LENGTH must be 60 to 65549 bytes, found {len}"
        ));
    }
    Ok(Common {
        rate,
        limit,
        len: len as usize,
    })
}

fn flag(c: &str, a: &mut Args, k: &str) -> Result<bool, String> {
    match a.keyword_or_positional(k) {
        Some(s) => parse_bool(&s).map_err(|e| format!("{c}: {k}: {e}")),
        None => Ok(true),
    }
}

fn port(c: &str, s: String, what: &str) -> Result<u16, String> {
    let v = parse_uint(&s).map_err(|e| format!("{c}: {what}: {e}"))?;
    u16::try_from(v).map_err(|_| format!("{c}: {what}: {v} is over 65535"))
}

fn make_source(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "FastUDPSource";
    let mut a = Args::parse(c, config, &["CHECKSUM", "INTERVAL", "ACTIVE"]);
    let k = common(c, &mut a)?;
    let e = |r: Result<[u8; 6], String>| r.map_err(|m| format!("{c}: {m}"));
    let i = |r: Result<[u8; 4], String>| r.map_err(|m| format!("{c}: {m}"));
    let seth = e(parse_ether(&a.required("SRCETH")?))?;
    let sip = i(parse_ip(&a.required("SRCIP")?))?;
    let sport = port(c, a.required("SPORT")?, "SPORT")?;
    let deth = e(parse_ether(&a.required("DSTETH")?))?;
    let dip = i(parse_ip(&a.required("DSTIP")?))?;
    let dport = port(c, a.required("DPORT")?, "DPORT")?;
    let cksum = flag(c, &mut a, "CHECKSUM")?;
    let interval = match a.keyword_or_positional("INTERVAL") {
        Some(s) => parse_uint(&s).map_err(|e| format!("{c}: INTERVAL: {e}"))?,
        None => 0,
    };
    let active = flag(c, &mut a, "ACTIVE")?;
    a.finish()?;
    Ok(Box::new(Gen {
        frame: udp_frame(k.len, seth, sip, sport, deth, dip, dport, cksum),
        rate: k.rate,
        limit: k.limit,
        cksum,
        active,
        count: 0,
        base: (sport, dport),
        interval,
        flows: Vec::new(),
        next_flow: 0,
        flowsize: 0,
        rng: 0,
    }))
}

fn make_flows(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "FastUDPFlows";
    let mut a = Args::parse(c, config, &["CHECKSUM", "ACTIVE"]);
    let k = common(c, &mut a)?;
    let e = |r: Result<[u8; 6], String>| r.map_err(|m| format!("{c}: {m}"));
    let i = |r: Result<[u8; 4], String>| r.map_err(|m| format!("{c}: {m}"));
    let seth = e(parse_ether(&a.required("SRCETH")?))?;
    let sip = i(parse_ip(&a.required("SRCIP")?))?;
    let deth = e(parse_ether(&a.required("DSTETH")?))?;
    let dip = i(parse_ip(&a.required("DSTIP")?))?;
    let nflows = parse_uint(&a.required("FLOWS")?).map_err(|e| format!("{c}: FLOWS: {e}"))?;
    let flowsize =
        parse_uint(&a.required("FLOWSIZE")?).map_err(|e| format!("{c}: FLOWSIZE: {e}"))?;
    if !(1..=1_000_000).contains(&nflows) || flowsize == 0 {
        return Err(format!(
            "{c}: FLOWS must be 1 to 1000000 and FLOWSIZE positive"
        ));
    }
    let cksum = flag(c, &mut a, "CHECKSUM")?;
    let active = flag(c, &mut a, "ACTIVE")?;
    a.finish()?;
    let mut rng = splitmix(env.seed);
    let flows = (0..nflows)
        .map(|_| {
            rng = splitmix(rng);
            ((rng >> 16) as u16, (rng >> 32) as u16, 0)
        })
        .collect();
    Ok(Box::new(Gen {
        frame: udp_frame(k.len, seth, sip, 0, deth, dip, 0, cksum),
        rate: k.rate,
        limit: k.limit,
        cksum,
        active,
        count: 0,
        base: (0, 0),
        interval: 0,
        flows,
        next_flow: 0,
        flowsize,
        rng,
    }))
}

impl Element for Gen {
    fn ports(&self) -> Ports {
        Ports::push(0, 1)
    }
    fn role(&self) -> Role {
        Role::Generator
    }
    fn generate(&mut self, cx: &mut Cx) -> Option<Packet> {
        if !self.active || self.limit.is_some_and(|l| self.count >= l) {
            return None;
        }
        if !self.flows.is_empty() {
            let f = self.next_flow;
            self.next_flow = (f + 1) % self.flows.len();
            if self.flows[f].2 >= self.flowsize {
                self.rng = splitmix(self.rng);
                self.flows[f] = ((self.rng >> 16) as u16, (self.rng >> 32) as u16, 0);
            }
            self.flows[f].2 += 1;
            let (s, d, _) = self.flows[f];
            set_ports(&mut self.frame, s, d, self.cksum);
        }
        let mut p = cx.packet_from(&self.frame);
        p.set_ip_header(14, 20);
        p.anno.dst_ip = net::ip_dst(&self.frame[14..]);
        p.anno.timestamp_ns = ((self.count as u128 * 1_000_000_000) / self.rate as u128) as u64;
        self.count += 1;
        if self.interval > 0 && self.count.is_multiple_of(self.interval) {
            let k = (self.count / self.interval) as u16;
            let (s, d) = (self.base.0.wrapping_add(k), self.base.1.wrapping_add(k));
            set_ports(&mut self.frame, s, d, self.cksum);
        }
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count, "active": self.active})
    }
    fn write_handler(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "active" => self.active = parse_bool(value)?,
            "reset" => self.count = 0,
            "limit" => {
                self.limit = match value.trim() {
                    "-1" => None,
                    v => Some(parse_uint(v)?),
                }
            }
            _ => return Err(format!("no write handler '{name}'")),
        }
        Ok(())
    }
    fn code_size(&self) -> u32 {
        60
    }
}

#[cfg(test)]
mod tests {
    use crate::elements::ip::testutil::make;

    #[test]
    fn fast_udp_source_frame_by_hand() {
        let mut g = make(
            "FastUDPSource",
            "10, 2, 60, 00:03:47:0D:39:57, 2.0.0.2, 1234, 1:2:3:4:5:6, 2.0.0.1, 1234, 1, 0, 1",
        );
        let mut cx = crate::cx::Cx::new();
        let p = g.generate(&mut cx).unwrap();
        let mut want = vec![
            1, 2, 3, 4, 5, 6, 0x00, 0x03, 0x47, 0x0d, 0x39, 0x57, 0x08, 0x00, // Ethernet
            // IP: 4500 002e 0000 0000 fa11 sum 02000002 02000001
            // sum = 4500+002e+0000+0000+fa11+0200+0002+0200+0001 = 0x14342 -> 0x4343 -> ~ = 0xbcbc
            0x45, 0x00, 0x00, 0x2e, 0, 0, 0, 0, 250, 17, 0xbc, 0xbc, 2, 0, 0, 2, 2, 0, 0, 1,
            // UDP: 04d2 04d2 001a sum; pseudo = 0200+0002+0200+0001+0011+001a = 0x042e,
            // + 04d2+04d2+001a (zero payload) = 0x0dec -> ~0x0dec = 0xf213
            0x04, 0xd2, 0x04, 0xd2, 0x00, 0x1a, 0xf2, 0x13,
        ];
        want.resize(60, 0);
        assert_eq!(p.data(), &want[..]);
        assert_eq!(p.ip_offset(), Some(14));
        let q = g.generate(&mut cx).unwrap();
        assert_eq!(q.anno.timestamp_ns, 100_000_000);
        assert!(g.generate(&mut cx).is_none(), "LIMIT 2");
    }

    #[test]
    fn flows_change_ports_after_flowsize() {
        let mut g = make(
            "FastUDPFlows",
            "100, -1, 60, 0:0:0:0:0:1, 1.0.0.1, 0:0:0:0:0:2, 2.0.0.2, 2, 2",
        );
        let mut cx = crate::cx::Cx::new();
        let ports: Vec<(u8, u8, u8, u8)> = (0..6)
            .map(|_| {
                let p = g.generate(&mut cx).unwrap();
                let d = p.data();
                (d[34], d[35], d[36], d[37])
            })
            .collect();
        assert_eq!(
            ports[0], ports[2],
            "flow 0 keeps its ports for FLOWSIZE packets"
        );
        assert_ne!(ports[0], ports[4], "then gets new ones");
        assert!((crate::registry::find("FastUDPFlows").unwrap().make)(
            "100, -1, 59, 0:0:0:0:0:1, 1.0.0.1, 0:0:0:0:0:2, 2.0.0.2, 2, 2",
            &Default::default()
        )
        .is_err());
    }
}
