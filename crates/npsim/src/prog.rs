//! From a functional trace to the operations a hardware context executes.
//!
//! One element visit of a packet is one task instance. Its program is the visit's instructions
//! cut at its memory accesses (`Compute` gaps between accesses, placed by `at_instr`), the
//! accesses themselves (`Mem`, one request each), the critical sections of seed 000 section 2.4
//! (`Acquire`/`Release`) and `End`.
//!
//! Critical sections (seed 000 `000_3853cd1582c2b67c.txt`, section 2.4): "1. the task acquires a
//! lock before the first read or write to a given shared location; 2. the task releases the
//! lock after the last read or write to that location; 3. for any critical section that
//! partially overlaps with another, both critical sections are combined into one." A location
//! is a persistent-state object and the key (slot, offset) the access touches; it is shared when
//! it is dynamic state, or static state that some packet writes (the same rule as
//! `pktflow_profile::profiler`). Locks are per location ([`LockGranularity::Location`], the
//! paper's rule); a merged section holds one lock, that of its locations' group: locations that
//! ever share a merged section are grouped for good ("grouping dependent shared variables in the
//! same synchronized section"), so a section never runs beside another one touching any of its
//! locations, and only one lock is held at a time. Coarser granularities (per object, per task)
//! are options for comparison.
use pktflow_model::{AccessKind, MemAccess, MemType, PacketTrace};
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};

/// Storage index of a packet hand-off request ([`Op::Mem`]); the simulator routes it to the
/// architecture's `np.handoff_storage` (real storage indices stay below 255).
pub const HANDOFF_STORAGE: u8 = u8::MAX;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Cycles of computation.
    Compute(u32),
    /// One memory request to storage `storage` (index in the simulator's storage table);
    /// `hash` picks the channel (address interleaving).
    Mem { storage: u8, write: bool, hash: u32 },
    /// Acquire lock `lock` (an id of the compiler's [`LockTable`]).
    Acquire(u32),
    /// Release it (after the section's outstanding accesses complete).
    Release(u32),
    /// End of the instance (after its outstanding accesses complete).
    End,
    /// [xform hook] early signalling: wait until the packet's early instance k has finished.
    Wait(u32),
}

/// What one lock protects (seed 000 section 2.4 says a shared *location*).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LockGranularity {
    /// One lock per shared location (object and key), the paper's rule.
    #[default]
    Location,
    /// One lock per persistent-state object (e.g. a whole flow table).
    Object,
    /// One lock per task (element): every shared access of the task under one lock.
    Task,
}

impl LockGranularity {
    pub fn parse(s: &str) -> Result<LockGranularity, String> {
        Ok(match s {
            "location" => LockGranularity::Location,
            "object" => LockGranularity::Object,
            "task" => LockGranularity::Task,
            _ => {
                return Err(format!(
                    "unknown lock granularity '{s}' (expected location, object or task)"
                ))
            }
        })
    }
}

/// A shared location as the lock table sees it: (object, key).
pub type Loc = (u32, u64);

