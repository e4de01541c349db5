//! The throughput cost model of seed 001 (`001_50c9ec885c831f52.txt`) section 4.2:
//!
//! > H = k × ⌊n/p⌋ if n ≥ p
//! > k = γ / max_{t_i ∈ T}(f^rsp_core_i × λ_i ÷ d_i)
//!
//! with n the MEs, p the pipeline stages, γ the threads per ME, λ_i the input packet rate of
//! task i, d_i its duplication and f^rsp_core_i "the average response time of the task for each
//! packet without duplication and with single-threaded execution on one processor", "modeled as
//! a combination of" computation, memory access latency, communication and synchronization
//! costs. Every term, its formula and the source of each parameter is in docs/tdpm.md.
//!
//! Conventions of this implementation:
//! * Work is counted per packet entering the application: `W_i = f^rsp_core_i × λ_i` (the
//!   utilization factor of section 4.1), in ME cycles.
//! * A mapping duplicates task i `d_i` times in one copy of the pipeline and runs `c` copies,
//!   so the task runs on `D_i = c × d_i` MEs; one copy occupies `p = Σ d_i` MEs and
//!   `c = ⌊n/p⌋` (when no task is duplicated, p is the number of ME tasks, as in the paper).
//!   H = k × c then equals `min_i γ c d_i / W_i(D_i)`.
//! * n < p: tasks that get no ME run on the XScale core (section 4.2: "When n is less than p,
//!   some tasks will be assigned to the XScale core and it requires a different throughput
//!   model"). The XScale is one single-threaded processor shared by all its tasks: its rate
//!   bound is `1 / Σ_{i on XScale} W^x_i` (seconds per input packet). H is the smaller of the
//!   ME bound and the XScale bound.
use crate::error::TdpmError;
use crate::graph::{End, PpfGraph};
use pktflow_arch::NpArch;
use serde::Serialize;
use std::collections::HashMap;

/// One memory level: latency of a reference and the bytes one reference moves.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Level {
    pub read_cycles: f64,
    pub write_cycles: f64,
    pub width_bytes: u32,
}

/// Machine parameters of the cost model (from an `NpArch` preset, see [`Machine::from_arch`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Machine {
    /// n: MEs available to the application.
    pub engines: u32,
    /// γ: hardware threads per ME.
    pub threads: u32,
    /// Control store of one ME, instructions.
    pub control_store: u32,
    pub me_hz: f64,
    pub me_cpi: f64,
    pub xscale_hz: f64,
    pub xscale_cpi: f64,
    /// Latency of one reference per level, ME cycles.
    pub levels: HashMap<String, Level>,
    /// Level that holds packets (channels load/store headers there).
    pub packet_level: String,
    /// Level that holds locks (acquire = atomic read, release = write).
    pub lock_level: String,
}

/// Access widths, bytes per reference. Seed 001 section 3: "no more than two wide DRAM
/// accesses (64B width)". SRAM/scratchpad: 8 longwords per command, local memory: one
/// longword (public IXP2400 figures, approximate).
fn width_of(level: &str) -> u32 {
    match level {
        "dram" => 64,
        "sram" | "scratchpad" => 32,
        _ => 4,
    }
}

impl Machine {
    /// From an NP preset: `engines` MEs for the application (at most `pe_count -
    /// interface_pes`), γ = `hardware_contexts_per_pe`, the control store, clocks, and the
    /// zero-load latency of each storage device: bus (unpipelined + pipelined) + device
    /// (unpipelined + pipelined read or write).
    pub fn from_arch(arch: &NpArch, engines: u32) -> Result<Machine, TdpmError> {
        let avail = arch.np.pe_count.saturating_sub(arch.np.interface_pes);
        if engines == 0 {
            return Err(TdpmError::Machine(
                "--engines must be at least 1 (use the base mapper for the XScale alone)".into(),
            ));
        }
        if engines > avail {
            return Err(TdpmError::Machine(format!(
                "{engines} engines requested but the architecture has {} MEs of which {} are \
                 reserved for the receiver/transmitter: at most {avail} for the application",
                arch.np.pe_count, arch.np.interface_pes
            )));
        }
        Self::from_arch_unchecked(arch, engines)
    }

