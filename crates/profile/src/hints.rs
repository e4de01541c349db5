//! Shape synthetic traffic for an application: read from its graph the interfaces packets
//! arrive on and the routes its lookup elements know, so that generated packets are addressed to
//! the right MACs and their destinations hit the routing table in realistic patterns.
//!
//! Rules (documented in docs/profile.md): interface i is the i-th FromDevice/PollDevice in
//! declaration order; its addresses come from the i-th ARPQuerier (`IP, MAC`) or, failing that,
//! the i-th ARPResponder; the prefix length is that of the longest non-host route containing
//! the interface address (24 if none). Destinations are drawn from the prefixes of every
//! StaticIPLookup / LookupIPRoute / RadixIPLookup (including a RadixIPLookup ROUTES_FILE).
use pktflow_elements::conf::{
    mask, parse_ether, parse_ip, parse_prefix, split_args, split_words, Args,
};
use pktflow_model::AppGraph;
use pktflow_traffic::routes::{Route, RouteTable};
use pktflow_traffic::synth::{PrefixWeighting, SynthConfig, SynthTrace};
use pktflow_traffic::TracePacket;
use std::net::Ipv4Addr;
use std::path::Path;

#[derive(Clone, Debug, Default)]
pub struct TrafficHints {
    pub interfaces: Vec<([u8; 6], [u8; 4], u8)>,
    pub routes: Vec<Route>,
    /// Gateway of each route (same index as `routes`), if it names one.
    pub gateways: Vec<Option<[u8; 4]>>,
    /// Generate on the first interface only: for address translators (NAT), connections start
    /// inside (the first FromDevice) and the far ends' replies come back through the outside.
    pub inside_only: bool,
    /// How destinations are drawn from the routes (default: the generator's Zipf).
    pub dst_weighting: Option<PrefixWeighting>,
    /// How many of `interfaces` (the first ones) have addresses the configuration states (an
    /// ARPQuerier or ARPResponder); the others carry placeholder addresses.
    pub interfaces_known: usize,
    /// A NetThreads-thesis benchmark element in the graph chooses that benchmark's workload.
    pub thesis: Option<pktflow_traffic::thesis::Workload>,
}

/// Above this many routes the arrival interface is not adjusted (a linear longest-prefix scan
/// per generated packet would dominate; large tables come from BGP dumps whose next hops are
/// synthetic anyway).
const MAX_ROUTES_FOR_SHAPING: usize = 4096;

const LOOKUP_CLASSES: &[&str] = &[
    "StaticIPLookup",
    "LookupIPRoute",
    "RadixIPLookup",
    "DirectIPLookup",
    "LinearIPLookup",
];

impl TrafficHints {
    /// The hints of `g`. AddressInfo names (`ARPQuerier(lan)`, `lan:net 0` in a route) are
    /// resolved as the elements resolve them; a configuration that named its interfaces only
    /// through AddressInfo used to look as if it stated no interface address at all.
    pub fn from_graph(g: &AppGraph, base_dir: &Path) -> Result<TrafficHints, String> {
        let table: Vec<pktflow_elements::conf::AddrEntry> = g
            .elements
            .iter()
            .filter(|e| e.class == "AddressInfo")
            // a bad AddressInfo is the functional run's error to report, with its line
            .filter_map(|e| {
                pktflow_elements::elements::click::address_info::parse_entries(&e.config).ok()
            })
            .flatten()
            .collect();
        pktflow_elements::conf::with_address_info(table, || Self::from_graph_named(g, base_dir))
    }

