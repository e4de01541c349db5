//! Stream routing functions as plug-ins: each is one file implementing [`StreamRouting`] (given
//! the mesh and the placed streams, how the streams cross it: packets routed hop by hop,
//! circuits on explicit paths, the ideal network, or "no circuits found, fall back to packet
//! routing"), listed once in [`REGISTRY`]. `pktflow stream --routing` accepts every registered
//! name (the CLI's choices come from the core's catalog).
use super::{link_loads_paths, Mesh, StreamReq, TentacleResult};
use crate::error::{NocError, Result};
use crate::sim::PacketRouting;

mod adaptive;
mod dor;
mod exact;
mod ideal;
mod negotiated;
mod tentacle;
mod yx;

/// What a stream routing function is given.
pub struct StreamInput<'a> {
    pub mesh: &'a Mesh,
    /// The placed streams (source tile, destination tile, items per steady-state iteration).
    pub streams: &'a [StreamReq],
    /// Extra attempts a search may make (the request's `retries`).
    pub retries: usize,
    /// Seed of any randomized choice (the request's `seed`).
    pub seed: u64,
    /// Node expansions an exhaustive search may use (the request's `exact_budget`).
    pub exact_budget: u64,
}

/// How the streams cross the mesh.
#[derive(Debug, Clone)]
pub enum Routed {
    /// Every stream is a sequence of packets routed at each router by `routing`; `paths` are
    /// their paths when the routing is deterministic (one per stream), else `None`.
    Packets {
        routing: PacketRouting,
        paths: Option<Vec<Vec<u8>>>,
        detail: String,
    },
    /// No network: every stream takes one cycle (the paper's ideal configuration).
    Ideal { detail: String },
    /// One circuit per stream on pairwise link-disjoint paths (output directions from the
    /// producer's tile). `setup` is the control-flit search that found them, when the function
    /// models circuit set-up (tentacle).
    Circuits {
        paths: Vec<Vec<u8>>,
        attempts: usize,
        detail: String,
        setup: Option<TentacleResult>,
    },
    /// No disjoint paths found: every stream runs as packets routed by `to` instead.
    Fallback {
        to: PacketRouting,
        failed_stream: Option<usize>,
        attempts: usize,
        detail: String,
    },
}

/// A stream routing function.
pub trait StreamRouting: Send + Sync + 'static {
    /// Registry name (`--routing NAME`).
    fn name(&self) -> &'static str;
    /// Other names accepted for it.
    fn aliases(&self) -> &'static [&'static str] {
        &[]
    }
    /// One sentence for the documentation, `--help` and the catalog.
    fn describe(&self) -> &'static str;
    /// The streams are packets on the packet network, so pull streams (requests back to the
    /// producer) can run on it too.
    fn carries_pull(&self) -> bool {
        false
    }
    /// On a fallback, try routing-aware re-layouts (up to `retries`) before giving up.
    fn relayout_on_fallback(&self) -> bool {
        false
    }
    /// Route the streams.
    fn route(&self, input: &StreamInput) -> Routed;
    /// Streams per link (slot per `Mesh::link`) given the paths of the routing result (`None`
    /// when it has none): by default each path counts 1 on each link it crosses, and streams
    /// without paths take their XY paths.
    fn link_loads(
        &self,
        mesh: &Mesh,
        streams: &[StreamReq],
        paths: Option<&[Vec<u8>]>,
    ) -> Vec<f64> {
        match paths {
            Some(p) => link_loads_paths(mesh, streams, p),
            None => link_loads_paths(mesh, streams, &xy_paths(mesh, streams)),
        }
    }
}

/// A stream routing function chosen for a run (a `'static` reference: copying it is free).
#[derive(Clone, Copy)]
pub struct StreamRouter(pub &'static dyn StreamRouting);

impl StreamRouter {
    pub fn name(&self) -> &'static str {
        self.0.name()
    }
}

impl std::ops::Deref for StreamRouter {
    type Target = dyn StreamRouting;
    fn deref(&self) -> &Self::Target {
        self.0
    }
}

impl PartialEq for StreamRouter {
    fn eq(&self, o: &StreamRouter) -> bool {
        self.name() == o.name()
    }
}
impl Eq for StreamRouter {}

impl std::fmt::Debug for StreamRouter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Every stream routing function, in the order the CLI lists them. To add one: a file with a
/// type implementing [`StreamRouting`], its `mod` line above and its line here.
pub const REGISTRY: &[StreamRouter] = &[
    StreamRouter(&dor::Dor),
    StreamRouter(&adaptive::Adaptive),
    StreamRouter(&tentacle::Tentacle),
    StreamRouter(&ideal::Ideal),
    StreamRouter(&negotiated::Negotiated),
    StreamRouter(&exact::Exact),
    StreamRouter(&yx::Yx),
];

/// Names of the registered stream routing functions.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|r| r.name()).collect()
}

/// The registered function `name` or one of its aliases (case and surrounding blanks ignored).
pub fn lookup(name: &str) -> Result<StreamRouter> {
    let key = name.trim().to_ascii_lowercase();
    REGISTRY
        .iter()
        .find(|r| r.name() == key || r.aliases().contains(&key.as_str()))
        .copied()
        .ok_or_else(|| {
            NocError::Param(format!(
                "unknown routing `{key}` (known: {})",
                names().join(", ")
            ))
        })
}

