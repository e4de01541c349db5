//! Thread programs: what one hardware thread executes for one packet.
//!
//! Run to completion: a packet's program is the concatenation of all element visits of its
//! functional trace, with no queues between elements. Each traced memory access becomes one
//! word (32-bit) access per 4 bytes, placed at its instruction (`at_instr`); the instructions
//! between accesses become `Compute` gaps. Critical sections follow the same rule as the NP
//! simulator (`pktflow_npsim::prog`): a lock is taken before the first access to a shared
//! location of a visit and released after the last, overlapping sections merge, and locations
//! that ever share a section share a lock id for good. Lock ids are later folded onto the
//! machine's mutexes round-robin (aliasing), unless mutexes are unlimited.
//!
//! Addresses (the traces carry (object, key) and offsets, not addresses):
//! * persistent state (static and dynamic): object `o` owns a 1 MiB region in the shared heap
//!   (the n-th object seen gets region n), and key `k` is word `(k + 37 n) mod 2^18` of it (so a
//!   table's slots stay in address order, and different objects' first words differ in their low
//!   address bits, as objects laid out one after another in a heap would);
//! * stack and packet meta-data: the thread's private stack region, at the access's offset
//!   modulo 4 KiB (the engine adds the thread's stack base);
//! * packet data: the packet's input-buffer slot, at the access's offset (on-chip, not cached);
//! * output buffer (echo): on-chip, not cached.
use pktflow_model::{AccessKind, MemType, PacketTrace};
use pktflow_npsim::prog::{critical_sections, Loc, LockTable};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Where an access goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[repr(u8)]
pub enum Class {
    /// The packet's input-buffer slot (single-cycle, not cached).
    Packet,
    /// The output buffer (single-cycle, not cached).
    Output,
    /// The thread's private stack (cached; not tracked by conflict detection).
    Stack,
    /// Shared persistent state (cached; tracked by conflict detection in a transaction).
    Shared,
    /// The lock word of an application's software lock (a trace access marked with a
    /// [`pktflow_model::LockMark`]). Outside a transaction: shared state like any other.
    /// Inside one: the lock call is the transaction boundary, so the access is one instruction
    /// with no memory reference, neither in the read/write sets nor in the undo log.
    LockWord,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `n` non-memory instructions.
    Compute(u32),
    /// One word load (an instruction). `addr` is a byte address for `Shared`, an offset for
    /// the other classes.
    Load { addr: u32, class: Class },
    /// One word store.
    Store { addr: u32, class: Class },
    /// Acquire lock `id` (one instruction to the synchronization unit).
    Lock(u32),
    /// Release lock `id`.
    Unlock(u32),
}

/// One packet's program: `ops[start..end]` of the workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PacketProg {
    pub start: u32,
    pub end: u32,
    /// Frame bytes (the functional trace's wire size).
    pub wire_bytes: u32,
    /// Instructions, memory instructions and lock instructions included.
    pub instructions: u64,
}

/// The work the engine replays: packets' programs, cycled through in order.
#[derive(Clone, Debug, Default)]
pub struct Workload {
    pub name: String,
    pub ops: Vec<Op>,
    pub packets: Vec<PacketProg>,
    /// Distinct lock ids used (ids are `0..locks`).
    pub locks: u32,
    /// Name of what each lock protects (for abort attribution), by lock id.
    pub lock_names: Vec<String>,
    /// Name of each shared 1 MiB region (`addr >> 20`) for abort attribution.
    pub region_names: Vec<(u32, String)>,
    /// Element visits of traced packets, in op order: (index of the visit's first op in `ops`,
    /// element index). A visit runs to the next visit's first op or its packet's end. Empty
    /// for echo and parametric (no elements).
    pub visits: Vec<(u32, u32)>,
    /// (name, class) of each element of a traced application, by element index.
    pub elements: Vec<(String, String)>,
}

/// [`Workload::critical_section_stats`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct CriticalSectionStats {
    pub count: u64,
    pub per_packet: f64,
    pub loads_mean: f64,
    pub loads_max: u64,
    pub stores_mean: f64,
    pub stores_max: u64,
    pub shared_stores_mean: f64,
    pub shared_stores_max: u64,
    pub unique_words_mean: f64,
    pub unique_words_max: u64,
}

