//! Task mapping (seed 000 section 3.1, "Task Mapping", steps 1 to 3): "(1) An initial
//! measurement is made where each task runs on its own PE, assuming an infinite number of PEs.
//! (2) Using a greedy algorithm, we then re-assign tasks to the parameterized number of PEs while
//! minimizing the expected utilization of each PE. (3) Next we replicate the task with the
//! longest queue time (according to profile feedback). Replicas can optionally be assigned to
//! the same PE, or to different PEs. We repeat this step until the NP is well utilized."
//!
//! Mappers by name ([`MapperKind`]): `round-robin` ([`Mapping::default_for`], the stand-in),
//! `greedy` (steps 1 and 2, every task replicated within the scope as the round-robin mapping
//! does), `greedy+replicate` (steps 1 to 3: start unreplicated and replicate one task at a
//! time while the maximum rate rises) and `anneal` (step 4: simulated annealing from the
//! greedy+replicate mapping under a coarse model, [`CoarseModel`], checked by a full search). The pure parts ([`greedy_assign`],
//! [`round_robin_assign`], [`pe_loads`], [`mapping_from`]) take the measured loads and are
//! tested on their own; [`Mapper`] drives them with simulations.
use crate::config::{Mapping, Replication, TaskMap};
use crate::maxrate::MaxRate;
use serde::Serialize;

/// A mapper by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum MapperKind {
    RoundRobin,
    Greedy,
    GreedyReplicate,
    Anneal,
    /// A plan mapper registered from outside this crate ([`register_plan_mapper`]), by its
    /// index among them.
    Plan(u8),
}

/// A mapper whose plan comes from outside the simulator (e.g. the TDPM paper's partitioning,
/// `crates/tdpm`, which depends on this crate and so cannot be called from it): given the
/// application's spec and the PE count, an explicit mapping by element name
/// ([`crate::app::AppSpec::mapping`]'s form). The simulator applies it over the round-robin
/// default and measures it; the replication scope plays no part (the plan decides where each
/// element runs).
pub type PlanFn = fn(
    spec: &crate::app::AppSpec,
    pes: u32,
) -> Result<std::collections::BTreeMap<String, crate::app::ElementMap>, String>;

struct PlanMapper {
    name: &'static str,
    help: &'static str,
    run: PlanFn,
}

fn plan_mappers() -> &'static std::sync::RwLock<Vec<PlanMapper>> {
    static P: std::sync::OnceLock<std::sync::RwLock<Vec<PlanMapper>>> = std::sync::OnceLock::new();
    P.get_or_init(Default::default)
}

/// Add a plan mapper to the registry (a second registration of a name is ignored: a crate
/// that links the simulator may install its mappers more than once).
pub fn register_plan_mapper(name: &'static str, help: &'static str, run: PlanFn) {
    let mut v = plan_mappers().write().unwrap_or_else(|e| e.into_inner());
    if v.iter().any(|m| m.name == name) || v.len() >= u8::MAX as usize {
        return;
    }
    v.push(PlanMapper { name, help, run });
}

/// The plan function of a [`MapperKind::Plan`].
pub fn plan_fn(index: u8) -> Option<PlanFn> {
    let v = plan_mappers().read().unwrap_or_else(|e| e.into_inner());
    v.get(index as usize).map(|m| m.run)
}

impl MapperKind {
    pub const NAMES: [&'static str; 4] = ["round-robin", "greedy", "greedy+replicate", "anneal"];

    /// The mapper called `s` (also `rr` and `replicate`); an unknown name gets the registry's
    /// message listing the known ones.
    pub fn parse(s: &str) -> Result<MapperKind, String> {
        let s = match s {
            "rr" => "round-robin",
            "replicate" => "greedy+replicate",
            _ => s,
        };
        registry().get(s).copied().map_err(|e| e.to_string())
    }

    pub fn name(&self) -> &'static str {
        match self {
            MapperKind::RoundRobin => "round-robin",
            MapperKind::Greedy => "greedy",
            MapperKind::GreedyReplicate => "greedy+replicate",
            MapperKind::Anneal => "anneal",
            MapperKind::Plan(i) => plan_mappers()
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .get(*i as usize)
                .map_or("plan", |m| m.name),
        }
    }
}

