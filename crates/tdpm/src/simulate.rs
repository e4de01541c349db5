//! A TDPM plan on the timing simulator (`crates/npsim`): the cost model's prediction against a
//! simulated maximum sustainable rate for the same partition and mapping (issue 5, seed 001
//! Figure 5 and Table 2 by simulation).
//!
//! How a plan becomes a simulation (docs/reproductions.md "Seed 001", docs/npsim.md "Control core,
//! hand-offs between task groups, explicit mappings"):
//! * every PPF of an ME task runs on that task's MEs (c × d engines, consecutive PEs after the
//!   interface PEs), any of their contexts; every PPF of an XScale task on the control core
//!   (npsim PE `pe_count`, 1 context, the XScale's CPI and clock);
//! * each task is a hand-off group: where a packet's next element is in another task, the
//!   receiving task reads the header from `np.handoff_storage` (DRAM, one 64-byte request on
//!   `ixp2400`) and the sending task writes it back first if it modified the packet — the
//!   communication term of the cost model (`cost.rs`: a load per channel entering the task, a
//!   store per channel leaving it when the task writes the packet; none inside a task);
//! * the receiver (FromDevice, PollDevice) runs on PE 0 and everything the model counts as
//!   the transmitter (Queue, ToDevice, Discard) on the last interface PE, with no group: like
//!   the cost model, the Rx and Tx MEs pay no hand-off;
//! * packet data lives in each engine's local memory (`packet_cache`, the cost model's cached
//!   header) and every traced access is one request (`wide_accesses`, the model's wide
//!   references), so both count the same accesses.
use crate::api::{load_graph, report};
use crate::cost::{Eval, Machine, Model};
use crate::error::TdpmError;
use crate::graph::PpfGraph;
use crate::heuristic::Options;
use pktflow_arch::NpArch;
use pktflow_npsim::app::{AppSpec, ElementMap, Prepared};
use pktflow_npsim::{MaxRateConfig, Replication, SimConfig, SimReport};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

/// How a plan is simulated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimOptions {
    /// Synthetic packets of each simulation (a fresh functional run per probe of the search,
    /// same traffic seed as the model's profile).
    pub packets: u64,
    /// Packet data in each engine's local memory, as the cost model assumes (a task works on
    /// the header it loaded at its input channel); false: where the preset's memory map puts
    /// packet data (DRAM, one request per 32-bit word unless `wide_accesses`).
    pub packet_cache: bool,
    /// One request per traced access (the cost model counts wide references); false: one per
    /// `memory_word_bytes`.
    pub wide_accesses: bool,
    /// The transmitter's elements (Queue, ToDevice, Discard) take no lock: queues on hardware
    /// rings with atomic enqueue/dequeue instead of the Click `Queue`'s critical sections. Off
    /// by default (the application as written); a sensitivity run for the Tx ME, which the cost
    /// model assumes keeps up.
    pub lock_free_tx: bool,
    /// What one simulated lock protects (`location`, the default of npsim after seed 000
    /// section 2.4; `object`: one lock per state object, as the cost model's lock per PPF
    /// object).
    pub lock_granularity: pktflow_npsim::prog::LockGranularity,
    /// The maximum-rate search (bisection; default start 1000 cycles, tolerance 2%, precision
    /// 1%).
    pub search: MaxRateConfig,
}

impl Default for SimOptions {
    fn default() -> Self {
        SimOptions {
            packets: 2000,
            packet_cache: true,
            wide_accesses: true,
            lock_free_tx: false,
            lock_granularity: Default::default(),
            search: MaxRateConfig::default(),
        }
    }
}

/// The simulated side of one plan.
#[derive(Clone, Debug, Serialize)]
pub struct PlanSimulation {
    /// Maximum sustainable rate found by the simulator.
    pub packets_per_second: f64,
    /// [failing, sustainable] inter-arrival times of the final bracket, ME cycles.
    pub bracket_cycles: [f64; 2],
    pub simulations: usize,
    /// At the sustainable rate, most loaded first: the busiest PE (share of time not idle),
    /// bus or memory channel (utilization) and lock (share of time held).
    pub limits: Vec<(String, f64)>,
    /// Hand-off requests per injected packet (reads at receiving tasks, writes at senders).
    pub handoff_reads_per_packet: f64,
    pub handoff_writes_per_packet: f64,
    /// The explicit mapping handed to the simulator, by element name.
    pub mapping: BTreeMap<String, ElementMap>,
    pub wall_seconds: f64,
}

