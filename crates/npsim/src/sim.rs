//! The discrete-event engine. See `docs/npsim.md` for the model and its sources.
//!
//! Everything is index-based: contexts, PEs, tasks, locks, bus and channel instances, requests
//! and packets live in vectors allocated when the simulator is built (or grown to their
//! high-water mark: packets in flight and requests), so the event loop does not allocate in the
//! steady state. Events are kept in a binary heap ordered by (time, sequence number), so ties
//! are broken first-in first-out and a run is deterministic.
use crate::config::{Arrivals, LockRelease, Mapping, Scheduling, SimConfig};
use crate::prog::{mix, CompileParams, Compiler, Op, HANDOFF_STORAGE};
use crate::stats::*;
use crate::TraceSource;
use pktflow_arch::np::{BusOrganization, NpArch};
use pktflow_model::{Fate, MemType};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};
use std::time::Instant;

const NONE: u32 = u32::MAX;

// [xform hook] the transformations' engine (crates/npsim/src/xform/engine.rs), a child module
// so it can reach the simulator's state.
#[path = "xform/engine.rs"]
mod xengine;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum CState {
    Free,
    Ready,
    Running,
    /// Waiting for outstanding requests (a load slot, or all of them before a release/end).
    WaitMem,
    /// Waiting for room in a full request queue (back-pressure).
    WaitQueue,
    WaitLock,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Arrive,
    /// A packet read ahead (recorded arrivals) reaches the NP at its timestamp.
    Inject,
    ComputeDone,
    Resume,
    LockGrant,
    BusDone,
    ChanArrive,
    ChanDone,
    ReqDone,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Ev {
    t: u64,
    seq: u64,
    kind: Kind,
    idx: u32,
}
impl Ord for Ev {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.t, o.seq).cmp(&(self.t, self.seq))
    }
}
impl PartialOrd for Ev {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}

struct Ctx {
    pe: u32,
    state: CState,
    slot: u32,
    task: u32,
    op: u32,
    loads: u32,
    writes: u32,
    lock: u32,
    drain: bool,
    start: u64,
}

struct Pe {
    ready: VecDeque<u32>,
    running: u32,
    last_ran: u32,
    free: Vec<u32>,
    tasks: Vec<u32>,
    n_mem: u32,
    n_lock: u32,
    t_last: u64,
    acc: [u64; 4], // busy, memory, lock, idle
    kicked: bool,
    /// Compute cycles of this PE per PE-clock cycle of the compiled program, as a fraction
    /// (num, den): (1, 1) on the processing PEs; the control core's CPI and clock relative to
    /// theirs on the control core.
    cpi_scale: (u64, u64),
    /// FIFO scheduling and some task of this PE may be unable to start an instance while a
    /// context is free (head-of-line blocking possible).
    may_block: bool,
}

struct Task {
    q: VecDeque<(u32, u64, u64)>, // slot, enqueue time, sequence
    pes: Vec<u32>,
    rr: usize,
    running: u32,
    max: u32,
    /// Some PE of this task may block at its queue head ([`Pe::may_block`]).
    hol: bool,
    t_last: u64,
    q_int: u128,
    wait_sum: u128,
    n: u64,
    max_len: u64,
    drops: u64,
    busy: u64,
    occ: u64,
    /// Hand-off group ([`crate::TaskMap::group`]).
    group: Option<u32>,
    handoff_reads: u64,
    handoff_writes: u64,
}

struct Lock {
    holder: u32,
    waiters: VecDeque<u32>,
    held_since: u64,
    held_total: u64,
    acquisitions: u64,
}

struct Res {
    q: VecDeque<u32>,
    busy: bool,
    cur: u32,
    occ: u64,
    pip_r: u64,
    pip_w: u64,
    /// Requests queued or on their way (channels: reserved by a bus that forwards them).
    reserved: u32,
    waiters: VecDeque<u32>,
    blocked_buses: VecDeque<u32>,
    blocked: bool,
    t_last: u64,
    q_int: u128,
    wait_sum: u128,
    n: u64,
    busy_cycles: u64,
    name: String,
    storage: usize,
}

impl Res {
    fn new(name: String, occ: u64, pip_r: u64, pip_w: u64, cap: usize, storage: usize) -> Res {
        Res {
            q: VecDeque::with_capacity((cap + 1).min(64)),
            busy: false,
            cur: NONE,
            occ,
            pip_r,
            pip_w,
            reserved: 0,
            waiters: VecDeque::new(),
            blocked_buses: VecDeque::new(),
            blocked: false,
            t_last: 0,
            q_int: 0,
            wait_sum: 0,
            n: 0,
            busy_cycles: 0,
            name,
            storage,
        }
    }
    fn acct(&mut self, now: u64) {
        self.q_int += self.q.len() as u128 * (now - self.t_last) as u128;
        self.t_last = now;
    }
}

#[derive(Clone, Copy)]
struct Req {
    ctx: u32,
    chan: u32,
    write: bool,
    t: u64,
}

#[derive(Default)]
struct Slot {
    id: u64,
    arrival: u64,
    measured: bool,
    wire: u32,
    /// 0 delivered, 1 dropped by the application, 2 held by it.
    fate: u8,
    reason: u32,
    ops: Vec<Op>,
    vstart: Vec<u32>,
    vtask: Vec<u32>,
    visit: u32,
}

struct StorageHw {
    name: String,
    bus: Option<usize>,
    private: bool,
    channels: u32,
    first_chan: u32,
}

struct BusHw {
    org: BusOrganization,
    first: u32,
}

/// Packet hand-offs between task groups (seed 001 section 3; `np.handoff_*` of the preset).
#[derive(Clone, Copy)]
struct Handoff {
    storage: usize,
    requests: u32,
}

/// The simulator of one configuration. Build with [`Sim::new`], then [`Sim::run`].
pub struct Sim {
    cfg: SimConfig,
    release_on_issue: bool,
    /// Recorded arrivals: the first packet's timestamp, and PE cycles per nanosecond.
    first_ts: Option<u64>,
    cycles_per_ns: f64,
    pe_count: u32,
    /// The control core's PE index (`pe_count`) when some task is mapped to it.
    control_pe: Option<u32>,
    freq_mhz: u32,
    pending_limit: u32,
    cs_latency: u64,
    lock_handoff: u64,
    /// Hand-off costs, when the architecture has them and some task has a group.
    handoff: Option<Handoff>,
    /// Scratch for inserting hand-off requests into a packet's program.
    ho_ops: Vec<Op>,
    ho_vstart: Vec<u32>,
    ho_wrote: Vec<bool>,
    queue_cap: u32,
    names: Vec<String>,
    storages: Vec<StorageHw>,
    bus_types: Vec<BusHw>,
    comp: CompileParams,
    compiler: Compiler,

    now: u64,
    seq: u64,
    heap: BinaryHeap<Ev>,
    ctxs: Vec<Ctx>,
    pes: Vec<Pe>,
    tasks: Vec<Task>,
    locks: Vec<Lock>,
    buses: Vec<Res>,
    chans: Vec<Res>,
    reqs: Vec<Req>,
    free_reqs: Vec<u32>,
    slots: Vec<Slot>,
    free_slots: Vec<u32>,
    kicks: Vec<u32>,

