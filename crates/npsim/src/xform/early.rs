//! Early signalling (NPIRE paper section 2.6, Figure 4).
//!
//! "Any task that post-dominates an earlier point in the task graph is a candidate for early
//! signalling. However, the compiler must ensure there are no dependences between the candidate
//! task and any intermediate tasks, and ensure that the candidate task does not deallocate
//! memory (which may still be in use) nor perform packet output." And for a later task D with an
//! ordered dependence on the early task B: "D waits for B before performing the dependent
//! operation, and B resumes D upon completion".
//!
//! The analysis ([`EarlyPlan::analyse`]), as the paper's profile-driven compiler would:
//! - post-dominance on the element graph (every path from A's input to a sink passes through
//!   B; sinks are the elements without a connected output);
//! - ordered dependences between distinct tasks, which go through packet data and packet
//!   meta-data only (Table 1): task X depends on an earlier task W when, for some profiled
//!   packet, their byte ranges of one of these two memory types overlap and one of them writes;
//! - eligible candidates: not an interface task, and never outputs, drops (frees) or holds a
//!   packet in the profile (those are the packet output and memory deallocation the paper
//!   excludes).
//!
//! Per packet ([`decide`]): a visit j of an eligible element B that the packet visits once and
//! whose element is not split is signalled at the enqueue of the earliest visit i < j of the
//! main chain such that B post-dominates i's element and B depends on none of the visits i to
//! j-1 (nor on an earlier early visit); i = j-1 still helps (B starts when its predecessor
//! starts instead of when it ends). The packet's main chain skips B; a later visit D that
//! depends on B waits for B's completion before its first access conflicting with B's (in this
//! packet); the packet leaves when the chain and every early visit are done.
use pktflow_model::{AccessKind, Fate, MemType, PacketTrace};
use serde::Serialize;

/// Analysis results shared by every packet of a run.
#[derive(Clone, Debug, Default)]
pub struct EarlyPlan {
    pub n: usize,
    /// `pdom[b * n + a]`: element b post-dominates element a.
    pub pdom: Vec<bool>,
    /// `dep[a * n + b]`: an ordered dependence between a and b (symmetric: either order).
    pub dep: Vec<bool>,
    pub eligible: Vec<bool>,
    /// Elements some profiled packet visited (an element the profile never saw is not a
    /// candidate: nothing shows it independent).
    pub visited: Vec<bool>,
    pub profiled_packets: u64,
}

/// What early signalling did in one run.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct EarlyStats {
    /// Elements that may be signalled early (post-dominance, no output or deallocation).
    pub eligible_elements: Vec<String>,
    /// Task instances signalled early, and of the packets' visits.
    pub early_instances: u64,
    pub visits: u64,
    /// Wait signals inserted (a later task waiting for an early one), and those that blocked.
    pub waits: u64,
    pub waits_blocked: u64,
    /// Packets profiled for the dependence analysis.
    pub profiled_packets: u64,
}

/// Byte ranges of packet data / meta-data one visit touches: (mem, lo, hi, write).
fn ranges(t: &PacketTrace, v: usize) -> impl Iterator<Item = (MemType, u64, u64, bool)> + '_ {
    t.accesses_of(&t.visits[v])
        .iter()
        .filter(|a| matches!(a.mem, MemType::PacketData | MemType::PacketMeta))
        .map(|a| {
            (
                a.mem,
                a.key,
                a.key.saturating_add(a.bytes.max(1) as u64),
                a.kind == AccessKind::Write,
            )
        })
}

/// Index (within visit `d`'s accesses) of the first access conflicting with visit `b`'s.
pub fn first_conflict(t: &PacketTrace, b: usize, d: usize) -> Option<usize> {
    let bs: Vec<_> = ranges(t, b).collect();
    let acc = t.accesses_of(&t.visits[d]);
    acc.iter().position(|a| {
        if !matches!(a.mem, MemType::PacketData | MemType::PacketMeta) {
            return false;
        }
        let (lo, hi) = (a.key, a.key.saturating_add(a.bytes.max(1) as u64));
        let w = a.kind == AccessKind::Write;
        bs.iter()
            .any(|&(m, l, h, bw)| m == a.mem && lo < h && l < hi && (w || bw))
    })
}