/// Merged critical sections of one visit, as inclusive ranges of access indices, and the
/// locations each one covers (`members[i]` for `out[i]`). `loc(a)` is `None` for an access to
/// unshared memory. `spans` is scratch (location, first, last). Accesses are in execution
/// order (`at_instr` nondecreasing). Sections that overlap (partially or by nesting) merge:
/// nesting would otherwise hold two locks at once.
pub fn critical_sections(
    accesses: &[MemAccess],
    loc: impl Fn(&MemAccess) -> Option<Loc>,
    spans: &mut Vec<(Loc, u32, u32)>,
    out: &mut Vec<(u32, u32)>,
    members: &mut Vec<Vec<Loc>>,
) {
    spans.clear();
    out.clear();
    for m in members.iter_mut() {
        m.clear();
    }
    // A linear search of `spans` per access is quadratic in the locations a visit touches
    // (UDHCP's lease scan touches about 8,000): above a few hundred accesses, index them.
    let mut index: Option<HashMap<Loc, usize>> = (accesses.len() > 256).then(HashMap::new);
    for (i, a) in accesses.iter().enumerate() {
        let Some(l) = loc(a) else { continue };
        let i = i as u32;
        let found = match &mut index {
            Some(ix) => match ix.entry(l) {
                std::collections::hash_map::Entry::Occupied(e) => Some(*e.get()),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(spans.len());
                    None
                }
            },
            None => spans.iter().position(|s| s.0 == l),
        };
        match found {
            Some(k) => spans[k].2 = i,
            None => spans.push((l, i, i)),
        }
    }
    if spans.is_empty() {
        return;
    }
    spans.sort_unstable_by_key(|s| (s.1, s.2));
    let (mut lo, mut hi) = (spans[0].1, spans[0].2);
    let mut cur: Vec<Loc> = Vec::new();
    let mut flush = |lo: u32, hi: u32, cur: &mut Vec<Loc>, out: &mut Vec<(u32, u32)>| {
        let k = out.len();
        out.push((lo, hi));
        if members.len() <= k {
            members.push(Vec::new());
        }
        members[k].clear();
        members[k].append(cur);
    };
    cur.push(spans[0].0);
    for s in &spans[1..] {
        if s.1 <= hi {
            hi = hi.max(s.2);
        } else {
            flush(lo, hi, &mut cur, out);
            (lo, hi) = (s.1, s.2);
        }
        cur.push(s.0);
    }
    flush(lo, hi, &mut cur, out);
}

/// Locks by location, with the grouping of section 2.4: the locations of one merged section
/// share a lock from then on (union-find; the older lock id stays the group's). Sections
/// compiled before a merge keep the ids they were given (packets already in flight); see
/// `docs/npsim.md`.
#[derive(Default)]
pub struct LockTable {
    by_loc: HashMap<Loc, u32>,
    parent: Vec<u32>,
    /// Element whose state each lock protects.
    pub element: Vec<u32>,
    /// Locations in each group (valid at roots).
    pub size: Vec<u32>,
}

impl LockTable {
    pub fn len(&self) -> usize {
        self.parent.len()
    }
    pub fn is_empty(&self) -> bool {
        self.parent.is_empty()
    }
    pub fn find(&mut self, mut x: u32) -> u32 {
        while self.parent[x as usize] != x {
            let g = self.parent[self.parent[x as usize] as usize];
            self.parent[x as usize] = g;
            x = g;
        }
        x
    }
    fn id(&mut self, l: Loc, element: u32) -> u32 {
        let n = self.parent.len() as u32;
        let id = *self.by_loc.entry(l).or_insert(n);
        if id == n {
            self.parent.push(n);
            self.element.push(element);
            self.size.push(1);
        }
        self.find(id)
    }
    /// The lock of a section covering `locs` (grouping them for good).
    pub fn lock_for(&mut self, locs: &[Loc], element: u32) -> u32 {
        let mut root = self.id(locs[0], element);
        for &l in &locs[1..] {
            let r = self.id(l, element);
            if r != root {
                let (a, b) = if r < root { (r, root) } else { (root, r) };
                self.parent[b as usize] = a;
                self.size[a as usize] += self.size[b as usize];
                root = a;
            }
        }
        root
    }
}

/// Compiler state kept across packets: which static objects some packet has written (they
/// are shared), and scratch buffers.
#[derive(Default)]
pub struct Compiler {
    pub written_static: HashSet<u32>,
    /// Elements (by index) whose visits take no lock ([`crate::SimConfig::no_sync_elements`]).
    pub no_sync_elements: Vec<bool>,
    pub locks: LockTable,
    spans: Vec<(Loc, u32, u32)>,
    sections: Vec<(u32, u32)>,
    members: Vec<Vec<Loc>>,
    section_lock: Vec<u32>,
    /// [xform hook] wide memory operations (locality transformation), when on.
    pub locality: Option<crate::xform::locality::Locality>,
    /// [xform hook] record in `access_ops` the op index of each access of the last packet.
    pub record_access_ops: bool,
    pub access_ops: Vec<u32>,
}