    injected: u64,
    delivered: u64,
    app_drops: u64,
    held: u64,
    sim_drops: u64,
    wire_total: u64,
    app_reasons: Vec<(u32, &'static str, u64)>,
    sim_reasons: Vec<u64>, // by task
    latency: Histogram,
    events: u64,
    arrivals_done: bool,
    window_open: bool,
    win: Window,
    violations: Vec<String>,
    /// [xform hook] the transformations' state (None: all off).
    xf: Option<Box<xengine::XState>>,
}

impl Sim {
    /// `names`: element names by element index (tasks are elements). `pe_count` overrides the
    /// architecture's.
    pub fn new(
        arch: &NpArch,
        pe_count: u32,
        mapping: &Mapping,
        names: Vec<String>,
        cfg: &SimConfig,
    ) -> Result<Sim, String> {
        cfg.validate()?;
        if pe_count > pktflow_arch::np::MAX_PES {
            return Err(format!(
                "the run needs {pe_count} PEs, more than the {} supported{}",
                pktflow_arch::np::MAX_PES,
                if cfg.ideal.infinite_pes {
                    " (idealization I gives every task PEs of its own: use fewer PEs)"
                } else {
                    ""
                }
            ));
        }
        let mut a = arch.clone();
        a.np.pe_count = pe_count;
        let errs: Vec<String> = a
            .validate()
            .into_iter()
            .filter(|e| !e.starts_with("np.interface_pes"))
            .collect();
        if !errs.is_empty() {
            return Err(format!("architecture: {}", errs.join("; ")));
        }
        if mapping.tasks.len() != names.len() {
            return Err(format!(
                "mapping has {} tasks but the application has {} elements",
                mapping.tasks.len(),
                names.len()
            ));
        }
        // The control core (PE `pe_count`) exists in the run when some task is mapped to it.
        let uses_control = mapping.tasks.iter().any(|t| t.pes.contains(&pe_count));
        let control = a.control_core.clone().filter(|_| uses_control);
        let total_pes = pe_count + control.is_some() as u32;
        for (i, t) in mapping.tasks.iter().enumerate() {
            let name = &names[i];
            if t.pes.is_empty() {
                return Err(format!("mapping: element '{name}' (task {i}) has no PE"));
            }
            if t.max_concurrent == 0 {
                return Err(format!(
                    "mapping: element '{name}' (task {i}) allows 0 concurrent instances"
                ));
            }
            if let Some(p) = t.pes.iter().find(|&&p| p >= total_pes) {
                return Err(if *p == pe_count {
                    format!(
                        "mapping: element '{name}' (task {i}) is mapped to PE {p}, the control \
                         core's index, but the architecture has no [control_core]"
                    )
                } else {
                    format!(
                        "mapping: element '{name}' (task {i}) is mapped to PE {p} but there are \
                         {pe_count} PEs{}",
                        if a.control_core.is_some() {
                            format!(" (and the control core, PE {pe_count})")
                        } else {
                            String::new()
                        }
                    )
                });
            }
        }
        let np = &a.np;
        let cap = np.queue_size_requests as usize;
        let ideal = cfg.ideal;
        // Storage and bus instances.
        let bus_names: Vec<&String> = a.bus.keys().collect();
        let mut buses = Vec::new();
        let mut bus_types = Vec::new();
        for (name, b) in &a.bus {
            let (occ, pip) = if ideal.bus_pipelined {
                (1, (b.unpipelined_cycles + b.pipelined_cycles - 1) as u64)
            } else {
                (b.unpipelined_cycles as u64, b.pipelined_cycles as u64)
            };
            let first = buses.len() as u32;
            let inst: Vec<String> = match b.organization {
                BusOrganization::PerHalfReadWrite => {
                    ["half0.read", "half0.write", "half1.read", "half1.write"]
                        .iter()
                        .map(|s| format!("{name}[{s}]"))
                        .collect()
                }
                BusOrganization::Shared => vec![name.clone()],
                BusOrganization::PerPe => {
                    (0..total_pes).map(|p| format!("{name}[pe{p}]")).collect()
                }
            };
            for n in inst {
                buses.push(Res::new(n, occ, pip, pip, cap, usize::MAX));
            }
            bus_types.push(BusHw {
                org: b.organization,
                first,
            });
        }
        let mut storages = Vec::new();
        let mut chans = Vec::new();
        for (si, (name, s)) in a.storage.iter().enumerate() {
            let (occ, pr, pw) = if ideal.mem_pipelined {
                let extra = s.unpipelined_cycles.saturating_sub(1) as u64;
                (
                    1,
                    s.pipelined_read_cycles as u64 + extra,
                    s.pipelined_write_cycles as u64 + extra,
                )
            } else {
                (
                    s.unpipelined_cycles as u64,
                    s.pipelined_read_cycles as u64,
                    s.pipelined_write_cycles as u64,
                )
            };
            let bus = if s.bus == "none" {
                None
            } else {
                Some(
                    bus_names
                        .iter()
                        .position(|b| **b == s.bus)
                        .expect("validated"),
                )
            };
            let first_chan = chans.len() as u32;
            let copies = if s.private_per_pe { total_pes } else { 1 };
            for p in 0..copies {
                for c in 0..s.channels {
                    let n = if s.private_per_pe {
                        format!("{name}[pe{p}]")
                    } else {
                        format!("{name}[{c}]")
                    };
                    chans.push(Res::new(n, occ, pr, pw, cap, si));
                }
            }
            storages.push(StorageHw {
                name: name.clone(),
                bus,
                private: s.private_per_pe,
                channels: s.channels,
                first_chan,
            });
        }
        if storages.len() > 255 {
            return Err("at most 255 storage devices".into());
        }
        let m = &a.memory_map;
        let idx = |d: &String| a.storage.keys().position(|k| k == d).expect("validated") as u8;
        let mut route = [0u8; 5];
        for (t, d) in [
            (MemType::PacketData, &m.packet_data),
            (MemType::PacketMeta, &m.packet_meta),
            (MemType::StaticState, &m.static_state),
            (MemType::DynamicState, &m.dynamic_state),
            (MemType::Stack, &m.stack),
        ] {
            route[t as usize] = idx(d);
        }
        // PEs, contexts, tasks. The control core, when used, is PE `pe_count`: its own contexts,
        // and its CPI at its clock converted to PE cycles (the compiled program counts PE
        // cycles at the PEs' CPI).
        let nctx = np.hardware_contexts_per_pe;
        let pe_ctx: Vec<u32> = (0..total_pes)
            .map(|p| match &control {
                Some(cc) if p == pe_count => cc.hardware_contexts,
                _ => nctx,
            })
            .collect();
        let cpi_scale = |p: u32| match &control {
            Some(cc) if p == pe_count => {
                let num = cc.cycles_per_instruction as u64 * np.pe_frequency_mhz as u64;
                let den = np.cycles_per_instruction as u64 * cc.frequency_mhz as u64;
                let g = gcd(num, den);
                (num / g, den / g)
            }
            _ => (1, 1),
        };
        let mut pes: Vec<Pe> = Vec::with_capacity(total_pes as usize);
        let mut ctxs: Vec<Ctx> = Vec::new();
        for p in 0..total_pes {
            let first = ctxs.len() as u32;
            let n = pe_ctx[p as usize];
            pes.push(Pe {
                ready: VecDeque::with_capacity(n as usize),
                running: NONE,
                last_ran: NONE,
                free: (0..n).rev().map(|c| first + c).collect(),
                tasks: Vec::new(),
                n_mem: 0,
                n_lock: 0,
                t_last: 0,
                acc: [0; 4],
                kicked: false,
                cpi_scale: cpi_scale(p),
                may_block: false,
            });
            ctxs.extend((0..n).map(|_| Ctx {
                pe: p,
                state: CState::Free,
                slot: NONE,
                task: NONE,
                op: 0,
                loads: 0,
                writes: 0,
                lock: NONE,
                drain: false,
                start: 0,
            }));
        }
        let total_ctx = ctxs.len();
        if cfg.scheduling == Scheduling::Fifo {
            for t in &mapping.tasks {
                let contexts: u64 = t.pes.iter().map(|&p| pe_ctx[p as usize] as u64).sum();
                if (t.max_concurrent as u64) < contexts {
                    for &p in &t.pes {
                        pes[p as usize].may_block = true;
                    }
                }
            }
        }
        let mut tasks: Vec<Task> = mapping
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                for &p in &t.pes {
                    pes[p as usize].tasks.push(i as u32);
                }
                Task {
                    q: VecDeque::with_capacity((cfg.task_queue_capacity as usize).min(1024)),
                    pes: t.pes.clone(),
                    rr: 0,
                    running: 0,
                    max: t.max_concurrent,
                    hol: false,
                    t_last: 0,
                    q_int: 0,
                    wait_sum: 0,
                    n: 0,
                    max_len: 0,
                    drops: 0,
                    busy: 0,
                    occ: 0,
                    group: t.group,
                    handoff_reads: 0,
                    handoff_writes: 0,
                }
            })
            .collect();
        for t in &mut tasks {
            t.hol = t.pes.iter().any(|&p| pes[p as usize].may_block);
        }
        let locks = Vec::new();
        for b in &mut buses {
            b.waiters.reserve(total_ctx);
        }
        let nb = buses.len();
        for c in &mut chans {
            c.waiters.reserve(total_ctx);
            c.blocked_buses.reserve(nb);
        }
        let ntasks = names.len();
        let mut compiler = Compiler::default();
        if !cfg.no_sync_elements.is_empty() {
            compiler.no_sync_elements = vec![false; ntasks];
            for n in &cfg.no_sync_elements {
                let i = names
                    .iter()
                    .position(|x| x == n)
                    .ok_or_else(|| format!("no_sync_elements: unknown element '{n}'"))?;
                compiler.no_sync_elements[i] = true;
            }
        }
        let handoff = match &np.handoff_storage {
            Some(dev) if np.handoff_requests > 0 && tasks.iter().any(|t| t.group.is_some()) => {
                Some(Handoff {
                    storage: a.storage.keys().position(|k| k == dev).expect("validated"),
                    requests: np.handoff_requests,
                })
            }
            _ => None,
        };
        Ok(Sim {
            cfg: cfg.clone(),
            release_on_issue: cfg.lock_release == LockRelease::AfterIssue,
            first_ts: None,
            cycles_per_ns: np.pe_frequency_mhz as f64 / 1000.0,
            pe_count,
            control_pe: control.map(|_| pe_count),
            freq_mhz: np.pe_frequency_mhz,
            pending_limit: np.pending_loads_per_context,
            cs_latency: np.context_switch_latency_cycles as u64,
            lock_handoff: np.lock_handoff_cycles as u64,
            handoff,
            ho_ops: Vec::new(),
            ho_vstart: Vec::new(),
            ho_wrote: Vec::new(),
            queue_cap: np.queue_size_requests,
            names,
            storages,
            bus_types,
            comp: CompileParams {
                route,
                cycles_per_instruction: np.cycles_per_instruction,
                zero_instructions: ideal.zero_instructions,
                no_sync: ideal.no_sync,
                lock_granularity: cfg.lock_granularity,
                seed: cfg.seed,
                word_bytes: if cfg.wide_accesses {
                    0
                } else {
                    np.memory_word_bytes
                },
            },
            compiler,
            now: 0,
            seq: 0,
            heap: BinaryHeap::with_capacity(4 * total_ctx + 1024),
            ctxs,
            pes,
            tasks,
            locks,
            buses,
            chans,
            reqs: Vec::with_capacity(total_ctx * 4),
            free_reqs: Vec::with_capacity(total_ctx * 4),
            slots: Vec::new(),
            free_slots: Vec::new(),
            kicks: Vec::with_capacity(total_pes as usize),
            injected: 0,
            delivered: 0,
            app_drops: 0,
            held: 0,
            sim_drops: 0,
            wire_total: 0,
            app_reasons: Vec::new(),
            sim_reasons: vec![0; ntasks],
            latency: Histogram::default(),
            events: 0,
            arrivals_done: false,
            window_open: false,
            win: Window {
                start_cycle: 0,
                end_cycle: 0,
                arrivals: 0,
                departures: 0,
                delivered: 0,
                delivered_bytes: 0,
                sim_drops: 0,
                in_flight_at_start: 0,
                in_flight_at_end: 0,
                queued_at_start: 0,
                queued_at_end: 0,
            },
            violations: Vec::new(),
            xf: None, // [xform hook]
        })
    }

    fn push(&mut self, dt: u64, kind: Kind, idx: u32) {
        self.seq += 1;
        self.heap.push(Ev {
            t: self.now + dt,
            seq: self.seq,
            kind,
            idx,
        });
    }

    fn violation(&mut self, s: String) {
        debug_assert!(false, "invariant violated: {s}");
        if self.violations.len() < 20 {
            self.violations.push(s);
        }
    }

    fn in_flight(&self) -> u64 {
        self.injected - self.delivered - self.app_drops - self.held - self.sim_drops
    }

    fn queued(&self) -> u64 {
        self.tasks.iter().map(|t| t.q.len() as u64).sum()
    }

    fn arrival_time(&self, k: u64) -> u64 {
        (k as f64 * self.cfg.inter_arrival_cycles).round() as u64
    }

    /// Run until the source ends (or `cfg.packets` are injected) and every packet has left.
    pub fn run(self, src: &mut dyn TraceSource) -> Result<SimReport, String> {
        self.run_with(src, &mut |_| {})
    }

    /// [`Sim::run`] calling `progress(packets_injected)` every 65,536 events.
    pub fn run_with(
        mut self,
        src: &mut dyn TraceSource,
        progress: &mut dyn FnMut(u64),
    ) -> Result<SimReport, String> {
        let wall = Instant::now();
        self.push(0, Kind::Arrive, 0);
        while let Some(ev) = self.heap.pop() {
            debug_assert!(ev.t >= self.now);
            self.now = ev.t;
            self.events += 1;
            if self.events & 0xfff == 0 {
                pktflow_model::cancel::check().map_err(|e| e.to_string())?;
                if self.events & 0xffff == 0 {
                    progress(self.injected);
                }
            }
            match ev.kind {
                Kind::Arrive => self.arrive(src)?,
                Kind::Inject => self.inject(ev.idx),
                Kind::ComputeDone | Kind::Resume => self.continue_ctx(ev.idx),
                Kind::LockGrant => self.make_ready(ev.idx),
                Kind::BusDone => self.bus_done(ev.idx),
                Kind::ChanArrive => self.chan_arrive(ev.idx),
                Kind::ChanDone => self.chan_done(ev.idx),
                Kind::ReqDone => self.req_done(ev.idx),
            }
            while let Some(p) = self.kicks.pop() {
                self.pes[p as usize].kicked = false;
                self.pe_schedule(p);
            }
        }
        self.finish(wall.elapsed().as_secs_f64())
    }

    // ---- arrivals and packets -------------------------------------------------------------

    fn arrive(&mut self, src: &mut dyn TraceSource) -> Result<(), String> {
        let k = self.injected;
        let limit_hit = self.cfg.packets > 0 && k >= self.cfg.packets;
        let trace = if limit_hit { None } else { src.next_trace()? };
        let Some(t) = trace else {
            self.arrivals_done = true;
            if self.window_open {
                self.win.end_cycle = self.now;
                self.win.in_flight_at_end = self.in_flight();
                self.win.queued_at_end = self.queued();
            }
            return Ok(());
        };
        // Recorded arrivals: the packet reaches the NP at its timestamp (never before now).
        let at = if self.cfg.arrivals == Arrivals::Recorded {
            let t0 = *self.first_ts.get_or_insert(t.timestamp_ns);
            let gap = t.timestamp_ns.saturating_sub(t0) as f64 * self.cycles_per_ns;
            ((gap * self.cfg.time_scale).round() as u64).max(self.now)
        } else {
            self.now
        };
        let s = match self.free_slots.pop() {
            Some(s) => s,
            None => {
                self.slots.push(Slot::default());
                (self.slots.len() - 1) as u32
            }
        };
        {
            let slot = &mut self.slots[s as usize];
            self.compiler.compile(
                t,
                &self.comp,
                &mut slot.ops,
                &mut slot.vstart,
                &mut slot.vtask,
            );
            // [slowpath hook] the slow-path policy's per-visit charges
            crate::slowpath::charge(
                &self.cfg.slow_path,
                &mut slot.ops,
                &mut slot.vstart,
                &slot.vtask,
            );
            while self.locks.len() < self.compiler.locks.len() {
                self.locks.push(Lock {
                    holder: NONE,
                    waiters: VecDeque::new(),
                    held_since: 0,
                    held_total: 0,
                    acquisitions: 0,
                });
            }
            if let Some(h) = self.handoff {
                insert_handoffs(
                    h,
                    t,
                    &self.tasks,
                    self.cfg.seed,
                    slot,
                    &mut self.ho_ops,
                    &mut self.ho_vstart,
                    &mut self.ho_wrote,
                );
            }
            slot.id = t.packet;
            slot.arrival = at;
            slot.measured = k >= self.cfg.warmup_packets;
            slot.wire = t.wire_bytes;
            slot.visit = 0;
            slot.fate = 2;
            slot.reason = NONE;
            if t.fates.iter().any(|f| matches!(f, Fate::Output { .. })) {
                slot.fate = 0;
            } else if let Some((e, r)) = t.fates.iter().find_map(|f| match *f {
                Fate::Drop { element, reason } => Some((element, reason)),
                _ => None,
            }) {
                slot.fate = 1;
                let i = match self.app_reasons.iter().position(|x| x.0 == e && x.1 == r) {
                    Some(i) => i,
                    None => {
                        self.app_reasons.push((e, r, 0));
                        self.app_reasons.len() - 1
                    }
                };
                slot.reason = i as u32;
            }
            if let Some(&bad) = slot.vtask.iter().find(|&&e| e as usize >= self.tasks.len()) {
                return Err(format!(
                    "packet {}: the trace visits element {bad} but the application has {} elements",
                    t.packet,
                    self.tasks.len()
                ));
            }
        }
        if self.xf.is_some() {
            self.x_after_compile(s, t); // [xform hook]
        }
        self.wire_total += t.wire_bytes as u64;
        if at > self.now {
            self.push(at - self.now, Kind::Inject, s);
        } else {
            self.inject(s);
        }
        Ok(())
    }

    /// Packet slot `s` reaches the NP now: window accounting, its first task's queue, and the
    /// next arrival.
    fn inject(&mut self, s: u32) {
        let k = self.injected;
        if k == self.cfg.warmup_packets {
            self.window_open = true;
            self.win.start_cycle = self.now;
            self.win.in_flight_at_start = self.in_flight();
            self.win.queued_at_start = self.queued();
        }
        if self.window_open {
            // The window is [arrival of packet `warmup`, time the next arrival would be).
            self.win.arrivals += 1;
        }
        self.injected += 1;
        if self.slots[s as usize].vtask.is_empty() {
            self.complete_packet(s);
        } else {
            let task = self.slots[s as usize].vtask[0];
            if self.xf.is_some() {
                self.x_forks(s, 0); // [xform hook]
            }
            self.enqueue(task, s);
        }
        let dt = match self.cfg.arrivals {
            Arrivals::Fixed => self.arrival_time(k + 1) - self.now,
            Arrivals::Recorded => 0,
        };
        self.push(dt, Kind::Arrive, 0);
    }

    /// Frees a packet's slot. `departed` is false for a packet the NP itself dropped (a full
    /// task queue): it leaves the system but is not a departure, so a run that sheds load by
    /// dropping does not pass the keep-up test (section 4: inter-departure time equal to
    /// inter-arrival time).
    fn leave(&mut self, s: u32, departed: bool) {
        let slot = &self.slots[s as usize];
        if departed && self.window_open && !self.arrivals_done {
            self.win.departures += 1;
            if slot.fate == 0 {
                self.win.delivered += 1;
                self.win.delivered_bytes += slot.wire as u64;
            }
        }
        self.free_slots.push(s);
    }

    fn complete_packet(&mut self, s: u32) {
        let slot = &self.slots[s as usize];
        if slot.measured {
            self.latency.add(self.now - slot.arrival);
        }
        match slot.fate {
            0 => self.delivered += 1,
            1 => {
                self.app_drops += 1;
                self.app_reasons[slot.reason as usize].2 += 1;
            }
            _ => self.held += 1,
        }
        self.leave(s, true);
    }

    fn enqueue(&mut self, t: u32, s: u32) {
        let cap = self.cfg.task_queue_capacity as usize;
        let now = self.now;
        let early = self.xf.is_some() && self.x_is_child(s); // [xform hook]
        let task = &mut self.tasks[t as usize];
        if task.q.len() >= cap && !early {
            task.drops += 1;
            self.sim_drops += 1;
            self.sim_reasons[t as usize] += 1;
            if self.window_open && !self.arrivals_done {
                self.win.sim_drops += 1;
            }
            if self.xf.is_some() && self.x_defer_drop(s) {
                return; // [xform hook] leaves when its early instances end
            }
            self.leave(s, false);
            return;
        }
        task.q_int += task.q.len() as u128 * (now - task.t_last) as u128;
        task.t_last = now;
        self.seq += 1;
        task.q.push_back((s, now, self.seq));
        task.max_len = task.max_len.max(task.q.len() as u64);
        self.dispatch_task(t);
    }

    // ---- dispatch -------------------------------------------------------------------------

    fn dispatch_task(&mut self, t: u32) {
        if self.tasks[t as usize].hol {
            // FIFO with possible head-of-line blocking: each PE of the task with a free context
            // starts instances from the head of its queue (which may be another task's).
            for k in 0..self.tasks[t as usize].pes.len() {
                let p = self.tasks[t as usize].pes[k];
                if !self.pes[p as usize].free.is_empty() {
                    self.dispatch_pe(p);
                }
            }
            return;
        }
        loop {
            let task = &self.tasks[t as usize];
            if task.q.is_empty() || task.running >= task.max {
                return;
            }
            let n = task.pes.len();
            let mut found = None;
            for k in 0..n {
                let p = task.pes[(task.rr + k) % n];
                if !self.pes[p as usize].free.is_empty() {
                    found = Some((p, (task.rr + k + 1) % n));
                    break;
                }
            }
            let Some((p, rr)) = found else { return };
            self.tasks[t as usize].rr = rr;
            self.assign(p, t);
        }
    }

    fn dispatch_pe(&mut self, p: u32) {
        let fifo = self.pes[p as usize].may_block;
        while !self.pes[p as usize].free.is_empty() {
            let mut best: Option<(u64, u32)> = None;
            for &t in &self.pes[p as usize].tasks {
                let task = &self.tasks[t as usize];
                if !fifo && task.running >= task.max {
                    continue;
                }
                if let Some(&(_, _, seq)) = task.q.front() {
                    if best.is_none() || best.is_some_and(|b| seq < b.0) {
                        best = Some((seq, t));
                    }
                }
            }
            let Some((_, t)) = best else { return };
            let task = &self.tasks[t as usize];
            if task.running >= task.max {
                return; // the head waits for its task: head-of-line blocking (FIFO)
            }
            self.assign(p, t);
        }
    }

    fn assign(&mut self, p: u32, t: u32) {
        let now = self.now;
        let task = &mut self.tasks[t as usize];
        task.q_int += task.q.len() as u128 * (now - task.t_last) as u128;
        task.t_last = now;
        let (s, t_enq, _) = task.q.pop_front().expect("dispatch checked");
        task.wait_sum += (now - t_enq) as u128;
        task.n += 1;
        task.running += 1;
        let c = self.pes[p as usize].free.pop().expect("dispatch checked");
        let slot = &self.slots[s as usize];
        let op = slot.vstart[slot.visit as usize];
        let ctx = &mut self.ctxs[c as usize];
        if ctx.slot != NONE || ctx.state != CState::Free {
            self.violation(format!("context {c} given a second instance"));
        }
        let ctx = &mut self.ctxs[c as usize];
        ctx.slot = s;
        ctx.task = t;
        ctx.op = op;
        ctx.start = now;
        self.make_ready(c);
    }

    // ---- PEs and contexts -----------------------------------------------------------------

    fn pe_acct(&mut self, p: u32) {
        let now = self.now;
        let pe = &mut self.pes[p as usize];
        let k = if pe.running != NONE {
            0
        } else if pe.n_mem > 0 {
            1
        } else if pe.n_lock > 0 {
            2
        } else {
            3
        };
        pe.acc[k] += now - pe.t_last;
        pe.t_last = now;
    }

    fn set_state(&mut self, c: u32, s: CState) {
        let p = self.ctxs[c as usize].pe;
        self.pe_acct(p);
        let old = self.ctxs[c as usize].state;
        let pe = &mut self.pes[p as usize];
        match old {
            CState::WaitMem | CState::WaitQueue => pe.n_mem -= 1,
            CState::WaitLock => pe.n_lock -= 1,
            _ => {}
        }
        match s {
            CState::WaitMem | CState::WaitQueue => pe.n_mem += 1,
            CState::WaitLock => pe.n_lock += 1,
            _ => {}
        }
        self.ctxs[c as usize].state = s;
    }

    fn make_ready(&mut self, c: u32) {
        self.set_state(c, CState::Ready);
        let p = self.ctxs[c as usize].pe;
        self.pes[p as usize].ready.push_back(c);
        self.kick(p);
    }

    fn kick(&mut self, p: u32) {
        let pe = &mut self.pes[p as usize];
        if !pe.kicked && pe.running == NONE {
            pe.kicked = true;
            self.kicks.push(p);
        }
    }

    fn set_running(&mut self, p: u32, c: u32) {
        self.pe_acct(p);
        self.pes[p as usize].running = c;
    }

    fn pe_schedule(&mut self, p: u32) {
        loop {
            if self.pes[p as usize].running != NONE {
                return;
            }
            let Some(c) = self.pes[p as usize].ready.pop_front() else {
                return;
            };
            self.set_running(p, c);
            self.set_state(c, CState::Running);
            let last = self.pes[p as usize].last_ran;
            self.pes[p as usize].last_ran = c;
            if self.cs_latency > 0 && last != NONE && last != c {
                self.push(self.cs_latency, Kind::Resume, c);
                return;
            }
            if !self.step_and_settle(c) {
                return;
            }
        }
    }

    /// A running context's event (compute done, switch done): continue it.
    fn continue_ctx(&mut self, c: u32) {
        let p = self.ctxs[c as usize].pe;
        if self.ctxs[c as usize].state != CState::Running || self.pes[p as usize].running != c {
            self.violation(format!("context {c} resumed while not running"));
            return;
        }
        if self.step_and_settle(c) {
            self.kick(p);
        }
    }

    /// Step `c` (running on its PE); returns whether the PE became free.
    fn step_and_settle(&mut self, c: u32) -> bool {
        let p = self.ctxs[c as usize].pe;
        match self.step(c) {
            Step::Computing => false,
            Step::Yield => {
                self.set_running(p, NONE);
                self.set_state(c, CState::Ready);
                self.pes[p as usize].ready.push_back(c);
                true
            }
            Step::Blocked => {
                self.set_running(p, NONE);
                true
            }
            Step::Finished => {
                self.set_running(p, NONE);
                self.set_state(c, CState::Free);
                self.pes[p as usize].free.push(c);
                self.dispatch_pe(p);
                true
            }
        }
    }

    fn step(&mut self, c: u32) -> Step {
        loop {
            let ctx = &self.ctxs[c as usize];
            let op = self.slots[ctx.slot as usize].ops[ctx.op as usize];
            match op {
                Op::Compute(n) => {
                    let (t, pe) = (ctx.task, ctx.pe);
                    self.ctxs[c as usize].op += 1;
                    if n == 0 {
                        continue;
                    }
                    let (num, den) = self.pes[pe as usize].cpi_scale;
                    let cycles = if den == 1 {
                        n as u64 * num
                    } else {
                        (n as u64 * num).div_ceil(den)
                    };
                    self.tasks[t as usize].busy += cycles;
                    self.push(cycles, Kind::ComputeDone, c);
                    return Step::Computing;
                }
                Op::Mem {
                    storage,
                    write,
                    hash,
                } => {
                    let (storage, handoff) = match self.handoff {
                        Some(h) if storage == HANDOFF_STORAGE => (h.storage as u8, true),
                        _ => (storage, false),
                    };
                    if !write && ctx.loads >= self.pending_limit {
                        self.ctxs[c as usize].drain = false;
                        self.set_state(c, CState::WaitMem);
                        return Step::Blocked;
                    }
                    if !self.issue(c, storage as usize, write, hash) {
                        return Step::Blocked;
                    }
                    let ctx = &mut self.ctxs[c as usize];
                    ctx.op += 1;
                    if write {
                        ctx.writes += 1;
                    } else {
                        ctx.loads += 1;
                    }
                    if handoff {
                        let t = &mut self.tasks[ctx.task as usize];
                        if write {
                            t.handoff_writes += 1;
                        } else {
                            t.handoff_reads += 1;
                        }
                    }
                    // Context switch on every long-latency access (seed 000 section 3.2).
                    if self.storages[storage as usize].bus.is_some() {
                        return Step::Yield;
                    }
                }
                Op::Acquire(l) => {
                    if ctx.lock != NONE {
                        self.violation(format!(
                            "context {c} acquires lock {l} holding {}",
                            ctx.lock
                        ));
                    }
                    if self.xf.as_ref().is_some_and(|x| x.spec) {
                        self.x_spec_enter(c, l); // [xform hook] speculative section
                        continue;
                    }
                    let lock = &mut self.locks[l as usize];
                    lock.acquisitions += 1;
                    if lock.holder == NONE {
                        lock.holder = c;
                        lock.held_since = self.now;
                        let ctx = &mut self.ctxs[c as usize];
                        ctx.lock = l;
                        ctx.op += 1;
                    } else {
                        lock.waiters.push_back(c);
                        self.set_state(c, CState::WaitLock);
                        return Step::Blocked;
                    }
                }
                Op::Release(l) => {
                    if ctx.loads + ctx.writes > 0 && !self.release_on_issue {
                        self.ctxs[c as usize].drain = true;
                        self.set_state(c, CState::WaitMem);
                        return Step::Blocked;
                    }
                    if self.xf.as_ref().is_some_and(|x| x.spec) {
                        // [xform hook] commit, or roll back to the checkpoint
                        if !self.x_spec_commit(c, l) {
                            let rb = self.x_rollback_cycles();
                            if rb > 0 {
                                self.push(rb, Kind::ComputeDone, c);
                                return Step::Computing;
                            }
                        }
                        continue;
                    }
                    self.release(c, l);
                    self.ctxs[c as usize].op += 1;
                }
                Op::Wait(k) => {
                    // [xform hook] early signalling: wait for early instance k
                    if !self.x_wait(c, k) {
                        return Step::Blocked;
                    }
                }
                Op::End => {
                    if ctx.loads + ctx.writes > 0 {
                        self.ctxs[c as usize].drain = true;
                        self.set_state(c, CState::WaitMem);
                        return Step::Blocked;
                    }
                    let held = ctx.lock;
                    if held != NONE && self.xf.is_some() && self.x_carry(c) {
                        continue; // [xform hook] the split's consumer goes on with the lock
                    }
                    if held != NONE {
                        self.violation(format!("context {c} ends holding lock {held}"));
                    }
                    self.finish_instance(c);
                    return Step::Finished;
                }
            }
        }
    }

    fn release(&mut self, c: u32, l: u32) {
        let now = self.now;
        let lock = &mut self.locks[l as usize];
        if lock.holder != c {
            let h = lock.holder;
            self.violation(format!("context {c} releases lock {l} held by {h}"));
            return;
        }
        lock.held_total += now - lock.held_since;
        self.ctxs[c as usize].lock = NONE;
        let lock = &mut self.locks[l as usize];
        match lock.waiters.pop_front() {
            None => lock.holder = NONE,
            Some(w) => {
                lock.holder = w;
                lock.held_since = now;
                let wc = &mut self.ctxs[w as usize];
                wc.lock = l;
                wc.op += 1;
                if self.lock_handoff == 0 {
                    self.make_ready(w);
                } else {
                    self.push(self.lock_handoff, Kind::LockGrant, w);
                }
            }
        }
    }

    fn finish_instance(&mut self, c: u32) {
        let ctx = &mut self.ctxs[c as usize];
        let (s, t) = (ctx.slot, ctx.task);
        ctx.slot = NONE;
        ctx.task = NONE;
        let held = self.now - ctx.start;
        self.tasks[t as usize].running -= 1;
        self.tasks[t as usize].occ += held;
        let slot = &mut self.slots[s as usize];
        slot.visit += 1;
        if (slot.visit as usize) < slot.vtask.len() {
            let next = slot.vtask[slot.visit as usize];
            if self.xf.is_some() {
                let v = self.slots[s as usize].visit;
                self.x_forks(s, v); // [xform hook]
            }
            self.enqueue(next, s);
        } else if !(self.xf.is_some() && self.x_chain_end(s)) {
            self.complete_packet(s);
        }
        self.dispatch_task(t);
    }

    // ---- memory ---------------------------------------------------------------------------

    fn route(&self, c: u32, storage: usize, write: bool, hash: u32) -> (u32, u32) {
        let st = &self.storages[storage];
        let pe = self.ctxs[c as usize].pe;
        let ch = hash % st.channels;
        let chan = if st.private {
            st.first_chan + pe * st.channels + ch
        } else {
            st.first_chan + ch
        };
        let bus = match st.bus {
            None => NONE,
            Some(b) => {
                let bt = &self.bus_types[b];
                match bt.org {
                    BusOrganization::PerHalfReadWrite => {
                        let half = (pe >= self.pe_count.div_ceil(2)) as u32;
                        bt.first + half * 2 + write as u32
                    }
                    BusOrganization::Shared => bt.first,
                    BusOrganization::PerPe => bt.first + pe,
                }
            }
        };
        (bus, chan)
    }

    fn alloc_req(&mut self, r: Req) -> u32 {
        match self.free_reqs.pop() {
            Some(i) => {
                self.reqs[i as usize] = r;
                i
            }
            None => {
                self.reqs.push(r);
                (self.reqs.len() - 1) as u32
            }
        }
    }

    /// Issue a request for context `c`; false (and the context waits for room) when the first
    /// queue on its path is full.
    fn issue(&mut self, c: u32, storage: usize, write: bool, hash: u32) -> bool {
        let (bus, chan) = self.route(c, storage, write, hash);
        let cap = self.queue_cap;
        let now = self.now;
        if bus != NONE {
            let b = &mut self.buses[bus as usize];
            if b.q.len() as u32 >= cap {
                b.waiters.push_back(c);
                self.set_state(c, CState::WaitQueue);
                return false;
            }
            let r = self.alloc_req(Req {
                ctx: c,
                chan,
                write,
                t: now,
            });
            let b = &mut self.buses[bus as usize];
            b.acct(now);
            b.q.push_back(r);
            self.bus_start(bus);
        } else {
            let ch = &mut self.chans[chan as usize];
            if ch.reserved >= cap {
                ch.waiters.push_back(c);
                self.set_state(c, CState::WaitQueue);
                return false;
            }
            ch.reserved += 1;
            let r = self.alloc_req(Req {
                ctx: c,
                chan,
                write,
                t: now,
            });
            self.chan_arrive(r);
        }
        true
    }

    fn bus_start(&mut self, b: u32) {
        let now = self.now;
        let cap = self.queue_cap;
        let bus = &self.buses[b as usize];
        if bus.busy || bus.blocked {
            return;
        }
        let Some(&r) = bus.q.front() else { return };
        let chan = self.reqs[r as usize].chan;
        if self.chans[chan as usize].reserved >= cap {
            self.buses[b as usize].blocked = true;
            self.chans[chan as usize].blocked_buses.push_back(b);
            return;
        }
        self.chans[chan as usize].reserved += 1;
        let bus = &mut self.buses[b as usize];
        bus.acct(now);
        bus.q.pop_front();
        bus.wait_sum += (now - self.reqs[r as usize].t) as u128;
        bus.n += 1;
        bus.busy = true;
        bus.cur = r;
        let occ = bus.occ;
        bus.busy_cycles += occ;
        let w = bus.waiters.pop_front();
        self.push(occ, Kind::BusDone, b);
        if let Some(c) = w {
            self.make_ready(c);
        }
    }

    fn bus_done(&mut self, b: u32) {
        let bus = &mut self.buses[b as usize];
        bus.busy = false;
        let r = bus.cur;
        bus.cur = NONE;
        let pip = if self.reqs[r as usize].write {
            bus.pip_w
        } else {
            bus.pip_r
        };
        self.push(pip, Kind::ChanArrive, r);
        self.bus_start(b);
    }

    /// A request reaches its channel (its slot there is already reserved).
    fn chan_arrive(&mut self, r: u32) {
        let now = self.now;
        self.reqs[r as usize].t = now;
        let ch = self.reqs[r as usize].chan;
        let c = &mut self.chans[ch as usize];
        c.acct(now);
        c.q.push_back(r);
        self.chan_start(ch);
    }

    fn chan_start(&mut self, ch: u32) {
        let now = self.now;
        let c = &mut self.chans[ch as usize];
        if c.busy {
            return;
        }
        c.acct(now);
        let Some(r) = c.q.pop_front() else { return };
        c.wait_sum += (now - self.reqs[r as usize].t) as u128;
        c.n += 1;
        c.busy = true;
        c.cur = r;
        let occ = c.occ;
        c.busy_cycles += occ;
        self.push(occ, Kind::ChanDone, ch);
    }

    fn chan_done(&mut self, ch: u32) {
        let c = &mut self.chans[ch as usize];
        c.busy = false;
        let r = c.cur;
        c.cur = NONE;
        c.reserved -= 1;
        let pip = if self.reqs[r as usize].write {
            c.pip_w
        } else {
            c.pip_r
        };
        let blocked = c.blocked_buses.pop_front();
        let waiter = c.waiters.pop_front();
        self.push(pip, Kind::ReqDone, r);
        self.chan_start(ch);
        if let Some(b) = blocked {
            self.buses[b as usize].blocked = false;
            self.bus_start(b);
        }
        if let Some(w) = waiter {
            self.make_ready(w);
        }
    }

    fn req_done(&mut self, r: u32) {
        let req = self.reqs[r as usize];
        self.free_reqs.push(r);
        let limit = self.pending_limit;
        let ctx = &mut self.ctxs[req.ctx as usize];
        if req.write {
            ctx.writes -= 1;
        } else {
            ctx.loads -= 1;
        }
        if ctx.state == CState::WaitMem {
            let ok = if ctx.drain {
                ctx.loads + ctx.writes == 0
            } else {
                ctx.loads < limit
            };
            if ok {
                self.make_ready(req.ctx);
            }
        }
    }

    // ---- report ---------------------------------------------------------------------------

    fn finish(mut self, wall: f64) -> Result<SimReport, String> {
        let now = self.now;
        let total = now.max(1) as f64;
        for p in 0..self.pes.len() as u32 {
            self.pe_acct(p);
        }
        // Invariants at the end: everything left, nothing held.
        let in_flight = self.in_flight();
        if in_flight != 0 {
            self.violation(format!(
                "{in_flight} packets still in flight after the drain"
            ));
        }
        for (i, l) in self.locks.iter().enumerate() {
            if l.holder != NONE || !l.waiters.is_empty() {
                let s = format!("lock {i} still held or awaited at the end");
                self.violations.push(s);
            }
        }
        if self.ctxs.iter().any(|c| c.state != CState::Free) {
            self.violations
                .push("a context is still busy at the end".into());
        }
        let ns_per_cycle = 1000.0 / self.freq_mhz as f64;
        let lat = Latency {
            mean_cycles: self.latency.mean(),
            p50_cycles: self.latency.quantile(0.5),
            p90_cycles: self.latency.quantile(0.9),
            p99_cycles: self.latency.quantile(0.99),
            max_cycles: self.latency.max(),
            mean_ns: self.latency.mean() * ns_per_cycle,
        };
        let pes = self
            .pes
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let f = |k: usize| p.acc[k] as f64 / total;
                PeStats {
                    pe: i as u32,
                    control_core: self.control_pe == Some(i as u32),
                    busy: f(0),
                    memory_wait: f(1),
                    lock_wait: f(2),
                    idle: f(3),
                }
            })
            .collect();
        let res = |r: &Res| ResourceStats {
            name: r.name.clone(),
            requests: r.n,
            utilization: r.busy_cycles as f64 / total,
            mean_queue_delay_cycles: if r.n > 0 {
                r.wait_sum as f64 / r.n as f64
            } else {
                0.0
            },
            mean_queue_length: r.q_int as f64 / total,
        };
        let buses: Vec<ResourceStats> = self.buses.iter().map(res).collect();
        let channels: Vec<ResourceStats> = self
            .chans
            .iter()
            .filter(|c| !self.storages[c.storage].private)
            .map(res)
            .collect();
        let storage = self
            .storages
            .iter()
            .enumerate()
            .map(|(si, s)| {
                let cs: Vec<&Res> = self.chans.iter().filter(|c| c.storage == si).collect();
                let n: u64 = cs.iter().map(|c| c.n).sum();
                let busy: u64 = cs.iter().map(|c| c.busy_cycles).sum();
                let wait: u128 = cs.iter().map(|c| c.wait_sum).sum();
                let qi: u128 = cs.iter().map(|c| c.q_int).sum();
                ResourceStats {
                    name: s.name.clone(),
                    requests: n,
                    utilization: busy as f64 / (total * cs.len().max(1) as f64),
                    mean_queue_delay_cycles: if n > 0 { wait as f64 / n as f64 } else { 0.0 },
                    mean_queue_length: qi as f64 / total,
                }
            })
            .collect();
        let mut lock_by_task = vec![(0u64, 0u64); self.tasks.len()];
        let mut lock_stats = Vec::new();
        for (i, l) in self.locks.iter().enumerate() {
            let e = self.compiler.locks.element[i] as usize;
            if let Some(x) = lock_by_task.get_mut(e) {
                x.0 += l.held_total;
                x.1 = x.1.max(l.held_total);
            }
            if l.acquisitions > 0 {
                lock_stats.push(LockStats {
                    lock: i as u32,
                    element: self.names.get(e).cloned().unwrap_or_default(),
                    locations: self.compiler.locks.size[i],
                    held: l.held_total as f64 / total,
                    acquisitions: l.acquisitions,
                });
            }
        }
        lock_stats.sort_by(|a, b| b.held.total_cmp(&a.held).then(a.lock.cmp(&b.lock)));
        lock_stats.truncate(10);
        let tasks = self
            .tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.n > 0 || t.drops > 0)
            .map(|(i, t)| TaskStats {
                task: i as u32,
                element: self.names[i].clone(),
                instances: t.n,
                mean_queue_cycles: if t.n > 0 {
                    t.wait_sum as f64 / t.n as f64
                } else {
                    0.0
                },
                mean_queue_length: t.q_int as f64 / total,
                max_queue_length: t.max_len,
                lock_held: lock_by_task[i].0 as f64 / total,
                max_lock_held: lock_by_task[i].1 as f64 / total,
                dropped: t.drops,
                busy_cycles: t.busy,
                occupancy_cycles: t.occ,
                handoff_reads: t.handoff_reads,
                handoff_writes: t.handoff_writes,
            })
            .collect();
        let mut np_drops = BTreeMap::new();
        for (i, &n) in self.sim_reasons.iter().enumerate() {
            if n > 0 {
                np_drops.insert(format!("task queue full: {}", self.names[i]), n);
            }
        }
        let mut app_reasons = BTreeMap::new();
        for &(e, r, n) in &self.app_reasons {
            if n > 0 {
                let name = self.names.get(e as usize).cloned().unwrap_or_default();
                *app_reasons.entry(format!("{name}: {r}")).or_insert(0) += n;
            }
        }
        let w = &self.win;
        let wlen = w.end_cycle.saturating_sub(w.start_cycle) as f64;
        let hz = self.freq_mhz as f64 * 1e6;
        let secs = wlen / hz;
        // Recorded arrivals: the measured mean gap of the window's arrivals.
        let ia = match self.cfg.arrivals {
            Arrivals::Fixed => self.cfg.inter_arrival_cycles,
            Arrivals::Recorded if w.arrivals > 0 && wlen > 0.0 => wlen / w.arrivals as f64,
            Arrivals::Recorded => f64::INFINITY,
        };
        Ok(SimReport {
            pe_count: self.pe_count,
            pe_frequency_mhz: self.freq_mhz,
            inter_arrival_cycles: ia,
            offered_packets_per_second: hz / ia,
            injected: self.injected,
            delivered: self.delivered,
            dropped_by_app: self.app_drops,
            held_by_app: self.held,
            dropped_by_np: np_drops,
            dropped_by_app_reasons: app_reasons,
            in_flight_at_end: in_flight,
            mean_wire_bytes: if self.injected > 0 {
                self.wire_total as f64 / self.injected as f64
            } else {
                0.0
            },
            cycles: now,
            mean_inter_departure_cycles: if w.departures > 0 {
                wlen / w.departures as f64
            } else {
                f64::INFINITY
            },
            mean_inter_arrival_cycles: if w.arrivals > 0 {
                wlen / w.arrivals as f64
            } else {
                ia
            },
            throughput_packets_per_second: if secs > 0.0 {
                w.delivered as f64 / secs
            } else {
                0.0
            },
            throughput_gbps: if secs > 0.0 {
                w.delivered_bytes as f64 * 8.0 / secs / 1e9
            } else {
                0.0
            },
            window: w.clone(),
            latency: lat,
            pes,
            buses,
            channels,
            storage,
            tasks,
            lock_count: self.locks.len() as u64,
            locks: lock_stats,
            events: self.events,
            wall_seconds: wall,
            events_per_second: if wall > 0.0 {
                self.events as f64 / wall
            } else {
                0.0
            },
            transform: self.x_report(), // [xform hook]
            invariant_violations: self.violations,
        })
    }
}

