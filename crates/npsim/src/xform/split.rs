//! Task splitting (NPIRE paper section 2.5).
//!
//! "Upon each splitting iteration we break a task (or a task-split) in two task-splits of
//! roughly the same dynamic execution duration. We chose the candidate tasks for splitting to
//! be the top three bottleneck tasks. This criteria is estimated by the time that packets are
//! queued awaiting processing by distinct tasks." ... "no benefit to performing more than five
//! iterations"; "each split incurs an overhead for communicating the live data set between the
//! resulting splits"; "if a task replica is split, any locks held across a split point must
//! migrate from the producer task-split to the consumer task-split"; the splits are "mapped to
//! the same PEs as the original unsplit task".
//!
//! Model.
//! - A split of element e is a piece `[lo, hi)` of each of its visits, as a fraction of the
//!   visit's compute cycles: every visit is cut at the same fraction of its own instructions,
//!   so the two halves of a split have the same dynamic duration (compute; the memory time of
//!   each half is whatever its accesses cost). The first piece keeps e's task; each further
//!   piece is a new task named `e#2`, `e#3`... mapped as e is.
//! - Live data: the stack bytes the producer piece writes and the consumer piece reads are
//!   forwarded (min of the two; the trace does not name stack words); the producer writes them
//!   at its end and the consumer reads them at its start, `ceil(bytes / word)` requests each to
//!   the packet meta-data storage (where the paper's compiler puts data passed between tasks).
//!   Registers, packet data and the persistent heap need no forwarding (they are in memory).
//! - A lock held at the cut migrates to the consumer piece: the producer ends without releasing
//!   it, the consumer starts holding it (no other instance can take it in between). With
//!   speculation on, a cut never falls inside a critical section (a speculative section's
//!   checkpoint and commit must be in one task): it moves to the section's end.
//! - Candidates are the non-interface tasks with the longest mean queue time at the maximum
//!   rate of the current program (a task where packets never queue is no bottleneck); each
//!   iteration splits the top `split_candidates` and keeps the result when the maximum rate
//!   rises, at most `split_iterations` times.
use crate::app::Prepared;
use crate::config::{Mapping, SimConfig};
use crate::maxrate::{MaxRate, MaxRateConfig};
use serde::Serialize;
use std::collections::BTreeMap;

/// Pieces of one split element: `(lo, hi, task)` by increasing `lo`; fractions of the visit's
/// compute cycles.
pub type Pieces = Vec<(f64, f64, u32)>;

/// The splits decided so far.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SplitPlan {
    /// By element index (only split elements appear).
    pub pieces: BTreeMap<u32, Pieces>,
    /// Names of the new tasks (index = task - number of elements).
    pub new_names: Vec<String>,
    /// Original element of each new task.
    pub new_origin: Vec<u32>,
}

impl SplitPlan {
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty()
    }

    /// The element a task runs code of.
    pub fn origin(&self, task: u32, n_elements: usize) -> u32 {
        if (task as usize) < n_elements {
            task
        } else {
            self.new_origin[task as usize - n_elements]
        }
    }

    /// Split `task` (an element or a piece of one) in two halves: returns false when the
    /// task is unknown.
    pub fn split(&mut self, task: u32, names: &[String]) -> bool {
        let n = names.len();
        if task as usize >= n + self.new_names.len() {
            return false;
        }
        let e = self.origin(task, n);
        let pieces = self.pieces.entry(e).or_insert_with(|| vec![(0.0, 1.0, e)]);
        let Some(k) = pieces.iter().position(|p| p.2 == task) else {
            return false;
        };
        let (lo, hi, t) = pieces[k];
        let mid = (lo + hi) / 2.0;
        let new = (n + self.new_names.len()) as u32;
        pieces[k] = (lo, mid, t);
        pieces.insert(k + 1, (mid, hi, new));
        let count = self.new_origin.iter().filter(|&&o| o == e).count();
        self.new_names
            .push(format!("{}#{}", names[e as usize], count + 2));
        self.new_origin.push(e);
        true
    }

    /// Names and mapping extended with the new tasks (each mapped as its element).
    pub fn extend(&self, names: &[String], mapping: &Mapping) -> (Vec<String>, Mapping) {
        let mut nm = names.to_vec();
        nm.extend(self.new_names.iter().cloned());
        let mut m = mapping.clone();
        for &o in &self.new_origin {
            m.tasks.push(mapping.tasks[o as usize].clone());
        }
        (nm, m)
    }
}

