//! Packet routing functions as plug-ins: each is one file implementing [`RoutingFunction`] (the
//! candidate output ports and VC classes of a head flit at a router), listed once in
//! [`REGISTRY`]. The router calls the function once per packet per router, when the head's
//! route computation starts, and keeps the answer packed in 16 bits ([`Route::pack`]); the VC
//! allocator reads only that.
use crate::routing::{Mesh, E, LOCAL, N, S, W};

mod adaptive;
mod dor;
mod west_first;

/// "No port" in a [`Route`].
pub const NO_PORT: u8 = 7;

/// Where a head flit may go next.
///
/// * Deterministic or turn-model routing (`escape == NO_PORT`): any VC of the `ports`, tried in
///   order, allocated as wormhole (a free VC, whatever its downstream room).
/// * Escape-channel adaptive routing (`escape` set): VCs 1..V-1 of the `ports` (adaptive
///   class), or VC 0 of the `escape` port (escape class) when no adaptive VC can take the
///   packet; either only with room for the whole packet downstream (virtual cut-through). The
///   escape ports of all routers must form a deadlock-free routing (XY is).
/// * At the destination: `ports = [LOCAL]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Route {
    pub ports: [u8; 2],
    pub nports: u8,
    pub escape: u8,
}

impl Route {
    pub const fn eject() -> Route {
        Route {
            ports: [LOCAL as u8, 0],
            nports: 1,
            escape: NO_PORT,
        }
    }
    /// Packed: bits 0-2 first port, 3-5 second port, 6-7 port count, 8-10 escape port.
    #[inline(always)]
    pub fn pack(self) -> u16 {
        self.ports[0] as u16
            | (self.ports[1] as u16) << 3
            | (self.nports as u16) << 6
            | (self.escape as u16) << 8
    }
    #[inline(always)]
    pub fn unpack(x: u16) -> Route {
        Route {
            ports: [(x & 7) as u8, (x >> 3 & 7) as u8],
            nports: (x >> 6 & 3) as u8,
            escape: (x >> 8 & 7) as u8,
        }
    }
}

/// A packet routing function.
pub trait RoutingFunction: Send + Sync + 'static {
    /// Registry name (`--routing NAME`).
    fn name(&self) -> &'static str;
    /// One sentence for the documentation and the JSON result.
    fn describe(&self) -> &'static str;
    /// Fewest virtual channels per port the function works with.
    fn min_vcs(&self) -> usize {
        1
    }
    /// Packets entering the network from their source leave half a buffer free downstream
    /// (injection limitation; escape-channel adaptive routing needs it past saturation).
    fn inject_reserve(&self) -> bool {
        false
    }
    /// Candidates of a head at `cur` = (x, y) bound for `dst` = (x, y) on `mesh`.
    fn route(&self, mesh: &Mesh, cur: (u16, u16), dst: (u16, u16)) -> Route;
}

/// A routing function chosen for a run (a `'static` reference: copying it is free).
#[derive(Clone, Copy)]
pub struct PacketRouting(pub &'static dyn RoutingFunction);

#[allow(non_upper_case_globals)]
impl PacketRouting {
    /// XY dimension-order routing.
    pub const Dor: PacketRouting = PacketRouting(&dor::Dor);
    /// Minimal adaptive routing with XY escape channels.
    pub const Adaptive: PacketRouting = PacketRouting(&adaptive::MinAdaptive);

    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// The registered function `name`.
    pub fn by_name(name: &str) -> Option<PacketRouting> {
        REGISTRY.iter().find(|r| r.name() == name).copied()
    }
}

impl PartialEq for PacketRouting {
    fn eq(&self, o: &PacketRouting) -> bool {
        self.name() == o.name()
    }
}
impl Eq for PacketRouting {}

impl std::fmt::Debug for PacketRouting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Every packet routing function (`pktflow noc --routing` lists these). To add one: a file with
/// a type implementing [`RoutingFunction`], and its line here.
pub const REGISTRY: &[PacketRouting] = &[
    PacketRouting::Dor,
    PacketRouting::Adaptive,
    PacketRouting(&west_first::WestFirst),
];

/// Names of the registered packet routing functions.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|r| r.name()).collect()
}