    fn from_graph_named(g: &AppGraph, base_dir: &Path) -> Result<TrafficHints, String> {
        let mut routes = Vec::new();
        let mut gateways = Vec::new();
        for e in g
            .elements
            .iter()
            .filter(|e| LOOKUP_CLASSES.contains(&e.class.as_str()))
        {
            let mut a = Args::parse(&e.class, &e.config, &["ROUTES_FILE", "ROUTES_PORTS"]);
            if let Some(f) = a.keyword("ROUTES_FILE") {
                let ports = a
                    .keyword("ROUTES_PORTS")
                    .and_then(|p| p.trim().parse::<u16>().ok())
                    .unwrap_or(1);
                let path = base_dir.join(pktflow_elements::conf::unquote(&f));
                let t = RouteTable::load(&path, ports).map_err(|e| e.to_string())?;
                gateways.extend(t.entries.iter().map(|_| None));
                routes.extend(t.entries);
            }
            for arg in a.take_all_positional() {
                let words = split_words(&arg);
                let Some(first) = words.first() else { continue };
                if let Ok((ip, len)) = parse_prefix(first) {
                    let port = words
                        .last()
                        .and_then(|w| w.parse::<u16>().ok())
                        .unwrap_or(0);
                    let prefix = u32::from_be_bytes(ip) & mask(len);
                    routes.push(Route {
                        prefix,
                        len,
                        next_hop_port: port,
                        asn: 0,
                    });
                    gateways.push(if words.len() >= 3 {
                        parse_ip(&words[1]).ok()
                    } else {
                        None
                    });
                }
            }
        }
        let addr_of = |class: &str| -> Vec<([u8; 6], [u8; 4])> {
            g.elements
                .iter()
                .filter(|e| e.class == class)
                .filter_map(|e| {
                    let args = split_args(&e.config);
                    let words: Vec<String> = args.iter().flat_map(|a| split_words(a)).collect();
                    let ip = words.iter().find_map(|w| {
                        parse_ip(w)
                            .ok()
                            .or_else(|| parse_prefix(w).ok().map(|p| p.0))
                    })?;
                    let mac = words.iter().find_map(|w| parse_ether(w).ok())?;
                    Some((mac, ip))
                })
                .collect()
        };
        let mut addrs = addr_of("ARPQuerier");
        if addrs.is_empty() {
            addrs = addr_of("ARPResponder");
        }
        // Interface prefixes declared to CheckIPHeader (`INTERFACES 10.0.0.1/8 ...`).
        let mut declared: Vec<([u8; 4], u8)> = Vec::new();
        for e in g.elements.iter().filter(|e| e.class == "CheckIPHeader") {
            let keys = [
                "INTERFACES",
                "BADSRC",
                "GOODDST",
                "OFFSET",
                "CHECKSUM",
                "VERBOSE",
                "DETAILS",
            ];
            let mut a = Args::parse(&e.class, &e.config, &keys);
            if let Some(list) = a.keyword("INTERFACES") {
                declared.extend(
                    split_words(&list)
                        .iter()
                        .filter_map(|w| parse_prefix(w).ok()),
                );
            }
        }
        let n_src = g
            .elements
            .iter()
            .filter(|e| e.class == "FromDevice" || e.class == "PollDevice")
            .count();
        let mut interfaces = Vec::new();
        for i in 0..n_src {
            let (mac, ip) = addrs.get(i).copied().unwrap_or((
                [0x02, 0, 0, 0, 0, i as u8],
                parse_ip("10.0.0.1").expect("literal"),
            ));
            let ipn = u32::from_be_bytes(ip);
            let len = declared
                .iter()
                .find(|(dip, _)| *dip == ip)
                .map(|d| d.1)
                .or_else(|| {
                    routes
                        .iter()
                        .filter(|r| r.len > 0 && r.len < 32 && (ipn & mask(r.len)) == r.prefix)
                        .map(|r| r.len)
                        .max()
                })
                .unwrap_or(24);
            interfaces.push((mac, ip, len));
        }
        let translator = g
            .elements
            .iter()
            .any(|e| e.class == "IPRewriter" || e.class == "IPAddrRewriter");
        Ok(TrafficHints {
            interfaces_known: addrs.len().min(n_src),
            interfaces,
            routes,
            gateways,
            inside_only: translator,
            dst_weighting: None,
            thesis: g
                .elements
                .iter()
                .find_map(|e| pktflow_traffic::thesis::Workload::for_element_class(&e.class)),
        })
    }

    /// Interface a packet to `dst` leaves on: the interface whose subnet holds the gateway of
    /// the longest matching route, or the destination itself for a direct route.
    fn departure_iface(&self, dst: u32) -> Option<usize> {
        let (i, r) = self
            .routes
            .iter()
            .enumerate()
            .filter(|(_, r)| (dst & mask(r.len)) == r.prefix)
            .max_by_key(|(_, r)| r.len)?;
        let via = self.gateways[i]
            .map(u32::from_be_bytes)
            .unwrap_or(if r.len == 32 { return None } else { dst });
        self.interfaces
            .iter()
            .position(|&(_, ip, len)| (u32::from_be_bytes(ip) & mask(len)) == (via & mask(len)))
    }

