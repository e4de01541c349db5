//! Synthetic traffic for checking the network alone (the patterns of `sim::traffic`) with
//! Bernoulli injection; latency includes source queueing. Two conventions: pktflow's (fixed
//! warm-up and measurement windows) and BookSim's (`BookSimRun`: sample periods, warm-up
//! periods and its convergence rule, self-addressed packets).
use super::network::{NetOptions, Network, PacketRouting};
pub use super::traffic::Pattern;
use crate::error::{NocError, Result};
use crate::routing::Mesh;
use pktflow_arch::mesh::MeshArch;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// Packets a source may hold waiting for injection; a packet generated at a full source queue
/// is not injected (it is counted in `packets_not_injected`). Bounds memory under overload.
pub const SOURCE_QUEUE_CAP: usize = 1024;

/// A point is saturated when its mean latency exceeds this multiple of the pattern's zero-load
/// latency (or when packets were lost or accepted throughput fell short, see `run_point`).
pub const SATURATION_LATENCY_FACTOR: f64 = 3.0;
/// Accepted throughput below (1 - this) x offered marks saturation.
pub const SATURATION_THROUGHPUT_TOLERANCE: f64 = 0.05;

/// BookSim 2's measurement rule for `sim_type = latency` (trafficmanager.cpp, `_SingleSim`),
/// with its default values (booksim_config.cpp).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BookSimRun {
    /// Cycles per sample period (`sample_period`, 1000).
    pub sample_period: u64,
    /// Sample periods of warm-up (`warmup_periods`, 3); 0 = warm up until latency and accepted
    /// throughput change by less than `warmup_thres` / `acc_warmup_thres` between periods.
    pub warmup_periods: u64,
    /// Most sample periods, warm-up included (`max_samples`, 10).
    pub max_samples: u64,
    /// Mean latency (cycles) above which the run is abandoned as unstable (`latency_thres`, 500).
    pub latency_thres: f64,
    pub warmup_thres: f64,
    pub acc_warmup_thres: f64,
    /// Relative change of mean latency / accepted throughput between periods below which a
    /// period counts as converged (`stopping_thres`, `acc_stopping_thres`, 0.05); three converged
    /// periods in a row end the measurement.
    pub stopping_thres: f64,
    pub acc_stopping_thres: f64,
}

impl Default for BookSimRun {
    fn default() -> Self {
        BookSimRun {
            sample_period: 1000,
            warmup_periods: 3,
            max_samples: 10,
            latency_thres: 500.0,
            warmup_thres: 0.05,
            acc_warmup_thres: 0.05,
            stopping_thres: 0.05,
            acc_stopping_thres: 0.05,
        }
    }
}

/// How a BookSim-rule run ended.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Convergence {
    /// Cycles of warm-up (whole sample periods).
    pub warmup_cycles: u64,
    /// Cycles of measurement (whole sample periods after warm-up).
    pub measured_cycles: u64,
    /// Sample periods run, warm-up included.
    pub sample_periods: u64,
    /// Three periods in a row changed latency and throughput by less than the thresholds.
    pub converged: bool,
    /// The mean latency exceeded `latency_thres`: BookSim aborts such a run and reports no
    /// latency; pktflow reports what it measured, marked saturated.
    pub unstable: bool,
    /// Cycles spent after the measurement until every measured packet arrived.
    pub drain_cycles: u64,
}

