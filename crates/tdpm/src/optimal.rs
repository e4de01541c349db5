//! The exact optimum under the cost model (seed 001, `001_50c9ec885c831f52.txt`, section 4.3:
//! "an optimal algorithm compares throughput for all of the grouping and duplication
//! possibilities and derives the partitioning and mapping configuration with the best
//! throughput"), by exhaustive search with pruning, for small graphs.
//!
//! Search space: every partition of the PPFs into tasks; every choice of the tasks that run on
//! the XScale (tasks over the control store must) such that the ME tasks form an acyclic
//! pipeline (paths through XScale tasks do not count, as in the heuristic); every
//! number of MEs D_t ≥ 1 for the other tasks with Σ D_t ≤ n. A mapping with c pipeline copies
//! and duplication d_t is the point D_t = c × d_t of this space, so the optimum is at least
//! what any mapper returns.
//!
//! Engines for a fixed task set are allocated exactly: when no lock is shared by two tasks,
//! each task's rate γ D hz / W_t(D) depends on its own D only, and the best minimum is the
//! largest candidate value v = rate_t(D) for which Σ_t min{D : rate_t(D) ≥ v} ≤ n; otherwise
//! every D vector is enumerated.
//!
//! Branch and bound: the partition is built one PPF at a time (heaviest first, restricted
//! growth strings), and a partial partition is extended only when a relaxation says some
//! completion might beat the best mapping found so far (`Search::can_beat`: each block needs
//! whole MEs for the work its decided PPFs fix, the fractional work of blocks and undecided PPFs
//! fits n MEs, the rest fits the XScale's budget). The incumbent is the best of the heuristic
//! mappers, `tdpm-refine` included; the result does not depend on it (tests compare with the
//! search that visits every partition). Within a partition, a choice of XScale tasks is skipped
//! when the XScale bound alone is not above the best. Limited to 14 PPFs (Bell(14) = 190
//! million partitions when nothing prunes); the three 12-13-PPF benchmark apps take
//! milliseconds (docs/tdpm.md).
use crate::cost::{Mapping, Model, StaticCost, Task};
use crate::error::TdpmError;
use crate::graph::End;
use crate::heuristic::{self, Options, Plan, Steps};

/// Size limits of the exhaustive search.
#[derive(Clone, Debug)]
pub struct Limits {
    pub max_ppfs: usize,
    /// Prune partial partitions by the bound of [`Search::can_beat`] (branch and bound); false
    /// visits every partition (the reference the pruned search is tested against).
    pub branch_and_bound: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_ppfs: 14,
            branch_and_bound: true,
        }
    }
}

struct Search<'a, 'g> {
    model: &'a Model<'g>,
    best_h: f64,
    best: Option<Mapping>,
    partitions: u64,
    pruned: u64,
    /// PPFs in the order they are given blocks (heaviest first) and each PPF's position in
    /// it.
    order: Vec<usize>,
    pos: Vec<usize>,
    /// Per PPF: ME and XScale work that no grouping removes (computation, memory, lock
    /// acquire/release, loads from rx), λ a cs summed over its locks, and the loads from rx.
    ppf_me: Vec<f64>,
    ppf_x: Vec<f64>,
    ppf_cs: Vec<f64>,
    bnb: bool,
    nodes: u64,
    /// The user interrupted the search (Ctrl-C).
    cancelled: bool,
}