enum Step {
    Computing,
    Yield,
    Blocked,
    Finished,
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a.max(1)
    } else {
        gcd(b, a % b)
    }
}

/// Insert the hand-off requests of seed 001 section 3 into a compiled packet program: where the
/// packet's next visit runs in another task group, the receiving visit starts with
/// `requests` reads of the hand-off storage (when its task has a group) and the sending visit
/// ends with `requests` writes (when its task has a group and some visit since the packet
/// entered that group wrote packet data: "if the task modifies the packet header, it must
/// write the changes back ... before sending the packet"). The packet's arrival counts as
/// coming from no group; nothing is written after its last visit.
#[allow(clippy::too_many_arguments)]
fn insert_handoffs(
    h: Handoff,
    t: &pktflow_model::PacketTrace,
    tasks: &[Task],
    seed: u64,
    slot: &mut Slot,
    ops: &mut Vec<Op>,
    vstart: &mut Vec<u32>,
    wrote: &mut Vec<bool>,
) {
    let nv = slot.vtask.len();
    let group = |k: usize| tasks.get(slot.vtask[k] as usize).and_then(|x| x.group);
    wrote.clear();
    wrote.extend(t.visits.iter().map(|v| {
        t.accesses_of(v)
            .iter()
            .any(|a| a.mem == MemType::PacketData && a.kind == pktflow_model::AccessKind::Write)
    }));
    let hash = |k: usize, side: u64| {
        mix(seed ^ t.packet.wrapping_mul(0x1_0000_0001) ^ ((k as u64) << 32) ^ (side << 62)) as u32
    };
    ops.clear();
    vstart.clear();
    let mut dirty = false; // the packet was modified since it entered the current group
    for k in 0..nv {
        let g = group(k);
        let prev = if k == 0 { None } else { group(k - 1) };
        let entering = k == 0 || g != prev;
        if entering {
            dirty = false;
        }
        dirty |= wrote.get(k).copied().unwrap_or(false);
        vstart.push(ops.len() as u32);
        if g.is_some() && entering {
            for _ in 0..h.requests {
                ops.push(Op::Mem {
                    storage: HANDOFF_STORAGE,
                    write: false,
                    hash: hash(k, 0),
                });
            }
        }
        let from = slot.vstart[k] as usize;
        let to = if k + 1 < nv {
            slot.vstart[k + 1] as usize
        } else {
            slot.ops.len()
        };
        // The visit's program ends with `End`; the writes go just before it.
        ops.extend_from_slice(&slot.ops[from..to - 1]);
        let leaving = k + 1 < nv && group(k + 1) != g;
        if g.is_some() && leaving && dirty {
            for _ in 0..h.requests {
                ops.push(Op::Mem {
                    storage: HANDOFF_STORAGE,
                    write: true,
                    hash: hash(k, 1),
                });
            }
        }
        ops.push(slot.ops[to - 1]);
    }
    std::mem::swap(ops, &mut slot.ops);
    std::mem::swap(vstart, &mut slot.vstart);
}