/// How memory types reach storage and what is idealized.
#[derive(Clone, Debug)]
pub struct CompileParams {
    /// Storage index by `MemType as usize`.
    pub route: [u8; 5],
    pub cycles_per_instruction: u32,
    /// Idealization Z: instructions take no time.
    pub zero_instructions: bool,
    /// Idealization S: no critical sections.
    pub no_sync: bool,
    pub lock_granularity: LockGranularity,
    pub seed: u64,
    /// Bytes per memory request: a traced access of more bytes becomes `ceil(bytes / word)`
    /// requests to consecutive words (seed 000 section 2.8, without the locality
    /// transformation). 0 = one request per traced access (wide accesses).
    pub word_bytes: u32,
}

pub fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

impl Compiler {
    /// Append the programs of every visit of `t` to `ops`; `vstart[k]` is where visit k starts.
    pub fn compile(
        &mut self,
        t: &PacketTrace,
        p: &CompileParams,
        ops: &mut Vec<Op>,
        vstart: &mut Vec<u32>,
        vtask: &mut Vec<u32>,
    ) {
        ops.clear();
        vstart.clear();
        vtask.clear();
        self.access_ops.clear();
        for v in &t.visits {
            vstart.push(ops.len() as u32);
            vtask.push(v.element);
            let acc = t.accesses_of(v);
            for a in acc {
                if a.mem == MemType::StaticState && a.kind == AccessKind::Write {
                    self.written_static.insert(a.object);
                }
            }
            self.section_lock.clear();
            let lock_free = self
                .no_sync_elements
                .get(v.element as usize)
                .copied()
                .unwrap_or(false);
            if !p.no_sync && !lock_free {
                let ws = &self.written_static;
                let g = p.lock_granularity;
                let element = v.element;
                critical_sections(
                    acc,
                    |a| {
                        let shared = a.mem == MemType::DynamicState
                            || (a.mem == MemType::StaticState && ws.contains(&a.object));
                        shared.then_some(match g {
                            LockGranularity::Location => (a.object, a.key),
                            LockGranularity::Object => (a.object, 0),
                            LockGranularity::Task => (element, u64::MAX),
                        })
                    },
                    &mut self.spans,
                    &mut self.sections,
                    &mut self.members,
                );
                for k in 0..self.sections.len() {
                    let l = self.locks.lock_for(&self.members[k], element);
                    self.section_lock.push(l);
                }
            } else {
                self.sections.clear();
            }
            if let Some(l) = self.locality.as_mut() {
                l.plan_visit(acc, &self.sections, p.word_bytes); // [xform hook]
            }
            let cpi = p.cycles_per_instruction;
            let mut cur = 0u32;
            let mut k = 0usize;
            for (i, a) in acc.iter().enumerate() {
                let gap = a.at_instr.saturating_sub(cur);
                if gap > 0 && !p.zero_instructions {
                    ops.push(Op::Compute(gap.saturating_mul(cpi)));
                }
                cur = cur.max(a.at_instr);
                if self.record_access_ops {
                    self.access_ops.push(ops.len() as u32); // [xform hook]
                }
                let i = i as u32;
                if k < self.sections.len() && self.sections[k].0 == i {
                    ops.push(Op::Acquire(self.section_lock[k]));
                }
                // Address interleaving: packet buffers by packet and 64-byte block, persistent
                // state by object and key.
                let base = if a.mem.is_persistent() {
                    (a.object as u64) << 40
                } else {
                    t.packet.wrapping_mul(0x1_0000_0001)
                };
                let (words, key0, step) = match &self.locality {
                    // [xform hook] wide requests (0 when served by another access's)
                    Some(l) => (l.reqs[i as usize], l.start[i as usize], l.wide_bytes),
                    None if p.word_bytes == 0 => (1, a.key, 0),
                    None => (a.bytes.div_ceil(p.word_bytes).max(1), a.key, p.word_bytes),
                };
                for w in 0..words as u64 {
                    let key = key0.wrapping_add(w * step as u64);
                    let hash = mix(p.seed ^ base ^ (key >> 6) ^ ((a.mem as u64) << 60)) as u32;
                    ops.push(Op::Mem {
                        storage: p.route[a.mem as usize],
                        write: a.kind == AccessKind::Write,
                        hash,
                    });
                }
                if k < self.sections.len() && self.sections[k].1 == i {
                    ops.push(Op::Release(self.section_lock[k]));
                    k += 1;
                }
            }
            let tail = v.instructions.saturating_sub(cur);
            if tail > 0 && !p.zero_instructions {
                ops.push(Op::Compute(tail.saturating_mul(cpi)));
            }
            ops.push(Op::End);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktflow_model::Visit;

    fn acc(mem: MemType, kind: AccessKind, at: u32, object: u32) -> MemAccess {
        MemAccess {
            mem,
            kind,
            bytes: 4,
            at_instr: at,
            object,
            key: 0,
            lock: pktflow_model::LockMark::None,
        }
    }

    #[test]
    fn sections_merge_partial_overlaps_and_keep_disjoint_ones_apart() {
        use AccessKind::*;
        use MemType::*;
        let a = [
            acc(DynamicState, Read, 10, 1),  // 0: obj 1 starts
            acc(DynamicState, Read, 20, 2),  // 1: obj 2 starts (overlaps obj 1)
            acc(DynamicState, Write, 30, 1), // 2: obj 1 ends
            acc(DynamicState, Write, 40, 2), // 3: obj 2 ends
            acc(PacketData, Read, 50, 0),    // 4
            acc(DynamicState, Read, 60, 3),  // 5: obj 3 alone
        ];
        let (mut s, mut out, mut m) = (Vec::new(), Vec::new(), Vec::new());
        let loc = |x: &MemAccess| (x.mem == DynamicState).then_some((x.object, x.key));
        critical_sections(&a, loc, &mut s, &mut out, &mut m);
        assert_eq!(out, vec![(0, 3), (5, 5)]);
        assert_eq!(m[0], vec![(1, 0), (2, 0)]);
        assert_eq!(m[1], vec![(3, 0)]);
        // A nested section merges too (two locks would otherwise be held at once).
        let b = [
            acc(DynamicState, Read, 10, 1),
            acc(DynamicState, Write, 20, 2),
            acc(DynamicState, Write, 30, 1),
        ];
        critical_sections(&b, loc, &mut s, &mut out, &mut m);
        assert_eq!(out, vec![(0, 2)]);
        // Same object, different keys: different locations, separate sections.
        let mut c = b;
        c[1].object = 1;
        c[1].key = 5;
        c[2].key = 5;
        critical_sections(&c, loc, &mut s, &mut out, &mut m);
        assert_eq!(out, vec![(0, 0), (1, 2)]);
    }

    #[test]
    fn long_visits_index_their_locations_and_give_the_same_sections() {
        use AccessKind::*;
        use MemType::*;
        // 900 accesses (above the indexing threshold): a scan of 300 locations touched once
        // each, then 3 short sections on objects of their own, each location read then written.
        let mut a: Vec<MemAccess> = (0..300)
            .map(|i| acc(DynamicState, Read, i, 1000 + i))
            .collect();
        for k in 0..3u32 {
            for j in 0..100u32 {
                let kind = if j % 2 == 0 { Read } else { Write };
                a.push(acc(DynamicState, kind, 300 + 100 * k + j, 10 + k));
            }
        }
        a.extend((0..300).map(|i| acc(PacketData, Read, 700 + i, 0)));
        let loc = |x: &MemAccess| (x.mem == DynamicState).then_some((x.object, x.key));
        let (mut s, mut out, mut m) = (Vec::new(), Vec::new(), Vec::new());
        critical_sections(&a, loc, &mut s, &mut out, &mut m);
        // Each scanned location is a section of one access; each object's 100 accesses one.
        assert_eq!(out.len(), 303);
        assert_eq!(out[299], (299, 299));
        assert_eq!(out[300..], [(300, 399), (400, 499), (500, 599)]);
        assert_eq!(m[301], vec![(11, 0)]);
        // The same accesses in pieces below the threshold give the same sections.
        let (mut s2, mut out2, mut m2) = (Vec::new(), Vec::new(), Vec::new());
        critical_sections(&a[300..500], loc, &mut s2, &mut out2, &mut m2);
        assert_eq!(out2, vec![(0, 99), (100, 199)]);
    }

    #[test]
    fn lock_table_groups_locations_of_merged_sections_for_good() {
        let mut t = LockTable::default();
        let a = t.lock_for(&[(1, 0)], 3);
        let b = t.lock_for(&[(1, 7)], 3);
        assert_ne!(a, b);
        // A section covering both merges their groups: the older id stays.
        assert_eq!(t.lock_for(&[(1, 7), (1, 0)], 3), a);
        assert_eq!(t.lock_for(&[(1, 7)], 3), a);
        assert_eq!(t.size[a as usize], 2);
        let c = t.lock_for(&[(2, 0)], 4);
        assert_ne!(c, a);
        assert_eq!(t.element[c as usize], 4);
        assert_eq!(t.len(), 3);
    }

    #[test]
    fn program_places_accesses_at_their_instruction_and_locks_around_shared_state() {
        use AccessKind::*;
        use MemType::*;
        let mut t = PacketTrace {
            accesses: vec![
                acc(PacketData, Read, 5, 0),
                acc(StaticState, Read, 8, 7), // read-only static: no lock
                acc(DynamicState, Write, 12, 9),
            ],
            visits: vec![Visit {
                element: 3,
                port: 0,
                instructions: 20,
                access_start: 0,
                access_end: 3,
            }],
            ..Default::default()
        };
        let p = CompileParams {
            route: [0, 1, 2, 1, 3],
            cycles_per_instruction: 2,
            zero_instructions: false,
            no_sync: false,
            lock_granularity: LockGranularity::Location,
            seed: 1,
            word_bytes: 4,
        };
        let mut c = Compiler::default();
        let (mut ops, mut vs, mut vt) = (Vec::new(), Vec::new(), Vec::new());
        c.compile(&t, &p, &mut ops, &mut vs, &mut vt);
        let kinds: Vec<String> = ops
            .iter()
            .map(|o| match o {
                Op::Compute(n) => format!("c{n}"),
                Op::Mem { storage, write, .. } => format!("m{storage}{}", *write as u8),
                Op::Acquire(l) => format!("a{l}"),
                Op::Release(l) => format!("r{l}"),
                Op::End => "e".into(),
                Op::Wait(k) => format!("w{k}"),
            })
            .collect();
        assert_eq!(
            kinds,
            ["c10", "m00", "c6", "m20", "c8", "a0", "m11", "r0", "c16", "e"]
        );
        assert_eq!(vs, vec![0]);
        assert_eq!(vt, vec![3]);
        // Once some packet writes static object 7 it is shared: a lock appears around it.
        t.accesses[1].kind = Write;
        c.compile(&t, &p, &mut ops, &mut vs, &mut vt);
        // Static object 7 (access 1) and dynamic object 9 (access 2) do not overlap: two
        // sections, each released before the next is acquired.
        assert_eq!(
            ops.iter()
                .filter(|o| matches!(o, Op::Acquire(_) | Op::Release(_)))
                .count(),
            4
        );
        // Each location has its own lock: object 9 keeps lock 0, object 7 gets lock 1.
        assert_eq!(ops[3], Op::Acquire(1));
        assert_eq!(ops[5], Op::Release(1));
        assert_eq!(ops[7], Op::Acquire(0));
        // Per task: both sections take the task's one lock.
        let pt = CompileParams {
            lock_granularity: LockGranularity::Task,
            ..p.clone()
        };
        let mut c2 = Compiler::default();
        c2.compile(&t, &pt, &mut ops, &mut vs, &mut vt);
        c2.compile(&t, &pt, &mut ops, &mut vs, &mut vt);
        assert_eq!(c2.locks.len(), 1);
        // S: no critical sections; Z: no compute.
        let p2 = CompileParams {
            no_sync: true,
            zero_instructions: true,
            ..p
        };
        c.compile(&t, &p2, &mut ops, &mut vs, &mut vt);
        assert!(ops.iter().all(|o| matches!(o, Op::Mem { .. } | Op::End)));
    }
}