/// Receiver elements (they run on the Rx ME, PE 0).
fn is_receiver(class: &str) -> bool {
    matches!(class, "FromDevice" | "PollDevice" | "FromHost")
}

/// The simulator's explicit mapping of a plan: `elements` = (name, class) of every element of
/// the Click application.
pub fn element_mapping(
    eval: &Eval,
    elements: &[(String, String)],
    np: &NpArch,
) -> Result<BTreeMap<String, ElementMap>, TdpmError> {
    let ifp = np.np.interface_pes;
    if ifp == 0 {
        return Err(TdpmError::Machine(
            "the architecture reserves no receiver/transmitter PE (np.interface_pes = 0)".into(),
        ));
    }
    let mut out = BTreeMap::new();
    let mut next = ifp;
    for (k, t) in eval.tasks.iter().enumerate() {
        let em = if t.on_xscale {
            if np.control_core.is_none() {
                return Err(TdpmError::Machine(
                    "the plan puts tasks on the XScale but the architecture has no [control_core]"
                        .into(),
                ));
            }
            ElementMap::control_core(Some(k as u32))
        } else {
            let pes: Vec<u32> = (next..next + t.engines).collect();
            next += t.engines;
            if next > np.np.pe_count {
                return Err(TdpmError::Machine(format!(
                    "the plan uses {} MEs but the architecture has {} besides its {ifp} interface PEs",
                    next - ifp,
                    np.np.pe_count - ifp
                )));
            }
            ElementMap::on(pes, Some(k as u32))
        };
        for name in &t.names {
            out.insert(name.clone(), em.clone());
        }
    }
    for (name, class) in elements {
        if out.contains_key(name) {
            continue;
        }
        let pe = if is_receiver(class) { 0 } else { ifp - 1 };
        out.insert(name.clone(), ElementMap::on(vec![pe], None));
    }
    Ok(out)
}

type SimCache = Mutex<HashMap<String, Arc<PlanSimulation>>>;

fn sim_cache() -> &'static SimCache {
    static C: OnceLock<SimCache> = OnceLock::new();
    C.get_or_init(Default::default)
}

/// Simulate a plan of `app` (a Click application) on `arch_name`: its maximum sustainable rate.
/// Identical simulations (same application, architecture, mapping and options) are run once per
/// process and shared.
pub fn simulate_eval(
    app: &str,
    arch_name: &str,
    eval: &Eval,
    seed: u64,
    opts: &SimOptions,
) -> Result<Arc<PlanSimulation>, TdpmError> {
    let arch = pktflow_arch::Arch::load(arch_name).map_err(TdpmError::Machine)?;
    let np = arch.as_np().ok_or_else(|| {
        TdpmError::Machine(format!(
            "architecture '{arch_name}' is not a network processor"
        ))
    })?;
    let graph = pktflow_profile::app::load_app(app)
        .map_err(TdpmError::App)?
        .graph;
    let elements: Vec<(String, String)> = graph
        .elements
        .iter()
        .map(|e| (e.name.clone(), e.class.clone()))
        .collect();
    let mapping = element_mapping(eval, &elements, np)?;
    let key =
        serde_json::to_string(&json!([app, arch_name, seed, opts, mapping])).expect("serializes");
    if let Some(s) = sim_cache().lock().expect("cache").get(&key) {
        return Ok(s.clone());
    }
    let t0 = std::time::Instant::now();
    let spec = AppSpec {
        app: app.into(),
        packets: opts.packets,
        traffic_seed: seed,
        arch: arch_name.into(),
        replication: Replication::Global,
        mapping: Some(mapping.clone()),
        ..AppSpec::default()
    };
    let mut prep = Prepared::new(&spec).map_err(TdpmError::Request)?;
    if opts.packet_cache {
        if !prep.arch.storage.contains_key("local_memory") {
            return Err(TdpmError::Machine(format!(
                "packet_cache needs a 'local_memory' storage device in '{arch_name}'"
            )));
        }
        prep.arch.memory_map.packet_data = "local_memory".into();
    }
    let tx: Vec<String> = if opts.lock_free_tx {
        let ppfs: Vec<&String> = eval.tasks.iter().flat_map(|t| t.names.iter()).collect();
        elements
            .iter()
            .filter(|(n, c)| !is_receiver(c) && !ppfs.contains(&n))
            .map(|(n, _)| n.clone())
            .collect()
    } else {
        Vec::new()
    };
    let cfg = SimConfig {
        packets: opts.packets,
        warmup_packets: opts.packets / 5,
        wide_accesses: opts.wide_accesses,
        no_sync_elements: tx,
        lock_granularity: opts.lock_granularity,
        ..SimConfig::default()
    };
    let mr = prep
        .max_rate(&cfg, &opts.search)
        .map_err(TdpmError::Request)?;
    let rep = &mr.report;
    let injected = rep.injected.max(1) as f64;
    let sim = Arc::new(PlanSimulation {
        packets_per_second: mr.packets_per_second,
        bracket_cycles: mr.bracket.inter_arrival_cycles,
        simulations: mr.probes.len(),
        limits: limits(rep, &mapping, np),
        handoff_reads_per_packet: rep.tasks.iter().map(|t| t.handoff_reads).sum::<u64>() as f64
            / injected,
        handoff_writes_per_packet: rep.tasks.iter().map(|t| t.handoff_writes).sum::<u64>() as f64
            / injected,
        mapping,
        wall_seconds: t0.elapsed().as_secs_f64(),
    });
    sim_cache().lock().expect("cache").insert(key, sim.clone());
    Ok(sim)
}