    /// A seeded synthetic packet stream for these interfaces and routes. A generated IP packet
    /// whose route leaves through the interface it arrives on (which a router answers with an
    /// ICMP redirect) arrives instead on the next interface (its Ethernet destination set to
    /// that interface's MAC), so redirects stay as rare as in real transit traffic.
    pub fn generator(
        &self,
        packets: u64,
        seed: u64,
    ) -> Result<Box<dyn Iterator<Item = TracePacket>>, String> {
        if let Some(w) = self.thesis {
            return Ok(pktflow_traffic::thesis::generate(w, packets, seed));
        }
        let mut cfg = SynthConfig {
            packets,
            seed,
            ..SynthConfig::default()
        };
        if let Some(w) = self.dst_weighting {
            cfg.dst_weighting = w;
        }
        if !self.interfaces.is_empty() {
            let take = if self.inside_only {
                1
            } else {
                self.interfaces.len()
            };
            let ifs: Vec<([u8; 6], Ipv4Addr, u8)> = self
                .interfaces
                .iter()
                .take(take)
                .map(|&(mac, ip, len)| (mac, Ipv4Addr::from(ip), len))
                .collect();
            cfg = cfg.with_interfaces(&ifs);
        }
        let transit = cfg.dst_weighting == PrefixWeighting::Transit;
        let mut entries: Vec<Route> = self
            .routes
            .iter()
            .zip(&self.gateways)
            .filter(|(r, gw)| r.len < 32 && (!transit || gw.is_some()))
            .map(|(r, _)| *r)
            .collect();
        if transit && entries.is_empty() {
            return Err(
                "destinations 'transit' need a route through a gateway (e.g. \
                        `0.0.0.0/0 10.0.0.254 1` in a StaticIPLookup); this application's \
                        lookup elements name none"
                    .to_string(),
            );
        }
        if entries.is_empty() {
            entries.push(Route {
                prefix: 0,
                len: 0,
                next_hop_port: 0,
                asn: 0,
            });
        }
        let synth = SynthTrace::new(cfg, &RouteTable { entries }).map_err(|e| e.to_string())?;
        if self.inside_only
            || self.interfaces.len() < 2
            || self.routes.len() > MAX_ROUTES_FOR_SHAPING
        {
            return Ok(Box::new(synth));
        }
        let hints = self.clone();
        Ok(Box::new(synth.map(move |mut tp| {
            let d = &tp.data;
            if d.len() >= 34 && d[12..14] == [0x08, 0x00] {
                let dst = u32::from_be_bytes([d[30], d[31], d[32], d[33]]);
                if hints.departure_iface(dst) == Some(tp.iface as usize) {
                    let n = hints.interfaces.len();
                    let to = (tp.iface as usize + 1) % n;
                    tp.iface = to as u16;
                    tp.data[0..6].copy_from_slice(&hints.interfaces[to].0);
                }
            }
            tp
        })))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_interfaces(default_gw: bool) -> TrafficHints {
        let route = |p: [u8; 4], len: u8, port: u16| Route {
            prefix: u32::from_be_bytes(p),
            len,
            next_hop_port: port,
            asn: 0,
        };
        let mut routes = vec![route([10, 0, 0, 0], 8, 1), route([192, 168, 1, 0], 24, 2)];
        let mut gateways = vec![None, None];
        if default_gw {
            routes.push(route([0, 0, 0, 0], 0, 1));
            gateways.push(Some([10, 0, 0, 254]));
        }
        TrafficHints {
            interfaces: vec![
                ([0, 0, 0xc0, 0xae, 0x67, 0xef], [10, 0, 0, 1], 8),
                ([0, 0, 0xc0, 0x4f, 0x71, 0xef], [192, 168, 1, 1], 24),
            ],
            interfaces_known: 2,
            routes,
            gateways,
            dst_weighting: Some(PrefixWeighting::Transit),
            ..Default::default()
        }
    }

    fn directly_attached(d: &[u8]) -> bool {
        d[30] == 10 || d[30..33] == [192, 168, 1]
    }

    #[test]
    fn transit_destinations_are_reached_through_the_gateway() {
        let h = two_interfaces(true);
        let ip: Vec<TracePacket> = h
            .generator(4000, 7)
            .unwrap()
            .filter(|p| p.data.len() >= 34 && p.data[12..14] == [0x08, 0x00])
            .collect();
        assert!(ip.len() > 3800);
        let direct = ip.iter().filter(|p| directly_attached(&p.data)).count();
        // Uniform hosts of 0.0.0.0/0 fall into 10/8 about once in 224 (0/8, 127/8 and 224/3
        // are redrawn); nothing else is directly attached.
        assert!(
            direct * 100 < ip.len(),
            "{direct} of {} directly attached",
            ip.len()
        );
        // The same hints with the generator's Zipf default send most flows to the attached
        // subnets (two of the three prefixes).
        let mut zipf = h.clone();
        zipf.dst_weighting = None;
        let ip_z: Vec<TracePacket> = zipf
            .generator(4000, 7)
            .unwrap()
            .filter(|p| p.data.len() >= 34 && p.data[12..14] == [0x08, 0x00])
            .collect();
        let direct_z = ip_z.iter().filter(|p| directly_attached(&p.data)).count();
        assert!(direct_z * 4 > ip_z.len(), "{direct_z} of {}", ip_z.len());
    }

    #[test]
    fn transit_without_a_gateway_route_is_an_error() {
        let err = two_interfaces(false).generator(10, 1).err().unwrap();
        assert!(err.contains("transit") && err.contains("gateway"), "{err}");
    }
}
