//! `LinearIPLookup(ROUTE, ...)` and `DirectIPLookup(ROUTE, ...)` — Click's other routing
//! table elements. Routes are `ADDR/MASK [GW] OUT` as for StaticIPLookup; the lookup is on the
//! destination IP annotation, the longest matching prefix wins, a gateway replaces the
//! annotation, the packet leaves on OUT; no match drops it (reason `no route`). The result is
//! the same for the three classes; what differs is the data structure, hence the cost:
//!
//! - LinearIPLookup scans its route list: per route compared 3 instructions and an 8 B
//!   static-state read (address and mask, object 0, key = route index); 6 instructions
//!   overhead. (Click also keeps a one-entry cache of the last address; pktflow does not
//!   model it: every lookup scans the whole list.)
//! - DirectIPLookup is DIR-24-8 (Gupta, Lin, McKeown): one 2 B read of the 2^24-entry first
//!   table (object 0, key = the top 24 bits), and for prefixes longer than /24 one more 2 B
//!   read of the second table (object 1); then a 4 B read of the route's entry (object 2:
//!   gateway and port). 8 instructions, 4 more for the second level.
//!
//! Both: 1 push input, outputs 0..=max(OUT), a 4 B meta-data read of the annotation, a 4 B
//! write when a gateway replaces it.
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::elements::ip::ip_lookup::parse_route;
use crate::elements::ip::lpm::{Lpm, Route};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::Read;
use pktflow_traffic::Packet;

pub const LINEAR: ClassInfo = ClassInfo {
    name: "LinearIPLookup",
    summary: "routing table lookup by a linear scan of the routes",
    make: make_linear,
};
pub const DIRECT: ClassInfo = ClassInfo {
    name: "DirectIPLookup",
    summary: "routing table lookup with a DIR-24-8 table",
    make: make_direct,
};

struct Lookup {
    direct: bool,
    routes: Vec<Route>,
    lpm: Lpm,
    noutputs: usize,
    lookups: u64,
    misses: u64,
}

fn make(class: &str, config: &str, direct: bool) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse(class, config, &[]);
    let mut routes = Vec::new();
    for s in a.take_all_positional() {
        if s.is_empty() {
            continue;
        }
        routes.push(parse_route(&s).map_err(|e| format!("{class}: {e}"))?);
    }
    if routes.is_empty() {
        return Err(format!(
            "{class}: expected at least one route 'ADDR/MASK [GW] OUT'"
        ));
    }
    let noutputs = routes
        .iter()
        .map(|r| r.port as usize + 1)
        .max()
        .unwrap_or(1);
    let lpm = Lpm::build(&routes).map_err(|e| format!("{class}: {e}"))?;
    Ok(Box::new(Lookup {
        direct,
        routes,
        lpm,
        noutputs,
        lookups: 0,
        misses: 0,
    }))
}
fn make_linear(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    make("LinearIPLookup", config, false)
}
fn make_direct(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    make("DirectIPLookup", config, true)
}

impl Element for Lookup {
    fn ports(&self) -> Ports {
        Ports::push(1, self.noutputs)
    }
    fn push(&mut self, _port: usize, mut p: Packet, cx: &mut Cx) {
        cx.read_meta(4);
        let dst = u32::from_be_bytes(p.anno.dst_ip);
        let hit = self.lpm.lookup(dst);
        if self.direct {
            cx.instr(8);
            cx.static_state(Read, 0, (dst >> 8) as u64, 2);
            let best = self
                .routes
                .iter()
                .filter(|r| dst & crate::conf::mask(r.len) == r.addr)
                .map(|r| r.len)
                .max();
            if best.is_some_and(|l| l > 24) {
                cx.instr(4);
                cx.static_state(Read, 1, (dst & 0xff) as u64, 2);
            }
            if hit.result.is_some() {
                cx.static_state(Read, 2, hit.gw_index.unwrap_or(0) as u64, 4);
            }
        } else {
            cx.instr(6);
            for k in 0..self.routes.len() {
                cx.instr(3);
                cx.static_state(Read, 0, k as u64, 8);
            }
        }
        self.lookups += 1;
        match hit.result {
            None => {
                self.misses += 1;
                cx.drop_packet(p, "no route");
            }
            Some((port, gw)) => {
                if let Some(g) = gw {
                    p.anno.dst_ip = g.to_be_bytes();
                    cx.write_meta(4);
                }
                cx.emit(port as usize, p);
            }
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"routes": self.routes.len(), "lookups": self.lookups, "no_route": self.misses})
    }
    fn code_size(&self) -> u32 {
        if self.direct {
            50
        } else {
            30
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::elements::ip::testutil::{drop_reasons, make, push};
    use pktflow_traffic::Packet;

    #[test]
    fn longest_prefix_and_gateways() {
        for class in ["LinearIPLookup", "DirectIPLookup"] {
            let mut e = make(
                class,
                "18.26.4.0/24 1, 18.26.4.128/25 2, 0.0.0.0/0 18.26.4.1 0",
            );
            let mut route = |d: [u8; 4]| {
                let mut p = Packet::from_bytes(&[0]);
                p.anno.dst_ip = d;
                let (o, t) = push(e.as_mut(), 0, p);
                (o.first().map(|(k, p)| (*k, p.anno.dst_ip)), t)
            };
            assert_eq!(route([18, 26, 4, 5]).0, Some((1, [18, 26, 4, 5])));
            assert_eq!(route([18, 26, 4, 200]).0, Some((2, [18, 26, 4, 200])));
            assert_eq!(
                route([1, 1, 1, 1]).0,
                Some((0, [18, 26, 4, 1])),
                "{class}: gateway"
            );
            let (_, t) = route([18, 26, 4, 200]);
            let reads = t.accesses.len();
            assert!(reads >= 2, "{class} charges its table reads");
        }
        let mut e = make("LinearIPLookup", "10.0.0.0/8 0");
        let (o, t) = push(e.as_mut(), 0, Packet::from_bytes(&[0]));
        assert!(o.is_empty());
        assert_eq!(drop_reasons(&t), vec!["no route"]);
    }
}
