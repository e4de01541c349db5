//! Synthetic traffic patterns as plug-ins: each pattern is one file implementing
//! [`TrafficPattern`], listed once in [`REGISTRY`] under its name. The simulator calls a pattern
//! once per generated packet (`dest`); the theory printed with a sweep (sending nodes, mean hop
//! count, XY capacity bound) comes from the pattern's destination distribution, computed
//! generically unless the pattern gives a closed form.
use crate::error::{param, Result};
use crate::routing::Mesh;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

mod bit_complement;
pub mod hotspot;
mod neighbor;
mod shuffle;
mod tornado;
mod transpose;
mod uniform;

pub use hotspot::Hotspot;
pub use uniform::Uniform;

/// Options a pattern may read when it is built (the sweep request's `hotspot_fraction`, ...).
#[derive(Debug, Clone, Copy, Default)]
pub struct TrafficParams {
    /// Fraction of the packets sent to the hotspot (`hotspot`), default 0.2.
    pub hotspot_fraction: Option<f64>,
    /// Uniform destinations include the source itself (BookSim's convention); pktflow's default
    /// picks one of the other n-1 nodes.
    pub uniform_includes_source: bool,
}

/// A synthetic traffic pattern on a mesh.
pub trait TrafficPattern: Send + Sync + std::fmt::Debug {
    /// Registry name (`--traffic NAME`).
    fn name(&self) -> &'static str;
    /// Who sends to whom, one sentence (reported in the sweep's `conventions`).
    fn describe(&self) -> String;
    /// Refuse a mesh the pattern is not defined on (one line, exit 2).
    fn check(&self, _mesh: &Mesh) -> Result<()> {
        Ok(())
    }
    /// Destination of a packet created at `src`. It may be `src` itself: the simulator then
    /// sends nothing under pktflow's conventions and a self-addressed packet under BookSim's.
    fn dest(&self, mesh: &Mesh, src: usize, rng: &mut ChaCha8Rng) -> usize;
    /// The destinations of `src` with their probabilities (summing to 1), for the theory.
    fn distribution(&self, mesh: &Mesh, src: usize) -> Vec<(usize, f64)>;
}

/// A constructor of a registered pattern.
pub type Build = fn(&Mesh, &TrafficParams) -> Result<Arc<dyn TrafficPattern>>;

/// Every traffic pattern, by name (`--traffic` lists these). To add one: write a file with a
/// type implementing [`TrafficPattern`] and a `build` function, and add its line here.
pub const REGISTRY: &[(&str, Build)] = &[
    ("uniform", uniform::build),
    ("transpose", transpose::build),
    ("bit_complement", bit_complement::build),
    ("hotspot", hotspot::build),
    ("tornado", tornado::build),
    ("neighbor", neighbor::build),
    ("shuffle", shuffle::build),
];

/// Names of the registered patterns, in registry order.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|(n, _)| *n).collect()
}

/// A pattern chosen for a run (cheap to clone).
#[derive(Debug, Clone)]
pub struct Pattern(pub Arc<dyn TrafficPattern>);

impl Pattern {
    /// Build the registered pattern `name` (`-` and `_` are the same; BookSim's `bitcomp` is
    /// `bit_complement`) for `mesh`.
    pub fn build(name: &str, mesh: &Mesh, params: &TrafficParams) -> Result<Pattern> {
        let key = name.trim().to_ascii_lowercase().replace('-', "_");
        let key = match key.as_str() {
            "bitcomp" | "bitcomplement" | "complement" => "bit_complement",
            k => k,
        };
        let Some((_, build)) = REGISTRY.iter().find(|(n, _)| *n == key) else {
            return param(format!(
                "unknown traffic `{}` (known: {})",
                name.trim(),
                names().join(", ")
            ));
        };
        let p = build(mesh, params)?;
        p.check(mesh)?;
        Ok(Pattern(p))
    }

    /// `build` with default parameters on an 8x8 mesh, for tests and benches.
    pub fn named(name: &str) -> Pattern {
        Pattern::build(
            name,
            &Mesh::new(8, 8).expect("8x8"),
            &TrafficParams::default(),
        )
        .expect("a registered pattern")
    }