#[derive(Debug, Clone)]
pub struct SynthConfig {
    pub pattern: Pattern,
    /// Offered load, flits/node/cycle.
    pub rate: f64,
    pub packet_flits: u32,
    pub warmup_cycles: u64,
    pub measure_cycles: u64,
    /// Extra cycles allowed for packets created in the measurement window to arrive.
    pub drain_cycles: u64,
    pub seed: u64,
    /// BookSim's conventions: self-addressed packets are sent, and warm-up and measurement
    /// follow `BookSimRun` (then `warmup_cycles` and `measure_cycles` are not used). None:
    /// pktflow's conventions.
    pub booksim: Option<BookSimRun>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SynthPoint {
    /// The load asked for, flits per node per cycle.
    pub requested_rate: f64,
    /// The load the pattern should generate: requested x (sending nodes / all nodes).
    pub offered_rate_expected: f64,
    /// Offered load generated in the measurement window, flits/node/cycle (all nodes).
    pub offered: f64,
    /// Flits delivered in the measurement window, flits/node/cycle.
    pub accepted: f64,
    /// Mean latency of the delivered measured packets (creation to tail delivery, includes
    /// source queueing), cycles; null when none was delivered. A lower bound when
    /// `latency_is_lower_bound` (some measured packets were not delivered).
    pub latency: Option<f64>,
    pub latency_max: Option<f64>,
    /// Zero-load latency of this pattern (theory), cycles.
    pub zero_load_latency: f64,
    pub packets_measured: u64,
    pub packets_delivered: u64,
    /// Measured packets not delivered: still queued or in flight after the drain, or never
    /// injected because their source queue was full.
    pub packets_not_delivered: u64,
    /// Measured packets still undelivered after the drain.
    pub unfinished: u64,
    /// Measured packets not injected because the source queue held `SOURCE_QUEUE_CAP` packets.
    pub packets_not_injected: u64,
    pub latency_is_lower_bound: bool,
    /// Longest source queue seen, packets (at most `SOURCE_QUEUE_CAP`).
    pub max_source_queue: usize,
    /// Packets waiting in source queues at the start and at the end of the measurement window.
    pub source_backlog_start: u64,
    pub source_backlog_end: u64,
    pub saturated: bool,
    /// Which saturation rules fired (empty when not saturated).
    pub saturation_reasons: Vec<String>,
    pub cycles_simulated: u64,
    /// BookSim-rule runs: how warm-up and measurement ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub convergence: Option<Convergence>,
    pub flits_injected: u64,
    pub flits_ejected: u64,
    pub wall_seconds: f64,
}

/// Why a run stopped early.
#[derive(Debug)]
pub enum Stop {
    Error(NocError),
    Interrupted,
}

impl From<NocError> for Stop {
    fn from(e: NocError) -> Stop {
        Stop::Error(e)
    }
}

/// Cycles `run_point` simulates at most for this configuration.
pub fn max_cycles(cfg: &SynthConfig) -> u64 {
    if let Some(b) = cfg.booksim {
        return b
            .max_samples
            .saturating_mul(b.sample_period)
            .saturating_add(cfg.drain_cycles);
    }
    cfg.warmup_cycles
        .saturating_add(cfg.measure_cycles)
        .saturating_add(cfg.drain_cycles)
}

/// Run one load point.
pub fn run_point(arch: &MeshArch, routing: PacketRouting, cfg: &SynthConfig) -> Result<SynthPoint> {
    run_point_with(arch, routing, cfg, &mut |_| {}).map_err(|s| match s {
        Stop::Error(e) => e,
        Stop::Interrupted => NocError::Interrupted,
    })
}

/// Run one load point; `progress(cycles done)` is called now and then (at most every 0.2 s);
/// the cancellation flag is checked every 256 cycles.
pub fn run_point_with(
    arch: &MeshArch,
    routing: PacketRouting,
    cfg: &SynthConfig,
    progress: &mut dyn FnMut(u64),
) -> std::result::Result<SynthPoint, Stop> {
    if !(cfg.rate >= 0.0 && cfg.rate <= 1.0) {
        return Err(NocError::Field {
            field: "rates".into(),
            msg: format!("must be within 0..=1 flits/node/cycle, got {}", cfg.rate),
        }
        .into());
    }
    if cfg.packet_flits == 0 {
        return Err(NocError::Field {
            field: "packet_flits".into(),
            msg: "must be at least 1 flit, got 0".into(),
        }
        .into());
    }
    if cfg.measure_cycles == 0 {
        return Err(NocError::Field {
            field: "measure".into(),
            msg: "must be at least 1 cycle, got 0".into(),
        }
        .into());
    }
    let bs = cfg.booksim;
    if let Some(b) = bs {
        if b.sample_period == 0 || b.max_samples == 0 {
            return Err(NocError::Param(format!(
                "sample_period and max_samples must be at least 1, got {} and {}",
                b.sample_period, b.max_samples
            ))
            .into());
        }
    }
    let self_packets = bs.is_some();
    let opts = if self_packets {
        NetOptions::booksim()
    } else {
        NetOptions::default()
    };
    let mut net = Network::with_options(arch, routing, opts)?;
    let mesh = net.mesh;
    cfg.pattern.0.check(&mesh)?;
    if mesh.nodes() < 2 {
        return Err(NocError::Field {
            field: "mesh".into(),
            msg: format!(
                "must have at least 2 nodes for synthetic traffic, got {}x{}",
                mesh.cols, mesh.rows
            ),
        }
        .into());
    }
    let hops = cfg
        .pattern
        .mean_hops(&mesh, self_packets)
        .unwrap_or_else(|| mean_hops_uniform(&mesh));
    let zero_load = zero_load_latency_with(arch, hops, cfg.packet_flits, opts);
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
    let p_inj = cfg.rate / cfg.packet_flits as f64;
    let start = std::time::Instant::now();
    let mut last_report = start;
    // measurement window [m0, m1): fixed, or decided by BookSim's rule at sample boundaries
    let (mut m0, mut m1) = match bs {
        None => (cfg.warmup_cycles, cfg.warmup_cycles + cfg.measure_cycles),
        Some(b) => (
            if b.warmup_periods == 0 {
                u64::MAX
            } else {
                b.warmup_periods.saturating_mul(b.sample_period)
            },
            u64::MAX,
        ),
    };
    let end = max_cycles(cfg);
    let (mut gen_flits, mut measured, mut got, mut lat_sum, mut lat_max) =
        (0u64, 0u64, 0u64, 0u64, 0u64);
    let (mut refused, mut max_q) = (0u64, 0usize);
    let (mut backlog0, mut backlog1) = (0u64, None);
    let mut ej0 = 0;
    let mut ej1 = None;
    let n = mesh.nodes();
    // BookSim rule state: per-period statistics (warm-up), previous period's figures,
    // converged periods in a row, periods run
    let (mut w_lat, mut w_cnt, mut w_ej) = (0u64, 0u64, 0u64);
    let (mut prev_lat, mut prev_acc) = (0.0f64, 0.0f64);
    let (mut converged, mut periods, mut unstable, mut drain_end) = (0u32, 0u64, false, 0u64);
    progress(0);
    let mut t = 0u64;
    while t < end {
        if t & 255 == 0 {
            if pktflow_model::cancel::requested() {
                return Err(Stop::Interrupted);
            }
            let now = std::time::Instant::now();
            if now.duration_since(last_report).as_secs_f64() >= 0.2 {
                last_report = now;
                progress(t);
            }
        }
        if let Some(b) = bs {
            if t > 0 && m1 == u64::MAX && t.is_multiple_of(b.sample_period) {
                // end of a sample period (trafficmanager.cpp, _SingleSim)
                periods += 1;
                let running = t > m0;
                let (lat, acc) = if running {
                    (
                        lat_sum as f64 / got as f64,
                        (net.flits_ejected - ej0) as f64 / (n as u64 * (t - m0)) as f64,
                    )
                } else {
                    (
                        w_lat as f64 / w_cnt as f64,
                        (net.flits_ejected - w_ej) as f64 / (n as u64 * b.sample_period) as f64,
                    )
                };
                let dl = ((lat - prev_lat) / lat).abs();
                let da = ((acc - prev_acc) / acc).abs();
                if lat > b.latency_thres {
                    unstable = true;
                    if !running {
                        m0 = t;
                    }
                    m1 = t;
                } else if !running {
                    let warm = if b.warmup_periods == 0 {
                        dl < b.warmup_thres && da < b.acc_warmup_thres
                    } else {
                        periods >= b.warmup_periods
                    };
                    if warm {
                        m0 = t;
                    } else if periods >= b.max_samples {
                        // never warmed up: no measurement
                        m0 = t;
                        m1 = t;
                    }
                } else {
                    if dl < b.stopping_thres && da < b.acc_stopping_thres {
                        converged += 1;
                    } else {
                        converged = 0;
                    }
                    if converged >= 3 || periods >= b.max_samples {
                        m1 = t;
                        drain_end = t.saturating_add(cfg.drain_cycles);
                    }
                }
                prev_lat = lat;
                prev_acc = acc;
                w_lat = 0;
                w_cnt = 0;
                w_ej = net.flits_ejected;
            }
        }
        if t == m0 {
            ej0 = net.flits_ejected;
            backlog0 = net.queued_packets() as u64;
        }
        if t == m1 {
            ej1 = Some(net.flits_ejected);
            backlog1 = Some(net.queued_packets() as u64);
            if bs.is_some() && (unstable || drain_end == 0) {
                break;
            }
        }
        if t >= m1 && (got == measured || (bs.is_some() && t >= drain_end)) {
            break;
        }
        let tag = (t >= m0 && t < m1) as u64;
        for src in 0..n {
            if rng.gen::<f64>() < p_inj {
                if let Some(d) = cfg.pattern.dest(&mesh, src, &mut rng, self_packets) {
                    if tag == 1 {
                        measured += 1;
                        gen_flits += cfg.packet_flits as u64;
                    }
                    let q = net.source_queue_len(src);
                    if q >= SOURCE_QUEUE_CAP {
                        refused += tag;
                        continue;
                    }
                    net.send(src, d, cfg.packet_flits, tag, None);
                    max_q = max_q.max(q + 1);
                }
            }
        }
        net.step();
        for d in net.delivered.drain(..) {
            let l = d.delivered - d.created;
            if d.tag == 1 {
                got += 1;
                lat_sum += l;
                lat_max = lat_max.max(l);
            } else {
                w_lat += l;
                w_cnt += 1;
            }
        }
        if net.stalled(2_000) {
            return Err(NocError::Invariant(format!(
                "deadlock: {} flits in the network and none moved for 2000 cycles (cycle {t})",
                net.flits_in_network()
            ))
            .into());
        }
        t += 1;
    }
    progress(t);
    let ej1 = ej1.unwrap_or(net.flits_ejected);
    let backlog1 = backlog1.unwrap_or(net.queued_packets() as u64);
    net.check_conservation()?;
    let (w0, w1) = (m0.min(t), m1.min(t));
    let denom = (n as u64 * (w1 - w0)).max(1) as f64;
    let offered = gen_flits as f64 / denom;
    let accepted = (ej1 - ej0) as f64 / denom;
    let not_delivered = measured - got;
    let unfinished = not_delivered - refused;
    let latency = (got > 0).then(|| lat_sum as f64 / got as f64);
    let mut reasons = Vec::new();
    if let Some(b) = bs {
        if unstable {
            reasons.push(format!(
                "mean latency exceeded latency_thres = {} cycles (BookSim abandons such a run as unstable)",
                b.latency_thres
            ));
        } else if w1 == w0 {
            reasons.push(format!(
                "no measurement: not warmed up within max_samples = {} sample periods",
                b.max_samples
            ));
        }
    }
    if refused > 0 {
        reasons.push(format!(
            "{refused} packets found their source queue full ({SOURCE_QUEUE_CAP} packets)"
        ));
    }
    if unfinished > 0 {
        reasons.push(format!(
            "{unfinished} measured packets were still undelivered after the drain"
        ));
    }
    if accepted < (1.0 - SATURATION_THROUGHPUT_TOLERANCE) * offered {
        reasons.push(format!(
            "accepted {accepted:.4} is more than {:.0}% below offered {offered:.4}",
            SATURATION_THROUGHPUT_TOLERANCE * 100.0
        ));
    }
    if let Some(l) = latency {
        if l > SATURATION_LATENCY_FACTOR * zero_load {
            reasons.push(format!(
                "mean latency {l:.1} is {:.1}x the zero-load latency {zero_load:.1} (limit {SATURATION_LATENCY_FACTOR}x)",
                l / zero_load
            ));
        }
    }
    if routing == PacketRouting::Dor {
        let bound = cfg
            .pattern
            .dor_bound(&mesh, arch.node_ejection_flits_per_cycle, self_packets)
            .unwrap_or(1.0);
        if cfg.rate > bound * (1.0 + 1e-9) {
            reasons.push(format!(
                "requested rate {} exceeds the XY-routing capacity bound {bound:.4} of this pattern",
                cfg.rate
            ));
        }
    }
    if backlog1 > backlog0 + n as u64 {
        reasons.push(format!(
            "source queues grew from {backlog0} to {backlog1} packets over the measurement window"
        ));
    }
    Ok(SynthPoint {
        requested_rate: cfg.rate,
        offered_rate_expected: cfg.rate * cfg.pattern.senders(&mesh, self_packets) as f64
            / n as f64,
        offered,
        accepted,
        latency,
        latency_max: (got > 0).then_some(lat_max as f64),
        zero_load_latency: zero_load,
        packets_measured: measured,
        packets_delivered: got,
        packets_not_delivered: not_delivered,
        unfinished,
        packets_not_injected: refused,
        latency_is_lower_bound: not_delivered > 0,
        max_source_queue: max_q,
        source_backlog_start: backlog0,
        source_backlog_end: backlog1,
        saturated: !reasons.is_empty(),
        saturation_reasons: reasons,
        cycles_simulated: t,
        convergence: bs.map(|_| Convergence {
            warmup_cycles: w0,
            measured_cycles: w1 - w0,
            sample_periods: periods,
            converged: converged >= 3,
            unstable,
            drain_cycles: t - w1,
        }),
        flits_injected: net.flits_injected,
        flits_ejected: net.flits_ejected,
        wall_seconds: start.elapsed().as_secs_f64(),
    })
}

/// S(k) = sum over ordered pairs (a, b) of 0..k of |a - b| = (k^3 - k) / 3.
fn abs_diff_sum(k: usize) -> f64 {
    let k = k as f64;
    (k * k * k - k) / 3.0
}

/// Mean hop count between distinct nodes for uniform traffic on a cols x rows mesh (closed
/// form, O(1)).
pub fn mean_hops_uniform(mesh: &Mesh) -> f64 {
    let n = mesh.nodes() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let (c, r) = (mesh.cols as f64, mesh.rows as f64);
    (r * r * abs_diff_sum(mesh.cols) + c * c * abs_diff_sum(mesh.rows)) / (n * (n - 1.0))
}

/// Zero-load latency predicted by the router model, cycles.
pub fn zero_load_latency(arch: &MeshArch, hops: f64, packet_flits: u32) -> f64 {
    zero_load_latency_with(arch, hops, packet_flits, NetOptions::default())
}

/// Zero-load latency with the network options (BookSim's injection takes one more cycle).
pub fn zero_load_latency_with(
    arch: &MeshArch,
    hops: f64,
    packet_flits: u32,
    opts: NetOptions,
) -> f64 {
    let pipe = (arch.router_pipeline_cycles() + arch.link_latency_cycles) as f64;
    (arch.link_latency_cycles + opts.inject_extra_cycles) as f64
        + (hops + 1.0) * pipe
        + (packet_flits as f64 - 1.0)
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
            booksim: None,
        }
    }

    #[test]
    fn low_load_latency_matches_theory_and_accepts_offered() {
        let mut a = default_mesh();
        a.cols = 4;
        a.rows = 4;
        let p = run_point(&a, PacketRouting::Dor, &cfg(Pattern::uniform(), 0.02)).unwrap();
        let m = Mesh::new(4, 4).unwrap();
        let t0 = zero_load_latency(&a, mean_hops_uniform(&m), 1);
        assert!(!p.saturated);
        assert!((p.accepted - p.offered).abs() < 0.01, "{p:?}");
        // at 2% load contention adds little: within 5% of the zero-load latency
        assert!(
            p.latency.unwrap() >= t0 * 0.97 && p.latency.unwrap() < t0 * 1.05,
            "{:?} vs {t0}",
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
        let p = run_point(&a, PacketRouting::Dor, &cfg(Pattern::uniform(), 0.9)).unwrap();
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
        for pat in [
            Pattern::uniform(),
            Pattern::transpose(),
            Pattern::bit_complement(),
        ] {
            let mut c = cfg(pat.clone(), 1.0);
            c.packet_flits = 4;
            c.drain_cycles = 0;
            let p = run_point(&a, PacketRouting::Adaptive, &c).unwrap();
            assert!(p.accepted > 0.05, "{pat:?} delivered almost nothing: {p:?}");
        }
    }

    fn mesh_arch(k: usize) -> MeshArch {
        let mut a = default_mesh();
        a.cols = k;
        a.rows = k;
        a
    }

    /// Points a user found past the knee (uniform 0.80, transpose 0.15 on 4x4 DOR) are
    /// saturated, and a light load is not; each reason is stated.
    #[test]
    fn saturation_rule_catches_the_knee() {
        for (k, pat, rate, sat) in [
            (4, Pattern::uniform(), 0.80, true),
            (8, Pattern::transpose(), 0.15, true),
            (4, Pattern::uniform(), 0.10, false),
            (8, Pattern::transpose(), 0.05, false),
        ] {
            let p = run_point(&mesh_arch(k), PacketRouting::Dor, &cfg(pat.clone(), rate)).unwrap();
            assert_eq!(p.saturated, sat, "{k}x{k} {pat:?} {rate}: {p:?}");
            assert_eq!(p.saturated, !p.saturation_reasons.is_empty());
        }
    }

    /// Under heavy overload the source queues stay within their cap, the refused packets are
    /// counted, and the latency is marked a lower bound.
    #[test]
    fn overload_memory_is_bounded_and_losses_are_reported() {
        let a = mesh_arch(4);
        let mut c = cfg(Pattern::transpose(), 1.0);
        c.warmup_cycles = 0;
        c.measure_cycles = 6000;
        c.drain_cycles = 0;
        let p = run_point(&a, PacketRouting::Dor, &c).unwrap();
        assert!(p.max_source_queue <= SOURCE_QUEUE_CAP, "{p:?}");
        assert!(p.packets_not_injected > 0, "{p:?}");
        assert_eq!(
            p.packets_not_delivered,
            p.packets_measured - p.packets_delivered
        );
        assert!(p.latency_is_lower_bound && p.saturated);
    }

    #[test]
    fn conventions_senders_and_theory() {
        let m = Mesh::new(4, 4).unwrap();
        assert_eq!(Pattern::transpose().senders(&m, false), 12);
        assert_eq!(Pattern::uniform().senders(&m, false), 16);
        let m5 = Mesh::new(5, 5).unwrap();
        assert_eq!(Pattern::bit_complement().senders(&m5, false), 24);
        // closed-form uniform mean hops equals the brute-force mean
        for (c, r) in [(4, 4), (3, 5), (8, 2)] {
            let m = Mesh::new(c, r).unwrap();
            let n = m.nodes();
            let s: usize = (0..n)
                .flat_map(|a| (0..n).map(move |b| (a, b)))
                .map(|(a, b)| m.hops(a, b))
                .sum();
            let brute = s as f64 / (n * (n - 1)) as f64;
            assert!((mean_hops_uniform(&m) - brute).abs() < 1e-9);
        }
        // uniform DOR bound on k x k (k even) is the bisection bound 4/k
        for k in [4usize, 6, 8] {
            let m = Mesh::new(k, k).unwrap();
            let b = Pattern::uniform().dor_bound(&m, 4, false).unwrap();
            let want = 4.0 / k as f64 * (k * k - 1) as f64 / (k * k) as f64;
            assert!((b - want).abs() < 1e-9, "{k}: {b} vs {want}");
        }
        // transpose on 8x8 is more restrictive than uniform, and 0.15 is beyond it
        let m8 = Mesh::new(8, 8).unwrap();
        let tb = Pattern::transpose().dor_bound(&m8, 4, false).unwrap();
        assert!(
            tb < Pattern::uniform().dor_bound(&m8, 4, false).unwrap() && tb < 0.15,
            "{tb}"
        );
    }
}