/// What splitting did in one run.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct SplitStats {
    /// Each split element and its pieces as fractions of its compute (`[lo, hi, task name]`).
    pub splits: BTreeMap<String, Vec<(f64, f64, String)>>,
    /// Cuts executed (producer piece ended, consumer queued), live-data requests written and
    /// read, and locks carried across a cut.
    pub cuts: u64,
    pub live_requests: u64,
    pub live_bytes: u64,
    pub migrated_locks: u64,
}

/// One iteration of the feedback loop.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct SplitIteration {
    /// Tasks split in this iteration (top by mean queue time).
    pub split: Vec<String>,
    pub mean_queue_cycles: Vec<f64>,
    pub packets_per_second: f64,
    pub kept: bool,
}

/// The feedback loop's log (in the result under `transform_plan`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct SplitLog {
    pub packets_per_second_unsplit: f64,
    pub iterations: Vec<SplitIteration>,
    pub final_splits: Vec<String>,
}

/// The feedback loop: returns the plan kept, its maximum rate and the log.
pub fn iterate(
    p: &Prepared,
    base: &crate::xform::Plan,
    cfg: &SimConfig,
    m: &MaxRateConfig,
    candidates: u32,
    iterations: u32,
) -> Result<(SplitPlan, MaxRate, SplitLog), String> {
    let mut plan = base.split.clone();
    let rate = |sp: &SplitPlan, start: f64| -> Result<MaxRate, String> {
        let mut pl = base.clone();
        pl.split = sp.clone();
        let mc = MaxRateConfig {
            start_cycles: start,
            ..m.clone()
        };
        crate::xform::max_rate_planned(p, &pl, cfg, &mc)
    };
    let mut best = rate(&plan, m.start_cycles)?;
    let mut log = SplitLog {
        packets_per_second_unsplit: best.packets_per_second,
        ..Default::default()
    };
    let n = p.names.len();
    for _ in 0..iterations {
        let mut cand: Vec<(f64, u32)> = best
            .report
            .tasks
            .iter()
            .filter(|t| {
                let o = plan.origin(t.task, n) as usize;
                !p.iface.get(o).copied().unwrap_or(true)
                    && t.busy_cycles > 0
                    && t.mean_queue_cycles > 0.0
            })
            .map(|t| (t.mean_queue_cycles, t.task))
            .collect();
        cand.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        cand.truncate(candidates as usize);
        if cand.is_empty() {
            break;
        }
        let (names, _) = plan.extend(&p.names, &p.mapping);
        let mut next = plan.clone();
        for &(_, t) in &cand {
            next.split(t, &p.names);
        }
        let r = rate(&next, best.inter_arrival_cycles)?;
        let kept = r.packets_per_second > best.packets_per_second;
        log.iterations.push(SplitIteration {
            split: cand.iter().map(|c| names[c.1 as usize].clone()).collect(),
            mean_queue_cycles: cand.iter().map(|c| c.0).collect(),
            packets_per_second: r.packets_per_second,
            kept,
        });
        if !kept {
            break;
        }
        plan = next;
        best = r;
    }
    log.final_splits = plan
        .pieces
        .keys()
        .map(|&e| p.names[e as usize].clone())
        .collect();
    Ok((plan, best, log))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TaskMap;

    #[test]
    fn halving_a_task_and_then_one_of_its_splits() {
        let names: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        let mut s = SplitPlan::default();
        assert!(s.split(1, &names));
        assert_eq!(s.pieces[&1], vec![(0.0, 0.5, 1), (0.5, 1.0, 2)]);
        assert!(s.split(2, &names));
        assert_eq!(
            s.pieces[&1],
            vec![(0.0, 0.5, 1), (0.5, 0.75, 2), (0.75, 1.0, 3)]
        );
        assert_eq!(s.new_names, vec!["b#2", "b#3"]);
        assert_eq!(s.origin(3, 2), 1);
        assert!(!s.split(9, &names));
        let m = Mapping {
            tasks: vec![TaskMap::new(vec![0], 1), TaskMap::new(vec![1, 2], 9)],
        };
        let (nm, m2) = s.extend(&names, &m);
        assert_eq!(nm.len(), 4);
        assert_eq!(m2.tasks[2], m.tasks[1]);
        assert_eq!(m2.tasks[3], m.tasks[1]);
    }
}
