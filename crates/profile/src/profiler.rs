//! Aggregate per-packet traces into the profile seed 000 reports for its benchmarks (section 4
//! and Table 2): tasks (elements) visited per packet, instructions per packet, bytes per packet
//! by memory type, and the share of instructions inside critical sections.
//!
//! Critical sections follow the placement rules of seed 000 section 2.4, applied per element
//! visit to the traced accesses: a lock is acquired before the first access to a shared location
//! and released after the last; sections that overlap are merged. A persistent object is shared
//! (needs a lock) when it is dynamic state, or static state that some packet writes. Written
//! static objects are learned as the run goes, so a static object's first writer before any
//! write was seen is not counted (in practice the first packet; documented in docs/profile.md).
use pktflow_model::{AccessKind, Fate, MemType, PacketTrace};
use serde::Serialize;
use std::collections::{BTreeMap, HashSet};

#[derive(Clone, Debug, Default, Serialize)]
pub struct MeanStd {
    pub mean: f64,
    pub std: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ReadWrite {
    pub read: f64,
    pub write: f64,
    pub total: f64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct ElementProfile {
    pub name: String,
    pub class: String,
    pub visits: u64,
    pub visits_per_packet: f64,
    pub instructions: u64,
    pub instructions_per_visit: f64,
    /// Bytes per visit by memory type.
    pub bytes_per_visit: BTreeMap<&'static str, f64>,
    pub critical_section_instructions: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Drop {
    pub element: String,
    pub reason: String,
    pub count: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Output {
    pub element: String,
    pub count: u64,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Profile {
    pub packets: u64,
    pub wire_bytes_per_packet: f64,
    pub elements_visited_per_packet: MeanStd,
    pub instructions_per_packet: MeanStd,
    /// Bytes accessed per packet, by memory type (seed 000 Table 2).
    pub bytes_per_packet: BTreeMap<&'static str, ReadWrite>,
    /// Share of the dynamic instructions that lie inside critical sections (seed 000 section 4:
    /// 17% for Router, 32% for NAT).
    pub critical_section_instruction_share: f64,
    /// Share of instructions in visits that touch shared persistent state at all.
    pub shared_state_visit_instruction_share: f64,
    pub elements: Vec<ElementProfile>,
    pub outputs: Vec<Output>,
    pub drops: Vec<Drop>,
}

#[derive(Default, Clone)]
struct ElemAcc {
    visits: u64,
    instr: u64,
    bytes: [u64; 5],
    crit: u64,
}

/// Streaming aggregator: `add` each trace, then `finish`. Memory is bounded by the number of
/// elements and distinct drop reasons, whatever the trace length.
pub struct Profiler {
    names: Vec<(String, String)>,
    n: u64,
    wire: u64,
    visits: (f64, f64),
    instr: (f64, f64),
    rw: [[u64; 2]; 5],
    crit: u64,
    shared_visit_instr: u64,
    total_instr: u64,
    elems: Vec<ElemAcc>,
    drops: BTreeMap<(u32, &'static str), u64>,
    outputs: BTreeMap<u32, u64>,
    written_static: HashSet<u32>,
    intervals: Vec<(u32, u32)>,
    spans: Vec<(u32, u32, u32)>,
}

impl Profiler {
    /// `names`: (element name, class) by element index.
    pub fn new(names: Vec<(String, String)>) -> Self {
        let n = names.len();
        Profiler {
            names,
            n: 0,
            wire: 0,
            visits: (0.0, 0.0),
            instr: (0.0, 0.0),
            rw: [[0; 2]; 5],
            crit: 0,
            shared_visit_instr: 0,
            total_instr: 0,
            elems: vec![ElemAcc::default(); n],
            drops: BTreeMap::new(),
            outputs: BTreeMap::new(),
            written_static: HashSet::new(),
            intervals: Vec::new(),
            spans: Vec::new(),
        }
    }

    pub fn add(&mut self, t: &PacketTrace) {
        self.n += 1;
        self.wire += t.wire_bytes as u64;
        let nv = t.visits.len() as f64;
        self.visits.0 += nv;
        self.visits.1 += nv * nv;
        let ni = t.instructions() as f64;
        self.instr.0 += ni;
        self.instr.1 += ni * ni;
        self.total_instr += ni as u64;
        for v in &t.visits {
            let acc = &mut self.elems[v.element as usize];
            acc.visits += 1;
            acc.instr += v.instructions as u64;
            let accesses = t.accesses_of(v);
            for a in accesses {
                acc.bytes[a.mem as usize] += a.bytes as u64;
                self.rw[a.mem as usize][a.kind as usize] += a.bytes as u64;
                if a.mem == MemType::StaticState && a.kind == AccessKind::Write {
                    self.written_static.insert(a.object);
                }
            }
            // Critical sections of this visit (seed 000 section 2.4 rules 1-3).
            self.spans.clear();
            for a in accesses {
                let shared = a.mem == MemType::DynamicState
                    || (a.mem == MemType::StaticState && self.written_static.contains(&a.object));
                if !shared {
                    continue;
                }
                match self.spans.iter_mut().find(|s| s.0 == a.object) {
                    Some(s) => s.2 = a.at_instr,
                    None => self.spans.push((a.object, a.at_instr, a.at_instr)),
                }
            }
            if !self.spans.is_empty() {
                self.shared_visit_instr += v.instructions as u64;
                self.intervals.clear();
                self.intervals.extend(self.spans.iter().map(|s| (s.1, s.2)));
                self.intervals.sort_unstable();
                let mut c = 0u64;
                let (mut lo, mut hi) = self.intervals[0];
                for &(a, b) in &self.intervals[1..] {
                    if a <= hi {
                        hi = hi.max(b);
                    } else {
                        c += (hi - lo + 1) as u64;
                        (lo, hi) = (a, b);
                    }
                }
                c += (hi - lo + 1) as u64;
                let c = c.min(v.instructions.max(1) as u64);
                acc.crit += c;
                self.crit += c;
            }
        }
        for f in &t.fates {
            match *f {
                Fate::Drop { element, reason } => {
                    *self.drops.entry((element, reason)).or_default() += 1
                }
                Fate::Output { element } => *self.outputs.entry(element).or_default() += 1,
                Fate::Held { .. } => {}
            }
        }
    }

    pub fn finish(&self) -> Profile {
        let n = self.n.max(1) as f64;
        let ms = |(s, sq): (f64, f64)| {
            let mean = s / n;
            MeanStd {
                mean,
                std: (sq / n - mean * mean).max(0.0).sqrt(),
            }
        };
        let mut bytes = BTreeMap::new();
        for m in MemType::ALL {
            let [r, w] = self.rw[m as usize];
            bytes.insert(
                m.name(),
                ReadWrite {
                    read: r as f64 / n,
                    write: w as f64 / n,
                    total: (r + w) as f64 / n,
                },
            );
        }
        let elements = self
            .elems
            .iter()
            .enumerate()
            .filter(|(_, a)| a.visits > 0)
            .map(|(i, a)| {
                let v = a.visits as f64;
                ElementProfile {
                    name: self.names[i].0.clone(),
                    class: self.names[i].1.clone(),
                    visits: a.visits,
                    visits_per_packet: v / n,
                    instructions: a.instr,
                    instructions_per_visit: a.instr as f64 / v,
                    bytes_per_visit: MemType::ALL
                        .iter()
                        .map(|m| (m.name(), a.bytes[*m as usize] as f64 / v))
                        .collect(),
                    critical_section_instructions: a.crit,
                }
            })
            .collect();
        let total = self.total_instr.max(1) as f64;
        Profile {
            packets: self.n,
            wire_bytes_per_packet: self.wire as f64 / n,
            elements_visited_per_packet: ms(self.visits),
            instructions_per_packet: ms(self.instr),
            bytes_per_packet: bytes,
            critical_section_instruction_share: self.crit as f64 / total,
            shared_state_visit_instruction_share: self.shared_visit_instr as f64 / total,
            elements,
            outputs: self
                .outputs
                .iter()
                .map(|(e, c)| Output {
                    element: self.names[*e as usize].0.clone(),
                    count: *c,
                })
                .collect(),
            drops: self
                .drops
                .iter()
                .map(|((e, r), c)| Drop {
                    element: self.names[*e as usize].0.clone(),
                    reason: r.to_string(),
                    count: *c,
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktflow_model::{MemAccess, Visit};

    fn acc(mem: MemType, kind: AccessKind, at: u32, object: u32) -> MemAccess {
        MemAccess {
            mem,
            kind,
            bytes: 8,
            at_instr: at,
            object,
            key: 0,
            lock: pktflow_model::LockMark::None,
        }
    }

    #[test]
    fn critical_sections_merge_overlaps_and_skip_read_only_static_state() {
        // visit 0: 100 instructions; dynamic object 1 accessed at 10 and 30, object 2 at 20..50
        // (overlap -> merged 10..50 = 41 instrs); read-only static object 3 at 80 (no lock).
        let t = PacketTrace {
            accesses: vec![
                acc(MemType::DynamicState, AccessKind::Read, 10, 1),
                acc(MemType::DynamicState, AccessKind::Read, 20, 2),
                acc(MemType::DynamicState, AccessKind::Write, 30, 1),
                acc(MemType::DynamicState, AccessKind::Write, 50, 2),
                acc(MemType::StaticState, AccessKind::Read, 80, 3),
            ],
            visits: vec![Visit {
                element: 0,
                port: 0,
                instructions: 100,
                access_start: 0,
                access_end: 5,
            }],
            fates: vec![Fate::Drop {
                element: 0,
                reason: "x",
            }],
            ..PacketTrace::default()
        };
        let mut p = Profiler::new(vec![("a".into(), "A".into())]);
        p.add(&t);
        let r = p.finish();
        assert_eq!(r.elements[0].critical_section_instructions, 41);
        assert!((r.critical_section_instruction_share - 0.41).abs() < 1e-9);
        assert_eq!(r.bytes_per_packet["dynamic_state"].total, 32.0);
        assert_eq!(r.bytes_per_packet["static_state"].read, 8.0);
        assert_eq!(r.drops[0].reason, "x");
    }

    #[test]
    fn mean_and_std_of_visits() {
        let mut p = Profiler::new(vec![("a".into(), "A".into())]);
        for k in [1usize, 3] {
            let t = PacketTrace {
                visits: vec![
                    Visit {
                        element: 0,
                        port: 0,
                        instructions: 1,
                        access_start: 0,
                        access_end: 0
                    };
                    k
                ],
                ..PacketTrace::default()
            };
            p.add(&t);
        }
        let r = p.finish();
        assert_eq!(r.elements_visited_per_packet.mean, 2.0);
        assert_eq!(r.elements_visited_per_packet.std, 1.0);
    }
}