pub fn optimal(model: &Model, limits: &Limits) -> Result<Plan, TdpmError> {
    let m = model.g.len();
    if m > limits.max_ppfs {
        return Err(TdpmError::Request(format!(
            "the exact optimum searches every partition: {m} PPFs is more than the limit of {} \
             (use a heuristic mapper)",
            limits.max_ppfs
        )));
    }
    // Incumbent: the best of the heuristics (prunes most partitions; the result does not
    // depend on it, see the branch-and-bound tests).
    let mut s = searcher(model, -1.0, limits.branch_and_bound);
    let incumbents: &[&str] = if limits.branch_and_bound {
        &["tdpm-refine", "tdpm", "tdpm-s", "res", "base"]
    } else {
        &["tdpm", "tdpm-s", "res", "base"]
    };
    for &name in incumbents {
        let p = crate::baselines::map(model, name, &Options::default())?;
        if p.eval.packets_per_second > s.best_h {
            s.best_h = p.eval.packets_per_second;
            s.best = Some(p.mapping);
        }
    }
    let mut label = vec![usize::MAX; m];
    s.partitions_rec(&mut label, 0, 0);
    if s.cancelled {
        return Err(TdpmError::Request(pktflow_model::cancel::MESSAGE.into()));
    }
    let mapping = s.best.take().expect("an incumbent exists");
    let eval = model.evaluate(&mapping)?;
    Ok(Plan {
        mapper: "optimal".into(),
        mapping,
        eval,
        critical: heuristic::critical_ppfs(model, &Options::default()),
        steps: Steps {
            candidates_pushed: s.partitions,
            rejected_throughput: s.pruned as u32,
            ..Default::default()
        },
    })
}

/// The search state for `model` with `best_h` as the rate to beat.
fn searcher<'a, 'g>(model: &'a Model<'g>, best_h: f64, bnb: bool) -> Search<'a, 'g> {
    let m = model.g.len();
    let g = model.g;
    let gamma = model.m.threads as f64;
    let rx_load: Vec<f64> = (0..m)
        .map(|i| {
            g.in_ch[i]
                .iter()
                .filter(|&&k| g.channels[k].from == End::Rx)
                .map(|&k| model.ch_load[k])
                .sum()
        })
        .collect();
    let ar_cs: Vec<(f64, f64)> = (0..m)
        .map(|i| {
            model.lock_uses[i]
                .iter()
                .fold((0.0, 0.0), |(ar, cs), &(_, a, c)| {
                    (
                        ar + a * (model.lock_acquire + model.lock_release),
                        cs + a * c,
                    )
                })
        })
        .collect();
    let ppf_me: Vec<f64> = (0..m)
        .map(|i| {
            model.comp_me[i]
                + model.mem[i]
                + ar_cs[i].0
                + ar_cs[i].1 * (gamma - 1.0) / 2.0
                + rx_load[i]
        })
        .collect();
    // Heaviest PPFs first: the decisions that decide the bottleneck are made near the root,
    // where a pruned branch removes most partitions.
    let mut order: Vec<usize> = (0..m).collect();
    order.sort_by(|&a, &b| ppf_me[b].total_cmp(&ppf_me[a]).then(a.cmp(&b)));
    let mut pos = vec![0; m];
    for (k, &i) in order.iter().enumerate() {
        pos[i] = k;
    }
    Search {
        model,
        best_h,
        best: None,
        partitions: 0,
        pruned: 0,
        ppf_me,
        ppf_x: (0..m)
            .map(|i| model.comp_x[i] + model.mem[i] + ar_cs[i].0 + rx_load[i])
            .collect(),
        ppf_cs: ar_cs.iter().map(|x| x.1).collect(),
        order,
        pos,
        bnb,
        nodes: 0,
        cancelled: false,
    }
}

impl Search<'_, '_> {
    /// Restricted growth strings over the PPFs in `order`: the d-th PPF gets a block at most
    /// 1 + the largest block so far. With branch and bound, a partial partition is extended
    /// only when [`Search::can_beat`] says some completion might beat the best found.
    fn partitions_rec(&mut self, label: &mut Vec<usize>, d: usize, blocks: usize) {
        if self.cancelled || (self.nodes & 0x3ff == 0 && pktflow_model::cancel::requested()) {
            self.cancelled = true;
            return;
        }
        let m = label.len();
        if d == m {
            self.partitions += 1;
            if self.bnb && !self.can_beat(label, d, blocks) {
                self.pruned += 1;
                return;
            }
            self.evaluate_partition(label, blocks);
            return;
        }
        let i = self.order[d];
        for b in 0..=blocks {
            label[i] = b;
            let nb = blocks.max(b + 1);
            self.nodes += 1;
            if self.bnb && d + 1 < m && !self.can_beat(label, d + 1, nb) {
                self.pruned += 1;
                continue;
            }
            self.partitions_rec(label, d + 1, nb);
        }
        label[i] = usize::MAX;
    }