/// The NP simulator's mappers by name, with one help line each.
pub fn registry() -> pktflow_harness::Registry<MapperKind> {
    let mut r = pktflow_harness::Registry::new("mapper");
    r.register(
        "round-robin",
        "every task on every PE of its replication scope, interface tasks on their own PEs (no simulation)",
        MapperKind::RoundRobin,
    )
    .register(
        "greedy",
        "measure each task on its own PE, then assign tasks to PEs greedily by load",
        MapperKind::Greedy,
    )
    .register(
        "greedy+replicate",
        "greedy, then replicate the task with the longest queue while the maximum rate rises",
        MapperKind::GreedyReplicate,
    )
    .register(
        "anneal",
        "simulated annealing from the greedy+replicate mapping under a coarse model, checked by a full search",
        MapperKind::Anneal,
    );
    for (i, m) in plan_mappers()
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .enumerate()
    {
        r.register(m.name, m.help, MapperKind::Plan(i as u8));
    }
    r
}

/// The PEs of interface tasks and of processing tasks, as [`Mapping::default_for`] splits them:
/// interface tasks on PEs `0..interface_pes`, processing tasks on the rest (all PEs when none
/// remain, the paper's 4-PE case).
pub fn pe_split(pe_count: u32, interface_pes: u32) -> (Vec<u32>, Vec<u32>) {
    let ifp = interface_pes.min(pe_count);
    let proc: Vec<u32> = if pe_count > ifp {
        (ifp..pe_count).collect()
    } else {
        (0..pe_count).collect()
    };
    let ifaces: Vec<u32> = if ifp > 0 {
        (0..ifp).collect()
    } else {
        proc.clone()
    };
    (ifaces, proc)
}

/// One home PE per task, round-robin (interface tasks over the interface PEs, the others over
/// the processing PEs, in task order): the home PEs of [`Mapping::default_for`].
pub fn round_robin_assign(iface: &[bool], pe_count: u32, interface_pes: u32) -> Vec<u32> {
    let (ifaces, proc) = pe_split(pe_count, interface_pes);
    let (mut ni, mut np) = (0usize, 0usize);
    iface
        .iter()
        .map(|&is_if| {
            if is_if {
                ni += 1;
                ifaces[(ni - 1) % ifaces.len()]
            } else {
                np += 1;
                proc[(np - 1) % proc.len()]
            }
        })
        .collect()
}

/// Expected load of every PE: the sum of the weights of the tasks whose home it is.
pub fn pe_loads(assign: &[u32], weights: &[f64], pe_count: u32) -> Vec<f64> {
    let mut l = vec![0.0; pe_count as usize];
    for (t, &p) in assign.iter().enumerate() {
        l[p as usize] += weights[t];
    }
    l
}

fn max_of(l: &[f64]) -> f64 {
    l.iter().copied().fold(0.0, f64::max)
}

fn better<T>(best: &Option<(f64, T, Option<usize>, u32)>, m: f64) -> bool {
    match best {
        None => true,
        Some(b) => m < b.0,
    }
}

/// Improve an assignment by moving one processing task, or swapping two, between processing
/// PEs while that lowers the larger load of the two PEs below the current maximum (a local
/// search; it never raises the maximum).
fn improve(assign: &mut [u32], weights: &[f64], iface: &[bool], proc: &[u32], pe_count: u32) {
    let mut loads = pe_loads(assign, weights, pe_count);
    let eps = 1e-9;
    for _ in 0..10_000 {
        let top = proc
            .iter()
            .copied()
            .max_by(|&a, &b| loads[a as usize].total_cmp(&loads[b as usize]))
            .expect("at least one processing PE");
        let lt = loads[top as usize];
        let mut best: Option<(f64, usize, Option<usize>, u32)> = None;
        for t in 0..assign.len() {
            if iface[t] || assign[t] != top || weights[t] <= 0.0 {
                continue;
            }
            for &q in proc {
                if q == top {
                    continue;
                }
                let lq = loads[q as usize];
                // Move t to q.
                let m = (lt - weights[t]).max(lq + weights[t]);
                if m < lt - eps && better(&best, m) {
                    best = Some((m, t, None, q));
                }
                // Swap t with a lighter u on q.
                for u in 0..assign.len() {
                    if iface[u] || assign[u] != q || weights[u] >= weights[t] {
                        continue;
                    }
                    let d = weights[t] - weights[u];
                    let m = (lt - d).max(lq + d);
                    if m < lt - eps && better(&best, m) {
                        best = Some((m, t, Some(u), q));
                    }
                }
            }
        }
        let Some((_, t, u, q)) = best else { return };
        loads[top as usize] -= weights[t];
        loads[q as usize] += weights[t];
        assign[t] = q;
        if let Some(u) = u {
            loads[q as usize] -= weights[u];
            loads[top as usize] += weights[u];
            assign[u] = top;
        }
    }
}