    pub fn uniform() -> Pattern {
        Pattern(Arc::new(Uniform {
            includes_source: false,
        }))
    }
    pub fn transpose() -> Pattern {
        Pattern(Arc::new(transpose::Transpose))
    }
    pub fn bit_complement() -> Pattern {
        Pattern(Arc::new(bit_complement::BitComplement))
    }

    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// Destination of a packet from `src`, or None when it would address `src` and
    /// self-addressed packets are not sent.
    #[inline]
    pub fn dest(
        &self,
        mesh: &Mesh,
        src: usize,
        rng: &mut ChaCha8Rng,
        self_packets: bool,
    ) -> Option<usize> {
        let d = self.0.dest(mesh, src, rng);
        (d != src || self_packets).then_some(d)
    }

    /// Nodes that create packets: all of them when self-addressed packets are sent, otherwise
    /// those with some probability of another destination.
    pub fn senders(&self, mesh: &Mesh, self_packets: bool) -> usize {
        if self_packets {
            return mesh.nodes();
        }
        (0..mesh.nodes())
            .filter(|&s| {
                self.0
                    .distribution(mesh, s)
                    .iter()
                    .any(|&(d, p)| d != s && p > 0.0)
            })
            .count()
    }

    /// Largest mesh on which the theory is computed from the distributions (n^2 pairs).
    pub const THEORY_MAX_NODES: usize = 4096;

    /// Mean hop count of the packets the pattern sends (self-addressed ones count 0 hops when
    /// they are sent). Null (None) above `THEORY_MAX_NODES` nodes.
    pub fn mean_hops(&self, mesh: &Mesh, self_packets: bool) -> Option<f64> {
        if mesh.nodes() > Self::THEORY_MAX_NODES {
            return None;
        }
        let (mut s, mut w) = (0.0, 0.0);
        for src in 0..mesh.nodes() {
            let dist = self.0.distribution(mesh, src);
            // the rate of a sending node is spread over the destinations it actually sends to
            let keep: f64 = dist
                .iter()
                .filter(|&&(d, _)| d != src || self_packets)
                .map(|&(_, p)| p)
                .sum();
            if keep <= 0.0 {
                continue;
            }
            for &(d, p) in &dist {
                if d != src || self_packets {
                    s += p / keep * mesh.hops(src, d) as f64;
                    w += p / keep;
                }
            }
        }
        Some(if w > 0.0 { s / w } else { 0.0 })
    }

    /// Largest requested rate (flits per cycle of each sending node) that loads no link beyond
    /// one flit per cycle and no ejection port beyond `ejection_flits` per cycle under XY
    /// routing: 1 / (largest load per unit rate), at most 1. None above `THEORY_MAX_NODES`.
    pub fn dor_bound(&self, mesh: &Mesh, ejection_flits: u32, self_packets: bool) -> Option<f64> {
        let n = mesh.nodes();
        if n > Self::THEORY_MAX_NODES {
            return None;
        }
        let mut link = vec![0.0f64; n * 4];
        let mut ej = vec![0.0f64; n];
        for src in 0..n {
            let dist = self.0.distribution(mesh, src);
            let keep: f64 = dist
                .iter()
                .filter(|&&(d, _)| d != src || self_packets)
                .map(|&(_, p)| p)
                .sum();
            if keep <= 0.0 {
                continue;
            }
            for &(d, p) in &dist {
                if d == src && !self_packets {
                    continue;
                }
                let p = p / keep;
                ej[d] += p;
                let mut cur = src;
                while cur != d {
                    let dir = mesh.dor_dir(cur, d);
                    link[cur * 4 + dir] += p;
                    cur = mesh.neighbor(cur, dir).expect("on the mesh");
                }
            }
        }
        let l = link.iter().cloned().fold(0.0, f64::max);
        let e = ej.iter().cloned().fold(0.0, f64::max);
        let a = if l > 1e-12 { 1.0 / l } else { f64::INFINITY };
        let b = if e > 1e-12 {
            ejection_flits as f64 / e
        } else {
            f64::INFINITY
        };
        Some(a.min(b).min(1.0))
    }
}