/// The busiest PE, bus or channel, and lock of a run (those at least 1% loaded), named for the
/// plan.
fn limits(
    rep: &SimReport,
    mapping: &BTreeMap<String, ElementMap>,
    np: &NpArch,
) -> Vec<(String, f64)> {
    let ifp = np.np.interface_pes;
    let pe_name = |pe: u32, cc: bool| -> String {
        if cc {
            return np
                .control_core
                .as_ref()
                .map_or("control core".into(), |c| c.name.clone());
        }
        if pe == 0 {
            return "Rx ME (PE 0)".into();
        }
        if pe == ifp - 1 {
            return format!("Tx ME (PE {pe})");
        }
        // The task group running there.
        let g = mapping.values().find_map(|m| {
            let on = matches!(&m.pes, pktflow_npsim::app::PeList::Many(v)
                if v.contains(&pktflow_npsim::app::PeRef::Index(pe)));
            if on {
                m.group
            } else {
                None
            }
        });
        match g {
            Some(g) => format!("ME {pe} (task {g})"),
            None => format!("ME {pe}"),
        }
    };
    let best = |v: Vec<(String, f64)>| v.into_iter().max_by(|a, b| a.1.total_cmp(&b.1));
    let pe = best(
        rep.pes
            .iter()
            .map(|p| (pe_name(p.pe, p.control_core), 1.0 - p.idle))
            .collect(),
    );
    let res = best(
        rep.buses
            .iter()
            .chain(&rep.channels)
            .map(|r| (r.name.clone(), r.utilization))
            .collect(),
    );
    let lock = best(
        rep.locks
            .iter()
            .map(|l| (format!("lock of {}", l.element), l.held))
            .collect(),
    );
    let mut all: Vec<(String, f64)> = [pe, res, lock].into_iter().flatten().collect();
    all.retain(|x| x.1 >= 0.01);
    all.sort_by(|a, b| b.1.total_cmp(&a.1));
    all
}

type GraphCache = Mutex<HashMap<String, Arc<PpfGraph>>>;

/// The PPF graph of `app` (cached per process: the functional run is deterministic).
pub fn cached_graph(
    app: &str,
    np: &NpArch,
    arch_name: &str,
    packets: u64,
    seed: u64,
) -> Result<Arc<PpfGraph>, TdpmError> {
    static C: OnceLock<GraphCache> = OnceLock::new();
    let key = format!("{app}\u{0}{arch_name}\u{0}{packets}\u{0}{seed}");
    let c = C.get_or_init(Default::default);
    if let Some(g) = c.lock().expect("cache").get(&key) {
        return Ok(g.clone());
    }
    let g = Arc::new(load_graph(app, np, packets, seed, None)?);
    c.lock().expect("cache").insert(key, g.clone());
    Ok(g)
}

