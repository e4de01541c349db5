//! The partitioning and mapping coordinator of seed 001 (`001_50c9ec885c831f52.txt`) section
//! 4.4, Figure 4: identify the critical path from the profile; one task per PPF; then repeat
//! Choose Action (grouping, unless "task stages are imbalanced and there are available MEs for
//! duplication"), Choose Best Candidate (grouping: the candidate list "prioritized by the
//! reduced communication cost", built once and updated incrementally; duplication: "the task
//! with the largest utilization factor"), the two checks (control store and no recursion or
//! cycle; the cost model says throughput improves) with rollback, and Update Tasks; finally map
//! critical tasks to MEs in descending order of utilization and non-critical tasks to the
//! XScale core.
//!
//! Duplication: every evaluation of a task list (the throughput check, and the final
//! assignment) gives each ME task one ME in descending order of utilization, then hands each
//! free ME to "the task with the largest utilization factor" while that raises its rate — the
//! duplication action of Figure 4 run to completion, which section 4.3 notes is the optimal
//! mapping of a fixed task list ("Each processor is assigned to the slowest task"). A grouping is
//! therefore checked against the best use of the MEs it frees or costs, which is how "we favor
//! grouping except when task stages are imbalanced and there are available MEs for
//! duplication" is decided: a grouping that would lower the duplicated pipeline's throughput
//! fails check 2 and is rolled back.
//!
//! The same machinery, with the throughput check switched off and no critical-path
//! differentiation, is the COMM baseline's greedy grouping (section 5).
use crate::cost::{Eval, Mapping, Model, StaticCost, Task};
use crate::error::TdpmError;
use crate::graph::End;
use serde::Serialize;
use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap};

/// Parameters of the heuristic (the paper names them but gives no values; see docs/tdpm.md).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Options {
    /// A PPF is critical when its packet rate λ_i is at least this fraction of the largest
    /// PPF rate (the critical path is what most packets traverse).
    pub critical_threshold: f64,
    /// false: every PPF is critical (TDPM-S of section 5).
    pub differentiate_critical: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            critical_threshold: 0.1,
            differentiate_critical: true,
        }
    }
}

/// What the coordinator did (for reports and the complexity measurements).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Steps {
    pub groupings: u32,
    pub duplications: u32,
    /// Actions that failed a check and were rolled back.
    pub rejected_control_store: u32,
    pub rejected_cycle: u32,
    pub rejected_throughput: u32,
    /// Candidate-list entries pushed (initial + incremental updates).
    pub candidates_pushed: u64,
    /// The refinement after Figure 4 (`tdpm-refine` only).
    pub refine: Option<crate::refine::RefineSteps>,
}