    /// Whether some completion of the partial partition (the first `d` PPFs of `order` in
    /// `blocks` blocks, by `label`) might give a throughput above the best found. A relaxation
    /// that only grows as PPFs are added, evaluated at the target rate H just above the best:
    ///
    /// * each block's work counts what its decided PPFs fix: computation, memory, lock
    ///   acquire/release, the communication of channels whose two ends are decided (a channel to
    ///   an undecided PPF may still become a call), and on an ME at least γ threads contending
    ///   for its locks. On MEs the block needs at least the smallest D with
    ///   γ D hz ≥ H (A + B (γ D − 1) / 2) MEs (A: work, B: Σ λ a cs; the lock wait grows with
    ///   its own D), none when no D ≤ n or the block is over the control store; the blocks on
    ///   MEs need at most n of those whole MEs;
    /// * an undecided PPF adds at least its own work; the work of every block and undecided PPF
    ///   on MEs, as fractions H w / (γ hz) of an ME, is at most n (an undecided PPF may join a
    ///   block and fill its rounding, so it counts only here);
    /// * the XScale must stay within hz / H cycles per packet.
    ///
    /// The least XScale load over the choice of processors is bounded below by the fractional
    /// knapsack under each of the two ME constraints; the completion cannot beat the best when
    /// that load is over the XScale's budget.
    fn can_beat(&self, label: &[usize], d: usize, blocks: usize) -> bool {
        let model = self.model;
        let g = model.g;
        let mm = &model.m;
        let gamma = mm.threads as f64;
        let hz = mm.me_hz;
        let n = mm.engines;
        let h = self.best_h * (1.0 + 1e-9);
        if h <= 0.0 {
            return true;
        }
        let decided = |i: usize| self.pos[i] < d;
        let mut w_me = vec![0.0f64; blocks];
        let mut w_x = vec![0.0f64; blocks];
        let mut cs = vec![0.0f64; blocks];
        let mut code = vec![0u64; blocks];
        let mut writes = vec![false; blocks];
        for &i in &self.order[..d] {
            let b = label[i];
            w_me[b] += self.ppf_me[i];
            w_x[b] += self.ppf_x[i];
            cs[b] += self.ppf_cs[i];
            code[b] += g.ppfs[i].code_size as u64;
            writes[b] |= g.ppfs[i].writes_packet;
        }
        for (k, c) in g.channels.iter().enumerate() {
            let (add_b, add) = match (c.from, c.to) {
                (End::Ppf(i), End::Tx) if decided(i) && writes[label[i]] => {
                    (label[i], model.ch_store[k])
                }
                (End::Ppf(i), End::Ppf(j)) if decided(i) && decided(j) => {
                    let (a, b) = (label[i], label[j]);
                    if a == b {
                        continue;
                    }
                    w_me[b] += model.ch_load[k];
                    w_x[b] += model.ch_load[k];
                    if writes[a] {
                        (a, model.ch_store[k])
                    } else {
                        continue;
                    }
                }
                _ => continue, // loads from rx are in the PPFs' own work
            };
            w_me[add_b] += add;
            w_x[add_b] += add;
        }
        // Items: (ME units if on an ME, XScale cycles if on the XScale). `whole`: the blocks with
        // their whole MEs; `frac`: blocks and undecided PPFs with the fraction of an ME their
        // work takes at H (the total can exceed neither n).
        let mut whole: Vec<(f64, f64)> = Vec::with_capacity(blocks);
        let mut frac: Vec<(f64, f64)> = Vec::with_capacity(label.len());
        for b in 0..blocks {
            // w_me already holds cs (γ − 1) / 2; A excludes it.
            let a = w_me[b] - cs[b] * (gamma - 1.0) / 2.0;
            let bb = cs[b];
            let need = if code[b] > mm.control_store as u64 {
                None
            } else {
                (1..=n).find(|&dd| {
                    let dd = dd as f64;
                    gamma * dd * hz >= h * (a + bb * (gamma * dd - 1.0) / 2.0) * (1.0 - 1e-12)
                })
            };
            match need {
                Some(dd) => {
                    whole.push((dd as f64, w_x[b]));
                    frac.push((h * w_me[b] / (gamma * hz), w_x[b]));
                }
                None => {
                    whole.push((f64::INFINITY, w_x[b]));
                    frac.push((f64::INFINITY, w_x[b]));
                }
            }
        }
        for &i in &self.order[d..] {
            frac.push((h * self.ppf_me[i] / (gamma * hz), self.ppf_x[i]));
        }
        // Each constraint alone is a relaxation: the least XScale load under either bounds the
        // least under both.
        let x_load = least_xscale_load(whole, n as f64).max(least_xscale_load(frac, n as f64));
        // XScale bound hz / x_load must reach H.
        x_load * h <= hz * (1.0 + 1e-9)
    }