/// Section 3.1 step 2: one home PE per task minimizing the largest expected PE load. Interface
/// tasks keep their PEs (round-robin over the interface PEs); the processing tasks go, heaviest
/// first, to the least loaded processing PE (longest processing time first), then a local
/// search moves or swaps tasks off the most loaded PE while that lowers it. The same local
/// search is also run from the round-robin assignment and the better of the two kept, so the
/// greedy mapping is never worse than the round-robin one it replaces (ties go to the greedy).
pub fn greedy_assign(
    weights: &[f64],
    iface: &[bool],
    pe_count: u32,
    interface_pes: u32,
) -> Vec<u32> {
    assert_eq!(weights.len(), iface.len());
    let (_, proc) = pe_split(pe_count, interface_pes);
    let rr = round_robin_assign(iface, pe_count, interface_pes);
    let mut g = rr.clone();
    let mut loads = vec![0.0; pe_count as usize];
    for t in 0..iface.len() {
        if iface[t] {
            loads[g[t] as usize] += weights[t];
        }
    }
    let mut order: Vec<usize> = (0..iface.len()).filter(|&t| !iface[t]).collect();
    order.sort_by(|&a, &b| weights[b].total_cmp(&weights[a]).then(a.cmp(&b)));
    for t in order {
        let p = proc
            .iter()
            .copied()
            .min_by(|&a, &b| {
                loads[a as usize]
                    .total_cmp(&loads[b as usize])
                    .then(a.cmp(&b))
            })
            .expect("at least one processing PE");
        g[t] = p;
        loads[p as usize] += weights[t];
    }
    improve(&mut g, weights, iface, &proc, pe_count);
    let mut r = rr;
    improve(&mut r, weights, iface, &proc, pe_count);
    if max_of(&pe_loads(&r, weights, pe_count)) < max_of(&pe_loads(&g, weights, pe_count)) - 1e-9 {
        r
    } else {
        g
    }
}

/// The mapping of home PEs under a replication scope. A task not `replicated` runs one
/// instance at a time on its home PE. A replicated task may run any number of instances: on
/// its home PE's contexts (`pe`), on the subset of processing PEs holding its home (the
/// processing PEs cut into groups of `subset_size`, as [`Mapping::default_for`] does;
/// `subset`), or on every processing PE (`global`). Interface tasks stay on their PE.
pub fn mapping_from(
    assign: &[u32],
    iface: &[bool],
    replicated: &[bool],
    pe_count: u32,
    interface_pes: u32,
    rep: Replication,
    subset_size: u32,
) -> Mapping {
    let (_, proc) = pe_split(pe_count, interface_pes);
    let size = subset_size.max(1) as usize;
    let tasks = assign
        .iter()
        .enumerate()
        .map(|(t, &home)| {
            if !replicated[t] || rep == Replication::None {
                return TaskMap::new(vec![home], 1);
            }
            let pes = if iface[t] {
                vec![home]
            } else {
                match rep {
                    Replication::None | Replication::Pe => vec![home],
                    Replication::Subset => match proc.iter().position(|&p| p == home) {
                        Some(i) => {
                            proc[i / size * size..((i / size + 1) * size).min(proc.len())].to_vec()
                        }
                        None => vec![home],
                    },
                    // Every PE, interface PEs included (section 5: "any task or replica can
                    // execute on any available context of any PE").
                    Replication::Global => (0..pe_count).collect(),
                }
            };
            TaskMap::new(pes, u32::MAX)
        })
        .collect();
    Mapping { tasks }
}

/// What the mapper measured and did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct MapperLog {
    pub mapper: String,
    /// Step 1: compute cycles per packet of every task (each task on PEs of its own).
    pub weights: Vec<f64>,
    /// Home PE of every task (step 2).
    pub home: Vec<u32>,
    /// Largest expected PE load, cycles per packet: the greedy and the round-robin assignments.
    pub max_pe_load: f64,
    pub round_robin_max_pe_load: f64,
    /// Step 3, in order.
    pub steps: Vec<ReplicationStep>,
    /// Tasks replicated in the final mapping (element names).
    pub replicated: Vec<String>,
    /// Why step 3 stopped, in words.
    pub stopped: String,
    /// Maximum-rate searches the mapper ran.
    pub searches: u32,
    /// Step 4 (mapper `anneal`).
    pub anneal: Option<AnnealLog>,
}