/// One point of Figure 5: a mapper's plan for `engines` MEs, by the cost model and by the
/// simulator.
#[derive(Clone, Debug, Serialize)]
pub struct Point {
    pub app: String,
    pub mapper: String,
    pub mes: u32,
    pub model_packets_per_second: f64,
    pub sim_packets_per_second: f64,
    /// (model − simulation) / simulation, percent, on the uncapped rates.
    pub error_pct: f64,
    /// At `packet_bytes` per packet.
    pub model_gbps: f64,
    pub sim_gbps: f64,
    /// Capped at the offered load (Figure 5's forwarding rate), and the error on those.
    pub model_forwarding_gbps: f64,
    pub sim_forwarding_gbps: f64,
    pub forwarding_error_pct: f64,
    pub me_tasks: usize,
    pub xscale_tasks: usize,
    pub copies: u32,
    pub model_binding: String,
    pub sim_limits: Vec<(String, f64)>,
    /// Hand-off requests per input packet: issued in the simulation (reads + writes) and
    /// charged by the model (loads + stores).
    pub handoff_requests_per_packet: f64,
    pub model_handoff_requests_per_packet: f64,
    pub sim_wall_seconds: f64,
}

/// What one point needs besides the app, mapper and engines.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PointOptions {
    pub arch: String,
    /// Synthetic packets of the functional run that profiles the PPF graph.
    pub packets: u64,
    pub seed: u64,
    pub offered_gbps: Option<f64>,
    /// Bytes per packet of the Gb/s figures (default: the graph's mean wire size).
    pub packet_bytes: Option<f64>,
    pub critical_threshold: Option<f64>,
    pub sim: SimOptions,
}

impl Default for PointOptions {
    fn default() -> Self {
        PointOptions {
            arch: "ixp2400".into(),
            packets: 2000,
            seed: 1,
            offered_gbps: None,
            packet_bytes: None,
            critical_threshold: None,
            sim: SimOptions::default(),
        }
    }
}

/// The communication accesses the cost model charges per input packet (`cost.rs`): packet-level
/// loads, one per ⌈bytes / width⌉ of every channel entering a task from outside it, and stores
/// on every channel leaving a task that writes the packet. Returns (loads, stores).
pub fn model_handoffs(model: &Model, eval: &Eval) -> (f64, f64) {
    let g = model.g;
    let width = model
        .m
        .levels
        .get(&model.m.packet_level)
        .map_or(64, |l| l.width_bytes) as f64;
    let mut task_of = vec![usize::MAX; g.len()];
    for (t, task) in eval.tasks.iter().enumerate() {
        for &i in &task.ppfs {
            task_of[i] = t;
        }
    }
    let (mut loads, mut stores) = (0.0, 0.0);
    for (t, task) in eval.tasks.iter().enumerate() {
        let writes = task.ppfs.iter().any(|&i| g.ppfs[i].writes_packet);
        for &i in &task.ppfs {
            for &k in &g.in_ch[i] {
                let c = &g.channels[k];
                if !matches!(c.from, crate::graph::End::Ppf(j) if task_of[j] == t) {
                    loads += c.rate * (c.bytes as f64 / width).ceil();
                }
            }
            if writes {
                for &k in &g.out_ch[i] {
                    let c = &g.channels[k];
                    if !matches!(c.to, crate::graph::End::Ppf(j) if task_of[j] == t) {
                        stores += c.rate * (c.bytes as f64 / width).ceil();
                    }
                }
            }
        }
    }
    (loads, stores)
}

fn pct(model: f64, sim: f64) -> f64 {
    if sim > 0.0 {
        100.0 * (model - sim) / sim
    } else {
        f64::NAN
    }
}

