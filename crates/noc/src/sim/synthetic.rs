//! Synthetic traffic for checking the network alone (uniform random, transpose, bit-complement,
//! hotspot) with Bernoulli injection; latency includes source queueing.
use super::network::{Network, PacketRouting};
use crate::error::{param, NocError, Result};
use crate::routing::Mesh;
use pktflow_arch::mesh::MeshArch;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    Uniform,
    Transpose,
    BitComplement,
    /// `fraction` of the packets go to the hotspot node, the rest uniformly.
    Hotspot {
        node: usize,
        fraction: f64,
    },
}

impl Pattern {
    pub fn parse(s: &str, mesh: &Mesh) -> Result<Pattern> {
        Ok(
            match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
                "uniform" => Pattern::Uniform,
                "transpose" => Pattern::Transpose,
                "bit_complement" | "bitcomplement" | "complement" => Pattern::BitComplement,
                "hotspot" => Pattern::Hotspot {
                    node: mesh.node(mesh.cols / 2, mesh.rows / 2),
                    fraction: 0.2,
                },
                other => {
                    return param(format!(
                    "unknown traffic `{other}` (known: uniform, transpose, bit_complement, hotspot)"
                ))
                }
            },
        )
    }

    /// Destination for a packet from `src`, or None when the node sends nothing.
    fn dest(&self, mesh: &Mesh, src: usize, rng: &mut ChaCha8Rng) -> Option<usize> {
        let n = mesh.nodes();
        let uniform = |rng: &mut ChaCha8Rng| {
            let d = rng.gen_range(0..n - 1);
            if d >= src {
                d + 1
            } else {
                d
            }
        };
        let (x, y) = mesh.xy(src);
        let d = match *self {
            Pattern::Uniform => uniform(rng),
            Pattern::Transpose => mesh.node(y, x),
            Pattern::BitComplement => mesh.node(mesh.cols - 1 - x, mesh.rows - 1 - y),
            Pattern::Hotspot { node, fraction } => {
                if src != node && rng.gen_bool(fraction) {
                    node
                } else {
                    uniform(rng)
                }
            }
        };
        (d != src).then_some(d)
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SynthConfig {
    pub pattern: Pattern,
    /// Offered load, flits per node per cycle.
    pub rate: f64,
    pub packet_flits: u32,
    pub warmup_cycles: u64,
    pub measure_cycles: u64,
    /// Extra cycles allowed for packets created in the measurement window to arrive.
    pub drain_cycles: u64,
    pub seed: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SynthPoint {
    /// Offered load generated in the measurement window, flits/node/cycle.
    pub offered: f64,
    /// Flits delivered in the measurement window, flits/node/cycle.
    pub accepted: f64,
    /// Mean latency of measured packets (creation to tail delivery, includes source queueing), cycles.
    pub latency: f64,
    pub latency_max: f64,
    pub packets_measured: u64,
    /// Measured packets still undelivered after the drain.
    pub unfinished: u64,
    pub saturated: bool,
    pub cycles_simulated: u64,
    pub flits_injected: u64,
    pub flits_ejected: u64,
    pub wall_seconds: f64,
}

/// Run one load point.
pub fn run_point(arch: &MeshArch, routing: PacketRouting, cfg: &SynthConfig) -> Result<SynthPoint> {
    if !(cfg.rate >= 0.0 && cfg.rate <= 1.0) {
        return param(format!(
            "offered rate {} must be within 0..=1 flits/node/cycle",
            cfg.rate
        ));
    }
    if cfg.packet_flits == 0 {
        return param("packet_flits must be >= 1");
    }
    let mut net = Network::new(arch, routing)?;
    let mesh = net.mesh;
    if matches!(cfg.pattern, Pattern::Transpose) && mesh.cols != mesh.rows {
        return param(format!(
            "transpose traffic needs a square mesh (got {}x{})",
            mesh.cols, mesh.rows
        ));
    }
    if let Pattern::Hotspot { node, fraction } = cfg.pattern {
        if node >= mesh.nodes() || !(0.0..=1.0).contains(&fraction) {
            return param(format!(
                "hotspot node {node} / fraction {fraction} out of range"
            ));
        }
    }
    if mesh.nodes() < 2 {
        return param("synthetic traffic needs at least 2 nodes");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let p_inj = cfg.rate / cfg.packet_flits as f64;
    let start = std::time::Instant::now();
    let m0 = cfg.warmup_cycles;
    let m1 = m0 + cfg.measure_cycles;
    let end = m1 + cfg.drain_cycles;
    let (mut gen_flits, mut measured, mut got, mut lat_sum, mut lat_max) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let mut ej0 = 0;
    let mut ej1 = None;
    let n = mesh.nodes();
    let mut t = 0u64;
    while t < end {
        if t == m0 {
            ej0 = net.flits_ejected;
        }
        if t == m1 {
            ej1 = Some(net.flits_ejected);
        }
        if t >= m1 && got == measured {
            break;
        }
        let tag = (t >= m0 && t < m1) as u64;
        for src in 0..n {
            if rng.gen::<f64>() < p_inj {
                if let Some(d) = cfg.pattern.dest(&mesh, src, &mut rng) {
                    net.send(src, d, cfg.packet_flits, tag, None);
                    if tag == 1 {
                        measured += 1;
                        gen_flits += cfg.packet_flits as u64;
                    }
                }
            }
        }
        net.step();
        for d in net.delivered.drain(..) {
            if d.tag == 1 {
                got += 1;
                let l = d.delivered - d.created;
                lat_sum += l;
                lat_max = lat_max.max(l);
            }
        }
        if net.stalled(2_000) {
            return Err(NocError::Invariant(format!(
                "deadlock: {} flits in the network and none moved for 2000 cycles (cycle {t})",
                net.flits_in_network()
            )));
        }
        t += 1;
    }
    let ej1 = ej1.unwrap_or(net.flits_ejected);
    net.check_conservation()?;
    let denom = (n as u64 * cfg.measure_cycles).max(1) as f64;
    let offered = gen_flits as f64 / denom;
    let accepted = (ej1 - ej0) as f64 / denom;
    let unfinished = measured - got;
    Ok(SynthPoint {
        offered,
        accepted,
        latency: if got > 0 {
            lat_sum as f64 / got as f64
        } else {
            f64::NAN
        },
        latency_max: lat_max as f64,
        packets_measured: measured,
        unfinished,
        saturated: unfinished > 0 || accepted < 0.95 * offered,
        cycles_simulated: t,
        flits_injected: net.flits_injected,
        flits_ejected: net.flits_ejected,
        wall_seconds: start.elapsed().as_secs_f64(),
    })
}

/// Mean hop count between distinct nodes for uniform traffic on a cols x rows mesh.
pub fn mean_hops_uniform(mesh: &Mesh) -> f64 {
    let n = mesh.nodes();
    let mut s = 0usize;
    for a in 0..n {
        for b in 0..n {
            s += mesh.hops(a, b);
        }
    }
    s as f64 / (n * (n - 1)) as f64
}

/// Zero-load latency predicted by the router model, cycles.
pub fn zero_load_latency(arch: &MeshArch, hops: f64, packet_flits: u32) -> f64 {
    let pipe = (arch.router_pipeline_cycles() + arch.link_latency_cycles) as f64;
    arch.link_latency_cycles as f64 + (hops + 1.0) * pipe + (packet_flits as f64 - 1.0)
}

/// Bisection bound on uniform-traffic throughput with DOR on a k x k mesh: 4/k flits/node/cycle
/// (for rectangular meshes the bound of the longer dimension, 4/max(cols, rows)).
pub fn uniform_bound(mesh: &Mesh) -> f64 {
    4.0 / mesh.cols.max(mesh.rows) as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::default_mesh;

    fn cfg(p: Pattern, rate: f64) -> SynthConfig {
        SynthConfig {
            pattern: p,
            rate,
            packet_flits: 1,
            warmup_cycles: 1000,
            measure_cycles: 3000,
            drain_cycles: 3000,
            seed: 1,
        }
    }

    #[test]
    fn low_load_latency_matches_theory_and_accepts_offered() {
        let mut a = default_mesh();
        a.cols = 4;
        a.rows = 4;
        let p = run_point(&a, PacketRouting::Dor, &cfg(Pattern::Uniform, 0.02)).unwrap();
        let m = Mesh::new(4, 4).unwrap();
        let t0 = zero_load_latency(&a, mean_hops_uniform(&m), 1);
        assert!(!p.saturated);
        assert!((p.accepted - p.offered).abs() < 0.01, "{p:?}");
        // at 2% load contention adds little: within 5% of the zero-load latency
        assert!(
            p.latency >= t0 * 0.97 && p.latency < t0 * 1.05,
            "{} vs {t0}",
            p.latency
        );
    }

    #[test]
    fn uniform_saturation_below_bisection_bound() {
        let mut a = default_mesh();
        a.cols = 6;
        a.rows = 6;
        let m = Mesh::new(6, 6).unwrap();
        let bound = uniform_bound(&m); // 0.667
        let p = run_point(&a, PacketRouting::Dor, &cfg(Pattern::Uniform, 0.9)).unwrap();
        assert!(
            p.accepted < bound,
            "accepted {} must stay below 4/k = {bound}",
            p.accepted
        );
        assert!(p.saturated);
    }

    #[test]
    fn adaptive_survives_overload_without_loss() {
        let mut a = default_mesh();
        a.cols = 5;
        a.rows = 5;
        for pat in [Pattern::Uniform, Pattern::Transpose, Pattern::BitComplement] {
            let mut c = cfg(pat, 1.0);
            c.packet_flits = 4;
            c.drain_cycles = 0;
            let p = run_point(&a, PacketRouting::Adaptive, &c).unwrap();
            assert!(p.accepted > 0.05, "{pat:?} delivered almost nothing: {p:?}");
        }
    }
}