/// The XY direction from `cur` to `dst` (LOCAL when equal).
#[inline(always)]
pub fn xy_dir(cur: (u16, u16), dst: (u16, u16)) -> u8 {
    if cur.0 < dst.0 {
        E as u8
    } else if cur.0 > dst.0 {
        W as u8
    } else if cur.1 < dst.1 {
        S as u8
    } else if cur.1 > dst.1 {
        N as u8
    } else {
        LOCAL as u8
    }
}

/// The minimal directions from `cur` to `dst`, X first (none when equal).
#[inline(always)]
pub fn minimal_dirs(cur: (u16, u16), dst: (u16, u16)) -> ([u8; 2], u8) {
    let mut d = [0u8; 2];
    let mut n = 0;
    if cur.0 != dst.0 {
        d[0] = if cur.0 < dst.0 { E as u8 } else { W as u8 };
        n = 1;
    }
    if cur.1 != dst.1 {
        d[n] = if cur.1 < dst.1 { S as u8 } else { N as u8 };
        n += 1;
    }
    (d, n as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every registered function, from every node to every node of 5x4 and 4x4 meshes: its
    /// ports are minimal (each step reduces the distance) or it ejects at the destination, and
    /// following its first port reaches the destination.
    #[test]
    fn registered_functions_route_minimally() {
        for (c, r) in [(5usize, 4usize), (4, 4)] {
            let m = Mesh::new(c, r).unwrap();
            let xy = |n: usize| {
                let (x, y) = m.xy(n);
                (x as u16, y as u16)
            };
            for f in REGISTRY {
                for s in 0..m.nodes() {
                    for d in 0..m.nodes() {
                        let mut cur = s;
                        for _ in 0..=c + r {
                            let rt = f.0.route(&m, xy(cur), xy(d));
                            assert_eq!(Route::unpack(rt.pack()), rt);
                            if cur == d {
                                assert_eq!(rt, Route::eject(), "{} at {cur}", f.name());
                                break;
                            }
                            assert!(rt.nports >= 1);
                            for &p in &rt.ports[..rt.nports as usize] {
                                let nx = m.neighbor(cur, p as usize).expect("stays on the mesh");
                                assert_eq!(m.hops(nx, d) + 1, m.hops(cur, d), "{}", f.name());
                            }
                            cur = m.neighbor(cur, rt.ports[0] as usize).unwrap();
                        }
                        assert_eq!(cur, d, "{} {s}->{d}", f.name());
                    }
                }
            }
        }
    }

    /// Every registered function survives overload on uniform and transpose traffic with 1-
    /// and 4-flit packets (the simulator stops with a "deadlock" error when nothing moves for
    /// 2000 cycles and checks flit conservation at the end).
    #[test]
    fn registered_functions_do_not_deadlock_under_overload() {
        use crate::sim::synthetic::{run_point, Pattern, SynthConfig};
        let mut a = crate::config::default_mesh();
        a.cols = 5;
        a.rows = 5;
        for f in REGISTRY {
            for (pat, flits) in [(Pattern::uniform(), 4u32), (Pattern::transpose(), 1)] {
                let cfg = SynthConfig {
                    pattern: pat,
                    rate: 1.0,
                    packet_flits: flits,
                    warmup_cycles: 500,
                    measure_cycles: 2500,
                    drain_cycles: 0,
                    seed: 2,
                    booksim: None,
                };
                let p = run_point(&a, *f, &cfg).unwrap_or_else(|e| panic!("{}: {e}", f.name()));
                assert!(p.accepted > 0.1, "{}: {p:?}", f.name());
            }
        }
    }

    #[test]
    fn names_are_unique_and_found() {
        let n = names();
        for (i, a) in n.iter().enumerate() {
            assert!(!n[i + 1..].contains(a));
            assert_eq!(PacketRouting::by_name(a).unwrap().name(), *a);
        }
        assert!(PacketRouting::by_name("nope").is_none());
    }
}