/// Map `app` with `mapper` on `engines` MEs, evaluate with the cost model and simulate.
/// Returns the point, the model's JSON report (`api::report`) and the simulation.
pub fn simulate_point(
    app: &str,
    mapper: &str,
    engines: u32,
    o: &PointOptions,
) -> Result<(Point, serde_json::Value, Arc<PlanSimulation>), TdpmError> {
    let arch = pktflow_arch::Arch::load(&o.arch).map_err(TdpmError::Machine)?;
    let np = arch.as_np().ok_or_else(|| {
        TdpmError::Machine(format!(
            "architecture '{}' is not a network processor",
            o.arch
        ))
    })?;
    let g0 = cached_graph(app, np, &o.arch, o.packets, o.seed)?;
    let mut g = (*g0).clone();
    if let Some(b) = o.packet_bytes {
        if !(b.is_finite() && b > 0.0) {
            return Err(TdpmError::Request(format!(
                "packet bytes must be positive (got {b})"
            )));
        }
        g.packet_bytes = b;
    }
    let model = Model::new(&g, Machine::from_arch(np, engines)?)?;
    let mut opts = Options::default();
    if let Some(t) = o.critical_threshold {
        if !(0.0..=1.0).contains(&t) {
            return Err(TdpmError::Request(format!(
                "critical threshold must be in [0, 1] (got {t})"
            )));
        }
        opts.critical_threshold = t;
    }
    let plan = crate::baselines::map(&model, mapper, &opts)?;
    let sim = simulate_eval(app, &o.arch, &plan.eval, o.seed, &o.sim)?;
    let e = &plan.eval;
    let bits = g.packet_bytes * 8.0;
    let offered = o.offered_gbps.map(|x| x * 1e9 / bits);
    let cap = |pps: f64| offered.map_or(pps, |c| c.min(pps));
    let (mp, sp) = (e.packets_per_second, sim.packets_per_second);
    let point = Point {
        app: app.into(),
        mapper: plan.mapper.clone(),
        mes: engines,
        model_packets_per_second: mp,
        sim_packets_per_second: sp,
        error_pct: pct(mp, sp),
        model_gbps: mp * bits / 1e9,
        sim_gbps: sp * bits / 1e9,
        model_forwarding_gbps: cap(mp) * bits / 1e9,
        sim_forwarding_gbps: cap(sp) * bits / 1e9,
        forwarding_error_pct: pct(cap(mp), cap(sp)),
        me_tasks: e.tasks.iter().filter(|t| !t.on_xscale).count(),
        xscale_tasks: e.tasks.iter().filter(|t| t.on_xscale).count(),
        copies: e.copies,
        model_binding: e.binding_text(),
        sim_limits: sim.limits.clone(),
        handoff_requests_per_packet: sim.handoff_reads_per_packet + sim.handoff_writes_per_packet,
        model_handoff_requests_per_packet: {
            let (l, s) = model_handoffs(&model, e);
            l + s
        },
        sim_wall_seconds: sim.wall_seconds,
    };
    let mut rep = report(&model, &plan, o.offered_gbps);
    rep["arch"] = json!(o.arch);
    Ok((point, rep, sim))
}

/// JSON request of [`simulate_json`]: `{"app", "mapper", "engines", ...PointOptions}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Request {
    app: String,
    #[serde(default = "default_mapper")]
    mapper: String,
    #[serde(default)]
    engines: Option<u32>,
    #[serde(flatten)]
    point: PointOptions,
}

fn default_mapper() -> String {
    "tdpm".into()
}

/// JSON entry point (Python `pktflow.tdpm.simulate_plan`): the model's report under `model`,
/// the simulation under `simulation` (rate, limits, mapping) and the comparison under `point`.
pub fn simulate_json(request: &str) -> Result<String, TdpmError> {
    // `flatten` and `deny_unknown_fields` do not combine in serde: check the keys by hand.
    let v: serde_json::Value = serde_json::from_str(request)
        .map_err(|e| TdpmError::Request(format!("bad simulate request: {e}")))?;
    const KEYS: [&str; 10] = [
        "app",
        "mapper",
        "engines",
        "arch",
        "packets",
        "seed",
        "offered_gbps",
        "packet_bytes",
        "critical_threshold",
        "sim",
    ];
    if let Some(o) = v.as_object() {
        if let Some(k) = o.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(TdpmError::Request(format!(
                "bad simulate request: unknown field '{k}' (expected one of {})",
                KEYS.join(", ")
            )));
        }
    }
    let r: Request = serde_json::from_value(v)
        .map_err(|e| TdpmError::Request(format!("bad simulate request: {e}")))?;
    let arch = pktflow_arch::Arch::load(&r.point.arch).map_err(TdpmError::Machine)?;
    let np = arch
        .as_np()
        .ok_or_else(|| TdpmError::Machine(format!("'{}' is not an NP", r.point.arch)))?;
    let engines = r
        .engines
        .unwrap_or(np.np.pe_count.saturating_sub(np.np.interface_pes));
    let (point, model, sim) = simulate_point(&r.app, &r.mapper, engines, &r.point)?;
    Ok(json!({"point": point, "model": model, "simulation": sim.as_ref()}).to_string())
}