/// Critical PPFs (the critical path of section 4.4, from the profile). A PPF is a candidate for
/// the XScale when its rate λ_i is below `threshold` × max_j λ_j (off the path most packets
/// take); candidates are taken, lightest XScale work first, while the XScale running them all
/// stays at least as fast as the MEs could be with everything else (n γ / Σ W over the other
/// PPFs, one task each): a low-rate PPF that would make the single-threaded XScale the
/// bottleneck stays critical. All PPFs are critical when not differentiating (TDPM-S).
pub fn critical_ppfs(model: &Model, opts: &Options) -> Vec<bool> {
    let g = model.g;
    if !opts.differentiate_critical {
        return vec![true; g.len()];
    }
    let max = g.ppfs.iter().map(|p| p.rate).fold(0.0, f64::max);
    let ident: Vec<usize> = (0..g.len()).collect();
    let single: Vec<(f64, f64)> = (0..g.len())
        .map(|i| {
            let me = model.task_static(&[i], &ident, true);
            let x = model.task_static(&[i], &ident, false);
            (
                me.comp + me.mem + me.comm + me.lock_ar,
                x.comp + x.mem + x.comm + x.lock_ar,
            )
        })
        .collect();
    let mut crit = vec![true; g.len()];
    let mut cand: Vec<usize> = (0..g.len())
        .filter(|&i| !(max > 0.0 && g.ppfs[i].rate >= opts.critical_threshold * max))
        .collect();
    cand.sort_by(|&a, &b| single[a].1.total_cmp(&single[b].1).then(a.cmp(&b)));
    let m = &model.m;
    let mut me_rest: f64 = single.iter().map(|s| s.0).sum();
    let mut x = 0.0;
    for i in cand {
        let (x2, rest2) = (x + single[i].1, me_rest - single[i].0);
        let x_bound = if x2 > 0.0 {
            m.me_hz / x2
        } else {
            f64::INFINITY
        };
        let me_bound = if rest2 > 0.0 {
            m.engines as f64 * m.threads as f64 * m.me_hz / rest2
        } else {
            f64::INFINITY
        };
        if x_bound < me_bound {
            break;
        }
        crit[i] = false;
        x = x2;
        me_rest = rest2;
    }
    crit
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Cand {
    gain: f64,
    a: usize,
    b: usize,
    va: u32,
    vb: u32,
}
impl Eq for Cand {}
impl PartialOrd for Cand {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Cand {
    fn cmp(&self, o: &Self) -> Ordering {
        self.gain
            .total_cmp(&o.gain)
            // Deterministic tie-break: lower task ids first.
            .then_with(|| o.a.cmp(&self.a))
            .then_with(|| o.b.cmp(&self.b))
    }
}

/// The coordinator's task list.
#[derive(Clone)]
pub(crate) struct State<'m, 'g> {
    pub model: &'m Model<'g>,
    pub task_of: Vec<usize>,
    pub members: Vec<Vec<usize>>,
    pub alive: Vec<bool>,
    pub dup: Vec<u32>,
    pub crit: Vec<bool>,
    pub st: Vec<StaticCost>,
    pub comp_x: Vec<f64>,
    version: Vec<u32>,
    stamp: Vec<u32>,
    stamp_now: u32,
}

impl<'m, 'g> State<'m, 'g> {
    pub fn singletons(model: &'m Model<'g>, crit: Vec<bool>) -> Self {
        let n = model.g.len();
        let task_of: Vec<usize> = (0..n).collect();
        let members: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
        let st = (0..n)
            .map(|i| model.task_static(&members[i], &task_of, true))
            .collect();
        State {
            model,
            task_of,
            comp_x: model.comp_x.clone(),
            members,
            alive: vec![true; n],
            dup: vec![1; n],
            crit,
            st,
            version: vec![0; n],
            stamp: vec![0; n],
            stamp_now: 0,
        }
    }

    pub fn fits(&self, t: usize) -> bool {
        self.st[t].code_size <= self.model.m.control_store as u64
    }

    /// Candidate entries for task `t` and each critical neighbour.
    fn push_candidates(&self, t: usize, heap: &mut BinaryHeap<Cand>, steps: &mut Steps) {
        let g = self.model.g;
        let mut gains: HashMap<usize, f64> = HashMap::new();
        let wt = self.st[t].writes_packet;
        for &i in &self.members[t] {
            for &k in &g.out_ch[i] {
                if let End::Ppf(j) = g.channels[k].to {
                    let u = self.task_of[j];
                    if u != t && self.crit[u] {
                        *gains.entry(u).or_default() += self.model.channel_comm(k, wt);
                    }
                }
            }
            for &k in &g.in_ch[i] {
                if let End::Ppf(j) = g.channels[k].from {
                    let u = self.task_of[j];
                    if u != t && self.crit[u] {
                        let wu = self.st[u].writes_packet;
                        *gains.entry(u).or_default() += self.model.channel_comm(k, wu);
                    }
                }
            }
        }
        let mut v: Vec<(usize, f64)> = gains.into_iter().collect();
        v.sort_by_key(|&(u, _)| u);
        for (u, gain) in v {
            let (a, b) = (t.min(u), t.max(u));
            heap.push(Cand {
                gain,
                a,
                b,
                va: self.version[a],
                vb: self.version[b],
            });
            steps.candidates_pushed += 1;
        }
    }

    /// The candidate list at initialization: every pair of critical tasks joined by a channel,
    /// with the communication cost the grouping removes (each pair once).
    fn init_candidates(&self, heap: &mut BinaryHeap<Cand>, steps: &mut Steps) {
        let g = self.model.g;
        let mut gains: HashMap<(usize, usize), f64> = HashMap::new();
        for (k, c) in g.channels.iter().enumerate() {
            if let (End::Ppf(i), End::Ppf(j)) = (c.from, c.to) {
                let (a, b) = (self.task_of[i], self.task_of[j]);
                if a != b && self.crit[a] && self.crit[b] {
                    *gains.entry((a.min(b), a.max(b))).or_default() +=
                        self.model.channel_comm(k, self.st[a].writes_packet);
                }
            }
        }
        let mut v: Vec<((usize, usize), f64)> = gains.into_iter().collect();
        v.sort_by_key(|&(p, _)| p);
        for ((a, b), gain) in v {
            heap.push(Cand {
                gain,
                a,
                b,
                va: self.version[a],
                vb: self.version[b],
            });
            steps.candidates_pushed += 1;
        }
    }

    /// Whether merging `a` and `b` closes a cycle: a path between them through a third
    /// critical task. Paths through non-critical tasks do not count: those run on the XScale,
    /// off the ME pipeline (a packet may leave an ME task for the XScale and come back). The
    /// PPF graph is acyclic, so a task never calls itself (no recursion inside a task).
    fn merge_makes_cycle(&mut self, a: usize, b: usize) -> bool {
        self.reaches_via_other(a, b) || self.reaches_via_other(b, a)
    }

    fn reaches_via_other(&mut self, from: usize, to: usize) -> bool {
        let g = self.model.g;
        self.stamp_now += 1;
        let now = self.stamp_now;
        let mut stack: Vec<usize> = Vec::new();
        for &i in &self.members[from] {
            for &k in &g.out_ch[i] {
                if let End::Ppf(j) = g.channels[k].to {
                    let u = self.task_of[j];
                    if u != from && u != to && self.crit[u] && self.stamp[u] != now {
                        self.stamp[u] = now;
                        stack.push(u);
                    }
                }
            }
        }
        while let Some(t) = stack.pop() {
            for &i in &self.members[t] {
                for &k in &g.out_ch[i] {
                    if let End::Ppf(j) = g.channels[k].to {
                        let u = self.task_of[j];
                        if u == to {
                            return true;
                        }
                        if u != t && self.crit[u] && self.stamp[u] != now {
                            self.stamp[u] = now;
                            stack.push(u);
                        }
                    }
                }
            }
        }
        false
    }

    /// Merge `b` into `a` (the larger member list survives); returns the surviving id and
    /// what is needed to roll back.
    fn merge(&mut self, a: usize, b: usize) -> (usize, Undo) {
        let (keep, gone) = if self.members[a].len() >= self.members[b].len() {
            (a, b)
        } else {
            (b, a)
        };
        let undo = Undo {
            keep,
            gone,
            keep_len: self.members[keep].len(),
            keep_st: self.st[keep].clone(),
            keep_cx: self.comp_x[keep],
            keep_dup: self.dup[keep],
        };
        let moved = std::mem::take(&mut self.members[gone]);
        for &i in &moved {
            self.task_of[i] = keep;
        }
        self.members[keep].extend_from_slice(&moved);
        self.alive[gone] = false;
        self.comp_x[keep] += self.comp_x[gone];
        self.dup[keep] = self.dup[keep].max(self.dup[gone]);
        self.st[keep] = self
            .model
            .task_static(&self.members[keep], &self.task_of, true);
        (keep, undo)
    }

    fn rollback(&mut self, u: Undo) {
        let moved: Vec<usize> = self.members[u.keep].split_off(u.keep_len);
        for &i in &moved {
            self.task_of[i] = u.gone;
        }
        self.members[u.gone] = moved;
        self.alive[u.gone] = true;
        self.st[u.keep] = u.keep_st;
        self.comp_x[u.keep] = u.keep_cx;
        self.dup[u.keep] = u.keep_dup;
    }

    fn commit(&mut self, keep: usize, gone: usize) {
        self.version[keep] += 1;
        self.version[gone] += 1;
    }

    /// Work of task `t` per input packet on `d` MEs when only its own threads use its locks.
    fn work_on(&self, t: usize, d: u32) -> f64 {
        let s = &self.st[t];
        let threads = (self.model.m.threads * d) as f64;
        s.comp + s.mem + s.comm + s.lock_ar + s.lock_cs * (threads - 1.0).max(0.0) / 2.0
    }

    /// Work of task `t` per input packet on the XScale (single thread).
    fn work_x(&self, t: usize) -> f64 {
        let s = &self.st[t];
        self.comp_x[t] + s.mem + s.comm + s.lock_ar
    }

    /// MEs for the `k` heaviest of `me` (sorted by utilization, descending): one each, then
    /// each free ME to the task with the largest utilization per ME while that lowers it.
    /// Returns the MEs per task and the rate this gives (ME bound and XScale bound, each
    /// task's locks counted as its own).
    fn allocate(&self, me: &[usize], k: usize, x_rest: f64) -> (Vec<u32>, f64) {
        let m = &self.model.m;
        let n = m.engines;
        let mut on_me = vec![0u32; self.alive.len()];
        let mut heap: BinaryHeap<(OrdF64, std::cmp::Reverse<usize>)> = BinaryHeap::new();
        // Non-critical tasks on an ME are not duplicated (seed 001 section 4.4: "Grouping and
        // duplication for non-critical tasks is skipped").
        let mut floor = 0.0f64;
        for &t in &me[..k] {
            on_me[t] = 1;
            if self.crit[t] {
                heap.push((OrdF64(self.work_on(t, 1)), std::cmp::Reverse(t)));
            } else {
                floor = floor.max(self.work_on(t, 1));
            }
        }
        let mut used = k as u32;
        while used < n {
            let Some((OrdF64(per), std::cmp::Reverse(t))) = heap.pop() else {
                break;
            };
            let d = on_me[t] + 1;
            let per2 = self.work_on(t, d) / d as f64;
            if per2 >= per {
                heap.push((OrdF64(per), std::cmp::Reverse(t)));
                break; // the slowest task cannot get faster: the other MEs would idle
            }
            on_me[t] = d;
            used += 1;
            heap.push((OrdF64(per2), std::cmp::Reverse(t)));
        }
        let worst = heap.peek().map_or(0.0, |(OrdF64(w), _)| *w).max(floor);
        let me_h = if worst > 0.0 {
            m.threads as f64 / worst * m.me_hz
        } else {
            f64::INFINITY
        };
        let x: f64 = x_rest + me[k..].iter().map(|&t| self.work_x(t)).sum::<f64>();
        let x_h = if x > 0.0 { m.me_hz / x } else { f64::INFINITY };
        (on_me, me_h.min(x_h))
    }

    /// Final assignment (and the assignment every throughput check evaluates): tasks that fit
    /// the control store get one ME each while MEs remain, critical tasks first, each group in
    /// descending order of utilization (the rest run on the XScale); then each free ME goes to
    /// the critical ME task with the largest utilization per ME while that lowers it
    /// (duplication). The last ME tasks of that order move to the XScale, one at a time, while
    /// that frees MEs that raise the rate (so non-critical tasks normally end on the XScale). Returns
    /// the tasks with their d (0 = XScale) and the copies c (common factor of the d's).
    pub fn assignment(&self) -> (Vec<Task>, u32) {
        let (on_me, copies) = self.dups();
        let mut ids: Vec<usize> = (0..self.alive.len()).filter(|&t| self.alive[t]).collect();
        ids.sort_by_key(|&t| self.members[t].iter().min().copied());
        let tasks = ids
            .iter()
            .map(|&t| {
                let mut ppfs = self.members[t].clone();
                ppfs.sort_unstable();
                Task {
                    ppfs,
                    dup: on_me[t],
                }
            })
            .collect();
        (tasks, copies)
    }

    /// The d of every task slot (0 = XScale or dead) and the copies c of
    /// [`State::assignment`], without building the task list.
    pub fn dups(&self) -> (Vec<u32>, u32) {
        let n = self.model.m.engines;
        let ids: Vec<usize> = (0..self.alive.len()).filter(|&t| self.alive[t]).collect();
        // "tasks are sorted according to their computed utilization factors. We then map tasks
        // to MEs and the XScale core in a descending order": critical tasks first, then the
        // non-critical ones, each group by utilization.
        // (Keys computed once; the order is total, so the unstable sort is deterministic.)
        let mut keyed: Vec<(bool, f64, usize)> = ids
            .iter()
            .copied()
            .filter(|&t| self.fits(t))
            .map(|t| (self.crit[t], self.work_on(t, 1), t))
            .collect();
        keyed.sort_unstable_by(|x, y| y.0.cmp(&x.0).then(y.1.total_cmp(&x.1)).then(x.2.cmp(&y.2)));
        let me: Vec<usize> = keyed.into_iter().map(|k| k.2).collect();
        let x_rest: f64 = ids
            .iter()
            .filter(|&&t| !self.fits(t))
            .map(|&t| self.work_x(t))
            .sum();
        let k0 = me.len().min(n as usize);
        let (mut on_me, mut best) = self.allocate(&me, k0, x_rest);
        for k in (1..k0).rev() {
            let (o, h) = self.allocate(&me, k, x_rest);
            if h > best * (1.0 + 1e-12) {
                on_me = o;
                best = h;
            } else {
                break;
            }
        }
        // d_i with a common factor are copies of a smaller pipeline.
        let g = on_me
            .iter()
            .filter(|&&d| d > 0)
            .fold(0u32, |a, &d| gcd(a, d));
        let copies = g.max(1);
        if g > 1 {
            for d in on_me.iter_mut() {
                *d /= g;
            }
        }
        (on_me, copies)
    }

    /// H of the current task list under its final assignment, and the per-copy bottleneck
    /// (utilization per ME) among the ME tasks. Same arithmetic as `Model::evaluate`, without
    /// building the report.
    pub fn throughput(&self) -> (f64, f64) {
        let m = &self.model.m;
        let n = m.engines;
        let (tasks, copies) = self.assignment();
        let engines: Vec<u32> = tasks.iter().map(|t| t.dup * copies).collect();
        let sync = self.model.sync_costs(&tasks, &engines);
        let mut worst = 0.0f64;
        let mut any_me = false;
        let mut x = 0.0;
        let mut any_x = false;
        for (i, t) in tasks.iter().enumerate() {
            let id = self.task_of[t.ppfs[0]];
            let s = &self.st[id];
            if t.dup > 0 {
                any_me = true;
                worst = worst.max((s.comp + s.mem + s.comm + sync[i]) / t.dup as f64);
            } else {
                any_x = true;
                // XScale: computation at the XScale's speed; the task's channels as on an ME.
                let st_x = self.model.task_static(&t.ppfs, &self.task_of, false);
                x += st_x.comp + st_x.mem + st_x.comm + sync[i];
            }
        }
        let _ = n;
        let me_h = if any_me {
            if worst > 0.0 {
                m.threads as f64 / worst * copies as f64 * m.me_hz
            } else {
                f64::INFINITY
            }
        } else {
            f64::INFINITY
        };
        let x_h = if any_x {
            if x > 0.0 {
                m.me_hz / x
            } else {
                f64::INFINITY
            }
        } else {
            f64::INFINITY
        };
        let h = me_h.min(x_h);
        (if h.is_finite() { h } else { 0.0 }, worst)
    }

    pub fn mapping(&self) -> Mapping {
        let (tasks, copies) = self.assignment();
        Mapping { tasks, copies }
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct OrdF64(f64);
impl Eq for OrdF64 {}
impl PartialOrd for OrdF64 {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for OrdF64 {
    fn cmp(&self, o: &Self) -> Ordering {
        self.0.total_cmp(&o.0)
    }
}

fn gcd(a: u32, b: u32) -> u32 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

struct Undo {
    keep: usize,
    gone: usize,
    keep_len: usize,
    keep_st: StaticCost,
    keep_cx: f64,
    keep_dup: u32,
}

/// Result of a mapper.
#[derive(Clone, Debug, Serialize)]
pub struct Plan {
    pub mapper: String,
    pub mapping: Mapping,
    pub eval: Eval,
    pub critical: Vec<bool>,
    pub steps: Steps,
}

/// Greedy grouping by the candidate list: the COMM baseline when `check_throughput` is false
/// (control store and cycle checks only), the grouping half of TDPM otherwise.
pub(crate) fn run<'m, 'g>(
    model: &'m Model<'g>,
    crit: Vec<bool>,
    check_throughput: bool,
) -> (State<'m, 'g>, Steps) {
    let mut s = State::singletons(model, crit);
    let mut steps = Steps::default();
    let mut heap = BinaryHeap::new();
    s.init_candidates(&mut heap, &mut steps);
    let (mut h, _) = s.throughput();
    let mut deferred: Vec<Cand> = Vec::new();
    // Choose Best Candidate (grouping): the head of the candidate list.
    while let Some(c) = heap.pop() {
        if !valid(&s, &c) {
            continue; // a stale entry (one of its tasks changed since)
        }
        // Check 1: no cycle among the critical tasks, and the control store.
        if s.merge_makes_cycle(c.a, c.b) {
            steps.rejected_cycle += 1;
            continue;
        }
        let (keep, undo) = s.merge(c.a, c.b);
        let gone = if keep == c.a { c.b } else { c.a };
        if !s.fits(keep) {
            s.rollback(undo);
            steps.rejected_control_store += 1;
            continue;
        }
        // Check 2: the cost model says throughput does not drop (ties favour grouping: fewer
        // stages).
        if check_throughput {
            let (h2, _) = s.throughput();
            if h2 < h * (1.0 - 1e-12) {
                s.rollback(undo);
                steps.rejected_throughput += 1;
                // Examined again after the next committed grouping (the throughput it would
                // give depends on the other tasks).
                deferred.push(c);
                continue;
            }
            h = h2;
        }
        // Update Tasks: new version of the merged task, fresh candidate entries.
        s.commit(keep, gone);
        steps.groupings += 1;
        s.push_candidates(keep, &mut heap, &mut steps);
        heap.extend(deferred.drain(..).filter(|c| valid(&s, c)));
    }
    let (tasks, copies) = s.assignment();
    steps.duplications = tasks
        .iter()
        .filter(|t| t.dup > 0)
        .map(|t| t.dup * copies - 1)
        .sum();
    (s, steps)
}

fn valid(s: &State, c: &Cand) -> bool {
    s.alive[c.a] && s.alive[c.b] && s.version[c.a] == c.va && s.version[c.b] == c.vb
}

/// TDPM (differentiate_critical = true: TDPM-all; false: TDPM-S).
pub fn tdpm(model: &Model, opts: &Options) -> Result<Plan, TdpmError> {
    let crit = critical_ppfs(model, opts);
    let (s, steps) = run(model, crit.clone(), true);
    let mapping = s.mapping();
    let eval = model.evaluate(&mapping)?;
    Ok(Plan {
        mapper: if opts.differentiate_critical {
            "tdpm".into()
        } else {
            "tdpm-s".into()
        },
        mapping,
        eval,
        critical: crit,
        steps,
    })
}

/// TDPM-all followed by the refinement of `refine.rs` (`tdpm-refine`): the Figure 4 mapping,
/// then a local search (move, split, swap, merge; then iterated with random kicks) that keeps
/// only changes the cost model rates higher, within the evaluation budget. Never below the
/// Figure 4 mapping under the cost model.
pub fn tdpm_refine(
    model: &Model,
    opts: &Options,
    ropts: &crate::refine::RefineOptions,
) -> Result<Plan, TdpmError> {
    let crit = critical_ppfs(model, opts);
    let (mut s, mut steps) = run(model, crit.clone(), true);
    let paper = s.mapping();
    let paper_eval = model.evaluate(&paper)?;
    let budget = ropts.budget.unwrap_or_else(|| {
        crate::refine::default_budget(model.g.len(), model.g.channels.len(), model.m.engines)
    });
    let mut r = crate::refine::Refiner::new(&mut s, crit.clone(), budget, ropts.kicks);
    let start = r.score_unchecked();
    r.run(start);
    let rsteps = r.steps.clone();
    let refined = s.mapping();
    let refined_eval = model.evaluate(&refined)?;
    // The search only keeps improvements; this guards the result against rounding in the fast
    // evaluation (the returned mapping is never rated below Figure 4's by `Model::evaluate`).
    let (mapping, eval) = if refined_eval.packets_per_second >= paper_eval.packets_per_second {
        (refined, refined_eval)
    } else {
        (paper, paper_eval)
    };
    steps.refine = Some(rsteps);
    steps.duplications = mapping
        .tasks
        .iter()
        .filter(|t| t.dup > 0)
        .map(|t| t.dup * mapping.copies - 1)
        .sum();
    Ok(Plan {
        mapper: "tdpm-refine".into(),
        mapping,
        eval,
        critical: crit,
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::Machine;
    use crate::graph::tests::{ch, ppf};
    use crate::graph::PpfGraph;

    fn chain(instrs: &[f64], code: u32) -> PpfGraph {
        let ppfs: Vec<_> = instrs
            .iter()
            .enumerate()
            .map(|(i, &x)| {
                let mut p = ppf(&format!("p{i}"), 1.0, x, code);
                p.writes_packet = i % 2 == 0;
                p
            })
            .collect();
        let mut chans = vec![ch("rx", "p0", 1.0)];
        for i in 1..instrs.len() {
            chans.push(ch(&format!("p{}", i - 1), &format!("p{i}"), 1.0));
        }
        chans.push(ch(&format!("p{}", instrs.len() - 1), "tx", 1.0));
        PpfGraph::new("chain", ppfs, &chans, 64.0).unwrap()
    }

    #[test]
    fn groups_a_chain_into_one_task_when_it_fits() {
        let g = chain(&[100.0, 200.0, 150.0, 120.0], 500);
        let model = Model::new(&g, Machine::ixp2400(6).unwrap()).unwrap();
        let plan = tdpm(&model, &Options::default()).unwrap();
        assert_eq!(
            plan.mapping.copies, 6,
            "{:?} {:?}",
            plan.mapping, plan.steps
        );
        assert_eq!(plan.mapping.copies, 6);
        assert_eq!(plan.steps.groupings, 3);
        // Fast path and full evaluation agree.
        let s = State::singletons(&model, vec![true; 4]);
        let (h, _) = s.throughput();
        let e = model.evaluate(&s.mapping()).unwrap();
        assert!((h - e.packets_per_second).abs() <= 1e-9 * h);
    }

    #[test]
    fn control_store_stops_grouping_and_duplication_balances() {
        // Each PPF 3000 instructions of code: no two fit a 4096-instruction control store.
        let g = chain(&[1000.0, 100.0], 3000);
        let model = Model::new(&g, Machine::ixp2400(6).unwrap()).unwrap();
        let plan = tdpm(&model, &Options::default()).unwrap();
        assert_eq!(plan.mapping.tasks.len(), 2);
        assert!(plan.steps.rejected_control_store >= 1);
        // The heavy task gets more MEs than the light one.
        let e = &plan.eval;
        assert!(e.tasks[0].engines > e.tasks[1].engines, "{:?}", e.tasks);
        assert!(e.engines_used <= 6);
    }

    #[test]
    fn grouping_across_a_third_task_is_refused() {
        // a -> b -> c and a -> c: merging a and c around b would be a cycle.
        let mut ppfs = vec![
            ppf("a", 1.0, 10.0, 3000),
            ppf("b", 1.0, 10.0, 3000),
            ppf("c", 1.0, 10.0, 1000),
        ];
        ppfs[0].writes_packet = true;
        let g = PpfGraph::new(
            "tri",
            ppfs,
            &[
                ch("rx", "a", 1.0),
                ch("a", "b", 1.0),
                ch("b", "c", 1.0),
                ch("a", "c", 1.0),
                ch("c", "tx", 1.0),
            ],
            64.0,
        )
        .unwrap();
        let model = Model::new(&g, Machine::ixp2400(6).unwrap()).unwrap();
        let plan = tdpm(&model, &Options::default()).unwrap();
        assert!(plan.steps.rejected_cycle >= 1, "{:?}", plan.steps);
        for t in &plan.mapping.tasks {
            assert!(!(t.ppfs.contains(&0) && t.ppfs.contains(&2) && !t.ppfs.contains(&1)));
        }
    }

    #[test]
    fn non_critical_ppfs_go_to_the_xscale() {
        let ppfs = vec![ppf("main", 1.0, 200.0, 500), ppf("rare", 0.01, 300.0, 500)];
        let g = PpfGraph::new(
            "rare",
            ppfs,
            &[
                ch("rx", "main", 1.0),
                ch("main", "rare", 0.01),
                ch("main", "tx", 0.99),
                ch("rare", "tx", 0.01),
            ],
            64.0,
        )
        .unwrap();
        // With 6 MEs, 1% of the packets through 300 instructions would make the XScale the
        // bottleneck (it stays critical); with 1 ME the XScale can take it.
        let model6 = Model::new(&g, Machine::ixp2400(6).unwrap()).unwrap();
        assert_eq!(
            critical_ppfs(&model6, &Options::default()),
            vec![true, true]
        );
        let model = Model::new(&g, Machine::ixp2400(1).unwrap()).unwrap();
        let all = tdpm(&model, &Options::default()).unwrap();
        assert_eq!(all.critical, vec![true, false]);
        let rare = all
            .mapping
            .tasks
            .iter()
            .find(|t| t.ppfs.contains(&1))
            .unwrap();
        assert_eq!(rare.dup, 0);
        let s = tdpm(
            &model,
            &Options {
                differentiate_critical: false,
                ..Default::default()
            },
        )
        .unwrap();
        assert!(s.critical.iter().all(|&c| c));
    }
}
