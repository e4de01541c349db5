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
//! is a persistent-state object; it is shared when it is dynamic state, or static state that
//! some packet writes (the same rule as `pktflow_profile::profiler`). The lock of a task is one
//! per task (element): Click elements own their persistent heap, and a task holds at most one
//! lock at a time, as the paper requires.
use pktflow_model::{AccessKind, MemAccess, MemType, PacketTrace};
use std::collections::HashSet;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Cycles of computation.
    Compute(u32),
    /// One memory request to storage `storage` (index in the simulator's storage table);
    /// `hash` picks the channel (address interleaving).
    Mem { storage: u8, write: bool, hash: u32 },
    /// Acquire the lock of task `lock`.
    Acquire(u32),
    /// Release it (after the section's outstanding accesses complete).
    Release(u32),
    /// End of the instance (after its outstanding accesses complete).
    End,
}

/// Merged critical sections of one visit, as inclusive ranges of access indices. `spans` is
/// scratch (object, first, last). Accesses are in execution order (`at_instr` nondecreasing).
pub fn critical_sections(
    accesses: &[MemAccess],
    is_shared: impl Fn(&MemAccess) -> bool,
    spans: &mut Vec<(u32, u32, u32)>,
    out: &mut Vec<(u32, u32)>,
) {
    spans.clear();
    out.clear();
    for (i, a) in accesses.iter().enumerate() {
        if !is_shared(a) {
            continue;
        }
        let i = i as u32;
        match spans.iter_mut().find(|s| s.0 == a.object) {
            Some(s) => s.2 = i,
            None => spans.push((a.object, i, i)),
        }
    }
    if spans.is_empty() {
        return;
    }
    spans.sort_unstable_by_key(|s| (s.1, s.2));
    let (mut lo, mut hi) = (spans[0].1, spans[0].2);
    for s in &spans[1..] {
        if s.1 <= hi {
            hi = hi.max(s.2);
        } else {
            out.push((lo, hi));
            (lo, hi) = (s.1, s.2);
        }
    }
    out.push((lo, hi));
}

/// Compiler state kept across packets: which static objects some packet has written (they
/// are shared), and scratch buffers.
#[derive(Default)]
pub struct Compiler {
    pub written_static: HashSet<u32>,
    spans: Vec<(u32, u32, u32)>,
    sections: Vec<(u32, u32)>,
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
    pub seed: u64,
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
        for v in &t.visits {
            vstart.push(ops.len() as u32);
            vtask.push(v.element);
            let acc = t.accesses_of(v);
            for a in acc {
                if a.mem == MemType::StaticState && a.kind == AccessKind::Write {
                    self.written_static.insert(a.object);
                }
            }
            if !p.no_sync {
                let ws = &self.written_static;
                critical_sections(
                    acc,
                    |a| {
                        a.mem == MemType::DynamicState
                            || (a.mem == MemType::StaticState && ws.contains(&a.object))
                    },
                    &mut self.spans,
                    &mut self.sections,
                );
            } else {
                self.sections.clear();
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
                let i = i as u32;
                if k < self.sections.len() && self.sections[k].0 == i {
                    ops.push(Op::Acquire(v.element));
                }
                // Address interleaving: packet buffers by packet and 64-byte block, persistent
                // state by object and key.
                let base = if a.mem.is_persistent() {
                    (a.object as u64) << 40
                } else {
                    t.packet.wrapping_mul(0x1_0000_0001)
                };
                let hash = mix(p.seed ^ base ^ (a.key >> 6) ^ ((a.mem as u64) << 60)) as u32;
                ops.push(Op::Mem {
                    storage: p.route[a.mem as usize],
                    write: a.kind == AccessKind::Write,
                    hash,
                });
                if k < self.sections.len() && self.sections[k].1 == i {
                    ops.push(Op::Release(v.element));
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
        let (mut s, mut out) = (Vec::new(), Vec::new());
        critical_sections(&a, |x| x.mem == DynamicState, &mut s, &mut out);
        assert_eq!(out, vec![(0, 3), (5, 5)]);
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
            seed: 1,
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
            })
            .collect();
        assert_eq!(
            kinds,
            ["c10", "m00", "c6", "m20", "c8", "a3", "m11", "r3", "c16", "e"]
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
                .filter(|o| matches!(o, Op::Acquire(3) | Op::Release(3)))
                .count(),
            4
        );
        assert_eq!(ops[3], Op::Acquire(3));
        assert_eq!(ops[5], Op::Release(3));
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