/// The destination of a deterministic (permutation-like) pattern as a distribution.
pub(crate) fn single(d: usize) -> Vec<(usize, f64)> {
    vec![(d, 1.0)]
}

/// Nodes of a mesh whose node count must be a power of two (BookSim's bit patterns).
pub(crate) fn log2_nodes(mesh: &Mesh, name: &str) -> Result<u32> {
    let n = mesh.nodes();
    if !n.is_power_of_two() {
        return param(format!(
            "{name} traffic needs a mesh whose node count is a power of two, got {}x{} = {n}",
            mesh.cols, mesh.rows
        ));
    }
    Ok(n.trailing_zeros())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Every registered pattern builds on 4x4 and 8x8, its distribution sums to 1, and `dest`
    /// draws only destinations of its distribution.
    #[test]
    fn registered_patterns_are_consistent() {
        for k in [4usize, 8] {
            let m = Mesh::new(k, k).unwrap();
            for name in names() {
                let p = Pattern::build(name, &m, &TrafficParams::default()).unwrap();
                assert_eq!(p.name(), name);
                let mut rng = ChaCha8Rng::seed_from_u64(3);
                for s in 0..m.nodes() {
                    let dist = p.0.distribution(&m, s);
                    let sum: f64 = dist.iter().map(|x| x.1).sum();
                    assert!((sum - 1.0).abs() < 1e-9, "{name} {s}: {sum}");
                    for _ in 0..20 {
                        let d = p.0.dest(&m, s, &mut rng);
                        assert!(
                            dist.iter().any(|&(x, q)| x == d && q > 0.0),
                            "{name} {s}->{d}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn digit_and_bit_patterns_match_their_definitions() {
        let m = Mesh::new(8, 8).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let b = |n: &str| Pattern::build(n, &m, &TrafficParams::default()).unwrap();
        // tornado: each coordinate + (k/2 - 1) mod k; neighbor: + 1 mod k
        assert_eq!(
            b("tornado").0.dest(&m, m.node(6, 1), &mut rng),
            m.node(1, 4)
        );
        assert_eq!(
            b("neighbor").0.dest(&m, m.node(7, 2), &mut rng),
            m.node(0, 3)
        );
        // shuffle: node id rotated left by one bit (6 bits on 64 nodes)
        assert_eq!(b("shuffle").0.dest(&m, 0b100101, &mut rng), 0b001011);
        assert_eq!(
            b("bitcomp").0.dest(&m, m.node(1, 2), &mut rng),
            m.node(6, 5)
        );
        // shuffle refuses a mesh whose node count is not a power of two
        let m6 = Mesh::new(6, 6).unwrap();
        let e = Pattern::build("shuffle", &m6, &TrafficParams::default()).unwrap_err();
        assert!(e.to_string().contains("power of two"), "{e}");
        // unknown names list the registry
        let e = Pattern::build("nope", &m, &TrafficParams::default()).unwrap_err();
        assert!(e.to_string().contains("tornado"), "{e}");
    }

    /// The generic theory reproduces the closed forms: uniform mean hops and the bisection
    /// bound 4/k x (k^2-1)/k^2 under pktflow's convention.
    #[test]
    fn generic_theory_matches_closed_forms() {
        for k in [4usize, 8] {
            let m = Mesh::new(k, k).unwrap();
            let u = Pattern::uniform();
            let h = u.mean_hops(&m, false).unwrap();
            assert!((h - crate::sim::synthetic::mean_hops_uniform(&m)).abs() < 1e-9);
            let b = u.dor_bound(&m, 4, false).unwrap();
            let want = 4.0 / k as f64 * (k * k - 1) as f64 / (k * k) as f64;
            assert!((b - want).abs() < 1e-9, "{b} vs {want}");
            // BookSim's uniform (source included) loads the bisection with n/(n-1) less
            let ub = Pattern::build(
                "uniform",
                &m,
                &TrafficParams {
                    uniform_includes_source: true,
                    ..Default::default()
                },
            )
            .unwrap();
            assert!((ub.dor_bound(&m, 4, true).unwrap() - 4.0 / k as f64).abs() < 1e-9);
        }
    }
}