/// Names of the functions whose streams may be pulled ([`StreamRouting::carries_pull`]).
pub fn pull_names() -> Vec<&'static str> {
    REGISTRY
        .iter()
        .filter(|r| r.carries_pull())
        .map(|r| r.name())
        .collect()
}

/// The XY (dimension-order, X first) path of every stream.
pub fn xy_paths(mesh: &Mesh, streams: &[StreamReq]) -> Vec<Vec<u8>> {
    streams
        .iter()
        .map(|q| mesh.dor_path(q.src, q.dst))
        .collect()
}

/// Circuits on `paths` when they exist, else a fallback to XY packet routing (the behaviour of
/// every disjoint-path router: "if any stream fails, all streams fall back to the underlying
/// routing").
pub fn circuits_or_dor(
    paths: Option<Vec<Vec<u8>>>,
    failed_stream: Option<usize>,
    attempts: usize,
    detail: String,
    setup: Option<TentacleResult>,
) -> Routed {
    match paths {
        Some(paths) => Routed::Circuits {
            paths,
            attempts,
            detail,
            setup,
        },
        None => Routed::Fallback {
            to: PacketRouting::Dor,
            failed_stream,
            attempts,
            detail,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routing::check_disjoint;

    fn input<'a>(mesh: &'a Mesh, streams: &'a [StreamReq]) -> StreamInput<'a> {
        StreamInput {
            mesh,
            streams,
            retries: 2,
            seed: 1,
            exact_budget: 100_000,
        }
    }

    #[test]
    fn names_are_unique_and_found() {
        let n = names();
        assert_eq!(
            n,
            [
                "dor",
                "adaptive",
                "tentacle",
                "ideal",
                "negotiated",
                "exact",
                "yx"
            ]
        );
        for (i, a) in n.iter().enumerate() {
            assert!(!n[i + 1..].contains(a), "{a} twice");
            assert_eq!(lookup(a).unwrap().name(), *a);
            assert_eq!(
                lookup(&format!(" {} ", a.to_uppercase())).unwrap().name(),
                *a
            );
            for al in lookup(a).unwrap().aliases() {
                assert!(!n.contains(al), "alias {al} is also a name");
            }
        }
        assert_eq!(lookup("xy").unwrap().name(), "dor");
        let e = lookup("zigzag").unwrap_err().to_string();
        assert!(e.contains("unknown routing `zigzag`"), "{e}");
        assert!(e.contains("yx"), "{e}");
        assert_eq!(pull_names(), ["dor", "adaptive"]);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig { cases: 256, ..Default::default() })]

        /// Any name: a registered function (whose name or alias it is, up to case and blanks)
        /// or one error line listing the known names; never a panic.
        #[test]
        fn lookup_of_arbitrary_names(name in "\\PC{0,12}|(?i)( ?(dor|xy|yx|tentacle|ideal) ?)") {
            match lookup(&name) {
                Ok(r) => {
                    let key = name.trim().to_ascii_lowercase();
                    proptest::prop_assert!(r.name() == key || r.aliases().contains(&key.as_str()));
                }
                Err(e) => {
                    let e = e.to_string();
                    proptest::prop_assert!(e.contains("unknown routing") && e.contains("tentacle"));
                    proptest::prop_assert!(!e.contains('\n') || name.trim().contains('\n'));
                }
            }
        }
    }

    /// Every registered function on random placements of 4x4 and 3x5 meshes: circuits are
    /// valid disjoint walks, packet paths are valid walks to the destinations, and the link
    /// loads count each path's hops (fractionally for adaptive).
    #[test]
    fn registered_functions_give_valid_routes() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(5);
        for (c, r) in [(4usize, 4usize), (3, 5)] {
            let m = Mesh::new(c, r).unwrap();
            for trial in 0..20 {
                let k = 1 + trial % 6;
                let s: Vec<StreamReq> = (0..k)
                    .map(|_| StreamReq {
                        src: rng.gen_range(0..m.nodes()),
                        dst: rng.gen_range(0..m.nodes()),
                        weight: 1.0,
                    })
                    .collect();
                for f in REGISTRY {
                    let routed = f.route(&input(&m, &s));
                    let paths = match &routed {
                        Routed::Circuits { paths, .. } => {
                            check_disjoint(&m, &s, paths)
                                .unwrap_or_else(|e| panic!("{}: {e}", f.name()));
                            Some(paths.clone())
                        }
                        Routed::Packets { paths, .. } => paths.clone(),
                        Routed::Fallback { to, .. } => {
                            assert_eq!(*to, PacketRouting::Dor);
                            None
                        }
                        Routed::Ideal { .. } => None,
                    };
                    if let Some(p) = &paths {
                        for (q, d) in s.iter().zip(p) {
                            assert_eq!(*m.walk(q.src, d).last().unwrap(), q.dst, "{}", f.name());
                        }
                    }
                    let loads = f.link_loads(&m, &s, paths.as_deref());
                    let total: f64 = loads.iter().sum();
                    let want: f64 = match (&routed, &paths) {
                        (Routed::Ideal { .. }, _) => 0.0,
                        (_, Some(p)) => p.iter().map(|d| d.len() as f64).sum(),
                        // adaptive (fractional) and fallbacks: minimal paths
                        (_, None) => s.iter().map(|q| m.hops(q.src, q.dst) as f64).sum(),
                    };
                    assert!(
                        (total - want).abs() < 1e-9,
                        "{}: {total} vs {want}",
                        f.name()
                    );
                }
            }
        }
    }
}