    /// Like [`Machine::from_arch`] without the bound on engines (generated instances with
    /// more engines than the IXP2400 has, e.g. the 64-engine scaling runs).
    pub fn from_arch_unchecked(arch: &NpArch, engines: u32) -> Result<Machine, TdpmError> {
        if engines == 0 {
            return Err(TdpmError::Machine("engines must be at least 1".into()));
        }
        let cs = arch.control_store.as_ref().ok_or_else(|| {
            TdpmError::Machine("the architecture declares no [control_store]".into())
        })?;
        let cc = arch.control_core.as_ref().ok_or_else(|| {
            TdpmError::Machine("the architecture declares no [control_core] (XScale)".into())
        })?;
        let mut levels = HashMap::new();
        for (name, s) in &arch.storage {
            let bus = arch
                .bus
                .get(&s.bus)
                .map(|b| (b.unpipelined_cycles + b.pipelined_cycles) as f64)
                .unwrap_or(0.0);
            levels.insert(
                name.clone(),
                Level {
                    read_cycles: bus + (s.unpipelined_cycles + s.pipelined_read_cycles) as f64,
                    write_cycles: bus + (s.unpipelined_cycles + s.pipelined_write_cycles) as f64,
                    width_bytes: width_of(name),
                },
            );
        }
        Ok(Machine {
            engines,
            threads: arch.np.hardware_contexts_per_pe,
            control_store: cs.instructions_per_engine,
            me_hz: arch.np.pe_frequency_mhz as f64 * 1e6,
            me_cpi: arch.np.cycles_per_instruction as f64,
            xscale_hz: cc.frequency_mhz as f64 * 1e6,
            xscale_cpi: cc.cycles_per_instruction as f64,
            levels,
            packet_level: arch.memory_map.packet_data.clone(),
            lock_level: arch.memory_map.dynamic_state.clone(),
        })
    }

    pub fn ixp2400(engines: u32) -> Result<Machine, TdpmError> {
        let a = pktflow_arch::Arch::load("ixp2400").map_err(TdpmError::Machine)?;
        let np = a
            .as_np()
            .ok_or_else(|| TdpmError::Machine("ixp2400 is not an NP preset".into()))?;
        Machine::from_arch_unchecked(np, engines)
    }

    pub fn level(&self, name: &str) -> Result<&Level, TdpmError> {
        self.levels.get(name).ok_or_else(|| {
            let mut k: Vec<_> = self.levels.keys().cloned().collect();
            k.sort();
            TdpmError::Graph(format!(
                "memory level '{name}' is not a storage device of the architecture ({})",
                k.join(", ")
            ))
        })
    }
}

/// Per-PPF and per-channel constants of the model, computed once for a graph and a machine.
#[derive(Clone, Debug)]
pub struct Model<'g> {
    pub g: &'g PpfGraph,
    pub m: Machine,
    /// λ_i × instructions × ME CPI (cycles per input packet).
    pub comp_me: Vec<f64>,
    /// λ_i × instructions × XScale CPI × (ME Hz / XScale Hz): XScale computation in ME cycles.
    pub comp_x: Vec<f64>,
    /// λ_i × Σ_levels (reads × read latency + writes × write latency).
    pub mem: Vec<f64>,
    /// Per channel: rate × ⌈bytes/width⌉ × packet-level read latency (the load at the
    /// receiving task) and the same with the write latency (the store at the sending task).
    pub ch_load: Vec<f64>,
    pub ch_store: Vec<f64>,
    /// Lock ids and, per PPF, (lock id, λ_i × acquisitions, cs cycles).
    pub lock_names: Vec<String>,
    pub lock_uses: Vec<Vec<(usize, f64, f64)>>,
    pub lock_acquire: f64,
    pub lock_release: f64,
}

