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
//! every D vector is enumerated. Pruning: a partition is skipped when an upper bound on its
//! throughput (no synchronization; each task either on the MEs or the XScale) is not above the
//! best found, and a choice of XScale tasks when the XScale bound alone is not.
use crate::cost::{Mapping, Model, StaticCost, Task};
use crate::error::TdpmError;
use crate::graph::End;
use crate::heuristic::{self, Options, Plan, Steps};

/// Size limits of the exhaustive search.
#[derive(Clone, Debug)]
pub struct Limits {
    pub max_ppfs: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_ppfs: 10 }
    }
}

struct Search<'a, 'g> {
    model: &'a Model<'g>,
    best_h: f64,
    best: Option<Mapping>,
    partitions: u64,
    pruned: u64,
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
    // Incumbent: the best of the heuristics (prunes most partitions).
    let mut s = Search {
        model,
        best_h: -1.0,
        best: None,
        partitions: 0,
        pruned: 0,
    };
    for name in ["tdpm", "tdpm-s", "res", "base"] {
        let p = crate::baselines::map(model, name, &Options::default())?;
        if p.eval.packets_per_second > s.best_h {
            s.best_h = p.eval.packets_per_second;
            s.best = Some(p.mapping);
        }
    }
    let mut label = vec![0usize; m];
    s.partitions_rec(&mut label, 0, 0);
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

impl Search<'_, '_> {
    /// Restricted growth strings: label[i] ≤ 1 + max(label[..i]).
    fn partitions_rec(&mut self, label: &mut Vec<usize>, i: usize, blocks: usize) {
        let m = label.len();
        if i == m {
            self.partitions += 1;
            self.evaluate_partition(label, blocks);
            return;
        }
        for b in 0..=blocks {
            label[i] = b;
            self.partitions_rec(label, i + 1, blocks.max(b + 1));
        }
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
                if best.as_ref().map_or(true, |b| h > b.0) {
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
        let g = gen::generate(&gen::GenParams::small(12, 0));
        let model = Model::new(&g, Machine::ixp2400(6).unwrap()).unwrap();
        let e = optimal(&model, &Limits::default()).unwrap_err();
        assert!(e.to_string().contains("more than the limit of 10"), "{e}");
    }
}