/// Figure 5 by model and simulation: every app × mapper × engine count, in that order.
/// `progress(done, total, point)` after each point.
pub fn figure5(
    apps: &[&str],
    mappers: &[&str],
    engines: std::ops::RangeInclusive<u32>,
    o: &PointOptions,
    mut progress: impl FnMut(usize, usize, &Point),
) -> Result<Vec<Point>, TdpmError> {
    let total = apps.len() * mappers.len() * engines.clone().count();
    let mut out = Vec::with_capacity(total);
    for app in apps {
        for m in mappers {
            for n in engines.clone() {
                let (p, _, _) = simulate_point(app, m, n, o)?;
                out.push(p);
                progress(out.len(), total, out.last().expect("pushed"));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ixp() -> NpArch {
        pktflow_arch::Arch::load("ixp2400")
            .unwrap()
            .as_np()
            .unwrap()
            .clone()
    }

    #[test]
    fn a_plan_becomes_an_element_mapping() {
        let np = ixp();
        let g = cached_graph("l3switch", &np, "ixp2400", 400, 1).unwrap();
        let model = Model::new(&g, Machine::from_arch(&np, 4).unwrap()).unwrap();
        let plan = crate::baselines::map(&model, "res", &Options::default()).unwrap();
        let els: Vec<(String, String)> = pktflow_profile::app::load_app("l3switch")
            .unwrap()
            .graph
            .elements
            .iter()
            .map(|e| (e.name.clone(), e.class.clone()))
            .collect();
        let m = element_mapping(&plan.eval, &els, &np).unwrap();
        assert_eq!(m.len(), els.len());
        let mut next = 2;
        for (k, t) in plan.eval.tasks.iter().enumerate() {
            let want = if t.on_xscale {
                ElementMap::control_core(Some(k as u32))
            } else {
                next += t.engines;
                ElementMap::on((next - t.engines..next).collect(), Some(k as u32))
            };
            for n in &t.names {
                assert_eq!(m[n], want, "{n}");
            }
        }
        assert!(next <= 8);
        for (n, c) in &els {
            if !plan.eval.tasks.iter().any(|t| t.names.contains(n)) {
                let pe = if c == "FromDevice" { 0 } else { 1 };
                assert_eq!(m[n], ElementMap::on(vec![pe], None), "{n} ({c})");
            }
        }
    }

    #[test]
    fn simulate_json_compares_model_and_simulator() {
        let req = json!({"app": "l3switch", "mapper": "tdpm", "engines": 2, "packets": 400,
                         "offered_gbps": 3.0, "packet_bytes": 64,
                         "sim": {"packets": 400}});
        let v: serde_json::Value =
            serde_json::from_str(&simulate_json(&req.to_string()).unwrap()).unwrap();
        let p = &v["point"];
        let (m, s) = (
            p["model_packets_per_second"].as_f64().unwrap(),
            p["sim_packets_per_second"].as_f64().unwrap(),
        );
        assert!(m > 0.0 && s > 0.0);
        let e = p["error_pct"].as_f64().unwrap();
        assert!((e - 100.0 * (m - s) / s).abs() < 1e-9);
        assert!(p["sim_forwarding_gbps"].as_f64().unwrap() <= 3.0 + 1e-9);
        assert_eq!(v["model"]["mapper"], "tdpm");
        assert!(v["simulation"]["mapping"]["br"]["group"].is_u64());
        // Same traffic for both: the simulator's hand-off reads per packet are the model's
        // channel loads (writes differ where a task that writes the packet forwards one it
        // did not modify: the model charges a store on every channel leaving such a task).
        let np = ixp();
        let g = cached_graph("l3switch", &np, "ixp2400", 400, 1).unwrap();
        let model = Model::new(&g, Machine::from_arch(&np, 2).unwrap()).unwrap();
        let plan = crate::baselines::map(&model, "tdpm", &Options::default()).unwrap();
        let (loads, stores) = model_handoffs(&model, &plan.eval);
        let reads = v["simulation"]["handoff_reads_per_packet"]
            .as_f64()
            .unwrap();
        let writes = v["simulation"]["handoff_writes_per_packet"]
            .as_f64()
            .unwrap();
        assert!((reads - loads).abs() < 0.02, "{reads} vs {loads}");
        assert!(writes <= stores + 0.02, "{writes} vs {stores}");
        // Errors name the bad field.
        let bad = json!({"app": "l3switch", "sim": {"packets": 10, "bogus": 1}}).to_string();
        let e = simulate_json(&bad).unwrap_err().to_string();
        assert!(e.contains("bogus"), "{e}");
        let bad = json!({"app": "l3switch", "enignes": 2}).to_string();
        let e = simulate_json(&bad).unwrap_err().to_string();
        assert!(e.contains("unknown field 'enignes'"), "{e}");
    }
}