impl<'g> Model<'g> {
    pub fn new(g: &'g PpfGraph, m: Machine) -> Result<Model<'g>, TdpmError> {
        let n = g.len();
        let mut comp_me = Vec::with_capacity(n);
        let mut comp_x = Vec::with_capacity(n);
        let mut mem = Vec::with_capacity(n);
        let mut lock_ids: HashMap<String, usize> = HashMap::new();
        let mut lock_names = Vec::new();
        let mut lock_uses = Vec::with_capacity(n);
        for p in &g.ppfs {
            comp_me.push(p.rate * p.instructions * m.me_cpi);
            comp_x.push(p.rate * p.instructions * m.xscale_cpi * m.me_hz / m.xscale_hz);
            let mut c = 0.0;
            for u in &p.mem {
                let l = m
                    .level(&u.level)
                    .map_err(|e| TdpmError::Graph(format!("PPF '{}': {e}", p.name)))?;
                c += u.reads * l.read_cycles + u.writes * l.write_cycles;
            }
            mem.push(p.rate * c);
            let mut uses = Vec::new();
            for l in &p.locks {
                let id = *lock_ids.entry(l.name.clone()).or_insert_with(|| {
                    lock_names.push(l.name.clone());
                    lock_names.len() - 1
                });
                uses.push((id, p.rate * l.acquisitions, l.cs_cycles));
            }
            lock_uses.push(uses);
        }
        let pl = m.level(&m.packet_level)?.clone();
        let refs = |b: u32| (b as f64 / pl.width_bytes as f64).ceil();
        let ch_load = g
            .channels
            .iter()
            .map(|c| c.rate * refs(c.bytes) * pl.read_cycles)
            .collect();
        let ch_store = g
            .channels
            .iter()
            .map(|c| c.rate * refs(c.bytes) * pl.write_cycles)
            .collect();
        let ll = m.level(&m.lock_level)?.clone();
        Ok(Model {
            g,
            comp_me,
            comp_x,
            mem,
            ch_load,
            ch_store,
            lock_names,
            lock_uses,
            lock_acquire: ll.read_cycles,
            lock_release: ll.write_cycles,
            m,
        })
    }

    /// Communication removed by putting the two ends of channel `k` in one task: the load at
    /// the receiver, and the store at the sender when the sender's task writes the packet.
    pub fn channel_comm(&self, k: usize, sender_writes: bool) -> f64 {
        self.ch_load[k] + if sender_writes { self.ch_store[k] } else { 0.0 }
    }

    /// Costs of one task (its PPFs; `task_of[i]` gives every PPF's task) that do not depend on
    /// the duplication: computation, memory, communication; and its packet rate λ_t.
    pub fn task_static(&self, ppfs: &[usize], task_of: &[usize], me: bool) -> StaticCost {
        let t = task_of[ppfs[0]];
        let writes = ppfs.iter().any(|&i| self.g.ppfs[i].writes_packet);
        let mut s = StaticCost {
            writes_packet: writes,
            ..Default::default()
        };
        for &i in ppfs {
            s.comp += if me { self.comp_me[i] } else { self.comp_x[i] };
            s.mem += self.mem[i];
            s.code_size += self.g.ppfs[i].code_size as u64;
            for &(_, a, cs) in &self.lock_uses[i] {
                s.lock_ar += a * (self.lock_acquire + self.lock_release);
                s.lock_cs += a * cs;
            }
            for &k in &self.g.in_ch[i] {
                let inside = matches!(self.g.channels[k].from, End::Ppf(j) if task_of[j] == t);
                if !inside {
                    s.comm += self.ch_load[k];
                    s.rate += self.g.channels[k].rate;
                }
            }
            if writes {
                for &k in &self.g.out_ch[i] {
                    let inside = matches!(self.g.channels[k].to, End::Ppf(j) if task_of[j] == t);
                    if !inside {
                        s.comm += self.ch_store[k];
                    }
                }
            }
        }
        s
    }

    /// Evaluate a mapping with the cost model.
    pub fn evaluate(&self, map: &Mapping) -> Result<Eval, TdpmError> {
        let n = self.g.len();
        let mut task_of = vec![usize::MAX; n];
        for (t, task) in map.tasks.iter().enumerate() {
            if task.ppfs.is_empty() {
                return Err(TdpmError::Request(format!("task {t} has no PPF")));
            }
            for &i in &task.ppfs {
                if i >= n || task_of[i] != usize::MAX {
                    return Err(TdpmError::Request(format!(
                        "mapping is not a partition of the PPFs (PPF index {i} in task {t})"
                    )));
                }
                task_of[i] = t;
            }
        }
        if let Some(i) = task_of.iter().position(|&t| t == usize::MAX) {
            return Err(TdpmError::Request(format!(
                "mapping leaves PPF '{}' in no task",
                self.g.ppfs[i].name
            )));
        }
        let copies = map.copies.max(1);
        let used: u64 = map.tasks.iter().map(|t| t.dup as u64).sum::<u64>() * copies as u64;
        if used > self.m.engines as u64 {
            return Err(TdpmError::Request(format!(
                "mapping uses {used} MEs but only {} are available",
                self.m.engines
            )));
        }
        let statics: Vec<StaticCost> = map
            .tasks
            .iter()
            .map(|t| self.task_static(&t.ppfs, &task_of, t.dup > 0))
            .collect();
        for (t, s) in map.tasks.iter().zip(&statics) {
            if t.dup > 0 && s.code_size > self.m.control_store as u64 {
                return Err(TdpmError::Request(format!(
                    "task of {} PPFs has {} instructions and does not fit the {}-instruction control store",
                    t.ppfs.len(),
                    s.code_size,
                    self.m.control_store
                )));
            }
        }
        let engines: Vec<u32> = map.tasks.iter().map(|t| t.dup * copies).collect();
        let sync = self.sync_costs(&map.tasks, &engines);
        Ok(self.combine(map, &statics, &sync, copies))
    }

    /// Synchronization cost of every task given the MEs each runs on (0 = XScale):
    /// Σ_{PPF i, lock L} λ_i a_iL (c_acq + c_rel + cs_iL × (T_L − 1) / 2), where T_L is the
    /// number of threads that may contend for L: γ × D_u for every ME task u using L, plus one
    /// for every XScale task using L.
    pub fn sync_costs(&self, tasks: &[Task], engines: &[u32]) -> Vec<f64> {
        let mut threads = vec![0.0f64; self.lock_names.len()];
        if self.lock_names.is_empty() {
            return vec![0.0; tasks.len()];
        }
        let mut seen = vec![usize::MAX; self.lock_names.len()];
        for (t, task) in tasks.iter().enumerate() {
            let th = if engines[t] > 0 {
                (self.m.threads * engines[t]) as f64
            } else {
                1.0
            };
            for &i in &task.ppfs {
                for &(l, _, _) in &self.lock_uses[i] {
                    if seen[l] != t {
                        seen[l] = t;
                        threads[l] += th;
                    }
                }
            }
        }
        tasks
            .iter()
            .map(|task| {
                task.ppfs
                    .iter()
                    .flat_map(|&i| self.lock_uses[i].iter())
                    .map(|&(l, a, cs)| {
                        a * (self.lock_acquire
                            + self.lock_release
                            + cs * (threads[l] - 1.0).max(0.0) / 2.0)
                    })
                    .sum()
            })
            .collect()
    }

    fn combine(&self, map: &Mapping, st: &[StaticCost], sync: &[f64], copies: u32) -> Eval {
        let gamma = self.m.threads as f64;
        let mut tasks = Vec::with_capacity(map.tasks.len());
        let mut worst_me: Option<(usize, f64)> = None; // (task, W / d)
        let mut x_cycles = 0.0; // XScale time per input packet, ME cycles
        let mut p = 0u32;
        for (t, (task, s)) in map.tasks.iter().zip(st).enumerate() {
            let w = s.comp + s.mem + s.comm + sync[t];
            if task.dup > 0 {
                p += task.dup;
                let per = w / task.dup as f64;
                if worst_me.is_none_or(|(_, b)| per > b) {
                    worst_me = Some((t, per));
                }
            } else {
                x_cycles += w;
            }
            tasks.push(TaskCost {
                ppfs: task.ppfs.clone(),
                names: task
                    .ppfs
                    .iter()
                    .map(|&i| self.g.ppfs[i].name.clone())
                    .collect(),
                dup: task.dup,
                engines: task.dup * copies,
                on_xscale: task.dup == 0,
                rate: s.rate,
                computation: s.comp,
                memory: s.mem,
                communication: s.comm,
                synchronization: sync[t],
                utilization: w,
                f_rsp_core: if s.rate > 0.0 { w / s.rate } else { 0.0 },
                code_size: s.code_size,
            });
        }
        // k in packets per ME cycle; bounds in packets per second.
        let k = worst_me.map(|(_, per)| {
            if per > 0.0 {
                gamma / per
            } else {
                f64::INFINITY
            }
        });
        let me_bound = k.map(|k| k * copies as f64 * self.m.me_hz);
        let x_bound = if map.tasks.iter().any(|t| t.dup == 0) {
            Some(if x_cycles > 0.0 {
                self.m.me_hz / x_cycles
            } else {
                f64::INFINITY
            })
        } else {
            None
        };
        let (pps, binding) = match (me_bound, x_bound) {
            (Some(a), Some(b)) if b < a => (b, Binding::XScale),
            (Some(a), _) => (a, Binding::Task(worst_me.map(|w| w.0).unwrap_or(0))),
            (None, Some(b)) => (b, Binding::XScale),
            (None, None) => (0.0, Binding::XScale),
        };
        Eval {
            packets_per_second: pps,
            gbps: pps * self.g.packet_bytes * 8.0 / 1e9,
            k_packets_per_cycle: k.unwrap_or(0.0),
            copies,
            stages: p,
            engines_used: p * copies,
            me_bound_pps: me_bound,
            xscale_bound_pps: x_bound,
            binding,
            tasks,
        }
    }
}

/// Duplication-independent costs of a task (ME cycles per input packet).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StaticCost {
    pub comp: f64,
    pub mem: f64,
    pub comm: f64,
    pub rate: f64,
    pub code_size: u64,
    pub writes_packet: bool,
    /// Σ λ_i a_iL (c_acq + c_rel) and Σ λ_i a_iL cs_iL over the task's lock uses: the
    /// synchronization cost when only this task's threads use its locks is
    /// `lock_ar + lock_cs × (T − 1) / 2`.
    pub lock_ar: f64,
    pub lock_cs: f64,
}