/// Bytes of one persistent object's region.
pub const REGION_BYTES: u32 = 1 << 20;
/// Base of the shared heap.
pub const HEAP_BASE: u32 = 0x1000_0000;
/// Bytes of one thread's stack region (offsets wrap inside it).
pub const STACK_BYTES: u32 = 4096;
/// Most word accesses one traced access expands to (longer ones are cut, counted in
/// [`Workload`] building as truncated).
pub const MAX_WORDS_PER_ACCESS: u32 = 512;
/// Most ops a workload may hold (memory bound: 8 bytes each, so 1 GiB).
pub const MAX_OPS: usize = 128 << 20;

impl Workload {
    /// Mean instructions per packet.
    pub fn mean_instructions(&self) -> f64 {
        if self.packets.is_empty() {
            return 0.0;
        }
        self.packets
            .iter()
            .map(|p| p.instructions as f64)
            .sum::<f64>()
            / self.packets.len() as f64
    }
    /// Mean frame bytes.
    pub fn mean_bytes(&self) -> f64 {
        if self.packets.is_empty() {
            return 0.0;
        }
        self.packets
            .iter()
            .map(|p| p.wire_bytes as f64)
            .sum::<f64>()
            / self.packets.len() as f64
    }
    /// Per critical section (outermost lock to its unlock; a transaction under `--sync tm`),
    /// over every packet of the pool: how many there are and the mean and largest number of
    /// loads and stores to the data cache (shared state and stack; packet-buffer accesses are
    /// not cached and not counted), stores to shared state alone (what the undo log keeps with
    /// the stack filter) and distinct shared words touched. The thesis's Table 8.1 shape.
    /// Lock-word accesses ([`Class::LockWord`]) are not counted: the thesis's transactions
    /// have none (its NetTM programs replace the lock calls by transaction boundaries).
    pub fn critical_section_stats(&self) -> CriticalSectionStats {
        let mut st = CriticalSectionStats::default();
        let (mut loads, mut stores, mut shared_stores) = (0u64, 0u64, 0u64);
        let mut words: HashSet<u32> = HashSet::new();
        let mut sums = [0u64; 4];
        for p in &self.packets {
            let mut depth = 0u32;
            for op in self.ops_of(p) {
                match *op {
                    Op::Lock(_) => {
                        if depth == 0 {
                            (loads, stores, shared_stores) = (0, 0, 0);
                            words.clear();
                        }
                        depth += 1;
                    }
                    Op::Unlock(_) if depth > 0 => {
                        depth -= 1;
                        if depth == 0 {
                            st.count += 1;
                            let u = words.len() as u64;
                            for (k, v) in [loads, stores, shared_stores, u].into_iter().enumerate()
                            {
                                sums[k] += v;
                            }
                            st.loads_max = st.loads_max.max(loads);
                            st.stores_max = st.stores_max.max(stores);
                            st.shared_stores_max = st.shared_stores_max.max(shared_stores);
                            st.unique_words_max = st.unique_words_max.max(u);
                        }
                    }
                    Op::Load { addr, class } if depth > 0 => match class {
                        Class::Shared => {
                            loads += 1;
                            words.insert(addr & !3);
                        }
                        Class::Stack => loads += 1,
                        _ => {}
                    },
                    Op::Store { addr, class } if depth > 0 => match class {
                        Class::Shared => {
                            stores += 1;
                            shared_stores += 1;
                            words.insert(addr & !3);
                        }
                        Class::Stack => stores += 1,
                        _ => {}
                    },
                    _ => {}
                }
            }
        }
        let n = st.count.max(1) as f64;
        st.per_packet = st.count as f64 / self.packets.len().max(1) as f64;
        st.loads_mean = sums[0] as f64 / n;
        st.stores_mean = sums[1] as f64 / n;
        st.shared_stores_mean = sums[2] as f64 / n;
        st.unique_words_mean = sums[3] as f64 / n;
        st
    }

    pub fn ops_of(&self, p: &PacketProg) -> &[Op] {
        &self.ops[p.start as usize..p.end as usize]
    }
    /// What a shared address belongs to.
    pub fn region_name(&self, addr: u32) -> String {
        let r = addr >> 20;
        self.region_names
            .iter()
            .find(|x| x.0 == r)
            .map(|x| x.1.clone())
            .unwrap_or_else(|| format!("region 0x{:x}", addr & !(REGION_BYTES - 1)))
    }
    fn push_packet(&mut self, start: usize, wire_bytes: u32) -> Result<(), String> {
        self.push_packet_within(start, wire_bytes, MAX_OPS)
    }