/// Step 4: the base mapping (greedy+replicate) against the annealed one.
#[derive(Clone, Debug, Serialize)]
pub struct AnnealLog {
    /// Coarse model's cycles per packet.
    pub coarse_cycles_base: f64,
    pub coarse_cycles_annealed: f64,
    /// Full simulator's maximum rates (None: the annealed mapping is the base one).
    pub packets_per_second_base: f64,
    pub packets_per_second_annealed: Option<f64>,
    /// The annealed mapping was better in the full simulator and replaced the base.
    pub kept: bool,
}

/// Step 1's measurement (every task on a PE of its own).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Profile {
    /// Compute cycles per packet of every task.
    pub weights: Vec<f64>,
    /// Context-holding cycles per packet of every task (compute, memory and lock waits).
    pub occupancy: Vec<f64>,
    /// The most-held lock's holding cycles per packet.
    pub lock_cycles_per_packet: f64,
}

/// The coarse model of step 4: the cycles per packet a mapping needs at best, the largest of
/// - every PE's compute load (a replicated task's weight split evenly over its PEs);
/// - every PE's context load (occupancy) over its hardware contexts;
/// - every task with a bounded number of concurrent instances: its occupancy over that number;
/// - the most-held lock's holding time (the same for every mapping).
///
/// It drops buses, memories and their queues, queueing delays, context switches, lock waits
/// that grow with contention, and locality; see docs/npsim.md for how its ranking compares.
#[derive(Clone, Debug)]
pub struct CoarseModel {
    pub weights: Vec<f64>,
    pub occupancy: Vec<f64>,
    pub contexts: f64,
    pub lock_cycles_per_packet: f64,
}

impl CoarseModel {
    pub fn cycles_per_packet(&self, m: &Mapping, pe_count: u32) -> f64 {
        let mut comp = vec![0.0; pe_count as usize];
        let mut occ = vec![0.0; pe_count as usize];
        let mut bound = self.lock_cycles_per_packet;
        for (t, tm) in m.tasks.iter().enumerate() {
            let k = tm.pes.len().max(1) as f64;
            for &p in &tm.pes {
                comp[p as usize] += self.weights[t] / k;
                occ[p as usize] += self.occupancy[t] / k;
            }
            if tm.max_concurrent != u32::MAX {
                bound = bound.max(self.occupancy[t] / tm.max_concurrent as f64);
            }
        }
        let c = self.contexts.max(1.0);
        comp.iter()
            .zip(&occ)
            .fold(bound, |b, (&x, &o)| b.max(x).max(o / c))
    }
}

/// Simulated annealing of step 4.
#[derive(Clone, Debug)]
pub struct AnnealConfig {
    pub iterations: u32,
    /// Initial temperature as a share of the starting cost.
    pub t0: f64,
    /// Final temperature as a share of the initial one.
    pub t_end: f64,
    /// Cost of every replicated task as a share of the starting cost (prefers fewer replicas,
    /// standing in for the locality the model drops).
    pub replica_cost: f64,
    pub seed: u64,
}