    fn evaluate_partition(&mut self, label: &[usize], p: usize) {
        let g = self.model.g;
        let mm = &self.model.m;
        // Task graph (edges between blocks), checked for cycles among the ME tasks of
        // every placement below.
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); p];
        for c in &g.channels {
            if let (End::Ppf(i), End::Ppf(j)) = (c.from, c.to) {
                if label[i] != label[j] {
                    succ[label[i]].push(label[j]);
                }
            }
        }
        let mut members: Vec<Vec<usize>> = vec![Vec::new(); p];
        for (i, &b) in label.iter().enumerate() {
            members[b].push(i);
        }
        let me: Vec<StaticCost> = members
            .iter()
            .map(|v| self.model.task_static(v, label, true))
            .collect();
        let xs: Vec<StaticCost> = members
            .iter()
            .map(|v| self.model.task_static(v, label, false))
            .collect();
        let gamma = mm.threads as f64;
        let n = mm.engines as f64;
        let w_me: Vec<f64> = me.iter().map(|s| s.comp + s.mem + s.comm).collect();
        let w_x: Vec<f64> = xs.iter().map(|s| s.comp + s.mem + s.comm).collect();
        // Upper bound without synchronization: H × Σ_M W/(γ n hz) ≤ 1 and H × Σ_X Wx/hz ≤ 1.
        let denom: f64 = (0..p)
            .map(|t| {
                let on_me = if me[t].code_size <= mm.control_store as u64 {
                    w_me[t] / (gamma * n)
                } else {
                    f64::INFINITY
                };
                on_me.min(w_x[t])
            })
            .sum();
        let bound = if denom > 0.0 {
            2.0 * mm.me_hz / denom
        } else {
            f64::INFINITY
        };
        if bound <= self.best_h {
            self.pruned += 1;
            return;
        }
        let must_x: Vec<bool> = me
            .iter()
            .map(|s| s.code_size > mm.control_store as u64)
            .collect();
        let tasks_base: Vec<Task> = members
            .iter()
            .map(|v| Task {
                ppfs: v.clone(),
                dup: 0,
            })
            .collect();
        let shared_lock = self.locks_shared(&members);
        for mask in 0u32..(1u32 << p) {
            // bit set = on the XScale
            if (0..p).any(|t| must_x[t] && mask & (1 << t) == 0) {
                continue;
            }
            let on_me: Vec<usize> = (0..p).filter(|&t| mask & (1 << t) == 0).collect();
            if on_me.len() > mm.engines as usize || !me_acyclic(&succ, mask) {
                continue;
            }
            let x_w: f64 = (0..p)
                .filter(|&t| mask & (1 << t) != 0)
                .map(|t| w_x[t])
                .sum();
            let x_bound = if mask == 0 || x_w <= 0.0 {
                f64::INFINITY
            } else {
                mm.me_hz / x_w
            };
            if x_bound <= self.best_h {
                continue;
            }
            let alloc = if shared_lock {
                self.enumerate_alloc(&tasks_base, &on_me, mask, &me, &xs)
            } else {
                self.maxmin_alloc(&tasks_base, &on_me, &me)
            };
            let Some(d) = alloc else { continue };
            let mut tasks = tasks_base.clone();
            for (k, &t) in on_me.iter().enumerate() {
                tasks[t].dup = d[k];
            }
            let h = self.h_of(&tasks, &me, &xs);
            if h > self.best_h * (1.0 + 1e-12) {
                self.best_h = h;
                self.best = Some(normalize(tasks));
            }
        }
    }

    fn locks_shared(&self, members: &[Vec<usize>]) -> bool {
        let mut owner: Vec<Option<usize>> = vec![None; self.model.lock_names.len()];
        for (t, v) in members.iter().enumerate() {
            for &i in v {
                for &(l, _, _) in &self.model.lock_uses[i] {
                    match owner[l] {
                        None => owner[l] = Some(t),
                        Some(o) if o != t => return true,
                        _ => {}
                    }
                }
            }
        }
        false
    }

    /// H of tasks with dup = MEs (copies 1), same arithmetic as `Model::evaluate`.
    fn h_of(&self, tasks: &[Task], me: &[StaticCost], xs: &[StaticCost]) -> f64 {
        let mm = &self.model.m;
        let engines: Vec<u32> = tasks.iter().map(|t| t.dup).collect();
        let sync = self.model.sync_costs(tasks, &engines);
        let mut h = f64::INFINITY;
        let mut x = 0.0;
        let mut any_x = false;
        for (t, task) in tasks.iter().enumerate() {
            if task.dup > 0 {
                let w = me[t].comp + me[t].mem + me[t].comm + sync[t];
                if w > 0.0 {
                    h = h.min(mm.threads as f64 * task.dup as f64 / w * mm.me_hz);
                }
            } else {
                any_x = true;
                x += xs[t].comp + xs[t].mem + xs[t].comm + sync[t];
            }
        }
        if any_x && x > 0.0 {
            h = h.min(mm.me_hz / x);
        }
        if h.is_finite() {
            h
        } else {
            0.0
        }
    }

    /// Exact max-min allocation when each task's rate depends on its own MEs only.
    fn maxmin_alloc(&self, base: &[Task], on_me: &[usize], me: &[StaticCost]) -> Option<Vec<u32>> {
        if on_me.is_empty() {
            return Some(vec![]);
        }
        let mm = &self.model.m;
        let n = mm.engines;
        let k = on_me.len() as u32;
        let max_d = n - (k - 1);
        // rate[t][D-1]
        let rates: Vec<Vec<f64>> = on_me
            .iter()
            .map(|&t| {
                (1..=max_d)
                    .map(|d| {
                        let task = [Task {
                            ppfs: base[t].ppfs.clone(),
                            dup: d,
                        }];
                        let s = self.model.sync_costs(&task, &[d])[0];
                        let w = me[t].comp + me[t].mem + me[t].comm + s;
                        if w > 0.0 {
                            mm.threads as f64 * d as f64 / w
                        } else {
                            f64::INFINITY
                        }
                    })
                    .collect()
            })
            .collect();
        let need = |v: f64| -> Option<Vec<u32>> {
            let mut total = 0u32;
            let mut d = Vec::with_capacity(rates.len());
            for r in &rates {
                let x = r.iter().position(|&y| y >= v)? as u32 + 1;
                total += x;
                d.push(x);
            }
            (total <= n).then_some(d)
        };
        let mut cands: Vec<f64> = rates.iter().flatten().copied().collect();
        cands.sort_by(|a, b| b.total_cmp(a));
        cands.dedup();
        // Feasibility is monotone in v: binary search for the largest feasible candidate.
        let (mut lo, mut hi) = (0usize, cands.len());
        // invariant: cands[..lo] infeasible, cands[hi..] feasible
        while lo < hi {
            let mid = (lo + hi) / 2;
            if need(cands[mid]).is_some() {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        let mut d = need(*cands.get(lo)?)?;
        // Spare MEs: give them to the slowest task while that raises its rate.
        let mut used: u32 = d.iter().sum();
        while used < n {
            let (i, _) = d
                .iter()
                .enumerate()
                .map(|(i, &x)| (i, rates[i][x as usize - 1]))
                .min_by(|a, b| a.1.total_cmp(&b.1))?;
            if (d[i] as usize) < rates[i].len()
                && rates[i][d[i] as usize] > rates[i][d[i] as usize - 1]
            {
                d[i] += 1;
                used += 1;
            } else {
                break;
            }
        }
        Some(d)
    }

    /// All D vectors (Σ ≤ n, each ≥ 1), for tasks sharing a lock.
    fn enumerate_alloc(
        &self,
        base: &[Task],
        on_me: &[usize],
        _mask: u32,
        me: &[StaticCost],
        xs: &[StaticCost],
    ) -> Option<Vec<u32>> {
        let n = self.model.m.engines;
        let mut best: Option<(f64, Vec<u32>)> = None;
        let mut d = vec![1u32; on_me.len()];
        if on_me.len() as u32 > n {
            return None;
        }
        let mut tasks = base.to_vec();
        #[allow(clippy::too_many_arguments)]
        fn rec(
            s: &Search,
            k: usize,
            left: u32,
            d: &mut Vec<u32>,
            on_me: &[usize],
            tasks: &mut Vec<Task>,
            me: &[StaticCost],
            xs: &[StaticCost],
            best: &mut Option<(f64, Vec<u32>)>,
        ) {
            if k == d.len() {
                for (i, &t) in on_me.iter().enumerate() {
                    tasks[t].dup = d[i];
                }
                let h = s.h_of(tasks, me, xs);
                if best.as_ref().is_none_or(|b| h > b.0) {
                    *best = Some((h, d.clone()));
                }
                return;
            }
            let rest = (d.len() - k - 1) as u32;
            for x in 1..=left.saturating_sub(rest) {
                d[k] = x;
                rec(s, k + 1, left - x, d, on_me, tasks, me, xs, best);
            }
        }
        rec(self, 0, n, &mut d, on_me, &mut tasks, me, xs, &mut best);
        best.map(|b| b.1)
    }
}

/// Least XScale load when items (ME units if on an ME, XScale cycles if on the XScale) are
/// split between the MEs (at most `cap` units) and the XScale, items divisible (fractional
/// knapsack: to the MEs by XScale cycles saved per unit): a lower bound for whole items.
fn least_xscale_load(mut items: Vec<(f64, f64)>, cap: f64) -> f64 {
    let mut x_load: f64 = items.iter().map(|it| it.1).sum();
    items.retain(|it| it.0.is_finite() && it.1 > 0.0);
    items.sort_by(|p, q| (q.1 * p.0).total_cmp(&(p.1 * q.0)));
    let mut left = cap;
    for (units, x) in items {
        if units <= left {
            left -= units;
            x_load -= x;
        } else {
            x_load -= x * (left / units);
            break;
        }
    }
    x_load.max(0.0)
}

/// Whether the tasks on the MEs (bits clear in `mask`) form an acyclic graph (the pipeline);
/// paths through XScale tasks do not count, as in the heuristic's cycle check.
fn me_acyclic(succ: &[Vec<usize>], mask: u32) -> bool {
    let p = succ.len();
    let on = |t: usize| mask & (1 << t) == 0;
    let mut indeg = vec![0usize; p];
    for (t, s) in succ.iter().enumerate() {
        if on(t) {
            for &u in s {
                if on(u) {
                    indeg[u] += 1;
                }
            }
        }
    }
    let mut q: Vec<usize> = (0..p).filter(|&t| on(t) && indeg[t] == 0).collect();
    let mut seen = 0;
    while let Some(t) = q.pop() {
        seen += 1;
        for &u in &succ[t] {
            if on(u) {
                indeg[u] -= 1;
                if indeg[u] == 0 {
                    q.push(u);
                }
            }
        }
    }
    seen == (0..p).filter(|&t| on(t)).count()
}

/// Mapping with copies: divide the MEs of every ME task by their common factor.
fn normalize(mut tasks: Vec<Task>) -> Mapping {
    fn gcd(a: u32, b: u32) -> u32 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let g = tasks
        .iter()
        .filter(|t| t.dup > 0)
        .fold(0, |a, t| gcd(a, t.dup));
    let copies = g.max(1);
    if g > 1 {
        for t in &mut tasks {
            t.dup /= g;
        }
    }
    tasks.sort_by_key(|t| t.ppfs[0]);
    Mapping { tasks, copies }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::Machine;
    use crate::gen;

    #[test]
    fn optimum_is_at_least_every_mapper_and_matches_brute_force_on_tiny_graphs() {
        for seed in 0..12 {
            let g = gen::generate(&gen::GenParams::small(5, seed));
            for n in [1, 2, 4, 6] {
                let model = Model::new(&g, Machine::ixp2400(n).unwrap()).unwrap();
                let opt = optimal(&model, &Limits::default()).unwrap();
                for name in ["tdpm", "tdpm-s", "comm", "res", "base"] {
                    let p = crate::baselines::map(&model, name, &Options::default()).unwrap();
                    assert!(
                        opt.eval.packets_per_second >= p.eval.packets_per_second * (1.0 - 1e-9),
                        "seed {seed} n {n}: {name} {} > optimum {}",
                        p.eval.packets_per_second,
                        opt.eval.packets_per_second
                    );
                }
            }
        }
    }

    #[test]
    fn refuses_large_graphs() {
        let g = gen::generate(&gen::GenParams::small(15, 0));
        let model = Model::new(&g, Machine::ixp2400(6).unwrap()).unwrap();
        let e = optimal(&model, &Limits::default()).unwrap_err();
        assert!(e.to_string().contains("more than the limit of 14"), "{e}");
    }

    #[test]
    fn branch_and_bound_finds_what_visiting_every_partition_finds() {
        let every = Limits {
            branch_and_bound: false,
            ..Limits::default()
        };
        let mut pruned = 0;
        for make in [
            gen::GenParams::small as fn(usize, u64) -> gen::GenParams,
            gen::GenParams::element_like,
        ] {
            for m in [3, 5, 7] {
                for seed in 0..6 {
                    let g = gen::generate(&make(m, seed));
                    for n in [1, 2, 4, 6] {
                        let model = Model::new(&g, Machine::ixp2400(n).unwrap()).unwrap();
                        let a = optimal(&model, &Limits::default()).unwrap();
                        let b = optimal(&model, &every).unwrap();
                        let (ha, hb) = (a.eval.packets_per_second, b.eval.packets_per_second);
                        assert!(
                            (ha - hb).abs() <= 1e-9 * hb,
                            "m {m} seed {seed} n {n}: {ha} vs {hb}"
                        );
                        // Fewer leaves evaluated.
                        assert!(a.steps.candidates_pushed <= b.steps.candidates_pushed);
                        pruned += u64::from(a.steps.candidates_pushed < b.steps.candidates_pushed);
                    }
                }
            }
        }
        assert!(pruned > 50, "the bound pruned in only {pruned} instances");
    }

    #[test]
    fn the_bound_never_cuts_a_better_completion() {
        // With the incumbent set just below a known mapping's rate, the search must not prune
        // the partial partitions leading to that mapping.
        for seed in 0..10 {
            let g = gen::generate(&gen::GenParams::small(6, seed));
            for n in [1, 3, 6] {
                let model = Model::new(&g, Machine::ixp2400(n).unwrap()).unwrap();
                let opt = optimal(&model, &Limits::default()).unwrap();
                let mut label = [0usize; 6];
                for (t, task) in opt.mapping.tasks.iter().enumerate() {
                    for &i in &task.ppfs {
                        label[i] = t;
                    }
                }
                let s = searcher(&model, opt.eval.packets_per_second * (1.0 - 1e-6), true);
                // Relabel in the search order (restricted growth) and check every prefix.
                let mut map = vec![usize::MAX; opt.mapping.tasks.len()];
                let mut lab = vec![usize::MAX; 6];
                let mut blocks = 0;
                for d in 0..6 {
                    let i = s.order[d];
                    if map[label[i]] == usize::MAX {
                        map[label[i]] = blocks;
                        blocks += 1;
                    }
                    lab[i] = map[label[i]];
                    assert!(
                        s.can_beat(&lab, d + 1, blocks),
                        "seed {seed} n {n}: prefix {d} of the optimum pruned"
                    );
                }
            }
        }
    }
}