    fn push_packet_within(
        &mut self,
        start: usize,
        wire_bytes: u32,
        max_ops: usize,
    ) -> Result<(), String> {
        if self.ops.len() > max_ops {
            // Name the option and how far to go: "use fewer packets" left the user guessing,
            // and the thesis's UDHCP exceeds the budget with the default 2,000 packets.
            let k = self.packets.len();
            return Err(format!(
                "workload.packets (--packets): the programs of the first {} packets already exceed the {max_ops} operations a workload may hold (about {} per packet here); use --packets {k} or fewer",
                k + 1,
                self.ops.len() / (k + 1)
            ));
        }
        let instructions = self.ops[start..]
            .iter()
            .map(|o| match o {
                Op::Compute(n) => *n as u64,
                _ => 1,
            })
            .sum();
        self.packets.push(PacketProg {
            start: start as u32,
            end: self.ops.len() as u32,
            wire_bytes,
            instructions,
        });
        Ok(())
    }
}

/// Builds a workload from functional traces, one packet at a time.
pub struct TraceCompiler {
    pub w: Workload,
    written_static: HashSet<u32>,
    locks: LockTable,
    spans: Vec<(Loc, u32, u32)>,
    sections: Vec<(u32, u32)>,
    members: Vec<Vec<Loc>>,
    element_names: Vec<String>,
    /// Traced accesses cut at [`MAX_WORDS_PER_ACCESS`] words.
    pub truncated: u64,
}

impl TraceCompiler {
    pub fn new(name: &str, element_names: Vec<String>) -> TraceCompiler {
        TraceCompiler {
            w: Workload {
                name: name.into(),
                ..Default::default()
            },
            written_static: HashSet::new(),
            locks: LockTable::default(),
            spans: Vec::new(),
            sections: Vec::new(),
            members: Vec::new(),
            element_names,
            truncated: 0,
        }
    }

    fn region_of(&mut self, object: u32) -> u32 {
        // Objects are `element << 8 | n`; regions are numbered densely by first use.
        if let Some(r) = self
            .w
            .region_names
            .iter()
            .find(|x| x.1.ends_with(&format!("#{object}")))
        {
            return r.0;
        }
        let r = (HEAP_BASE >> 20) + self.w.region_names.len() as u32;
        let el = (object >> 8) as usize;
        let en = self
            .element_names
            .get(el)
            .cloned()
            .unwrap_or_else(|| format!("element {el}"));
        self.w
            .region_names
            .push((r, format!("{en} state {} #{object}", object & 0xff)));
        r
    }

    /// Append the program of one traced packet.
    pub fn add(&mut self, t: &PacketTrace) -> Result<(), String> {
        let start = self.w.ops.len();
        for v in &t.visits {
            self.w.visits.push((self.w.ops.len() as u32, v.element));
            let acc = t.accesses_of(v);
            for a in acc {
                if a.mem == MemType::StaticState && a.kind == AccessKind::Write {
                    self.written_static.insert(a.object);
                }
            }
            let ws = &self.written_static;
            critical_sections(
                acc,
                |a| {
                    let shared = a.mem == MemType::DynamicState
                        || (a.mem == MemType::StaticState && ws.contains(&a.object));
                    shared.then_some((a.object, a.key))
                },
                &mut self.spans,
                &mut self.sections,
                &mut self.members,
            );
            let mut sec_lock = Vec::with_capacity(self.sections.len());
            for k in 0..self.sections.len() {
                let l = self.locks.lock_for(&self.members[k], v.element);
                sec_lock.push(l);
            }
            let mut cur = 0u32; // instructions emitted in this visit
            let mut k = 0usize;
            for (i, a) in acc.iter().enumerate() {
                let i = i as u32;
                if a.at_instr > cur {
                    self.w.ops.push(Op::Compute(a.at_instr - cur));
                    cur = a.at_instr;
                }
                if k < self.sections.len() && self.sections[k].0 == i {
                    self.w.ops.push(Op::Lock(sec_lock[k]));
                    cur += 1;
                }
                let mut words = a.bytes.div_ceil(4).max(1);
                if words > MAX_WORDS_PER_ACCESS {
                    words = MAX_WORDS_PER_ACCESS;
                    self.truncated += 1;
                }
                let (class, base) = match a.mem {
                    MemType::PacketData => (Class::Packet, (a.key as u32) & !3),
                    MemType::PacketMeta | MemType::Stack => {
                        (Class::Stack, (a.key as u32 % STACK_BYTES) & !3)
                    }
                    MemType::StaticState | MemType::DynamicState => {
                        let class = if a.lock.is_none() {
                            Class::Shared
                        } else {
                            Class::LockWord
                        };
                        let r = self.region_of(a.object);
                        // Objects start at staggered words (37 words per region index) so
                        // that different objects' first words do not share the low address
                        // bits a direct-mapped cache or a bit-selection signature uses.
                        let stagger = ((r - (HEAP_BASE >> 20)) as u64) * 37;
                        let word = (a.key.wrapping_add(stagger) % (REGION_BYTES as u64 / 4)) as u32;
                        (class, (r << 20) | (word * 4))
                    }
                };
                for wd in 0..words {
                    let addr = match class {
                        Class::Shared | Class::LockWord => {
                            (base & !(REGION_BYTES - 1)) | ((base + 4 * wd) & (REGION_BYTES - 1))
                        }
                        Class::Stack => (base + 4 * wd) % STACK_BYTES,
                        _ => base.wrapping_add(4 * wd),
                    };
                    self.w.ops.push(match a.kind {
                        AccessKind::Read => Op::Load { addr, class },
                        AccessKind::Write => Op::Store { addr, class },
                    });
                }
                cur += words;
                if k < self.sections.len() && self.sections[k].1 == i {
                    self.w.ops.push(Op::Unlock(sec_lock[k]));
                    cur += 1;
                    k += 1;
                }
            }
            if v.instructions > cur {
                self.w.ops.push(Op::Compute(v.instructions - cur));
            }
        }
        if self.w.ops.len() == start {
            // A packet that did nothing still costs the receive loop one instruction.
            self.w.ops.push(Op::Compute(1));
        }
        self.w.push_packet(start, t.wire_bytes.max(1))
    }