impl EarlyPlan {
    /// Post-dominance of an element graph given as `succ[e]` (connected outputs).
    pub fn post_dominators(succ: &[Vec<usize>]) -> Vec<bool> {
        let n = succ.len();
        // pd[e] as a bit row; exit is implicit (sinks post-dominated only by themselves).
        let mut pd = vec![true; n * n];
        for (e, s) in succ.iter().enumerate() {
            if s.is_empty() {
                for x in 0..n {
                    pd[e * n + x] = x == e;
                }
            }
        }
        let mut changed = true;
        let mut row = vec![true; n];
        while changed {
            changed = false;
            for e in 0..n {
                if succ[e].is_empty() {
                    continue;
                }
                row.iter_mut().for_each(|x| *x = true);
                for &s in &succ[e] {
                    for x in 0..n {
                        row[x] &= pd[s * n + x];
                    }
                }
                row[e] = true;
                if row[..] != pd[e * n..(e + 1) * n] {
                    pd[e * n..(e + 1) * n].copy_from_slice(&row);
                    changed = true;
                }
            }
        }
        // Transpose to pdom[b * n + a] = b post-dominates a.
        let mut out = vec![false; n * n];
        for a in 0..n {
            for b in 0..n {
                out[b * n + a] = pd[a * n + b];
            }
        }
        out
    }

    /// Record the dependences and fates of one profiled packet.
    pub fn observe(&mut self, t: &PacketTrace) {
        let n = self.n;
        self.profiled_packets += 1;
        for v in &t.visits {
            if let Some(x) = self.visited.get_mut(v.element as usize) {
                *x = true;
            }
        }
        for f in &t.fates {
            let e = match *f {
                Fate::Output { element } | Fate::Held { element } => element,
                Fate::Drop { element, .. } => element,
            };
            if let Some(x) = self.eligible.get_mut(e as usize) {
                *x = false;
            }
        }
        let rs: Vec<Vec<_>> = (0..t.visits.len())
            .map(|v| ranges(t, v).collect())
            .collect();
        for j in 0..t.visits.len() {
            let b = t.visits[j].element as usize;
            for i in 0..j {
                let a = t.visits[i].element as usize;
                if a == b || a >= n || b >= n || self.dep[a * n + b] {
                    continue;
                }
                let hit = rs[i].iter().any(|&(m, l, h, w)| {
                    rs[j]
                        .iter()
                        .any(|&(m2, l2, h2, w2)| m == m2 && l < h2 && l2 < h && (w || w2))
                });
                if hit {
                    self.dep[a * n + b] = true;
                    self.dep[b * n + a] = true;
                }
            }
        }
    }

    /// `excluded[e]`: never a candidate (interface tasks, and queues: enqueueing a packet for
    /// transmission is packet output).
    pub fn new(succ: &[Vec<usize>], excluded: &[bool]) -> EarlyPlan {
        let n = succ.len();
        EarlyPlan {
            n,
            pdom: Self::post_dominators(succ),
            dep: vec![false; n * n],
            eligible: excluded.iter().map(|i| !i).collect(),
            visited: vec![false; n],
            profiled_packets: 0,
        }
    }

    /// A candidate for early signalling.
    pub fn candidate(&self, e: usize) -> bool {
        e < self.n && self.eligible[e] && self.visited[e]
    }

    pub fn pdom(&self, b: usize, a: usize) -> bool {
        a < self.n && b < self.n && self.pdom[b * self.n + a]
    }
    pub fn dep(&self, a: usize, b: usize) -> bool {
        a < self.n && b < self.n && self.dep[a * self.n + b]
    }
}

/// One early visit of a packet: visit `visit` forked when the main chain enqueues visit
/// `fork_at` (original visit indices).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EarlyVisit {
    pub visit: usize,
    pub fork_at: usize,
}