impl Default for AnnealConfig {
    fn default() -> Self {
        AnnealConfig {
            iterations: 20_000,
            t0: 0.05,
            t_end: 1e-3,
            replica_cost: 1e-3,
            seed: 1,
        }
    }
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Step 4: simulated annealing over home PEs and the set of replicated tasks under the coarse
/// model, from (`home`, `replicated`). Moves: a processing task to another processing PE, two
/// processing tasks swapping PEs, a task's replication switched (not under `none`). Returns the
/// best state seen (the start when nothing is better).
#[allow(clippy::too_many_arguments)]
pub fn anneal(
    model: &CoarseModel,
    home: &[u32],
    replicated: &[bool],
    iface: &[bool],
    pe_count: u32,
    interface_pes: u32,
    rep: Replication,
    subset_size: u32,
    cfg: &AnnealConfig,
) -> (Vec<u32>, Vec<bool>) {
    let (_, proc) = pe_split(pe_count, interface_pes);
    let movable: Vec<usize> = (0..home.len()).filter(|&t| !iface[t]).collect();
    let cost = |h: &[u32], r: &[bool], scale: f64| {
        let m = mapping_from(h, iface, r, pe_count, interface_pes, rep, subset_size);
        model.cycles_per_packet(&m, pe_count)
            + cfg.replica_cost * scale * r.iter().filter(|&&x| x).count() as f64
    };
    let mut h = home.to_vec();
    let mut r = replicated.to_vec();
    let scale = model.cycles_per_packet(
        &mapping_from(&h, iface, &r, pe_count, interface_pes, rep, subset_size),
        pe_count,
    );
    if scale <= 0.0 || home.is_empty() {
        return (h, r);
    }
    let mut c = cost(&h, &r, scale);
    let (mut best_h, mut best_r, mut best_c) = (h.clone(), r.clone(), c);
    let mut rng = Rng(cfg.seed ^ 0x5eed);
    let n = cfg.iterations.max(1);
    for i in 0..n {
        let temp = cfg.t0 * scale * cfg.t_end.powf(i as f64 / n as f64);
        let (mut h2, mut r2) = (h.clone(), r.clone());
        let kind = rng.below(if rep == Replication::None { 2 } else { 3 });
        match kind {
            0 if !movable.is_empty() && proc.len() > 1 => {
                let t = movable[rng.below(movable.len())];
                h2[t] = proc[rng.below(proc.len())];
            }
            1 if movable.len() > 1 => {
                let a = movable[rng.below(movable.len())];
                let b = movable[rng.below(movable.len())];
                h2.swap(a, b);
            }
            2 => {
                let t = rng.below(r2.len());
                r2[t] = !r2[t];
            }
            _ => continue,
        }
        let c2 = cost(&h2, &r2, scale);
        if c2 <= c || rng.unit() < ((c - c2) / temp).exp() {
            h = h2;
            r = r2;
            c = c2;
            if c < best_c - 1e-12 {
                best_c = c;
                best_h = h.clone();
                best_r = r.clone();
            }
        }
    }
    (best_h, best_r)
}

/// One replication tried (step 3).
#[derive(Clone, Debug, Serialize)]
pub struct ReplicationStep {
    pub task: String,
    /// Its mean queue time in the profile run that chose it, cycles.
    pub queue_cycles: f64,
    /// Delivered rate of the profile runs before and after replicating it (offered more than
    /// the NP sustains, the delivered rate is what it can carry), packets/s.
    pub packets_per_second_before: f64,
    pub packets_per_second_after: f64,
    /// The delivered rate rose by more than `min_gain`.
    pub improved: bool,
}

/// Knobs of step 3.
#[derive(Clone, Debug)]
pub struct ReplicateConfig {
    /// A replication counts as an improvement when the delivered rate rises by more than this
    /// factor.
    pub min_gain: f64,
    /// Stop when the PEs' mean busy share in the profile run reaches this (section 3.1 step 3:
    /// "We repeat this step until the NP is well utilized").
    pub well_utilized: f64,
    /// A task is a candidate only while its instances wait at least this long in its queue,
    /// cycles (mean): replicating a task nothing waits for cannot raise the rate.
    pub min_queue_cycles: f64,
    /// The profile runs offer this many times the last maximum sustainable rate, so the
    /// bottleneck task's queue builds up ("the task with the longest queue time").
    pub overload: f64,
    /// Optional early stop, not in the paper: this many replications in a row that do not
    /// raise the delivered rate. None (the default): replicate until the NP is well utilized.
    pub patience: Option<usize>,
}

impl Default for ReplicateConfig {
    fn default() -> Self {
        ReplicateConfig {
            min_gain: 1.01,
            well_utilized: 0.9,
            min_queue_cycles: 1.0,
            overload: 2.0,
            patience: None,
        }
    }
}

/// Mean busy (computing) share of the PEs of a run.
pub fn mean_busy(r: &crate::SimReport) -> f64 {
    let n = r.pes.len().max(1) as f64;
    r.pes.iter().map(|s| s.busy).sum::<f64>() / n
}

/// Step 3 (section 3.1): starting from `assign` with no task replicated, "replicate the task
/// with the longest queue time (according to profile feedback)" and "repeat this step until
/// the NP is well utilized".
///
/// The profile feedback is one simulation (`probe(mapping, inter_arrival_cycles)`) offering
/// `overload` times the last maximum sustainable rate, so the binding task's queue builds up.
/// The loop replicates the unreplicated task with the longest mean queue time (at least
/// `min_queue_cycles`; interface tasks included: they replicate on their own PE) and probes
/// again, until the PEs' mean busy share reaches `well_utilized`. When no unreplicated task
/// waits, the mapping's maximum rate is searched (`eval(mapping)`, a bisection); if the NP now
/// sustains the offered rate, the loop goes on at `overload` times the new rate, otherwise it
/// stops. Returns the mapping with the better maximum rate of the unreplicated start and the
/// final one.
#[allow(clippy::too_many_arguments)]
pub fn replicate(
    assign: &[u32],
    iface: &[bool],
    names: &[String],
    pe_count: u32,
    interface_pes: u32,
    rep: Replication,
    subset_size: u32,
    cfg: &ReplicateConfig,
    log: &mut MapperLog,
    mut eval: impl FnMut(&Mapping) -> Result<MaxRate, String>,
    mut probe: impl FnMut(&Mapping, f64) -> Result<crate::SimReport, String>,
) -> Result<(Mapping, MaxRate), String> {
    let n = assign.len();
    let mut repl = vec![false; n];
    let build =
        |r: &[bool]| mapping_from(assign, iface, r, pe_count, interface_pes, rep, subset_size);
    let mapping = build(&repl);
    let base = eval(&mapping)?;
    log.searches += 1;
    if rep == Replication::None {
        log.stopped = "no replication in this scope".into();
        return Ok((mapping, base));
    }
    let over = cfg.overload.max(1.0);
    let mut offered = base.inter_arrival_cycles / over;
    let mut cur = probe(&mapping, offered)?;
    let mut last: Option<MaxRate> = None;
    let mut stale = 0;
    // Each pass either replicates a task or doubles the offered rate; the machine's capacity
    // bounds the doublings, this bounds the loop whatever the reports say.
    for _ in 0..(4 * n + 64) {
        let busy = mean_busy(&cur);
        if busy >= cfg.well_utilized {
            log.stopped = format!(
                "well utilized: PEs busy {:.1}% on average (at least {:.0}%)",
                100.0 * busy,
                100.0 * cfg.well_utilized
            );
            last = None;
            break;
        }
        let cand = cur
            .tasks
            .iter()
            .filter(|s| {
                !repl[s.task as usize]
                    && s.instances > 0
                    && s.mean_queue_cycles >= cfg.min_queue_cycles
            })
            .map(|s| (s.mean_queue_cycles, s.task as usize))
            .max_by(|a, b| a.0.total_cmp(&b.0).then(b.1.cmp(&a.1)));
        let Some((q, t)) = cand else {
            // Nothing waits at this offered rate: measure the mapping's maximum rate; go on at
            // a higher offered rate if it now sustains this one.
            let r = eval(&build(&repl))?;
            log.searches += 1;
            let sustains = r.inter_arrival_cycles <= offered * 1.02;
            if sustains && repl.iter().any(|x| !x) {
                offered = r.inter_arrival_cycles / over;
                last = Some(r);
                cur = probe(&build(&repl), offered)?;
                continue;
            }
            log.stopped = format!(
                "no unreplicated task waits {} cycle(s) or more in its queue (PEs busy {:.1}%)",
                cfg.min_queue_cycles,
                100.0 * busy
            );
            last = Some(r);
            break;
        };
        repl[t] = true;
        let next = probe(&build(&repl), offered)?;
        let (before, after) = (
            cur.throughput_packets_per_second,
            next.throughput_packets_per_second,
        );
        let improved = after > before * cfg.min_gain;
        log.steps.push(ReplicationStep {
            task: names[t].clone(),
            queue_cycles: q,
            packets_per_second_before: before,
            packets_per_second_after: after,
            improved,
        });
        cur = next;
        last = None;
        if improved {
            stale = 0;
        } else {
            stale += 1;
            if let Some(pat) = cfg.patience {
                if stale >= pat.max(1) {
                    log.stopped = format!("{pat} replications in a row gained nothing");
                    break;
                }
            }
        }
    }
    let fin = match last {
        Some(r) => r,
        None => {
            log.searches += 1;
            eval(&build(&repl))?
        }
    };
    if fin.packets_per_second < base.packets_per_second {
        log.stopped += "; the unreplicated mapping was faster and is kept";
        log.replicated.clear();
        return Ok((mapping, base));
    }
    log.replicated = (0..n)
        .filter(|&t| repl[t])
        .map(|t| names[t].clone())
        .collect();
    Ok((build(&repl), fin))
}

#[cfg(test)]
mod tests {
    #[test]
    fn mapper_names_come_from_the_registry() {
        assert_eq!(registry().names(), MapperKind::NAMES.to_vec());
        for n in MapperKind::NAMES {
            assert_eq!(MapperKind::parse(n).unwrap().name(), n);
        }
        assert_eq!(MapperKind::parse("rr"), Ok(MapperKind::RoundRobin));
        assert_eq!(
            MapperKind::parse("tdpm").unwrap_err(),
            "unknown mapper 'tdpm' (known: round-robin, greedy, greedy+replicate, anneal)"
        );
    }