    pub fn finish(mut self) -> Workload {
        self.w.locks = self.locks.len() as u32;
        let mut names = Vec::with_capacity(self.locks.len());
        for l in 0..self.locks.len() as u32 {
            let el = self.locks.element[l as usize] as usize;
            names.push(format!(
                "lock {l} ({})",
                self.element_names.get(el).cloned().unwrap_or_default()
            ));
        }
        self.w.lock_names = names;
        self.w
    }
}

/// The thesis's echo: copies each packet from the input to the output buffer; 300 ± 10 dynamic
/// instructions for a 64-byte packet and 1300 ± 10 for a 1518-byte one (Table 3.1), linear in
/// between. One word load and one word store per 4 bytes copied; the remaining instructions are
/// computation spread evenly between them. The ± 10 is drawn uniformly per packet.
pub fn echo(packet_bytes: u32, packets: u32, seed: u64) -> Result<Workload, String> {
    if !(64..=9000).contains(&packet_bytes) {
        return Err(format!(
            "--packet-bytes must be 64 to 9000 for echo, got {packet_bytes}"
        ));
    }
    check_packets(packets)?;
    let mut w = Workload {
        name: "echo".into(),
        ..Default::default()
    };
    let words = packet_bytes.div_ceil(4);
    let base = 300.0 + (packet_bytes as f64 - 64.0) * 1000.0 / 1454.0;
    let mut s = seed ^ 0xec40;
    for _ in 0..packets {
        let jitter = (splitmix(&mut s) % 21) as i64 - 10;
        let total = (base.round() as i64 + jitter).max(2 * words as i64 + 1) as u32;
        let compute = total - 2 * words;
        let start = w.ops.len();
        let per = compute / (words + 1);
        let mut used = 0;
        for i in 0..words {
            if per > 0 {
                w.ops.push(Op::Compute(per));
                used += per;
            }
            w.ops.push(Op::Load {
                addr: 4 * i,
                class: Class::Packet,
            });
            w.ops.push(Op::Store {
                addr: 4 * i,
                class: Class::Output,
            });
        }
        if compute > used {
            w.ops.push(Op::Compute(compute - used));
        }
        w.push_packet(start, packet_bytes)?;
    }
    Ok(w)
}

/// Appendix B's parametric benchmark (Algorithm 1) as packets: each packet is one iteration:
/// `iter_non_tm` calls of `work()`, then a critical section on the single global lock (id 0)
/// with one shared access at `rand() % range` and `iter_tm` calls of `work()`. `work()` is
/// `work_instructions` instructions with one stack store and one stack load (filling the undo
/// log inside a transaction). The shared access is a load then a store of the chosen word (a
/// read-modify-write), each of the `range` locations one word of its own region.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Parametric {
    pub iter_non_tm: u32,
    pub iter_tm: u32,
    pub range: u32,
    pub work_instructions: u32,
}