/// One task: its PPFs and its duplication d within one pipeline copy (0 = on the XScale).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Task {
    pub ppfs: Vec<usize>,
    pub dup: u32,
}

/// A partition of the PPFs into tasks, the duplication of each, and the pipeline copies c
/// (task i runs on c × d_i MEs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Mapping {
    pub tasks: Vec<Task>,
    pub copies: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TaskCost {
    pub ppfs: Vec<usize>,
    pub names: Vec<String>,
    pub dup: u32,
    pub engines: u32,
    pub on_xscale: bool,
    /// λ_t: packets entering the task per input packet.
    pub rate: f64,
    /// Terms of W = f^rsp_core × λ (ME cycles per input packet).
    pub computation: f64,
    pub memory: f64,
    pub communication: f64,
    pub synchronization: f64,
    pub utilization: f64,
    pub f_rsp_core: f64,
    pub code_size: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", content = "task", rename_all = "snake_case")]
pub enum Binding {
    /// The ME task with the largest utilization per engine.
    Task(usize),
    /// The XScale core (its tasks' total time per packet).
    XScale,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Eval {
    /// H: packets per second the mapping forwards (before any offered-load cap).
    pub packets_per_second: f64,
    pub gbps: f64,
    /// k of section 4.2, packets per ME cycle (0 when no task is on an ME).
    pub k_packets_per_cycle: f64,
    /// c = ⌊n/p⌋ pipeline copies.
    pub copies: u32,
    /// p = Σ d_i MEs of one pipeline copy.
    pub stages: u32,
    pub engines_used: u32,
    pub me_bound_pps: Option<f64>,
    pub xscale_bound_pps: Option<f64>,
    pub binding: Binding,
    pub tasks: Vec<TaskCost>,
}

impl Eval {
    /// One line naming the constraint that sets H.
    pub fn binding_text(&self) -> String {
        match self.binding {
            Binding::Task(t) => {
                let tc = &self.tasks[t];
                format!(
                    "ME task {} [{}]: utilization {:.0} cycles/packet on {} ME(s) (k = {:.3e} packets/cycle, {} cop{})",
                    t,
                    tc.names.join(", "),
                    tc.utilization,
                    tc.engines,
                    self.k_packets_per_cycle,
                    self.copies,
                    if self.copies == 1 { "y" } else { "ies" }
                )
            }
            Binding::XScale => {
                let names: Vec<String> = self
                    .tasks
                    .iter()
                    .filter(|t| t.on_xscale)
                    .flat_map(|t| t.names.iter().cloned())
                    .collect();
                format!("XScale core running [{}]", names.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::tests::{ch, ppf};

    fn chain() -> PpfGraph {
        let mut a = ppf("a", 1.0, 100.0, 1000);
        a.writes_packet = true;
        let b = ppf("b", 1.0, 300.0, 1000);
        PpfGraph::new(
            "chain",
            vec![a, b],
            &[ch("rx", "a", 1.0), ch("a", "b", 1.0), ch("b", "tx", 1.0)],
            64.0,
        )
        .unwrap()
    }

    #[test]
    fn formula_by_hand() {
        let g = chain();
        let m = Machine::ixp2400(6).unwrap();
        let dram = m.levels["dram"].clone();
        assert_eq!(dram.read_cycles, 4.0 + 4.0 + 8.0 + 112.0);
        assert_eq!(dram.write_cycles, 8.0 + 8.0 + 80.0);
        let model = Model::new(&g, m).unwrap();
        // Two tasks, one ME each, 3 copies: task b: 300 instr + load 128 = 428 cycles.
        let map = Mapping {
            tasks: vec![
                Task {
                    ppfs: vec![0],
                    dup: 1,
                },
                Task {
                    ppfs: vec![1],
                    dup: 1,
                },
            ],
            copies: 3,
        };
        let e = model.evaluate(&map).unwrap();
        // task a: 100 + load from rx 128 + store to b 96 = 324.
        assert_eq!(e.tasks[0].utilization, 324.0);
        assert_eq!(e.tasks[1].utilization, 428.0);
        let k = 8.0 / 428.0;
        assert!((e.k_packets_per_cycle - k).abs() < 1e-12);
        assert!((e.packets_per_second - k * 3.0 * 600e6).abs() < 1e-3);
        assert_eq!(e.binding, Binding::Task(1));
        // Grouped: 400 + 128 + 96 (store to tx since a writes) = 624, 6 copies.
        let g1 = Mapping {
            tasks: vec![Task {
                ppfs: vec![0, 1],
                dup: 1,
            }],
            copies: 6,
        };
        let e1 = model.evaluate(&g1).unwrap();
        assert_eq!(e1.tasks[0].utilization, 624.0);
        assert!((e1.packets_per_second - 8.0 / 624.0 * 6.0 * 600e6).abs() < 1e-3);
        assert!(e1.packets_per_second > e.packets_per_second);
        // Everything on the XScale: (400 instr × CPI 2 at 600 MHz) + 128 + 96 ME cycles.
        let base = Mapping {
            tasks: vec![Task {
                ppfs: vec![0, 1],
                dup: 0,
            }],
            copies: 1,
        };
        let eb = model.evaluate(&base).unwrap();
        assert_eq!(eb.binding, Binding::XScale);
        assert!((eb.packets_per_second - 600e6 / (800.0 + 224.0)).abs() < 1e-6);
    }

    #[test]
    fn sync_grows_with_threads() {
        let mut a = ppf("a", 1.0, 100.0, 100);
        a.locks.push(crate::graph::LockUse {
            name: "L".into(),
            acquisitions: 1.0,
            cs_cycles: 40.0,
        });
        let g = PpfGraph::new(
            "s",
            vec![a],
            &[ch("rx", "a", 1.0), ch("a", "tx", 1.0)],
            64.0,
        )
        .unwrap();
        let model = Model::new(&g, Machine::ixp2400(6).unwrap()).unwrap();
        let t = |d| {
            model
                .evaluate(&Mapping {
                    tasks: vec![Task {
                        ppfs: vec![0],
                        dup: d,
                    }],
                    copies: 1,
                })
                .unwrap()
        };
        let (s1, s4) = (t(1).tasks[0].synchronization, t(4).tasks[0].synchronization);
        let acq_rel = model.lock_acquire + model.lock_release;
        assert!((s1 - (acq_rel + 40.0 * 7.0 / 2.0)).abs() < 1e-9);
        assert!((s4 - (acq_rel + 40.0 * 31.0 / 2.0)).abs() < 1e-9);
        // Still, more engines never lower this task's throughput (cs is inside the work).
        assert!(t(4).packets_per_second > t(1).packets_per_second);
    }

    #[test]
    fn rejects_bad_mappings() {
        let g = chain();
        let model = Model::new(&g, Machine::ixp2400(2).unwrap()).unwrap();
        let over = Mapping {
            tasks: vec![Task {
                ppfs: vec![0, 1],
                dup: 1,
            }],
            copies: 3,
        };
        assert!(model
            .evaluate(&over)
            .unwrap_err()
            .to_string()
            .contains("uses 3 MEs"));
        let part = Mapping {
            tasks: vec![Task {
                ppfs: vec![0],
                dup: 1,
            }],
            copies: 1,
        };
        assert!(model
            .evaluate(&part)
            .unwrap_err()
            .to_string()
            .contains("'b' in no task"));
        let a = pktflow_arch::Arch::load("ixp2400").unwrap();
        let e = Machine::from_arch(a.as_np().unwrap(), 7).unwrap_err();
        assert!(e.to_string().contains("at most 6"), "{e}");
        assert!(Machine::from_arch(a.as_np().unwrap(), 0).is_err());
    }
}