    use super::*;

    #[test]
    fn greedy_balances_what_round_robin_does_not() {
        // Two heavy tasks that round-robin puts on the same processing PE.
        let iface = [true, false, false, false, false, true];
        let w = [1.0, 10.0, 1.0, 10.0, 1.0, 1.0];
        let rr = round_robin_assign(&iface, 4, 2);
        assert_eq!(rr, vec![0, 2, 3, 2, 3, 1]);
        let g = greedy_assign(&w, &iface, 4, 2);
        assert_eq!(g[0], 0);
        assert_eq!(g[5], 1);
        assert_ne!(g[1], g[3]);
        assert_eq!(max_of(&pe_loads(&rr, &w, 4)), 20.0);
        assert_eq!(max_of(&pe_loads(&g, &w, 4)), 11.0);
    }

    #[test]
    fn coarse_model_and_annealing() {
        // Task 1 is heavy and serial: unreplicated it needs 400 cycles per packet.
        let model = CoarseModel {
            weights: vec![5.0, 100.0, 5.0, 50.0],
            occupancy: vec![10.0, 400.0, 10.0, 60.0],
            contexts: 8.0,
            lock_cycles_per_packet: 20.0,
        };
        let iface = [true, false, false, false];
        let home = [0, 1, 1, 1];
        let none = [false; 4];
        let m = mapping_from(&home, &iface, &none, 4, 1, Replication::Global, 2);
        assert_eq!(model.cycles_per_packet(&m, 4), 400.0);
        let (h, r) = anneal(
            &model,
            &home,
            &none,
            &iface,
            4,
            1,
            Replication::Global,
            2,
            &AnnealConfig::default(),
        );
        let a = mapping_from(&h, &iface, &r, 4, 1, Replication::Global, 2);
        // Replicating task 1 over the 4 PEs and spreading the others: well below.
        assert!(r[1], "{r:?}");
        let c = model.cycles_per_packet(&a, 4);
        assert!(c < 80.0, "{c}");
        assert!(c >= 20.0);
        // No replication allowed: annealing only moves homes; task 1's 400 cycles stay.
        let (_, r) = anneal(
            &model,
            &home,
            &none,
            &iface,
            4,
            1,
            Replication::None,
            2,
            &AnnealConfig::default(),
        );
        assert_eq!(r, none);
    }