impl Default for Parametric {
    fn default() -> Self {
        Parametric {
            iter_non_tm: 4,
            iter_tm: 4,
            range: 1024,
            work_instructions: 20,
        }
    }
}

impl Parametric {
    pub fn validate(&self) -> Result<(), String> {
        if self.iter_non_tm > 10_000 || self.iter_tm > 10_000 {
            return Err("parametric iterations must be 0 to 10000".into());
        }
        if self.range == 0 || self.range > REGION_BYTES / 4 {
            return Err(format!(
                "parametric range must be 1 to {}, got {}",
                REGION_BYTES / 4,
                self.range
            ));
        }
        if self.work_instructions < 3 || self.work_instructions > 100_000 {
            return Err(format!(
                "parametric work_instructions must be 3 to 100000, got {}",
                self.work_instructions
            ));
        }
        Ok(())
    }

    pub fn build(&self, packets: u32, seed: u64) -> Result<Workload, String> {
        self.validate()?;
        check_packets(packets)?;
        let mut w = Workload {
            name: "parametric".into(),
            locks: 1,
            lock_names: vec!["lock 0 (global lock)".into()],
            region_names: vec![(HEAP_BASE >> 20, "parametric shared array".into())],
            ..Default::default()
        };
        let mut s = seed ^ 0xb1;
        let work = |w: &mut Workload, i: u32| {
            let n = self.work_instructions - 2;
            w.ops.push(Op::Compute(n / 2));
            w.ops.push(Op::Store {
                addr: (4 * (i % 64)) % STACK_BYTES,
                class: Class::Stack,
            });
            w.ops.push(Op::Compute(n - n / 2));
            w.ops.push(Op::Load {
                addr: (4 * (i % 64)) % STACK_BYTES,
                class: Class::Stack,
            });
        };
        for _ in 0..packets {
            let start = w.ops.len();
            for i in 0..self.iter_non_tm {
                work(&mut w, i);
            }
            w.ops.push(Op::Lock(0));
            let loc = (splitmix(&mut s) % self.range as u64) as u32;
            let addr = HEAP_BASE | (loc * 4);
            w.ops.push(Op::Load {
                addr,
                class: Class::Shared,
            });
            w.ops.push(Op::Store {
                addr,
                class: Class::Shared,
            });
            for i in 0..self.iter_tm {
                work(&mut w, i);
            }
            w.ops.push(Op::Unlock(0));
            w.push_packet(start, 64)?;
        }
        Ok(w)
    }
}

/// Most packets in a workload's pool.
pub const MAX_POOL_PACKETS: u32 = 1_000_000;

fn check_packets(packets: u32) -> Result<(), String> {
    if packets == 0 || packets > MAX_POOL_PACKETS {
        return Err(format!(
            "--packets must be 1 to {MAX_POOL_PACKETS}, got {packets}"
        ));
    }
    Ok(())
}