/// The early visits of one packet (`split[e]`: element e is split, not a candidate).
pub fn decide(plan: &EarlyPlan, t: &PacketTrace, split: &dyn Fn(u32) -> bool) -> Vec<EarlyVisit> {
    let nv = t.visits.len();
    let mut out: Vec<EarlyVisit> = Vec::new();
    let mut is_early = vec![false; nv];
    for j in 1..nv {
        let b = t.visits[j].element;
        let bu = b as usize;
        if !plan.candidate(bu) || split(b) {
            continue;
        }
        if t.visits.iter().filter(|v| v.element == b).count() > 1 {
            continue; // the candidate appears in several places of this packet's path
        }
        if out
            .iter()
            .any(|x| plan.dep(t.visits[x.visit].element as usize, bu))
        {
            continue;
        }
        let mut fork = None;
        for i in (0..j).rev() {
            let a = t.visits[i].element as usize;
            if plan.dep(a, bu) || a == bu {
                break;
            }
            if !is_early[i] && plan.pdom(bu, a) {
                fork = Some(i);
            }
        }
        if let Some(i) = fork {
            is_early[j] = true;
            out.push(EarlyVisit {
                visit: j,
                fork_at: i,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktflow_model::{MemAccess, Visit};

    #[test]
    fn post_dominance_of_a_diamond_and_a_drop_branch() {
        // 0 -> 1 -> {2, 3} -> 4 -> 5 (sink); 1 -> 6 (a drop sink).
        let succ = vec![
            vec![1],
            vec![2, 3, 6],
            vec![4],
            vec![4],
            vec![5],
            vec![],
            vec![],
        ];
        let p = EarlyPlan::new(&succ, &[false; 7]);
        assert!(p.pdom(1, 0));
        assert!(p.pdom(4, 2) && p.pdom(4, 3) && p.pdom(5, 4));
        // 6 is a possible exit of 1: nothing after 1 post-dominates it.
        assert!(!p.pdom(4, 1) && !p.pdom(4, 0));
        assert!(!p.pdom(2, 1));
    }

    type Acc = (MemType, AccessKind, u64);

    fn trace(visits: &[(u32, &[Acc])]) -> PacketTrace {
        let mut t = PacketTrace::default();
        for &(e, acc) in visits {
            let s = t.accesses.len() as u32;
            for &(mem, kind, key) in acc {
                t.accesses.push(MemAccess {
                    mem,
                    kind,
                    bytes: 4,
                    at_instr: 1,
                    object: 0,
                    key,
                    lock: pktflow_model::LockMark::None,
                });
            }
            t.visits.push(Visit {
                element: e,
                port: 0,
                instructions: 10,
                access_start: s,
                access_end: t.accesses.len() as u32,
            });
        }
        t
    }

    #[test]
    fn figure_4_b_goes_early_and_d_waits_for_it() {
        use AccessKind::*;
        use MemType::*;
        // Chain A(0) -> B(1) -> C(2) -> D(3) -> out(4); B writes meta 8, D reads it.
        let succ = vec![vec![1], vec![2], vec![3], vec![4], vec![]];
        let t = trace(&[
            (0, &[(PacketData, Read, 0)]),
            (1, &[(PacketMeta, Write, 8)]),
            (2, &[(PacketData, Read, 20)]),
            (3, &[(PacketData, Read, 40), (PacketMeta, Read, 8)]),
            (4, &[]),
        ]);
        let mut p = EarlyPlan::new(&succ, &[false, false, false, false, true]);
        t.fates.iter().for_each(|_| ());
        let mut t2 = t.clone();
        t2.fates.push(Fate::Output { element: 4 });
        p.observe(&t2);
        assert!(p.dep(1, 3) && !p.dep(0, 1) && !p.dep(1, 2));
        let e = decide(&p, &t2, &|_| false);
        // B (visit 1) at the same time as A (visit 0); C independent of B and A: also early,
        // forked at A; D depends on B (not early: it would depend on an early visit); the
        // output task is not eligible.
        assert_eq!(
            e,
            vec![
                EarlyVisit {
                    visit: 1,
                    fork_at: 0
                },
                EarlyVisit {
                    visit: 2,
                    fork_at: 0
                }
            ]
        );
        // D's second access (meta 8) is where it waits for B.
        assert_eq!(first_conflict(&t2, 1, 3), Some(1));
        // An element that outputs packets is never signalled early.
        assert!(!p.candidate(4) && p.candidate(1));
        // Split elements are not candidates.
        assert!(decide(&p, &t2, &|e| e == 1).iter().all(|x| x.visit != 1));
    }
}