    #[test]
    fn scopes_place_replicas_as_documented() {
        let iface = [true, false, false];
        let assign = [0, 3, 5];
        let m = mapping_from(
            &assign,
            &iface,
            &[true, true, false],
            8,
            2,
            Replication::Subset,
            3,
        );
        assert_eq!(m.tasks[0].pes, vec![0]);
        assert_eq!(m.tasks[1].pes, vec![2, 3, 4]);
        assert_eq!(m.tasks[2], TaskMap::new(vec![5], 1));
        let g = mapping_from(
            &assign,
            &iface,
            &[true, true, true],
            8,
            2,
            Replication::Global,
            3,
        );
        assert_eq!(g.tasks[2].pes, (0..8).collect::<Vec<_>>());
        assert_eq!(g.tasks[0].pes, vec![0]);
        let p = mapping_from(
            &assign,
            &iface,
            &[true, true, true],
            8,
            2,
            Replication::Pe,
            3,
        );
        assert_eq!(p.tasks[1], TaskMap::new(vec![3], u32::MAX));
        let n = mapping_from(
            &assign,
            &iface,
            &[true, true, true],
            8,
            2,
            Replication::None,
            3,
        );
        assert!(n.tasks.iter().all(|t| t.max_concurrent == 1));
        assert_eq!(MapperKind::parse("anneal").unwrap(), MapperKind::Anneal);
        assert!(MapperKind::parse("best")
            .unwrap_err()
            .contains("greedy+replicate"));
    }
}
