//! Speculation (NPIRE paper sections 2.7 and 3.2): critical sections between task replicas run
//! optimistically instead of waiting for their lock. "The compiler first inserts code to
//! checkpoint the context of a task at the entry of a critical section, and to restore this
//! context in the event of a dependence violation and rollback"; the hardware detects violated
//! dependences; "since these critical sections are unordered we must impose an order, such as
//! the order in which the tasks entered the critical section"; a failed speculation costs the
//! architecture's `np.rollback_on_failed_speculation_cycles` (40 on `npire`, Table 3).
//!
//! [`ConflictTable`] is the reusable part (a transactional-memory engine can use it as is): a
//! read set and a write set per active speculative section over traced persistent-heap
//! locations `(object, key)`, two sections conflicting when one writes a location the other
//! reads or writes. Detection is at commit (lazy): when a section commits, an active
//! conflicting section that entered *earlier* wins (the committing one rolls back instead), and
//! active conflicting sections that entered *later* are marked to roll back when they reach
//! their own commit point. A section keeps its first entry's order across its retries, so the
//! oldest one always commits (no livelock).
use crate::prog::Loc;
use pktflow_model::sorted_sets_meet;
use serde::Serialize;
use std::collections::BTreeMap;

/// Read and write sets of one speculative section (sorted, deduplicated).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AccessSet {
    pub reads: Vec<Loc>,
    pub writes: Vec<Loc>,
}

impl AccessSet {
    pub fn new(mut reads: Vec<Loc>, mut writes: Vec<Loc>) -> AccessSet {
        reads.sort_unstable();
        reads.dedup();
        writes.sort_unstable();
        writes.dedup();
        AccessSet { reads, writes }
    }
    /// A dependence between the two: a write of one meets a read or write of the other.
    pub fn conflicts(&self, o: &AccessSet) -> bool {
        sorted_sets_meet(&self.writes, &o.writes)
            || sorted_sets_meet(&self.writes, &o.reads)
            || sorted_sets_meet(&self.reads, &o.writes)
    }
}

#[derive(Clone, Debug)]
struct Active {
    owner: u32,
    order: u64,
    doomed: bool,
    set: AccessSet,
}

/// The outcome of a commit attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Commit {
    /// Committed; these owners (later entrants that conflicted) will roll back.
    Done { doomed: Vec<u32> },
    /// A conflict with an earlier entrant (or an earlier commit): roll back and retry.
    RollBack,
}

/// Active speculative sections by domain (a lock group: sections of different groups touch
/// disjoint locations).
#[derive(Clone, Debug, Default)]
pub struct ConflictTable {
    domains: Vec<Vec<Active>>,
}

impl ConflictTable {
    /// `owner` enters a section of `domain` with entry order `order` (its first entry's).
    pub fn enter(&mut self, domain: u32, owner: u32, order: u64, set: AccessSet) {
        let d = domain as usize;
        if self.domains.len() <= d {
            self.domains.resize_with(d + 1, Vec::new);
        }
        self.domains[d].push(Active {
            owner,
            order,
            doomed: false,
            set,
        });
    }

    /// Sections active in `domain`.
    pub fn active(&self, domain: u32) -> usize {
        self.domains.get(domain as usize).map_or(0, |v| v.len())
    }

    /// `owner` tries to commit its section of `domain` (it leaves the table either way).
    pub fn commit(&mut self, domain: u32, owner: u32) -> Commit {
        let Some(v) = self.domains.get_mut(domain as usize) else {
            return Commit::Done { doomed: Vec::new() };
        };
        let Some(i) = v.iter().position(|a| a.owner == owner) else {
            return Commit::Done { doomed: Vec::new() };
        };
        let me = v.swap_remove(i);
        if me.doomed
            || v.iter()
                .any(|o| o.order < me.order && o.set.conflicts(&me.set))
        {
            return Commit::RollBack;
        }
        let mut doomed = Vec::new();
        for o in v.iter_mut() {
            if !o.doomed && o.set.conflicts(&me.set) {
                o.doomed = true;
                doomed.push(o.owner);
            }
        }
        Commit::Done { doomed }
    }
}

/// Commit and abort counts of one run.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct SpecStats {
    /// Rollback penalty, cycles (`np.rollback_on_failed_speculation_cycles`).
    pub rollback_cycles: u32,
    /// Speculative section executions (each retry counts).
    pub attempts: u64,
    pub commits: u64,
    pub aborts: u64,
    /// aborts / attempts: "the fraction of speculated critical sections for which speculation
    /// fails".
    pub failure_rate: f64,
    /// Over the measurement window only (after the warm-up).
    pub window_attempts: u64,
    pub window_aborts: u64,
    pub window_failure_rate: f64,
    /// By element: (attempts, aborts).
    pub by_element: BTreeMap<String, (u64, u64)>,
}

impl SpecStats {
    pub fn finish(&mut self) {
        let f = |a: u64, b: u64| if a > 0 { b as f64 / a as f64 } else { 0.0 };
        self.failure_rate = f(self.attempts, self.aborts);
        self.window_failure_rate = f(self.window_attempts, self.window_aborts);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(r: &[u64], w: &[u64]) -> AccessSet {
        AccessSet::new(
            r.iter().map(|&k| (1, k)).collect(),
            w.iter().map(|&k| (1, k)).collect(),
        )
    }

    #[test]
    fn conflicts_need_a_write() {
        assert!(!set(&[1, 2], &[]).conflicts(&set(&[1, 2], &[])));
        assert!(set(&[1], &[]).conflicts(&set(&[], &[1])));
        assert!(set(&[], &[3]).conflicts(&set(&[], &[3])));
        assert!(!set(&[1], &[2]).conflicts(&set(&[3], &[4])));
    }

    #[test]
    fn earlier_entrant_wins_and_the_later_one_rolls_back() {
        let mut t = ConflictTable::default();
        // A (order 1) and B (order 2) both increment counter 5; C (order 3) touches 9 only.
        t.enter(0, 10, 1, set(&[5], &[5]));
        t.enter(0, 11, 2, set(&[5], &[5]));
        t.enter(0, 12, 3, set(&[9], &[9]));
        // B reaches its commit first: A entered earlier and conflicts, so B rolls back.
        assert_eq!(t.commit(0, 11), Commit::RollBack);
        // B retries with its first order (2) while A is still active.
        t.enter(0, 11, 2, set(&[5], &[5]));
        // A commits and dooms B; C is independent.
        assert_eq!(t.commit(0, 10), Commit::Done { doomed: vec![11] });
        assert_eq!(t.commit(0, 12), Commit::Done { doomed: vec![] });
        // B was doomed: it rolls back at its commit point, then commits alone.
        assert_eq!(t.commit(0, 11), Commit::RollBack);
        t.enter(0, 11, 2, set(&[5], &[5]));
        assert_eq!(t.commit(0, 11), Commit::Done { doomed: vec![] });
        assert_eq!(t.active(0), 0);
    }
}
