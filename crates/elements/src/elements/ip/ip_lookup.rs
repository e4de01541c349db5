//! `LookupIPRoute`, `StaticIPLookup`, `RadixIPLookup` — IP routing table lookup on the
//! destination IP annotation (Click semantics; all three share pktflow's LPM table, see
//! `lpm.rs` for the structure and why).
//!
//! Configuration: routes `ADDR/MASK [GW] OUT`, separated by commas (MASK as a length or a
//! dotted mask). A packet's destination annotation is looked up (longest prefix wins); when the
//! route has a gateway (non-zero GW) the annotation is rewritten to the gateway; the packet goes
//! to output OUT. A packet no route matches is dropped with reason `no route`.
//!
//! pktflow extension (all three classes): `ROUTES_FILE path` loads a BGP dump of
//! `prefix<TAB>asn` lines (gzip or plain, through `pktflow_traffic::RouteTable`), each route's
//! output being `ASN mod ROUTES_PORTS` (`ROUTES_PORTS n`, default 1); the routes given in the
//! configuration are added after the file's, so they win for identical prefixes.
//!
//! Ports: 1 push input; outputs 0..=max(OUT) (at least `ROUTES_PORTS` with a file), push.
//!
//! Costs: 6 instructions + 5 per trie level read + 3 when the route has a gateway;
//! a 4-byte meta-data read of the destination annotation, a 4-byte write when the gateway
//! replaces it; one 4-byte static-state read per trie level (object 0, key = the entry's index:
//! root slot, or 65536 + node * 256 + slot) and a 4-byte read of the gateway array (object 1,
//! key = gateway index) when the leaf names a gateway. A miss costs the same walk.
use super::lpm::{Lpm, Route};
use crate::conf::{parse_ip, parse_prefix, parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::Read;
use pktflow_traffic::Packet;

pub const LOOKUP_IP_ROUTE: ClassInfo = ClassInfo {
    name: "LookupIPRoute",
    summary: "route on the destination annotation: longest-prefix match, gateway rewrite",
    make: make_lookup,
};
pub const STATIC_IP_LOOKUP: ClassInfo = ClassInfo {
    name: "StaticIPLookup",
    summary: "static routing table lookup (same as LookupIPRoute)",
    make: make_static,
};
pub const RADIX_IP_LOOKUP: ClassInfo = ClassInfo {
    name: "RadixIPLookup",
    summary: "routing table lookup for large tables (ROUTES_FILE loads a BGP dump)",
    make: make_radix,
};

pub struct IpLookup {
    table: Lpm,
    noutputs: usize,
    lookups: u64,
    misses: u64,
}

fn make_lookup(c: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    make("LookupIPRoute", c, env)
}
fn make_static(c: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    make("StaticIPLookup", c, env)
}
fn make_radix(c: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    make("RadixIPLookup", c, env)
}

/// Parse one `ADDR/MASK [GW] OUT` route.
pub fn parse_route(s: &str) -> Result<Route, String> {
    let w: Vec<&str> = s.split_whitespace().collect();
    let (pfx, gw, out) = match w.as_slice() {
        [p, o] => (*p, None, *o),
        [p, g, o] => (*p, Some(*g), *o),
        _ => return Err(format!("expected 'ADDR/MASK [GW] OUT', found '{s}'")),
    };
    let (a, len) = parse_prefix(pfx)?;
    let gw = match gw {
        Some(g) => {
            let g = u32::from_be_bytes(parse_ip(g)?);
            (g != 0).then_some(g)
        }
        None => None,
    };
    let port = parse_uint(out).map_err(|e| format!("output port in '{s}': {e}"))?;
    if port > super::lpm::MAX_PORT as u64 {
        return Err(format!("output port {port} in '{s}' is too large"));
    }
    Ok(Route {
        addr: u32::from_be_bytes(a) & crate::conf::mask(len),
        len,
        gw,
        port: port as u16,
    })
}

fn make(class: &str, config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse(class, config, &["ROUTES_FILE", "ROUTES_PORTS"]);
    let mut routes = Vec::new();
    let mut noutputs = 0usize;
    if let Some(f) = a.keyword("ROUTES_FILE") {
        let nports = match a.keyword("ROUTES_PORTS") {
            Some(n) => parse_uint(&n).map_err(|e| format!("{class}: ROUTES_PORTS: {e}"))?,
            None => 1,
        };
        if nports == 0 || nports > super::lpm::MAX_PORT as u64 + 1 {
            return Err(format!("{class}: ROUTES_PORTS must be between 1 and 2047"));
        }
        let path = env.resolve_input(&crate::conf::unquote(&f));
        let table = pktflow_traffic::RouteTable::load(&path, nports as u16)
            .map_err(|e| format!("{class}: ROUTES_FILE {}: {e}", path.display()))?;
        routes.reserve(table.entries.len());
        for r in &table.entries {
            routes.push(Route {
                addr: r.prefix & crate::conf::mask(r.len),
                len: r.len,
                gw: None,
                port: r.next_hop_port,
            });
        }
        noutputs = nports as usize;
    } else if a.keyword("ROUTES_PORTS").is_some() {
        return Err(format!("{class}: ROUTES_PORTS needs ROUTES_FILE"));
    }
    for s in a.take_all_positional() {
        if s.is_empty() {
            continue;
        }
        let r = parse_route(&s).map_err(|e| format!("{class}: {e}"))?;
        noutputs = noutputs.max(r.port as usize + 1);
        routes.push(r);
    }
    if routes.is_empty() {
        return Err(format!(
            "{class}: expected at least one route 'ADDR/MASK [GW] OUT'"
        ));
    }
    let table = Lpm::build(&routes).map_err(|e| format!("{class}: {e}"))?;
    Ok(Box::new(IpLookup {
        table,
        noutputs,
        lookups: 0,
        misses: 0,
    }))
}

impl IpLookup {
    pub fn table(&self) -> &Lpm {
        &self.table
    }
}

impl Element for IpLookup {
    fn ports(&self) -> Ports {
        Ports::push(1, self.noutputs)
    }
    fn push(&mut self, _port: usize, mut p: Packet, cx: &mut Cx) {
        cx.read_meta(4);
        let dst = u32::from_be_bytes(p.anno.dst_ip);
        let hit = self.table.lookup(dst);
        cx.instr(6);
        for k in &hit.keys[..hit.levels as usize] {
            cx.static_state(Read, 0, *k as u64, 4);
            cx.instr(5);
        }
        self.lookups += 1;
        match hit.result {
            None => {
                self.misses += 1;
                cx.drop_packet(p, "no route");
            }
            Some((port, gw)) => {
                if let (Some(g), Some(gi)) = (gw, hit.gw_index) {
                    cx.static_state(Read, 1, gi as u64, 4);
                    cx.instr(3);
                    p.anno.dst_ip = g.to_be_bytes();
                    cx.write_meta(4);
                }
                cx.emit(port as usize, p);
            }
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"routes": self.table.n_routes(), "nodes": self.table.n_nodes(),
            "table_bytes": self.table.bytes(), "lookups": self.lookups, "no_route": self.misses})
    }
    fn code_size(&self) -> u32 {
        60
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_parse() {
        let r = parse_route("10.0.0.0/8 1").unwrap();
        assert_eq!((r.addr, r.len, r.gw, r.port), (0x0a00_0000, 8, None, 1));
        let r = parse_route("0.0.0.0/0 10.0.0.254 1").unwrap();
        assert_eq!(r.gw, Some(0x0a00_00fe));
        let r = parse_route("18.26.4.1/255.255.255.0 0.0.0.0 2").unwrap();
        assert_eq!((r.addr, r.len, r.gw), (0x121a_0400, 24, None));
        assert!(parse_route("10.0.0.0/8").is_err());
        assert!(parse_route("10.0.0.0/8 x").is_err());
        assert!(make("StaticIPLookup", "", &InitEnv::default()).is_err());
    }

    #[test]
    fn gateway_rewrite_no_route_and_exact_state_keys() {
        use super::super::testutil::{drop_reasons, push};
        use pktflow_model::MemType;
        let mut e = make(
            "LookupIPRoute",
            "10.0.0.0/8 1, 10.1.2.128/25 2, 0.0.0.0/1 10.0.0.254 1",
            &InitEnv::default(),
        )
        .unwrap();
        assert_eq!(e.ports().outputs, (3, 3));
        let pk = |d: [u8; 4]| {
            let mut p = Packet::from_bytes(&[0u8; 20]);
            p.anno.dst_ip = d;
            p
        };
        let (out, t) = push(e.as_mut(), 0, pk([8, 8, 8, 8]));
        assert_eq!(out[0].0, 1);
        assert_eq!(out[0].1.anno.dst_ip, [10, 0, 0, 254]);
        let st: Vec<(u32, u64)> = t
            .accesses
            .iter()
            .filter(|a| a.mem == MemType::StaticState)
            .map(|a| (a.object & 0xff, a.key))
            .collect();
        assert_eq!(st, vec![(0, 0x0808), (1, 0)]);
        let (out, t) = push(e.as_mut(), 0, pk([10, 1, 2, 200]));
        assert_eq!((out[0].0, out[0].1.anno.dst_ip), (2, [10, 1, 2, 200]));
        assert_eq!(
            t.accesses
                .iter()
                .filter(|a| a.mem == MemType::StaticState)
                .count(),
            3
        );
        let (out, t) = push(e.as_mut(), 0, pk([200, 0, 0, 1]));
        assert!(out.is_empty());
        assert_eq!(drop_reasons(&t), vec!["no route"]);
    }
}