pub(crate) fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workload_over_the_operation_budget_names_the_option_and_what_fits() {
        // `pktflow rtc udhcp` once refused its default with "exceed 67108864 operations; use
        // fewer packets", naming neither the option nor how far to go.
        let mut w = Workload::default();
        let mut err = None;
        for _ in 0..10 {
            let start = w.ops.len();
            w.ops.extend([Op::Compute(1); 4]);
            if let Err(e) = w.push_packet_within(start, 64, 10) {
                err = Some(e);
                break;
            }
        }
        let e = err.expect("the budget is exceeded");
        assert_eq!(
            e,
            "workload.packets (--packets): the programs of the first 3 packets already exceed \
             the 10 operations a workload may hold (about 4 per packet here); use --packets 2 \
             or fewer"
        );
    }

    #[test]
    fn an_op_takes_eight_bytes() {
        // MAX_OPS's memory bound rests on it.
        assert_eq!(std::mem::size_of::<Op>(), 8);
    }
    use pktflow_model::{MemAccess, Visit};

    fn acc(
        mem: MemType,
        kind: AccessKind,
        at: u32,
        object: u32,
        key: u64,
        bytes: u32,
    ) -> MemAccess {
        MemAccess {
            mem,
            kind,
            bytes,
            at_instr: at,
            object,
            key,
            lock: pktflow_model::LockMark::None,
        }
    }

    #[test]
    fn trace_becomes_compute_words_and_a_locked_section() {
        use AccessKind::*;
        use MemType::*;
        let t = PacketTrace {
            wire_bytes: 64,
            accesses: vec![
                acc(PacketData, Read, 5, 0, 12, 8),
                acc(DynamicState, Read, 10, 0x101, 3, 4),
                acc(DynamicState, Write, 20, 0x101, 3, 4),
            ],
            visits: vec![Visit {
                element: 1,
                port: 0,
                instructions: 40,
                access_start: 0,
                access_end: 3,
            }],
            ..Default::default()
        };
        let mut c = TraceCompiler::new("t", vec!["a".into(), "nat".into()]);
        c.add(&t).unwrap();
        let w = c.finish();
        let ops = w.ops_of(&w.packets[0]);
        let a = HEAP_BASE | 12;
        assert_eq!(
            ops,
            &[
                Op::Compute(5),
                Op::Load {
                    addr: 12,
                    class: Class::Packet
                },
                Op::Load {
                    addr: 16,
                    class: Class::Packet
                },
                Op::Compute(3),
                Op::Lock(0),
                Op::Load {
                    addr: a,
                    class: Class::Shared
                },
                Op::Compute(8),
                Op::Store {
                    addr: a,
                    class: Class::Shared
                },
                Op::Unlock(0),
                Op::Compute(18),
            ]
        );
        assert_eq!(w.packets[0].instructions, 40);
        assert_eq!(w.locks, 1);
        assert!(w.region_name(a).starts_with("nat state 1"));
    }

    #[test]
    fn echo_matches_the_thesis_instruction_counts() {
        for (bytes, want) in [(64u32, 300.0), (1518, 1300.0)] {
            let w = echo(bytes, 200, 3).unwrap();
            let m = w.mean_instructions();
            assert!((m - want).abs() < 3.0, "{bytes}: {m}");
            assert!(w
                .packets
                .iter()
                .all(|p| (p.instructions as f64 - want).abs() <= 10.5));
        }
        assert!(echo(20, 1, 0).is_err());
        assert!(echo(64, 0, 0).is_err());
    }

    #[test]
    fn parametric_has_one_global_critical_section_per_packet() {
        let p = Parametric {
            iter_non_tm: 2,
            iter_tm: 3,
            range: 8,
            work_instructions: 10,
        };
        let w = p.build(50, 1).unwrap();
        for pk in &w.packets {
            let ops = w.ops_of(pk);
            assert_eq!(ops.iter().filter(|o| matches!(o, Op::Lock(0))).count(), 1);
            assert_eq!(pk.instructions, 5 * 10 + 4);
            let shared: Vec<_> = ops
                .iter()
                .filter_map(|o| match o {
                    Op::Load {
                        addr,
                        class: Class::Shared,
                    } => Some(*addr),
                    _ => None,
                })
                .collect();
            assert_eq!(shared.len(), 1);
            assert!(shared[0] >= HEAP_BASE && shared[0] < HEAP_BASE + 32);
        }
        assert!(Parametric {
            range: 0,
            ..p.clone()
        }
        .build(1, 0)
        .is_err());
    }

    #[test]
    fn critical_section_statistics_count_per_outermost_section() {
        let sh = |a: u32| Op::Load {
            addr: HEAP_BASE | a,
            class: Class::Shared,
        };
        let st = |a: u32, class| Op::Store { addr: a, class };
        let ops = vec![
            Op::Lock(0),
            sh(0),
            sh(0),
            Op::Lock(1), // nested: the same section
            st(HEAP_BASE | 4, Class::Shared),
            st(8, Class::Stack),
            Op::Load {
                addr: 0,
                class: Class::Packet,
            },
            Op::Unlock(1),
            Op::Unlock(0),
            sh(12), // outside any section
            Op::Lock(2),
            sh(16),
            Op::Unlock(2),
        ];
        let mut w = Workload {
            ops,
            ..Default::default()
        };
        w.packets.push(PacketProg {
            start: 0,
            end: w.ops.len() as u32,
            wire_bytes: 64,
            instructions: 13,
        });
        let s = w.critical_section_stats();
        assert_eq!(s.count, 2);
        assert_eq!((s.loads_max, s.stores_max, s.shared_stores_max), (2, 2, 1));
        assert_eq!(s.unique_words_max, 2);
        assert_eq!(
            (s.loads_mean, s.stores_mean, s.unique_words_mean),
            (1.5, 1.0, 1.5)
        );
        assert_eq!(s.per_packet, 2.0);
    }
}
