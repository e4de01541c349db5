//! Requests and results of `pktflow rtc` and `pktflow conflicts` (JSON), the workload loader
//! and the maximum sustainable rate search. Every default lives here; a request names only what
//! the user set.
//!
//! For a common evaluation harness: [`WorkloadSpec`] says what runs, [`EngineOptions`] (after
//! [`EngineOverrides`] on the architecture) on what machine, [`SearchSpec`] how the rate is
//! measured, and [`RtcResult`] carries `packets_per_second`, `gbps`, the rate bracket, the cycle
//! breakdown and a bottleneck sentence.
use crate::conflicts::{self, Sets, WindowPoint};
use crate::engine::{
    Breakdown, Drive, Engine, EngineOptions, ExecMode, RunReport, Scheduler, SyncMode,
};
use crate::tm::{ContentionManager, SignatureKind, Trie};
use crate::workload::{self, Class, Op, Parametric, TraceCompiler, Workload};
use pktflow_harness::{Finding, Resource};
use pktflow_profile::run::{Run, Source};
use serde::{Deserialize, Serialize};

/// What runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkloadSpec {
    /// A built-in application (router, nat, ...), a Click file, `echo` or `parametric`.
    pub app: String,
    /// A pcap/pcapng file (traced applications); none: synthetic traffic.
    pub trace: Option<String>,
    /// Packets in the pool the engine cycles through (traced from the functional run, or
    /// generated for echo and parametric).
    pub packets: u32,
    pub traffic_seed: u64,
    /// Frame size of echo's packets (64 to 9000 bytes).
    pub packet_bytes: u32,
    pub parametric: Parametric,
}

impl Default for WorkloadSpec {
    fn default() -> Self {
        WorkloadSpec {
            app: "router".into(),
            trace: None,
            packets: 2000,
            traffic_seed: 1,
            packet_bytes: 64,
            parametric: Parametric::default(),
        }
    }
}

/// A loaded workload and the persistent-state sets of its packets (for `conflicts`).
pub struct Loaded {
    pub workload: Workload,
    /// Data read and write sets (lock words left out).
    pub sets: Vec<Sets>,
    /// The same with the applications' lock words included.
    pub sets_with_lock_words: Vec<Sets>,
    pub truncated_accesses: u64,
}

/// Sets of a synthetic workload's packets, from its shared-memory ops (address as the key).
fn sets_from_ops(w: &Workload) -> Vec<Sets> {
    w.packets
        .iter()
        .map(|p| {
            let mut s = Sets::default();
            for op in w.ops_of(p) {
                match *op {
                    Op::Load {
                        addr,
                        class: Class::Shared,
                    } => s.reads.push((0, addr as u64)),
                    Op::Store {
                        addr,
                        class: Class::Shared,
                    } => s.writes.push((0, addr as u64)),
                    _ => {}
                }
            }
            s.reads.sort_unstable();
            s.reads.dedup();
            s.writes.sort_unstable();
            s.writes.dedup();
            s
        })
        .collect()
}

impl WorkloadSpec {
    pub fn validate(&self) -> Result<(), String> {
        if self.packets == 0 || self.packets > workload::MAX_POOL_PACKETS {
            return Err(format!(
                "--packets must be 1 to {}, got {}",
                workload::MAX_POOL_PACKETS,
                self.packets
            ));
        }
        if self.app.trim().is_empty() {
            return Err("APP must not be empty".into());
        }
        Ok(())
    }

    /// Build the workload (`seed_offset` shifts the traffic seed: the trie trains on another
    /// trace).
    pub fn load(&self, seed_offset: u64) -> Result<Loaded, String> {
        self.validate()?;
        let seed = self.traffic_seed.wrapping_add(seed_offset);
        match self.app.as_str() {
            "echo" => {
                let w = workload::echo(self.packet_bytes, self.packets, seed)?;
                let sets = sets_from_ops(&w);
                return Ok(Loaded {
                    workload: w,
                    sets_with_lock_words: sets.clone(),
                    sets,
                    truncated_accesses: 0,
                });
            }
            "parametric" => {
                let w = self.parametric.build(self.packets, seed)?;
                let sets = sets_from_ops(&w);
                return Ok(Loaded {
                    workload: w,
                    sets_with_lock_words: sets.clone(),
                    sets,
                    truncated_accesses: 0,
                });
            }
            _ => {}
        }
        let source = Source::from_args(self.trace.as_deref(), Some(self.packets as u64), seed);
        let mut run = Run::start(&self.app, &source, &std::env::temp_dir())?;
        let names = run.app.graph.element_names();
        let elements: Vec<(String, String)> = run
            .app
            .graph
            .elements
            .iter()
            .map(|e| (e.name.clone(), e.class.clone()))
            .collect();
        let mut c = TraceCompiler::new(&self.app, names);
        c.w.elements = elements;
        let (mut sets, mut sets_with_lock_words) = (Vec::new(), Vec::new());
        let mut n = 0u32;
        while n < self.packets {
            let Some(t) = run.next_trace()? else { break };
            c.add(t)?;
            sets.push(Sets::of(t, false));
            sets_with_lock_words.push(Sets::of(t, true));
            n += 1;
        }
        if n == 0 {
            return Err(format!("{}: the traffic source gave no packets", self.app));
        }
        let truncated = c.truncated;
        Ok(Loaded {
            workload: c.finish(),
            sets,
            sets_with_lock_words,
            truncated_accesses: truncated,
        })
    }
}

/// Choices over the architecture's defaults (`None`: the default).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EngineOverrides {
    pub cores: Option<u32>,
    pub threads: Option<u32>,
    pub scheduler: Option<Scheduler>,
    pub sync: Option<SyncMode>,
    pub mode: Option<ExecMode>,
    pub cm: Option<ContentionManager>,
    pub signature: Option<SignatureKind>,
    pub signature_bits: Option<u32>,
    pub signature_hashes: Option<u32>,
    pub mutexes: Option<u32>,
    pub unlimited_mutexes: Option<bool>,
    pub undo_log_entries: Option<u32>,
    pub stack_filter: Option<bool>,
    pub hazard_distance: Option<[f64; 3]>,
    pub tx_locks: Option<Vec<u32>>,
    /// Where slow-path work runs (docs/protoproc.md section 6); none: nowhere special.
    pub slow_path: Option<crate::engine::SlowPathOptions>,
}

/// How the rate is measured.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Criterion {
    /// The highest fixed packet rate with no packet dropped over the window (chapters 6-7).
    #[default]
    ZeroDrop,
    /// The highest rate at which at least 90% of `runs` runs (different seeds) drop nothing
    /// (chapter 8 onwards).
    Confidence90,
    /// No arrivals: every thread always finds a packet; the rate is packets completed over the
    /// window (appendix B's throughput).
    Saturation,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchSpec {
    pub criterion: Criterion,
    /// Simulated time per run, seconds (the thesis monitors 5 seconds).
    pub window_seconds: f64,
    /// Runs per rate for `confidence90`.
    pub runs: u32,
    /// Stop when the bracket is narrower than this fraction of its top.
    pub tolerance: f64,
    pub seed: u64,
}

impl Default for SearchSpec {
    fn default() -> Self {
        SearchSpec {
            criterion: Criterion::ZeroDrop,
            window_seconds: 5.0,
            runs: 10,
            tolerance: 0.01,
            seed: 1,
        }
    }
}

/// Longest window (simulated seconds; the thesis monitors 5).
pub const MAX_WINDOW_SECONDS: f64 = 60.0;

/// Most simulated cycles of one run (2^40, about 2.4 hours at 125 MHz).
pub const MAX_WINDOW_CYCLES: u64 = 1 << 40;

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RtcRequest {
    pub workload: WorkloadSpec,
    /// Architecture preset or TOML file with a `[netthreads]` body; none: `netthreads`.
    pub arch: Option<String>,
    pub arch_set: Vec<String>,
    pub engine: EngineOverrides,
    pub search: SearchSpec,
}

/// The engine options of a request.
pub fn resolve(req: &RtcRequest) -> Result<EngineOptions, String> {
    let name = req.arch.clone().unwrap_or_else(|| "netthreads".into());
    let arch = pktflow_arch::Arch::load_with(&name, &req.arch_set)?;
    let pktflow_arch::Body::NetThreads(nt) = &arch.body else {
        return Err(format!(
            "architecture '{name}' is not a multithreaded soft multiprocessor (try netthreads)"
        ));
    };
    let mut o = EngineOptions::from_arch(nt);
    let e = &req.engine;
    if let Some(v) = e.cores {
        o.cores = v;
    }
    if let Some(v) = e.threads {
        o.threads_per_core = v;
    }
    if let Some(v) = e.scheduler {
        o.scheduler = v;
    }
    if let Some(v) = e.sync {
        o.sync = v;
    }
    if let Some(v) = e.mode {
        o.mode = v;
    }
    if let Some(v) = e.cm {
        o.cm = v;
    }
    if let Some(v) = e.signature {
        o.signature = v;
        if v == SignatureKind::Trie && e.signature_bits.is_none() {
            // Appendix A: trie signatures under 100 bits already give few false conflicts.
            o.signature_bits = 64;
        }
    }
    if let Some(v) = e.signature_bits {
        o.signature_bits = v;
    }
    o.signature_hashes = e.signature_hashes;
    if let Some(v) = e.mutexes {
        o.mutexes = v;
    }
    if let Some(v) = e.unlimited_mutexes {
        o.unlimited_mutexes = v;
    }
    if let Some(v) = e.undo_log_entries {
        o.undo_log_entries = v;
    }
    if let Some(v) = e.stack_filter {
        o.stack_filter = v;
    }
    if let Some(v) = e.hazard_distance {
        o.hazard_distance = v;
    }
    o.tx_locks = e.tx_locks.clone();
    if let Some(sp) = &e.slow_path {
        o.slow_path = sp.clone();
    }
    o.seed = req.search.seed;
    o.validate()?;
    Ok(o)
}

impl SearchSpec {
    pub fn validate(&self) -> Result<(), String> {
        let w = self.window_seconds;
        if !(w.is_finite() && w > 0.0 && w <= MAX_WINDOW_SECONDS) {
            return Err(format!(
                "--window-seconds must be above 0 and at most {MAX_WINDOW_SECONDS}, got {w}"
            ));
        }
        if self.runs == 0 || self.runs > 1000 {
            return Err(format!("--runs must be 1 to 1000, got {}", self.runs));
        }
        if !(self.tolerance.is_finite() && self.tolerance >= 1e-6 && self.tolerance <= 0.5) {
            return Err(format!(
                "--tolerance must be between 0.000001 and 0.5, got {}",
                self.tolerance
            ));
        }
        Ok(())
    }
    /// The harness's search settings, starting at `start_cycles` between packets: `tolerance`
    /// is the bracket's precision; a run passes when it drops nothing and keeps up (the
    /// harness's keep-up tolerance, its default), or for `confidence90` when 90% of `runs`
    /// seeds do.
    fn harness(&self, start_cycles: f64) -> pktflow_harness::SearchConfig {
        pktflow_harness::SearchConfig {
            precision: self.tolerance,
            criterion: match self.criterion {
                Criterion::Confidence90 => pktflow_harness::Criterion::Confidence90,
                _ => pktflow_harness::Criterion::ZeroDrop,
            },
            confidence_runs: self.runs,
            start_cycles: start_cycles.min(pktflow_harness::search::MAX_INTER_ARRIVAL_CYCLES),
            ..pktflow_harness::SearchConfig::default()
        }
    }

    fn window_cycles(&self, clock_mhz: f64) -> Result<u64, String> {
        let c = (self.window_seconds * clock_mhz * 1e6).round();
        if c < 1.0 || c > MAX_WINDOW_CYCLES as f64 {
            return Err(format!(
                "--window-seconds gives {c} cycles; it must be 1 to {MAX_WINDOW_CYCLES} cycles at {clock_mhz} MHz"
            ));
        }
        Ok(c as u64)
    }
}

/// One tested rate.
#[derive(Clone, Debug, Serialize)]
pub struct Probe {
    pub packets_per_second: f64,
    pub passed: bool,
    /// Runs without a drop (of `runs_done`; runs stop once the outcome is decided).
    pub clean_runs: u32,
    pub runs_done: u32,
    pub runs: u32,
}

#[derive(Clone, Debug, Serialize)]
pub struct BreakdownShare {
    pub busy: f64,
    pub no_packet: f64,
    pub locked: f64,
    pub squashed: f64,
    pub hazard_bubble: f64,
    pub other: f64,
}

impl From<&Breakdown> for BreakdownShare {
    fn from(b: &Breakdown) -> Self {
        let t = b.total().max(1) as f64;
        BreakdownShare {
            busy: b.busy as f64 / t,
            no_packet: b.no_packet as f64 / t,
            locked: b.locked as f64 / t,
            squashed: b.squashed as f64 / t,
            hazard_bubble: b.hazard_bubble as f64 / t,
            other: b.other as f64 / t,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct RtcResult {
    pub app: String,
    pub criterion: Criterion,
    /// The maximum sustainable rate (the bracket's bottom: the highest rate that passed).
    pub packets_per_second: f64,
    /// `packets_per_second` x mean frame bytes x 8 (frame bytes as traced; no preamble or gap).
    pub gbps: f64,
    /// The highest rate that passed and the lowest that failed (equal to the line rate at both
    /// ends when the line rate passes).
    pub bracket: [f64; 2],
    /// The rate is below the ports' line rate (otherwise the machine keeps up with the wire).
    pub saturated: bool,
    pub line_rate_pps: f64,
    pub mean_packet_bytes: f64,
    pub mean_instructions_per_packet: f64,
    /// Core cycles per completed packet at the maximum rate.
    pub cycles_per_packet: f64,
    pub ipc_per_core: f64,
    pub commits_per_second: f64,
    pub aborts_per_transaction: f64,
    pub commit_without_abort: f64,
    pub breakdown: BreakdownShare,
    /// The binding resource (none when no packet completed).
    pub bottleneck: Option<Finding>,
    /// The run at the maximum rate (`run` is the JSON output's record of the command).
    pub report: RunReport,
    pub probes: Vec<Probe>,
    pub settings: serde_json::Value,
    /// Under a slow-path policy: how much of the workload is slow path (`packets`,
    /// `runs_per_100_packets`: runs of consecutive slow-path visits, `instruction_share`:
    /// their instructions over all, charges excluded); none without a policy.
    pub slow_path: Option<serde_json::Value>,
    /// Per critical section (a transaction under `--sync tm`) of the workload: loads, stores,
    /// stores to shared state, distinct shared words (mean and largest; the thesis's Table 8.1
    /// shape; docs/rtc.md).
    pub critical_sections: crate::workload::CriticalSectionStats,
    pub interrupted: bool,
}

/// Trie built on the same application with another traffic seed (appendix A: train on one
/// trace, evaluate on another): steps 1 to 7 on the training trace's transactions, `contexts`
/// of them running at once.
fn train_trie(spec: &WorkloadSpec, bits: u32, contexts: u32) -> Result<Trie, String> {
    let other = spec.load(1_000_003)?;
    let replay =
        crate::tm::replay::Replay::new(crate::study::transactions(&other.workload), contexts);
    Ok(Trie::build(&replay, bits)?.0)
}

/// The run-to-completion engine for the harness ([`crate::engines`]): one workload on one
/// machine, evaluated at any rate. Repetition `k` runs with seed `search.seed + k`; a run stops
/// at its first drop; its findings are [`bottleneck`]'s at that rate.
pub struct RtcEngine {
    o: EngineOptions,
    w: Workload,
    trie: Option<Trie>,
    window: u64,
    seed: u64,
    criterion: Criterion,
    ports: (u32, f64),
}

impl RtcEngine {
    pub fn new(req: &RtcRequest) -> Result<RtcEngine, String> {
        req.search.validate()?;
        let o = resolve(req)?;
        let w = req.workload.load(0)?.workload;
        let trie = if o.sync == SyncMode::Tm && o.signature == SignatureKind::Trie {
            Some(train_trie(&req.workload, o.signature_bits, o.contexts())?)
        } else {
            None
        };
        let window = req.search.window_cycles(o.clock_mhz)?;
        let name = req.arch.clone().unwrap_or_else(|| "netthreads".into());
        let arch = pktflow_arch::Arch::load_with(&name, &req.arch_set)?;
        let pktflow_arch::Body::NetThreads(nt) = &arch.body else {
            unreachable!("resolve checked the body")
        };
        Ok(RtcEngine {
            o,
            w,
            trie,
            window,
            seed: req.search.seed,
            criterion: req.search.criterion,
            ports: (nt.ethernet_ports, nt.port_rate_gbps as f64),
        })
    }
}

impl pktflow_harness::Engine for RtcEngine {
    fn name(&self) -> &'static str {
        "rtc"
    }
    fn evaluate(&mut self, ia: f64, k: u32) -> Result<pktflow_harness::Evaluation, String> {
        use pktflow_harness::Measured;
        let r = Runner {
            o: &self.o,
            w: &self.w,
            trie: self.trie.clone(),
            window: self.window,
        };
        let rep = r.run(
            self.seed.wrapping_add(k as u64),
            Drive {
                interarrival_cycles: Some(ia),
                cycles: self.window,
                stop_on_drop: true,
                max_arrivals: None,
            },
        )?;
        let share = BreakdownShare::from(&rep.breakdown);
        let findings = bottleneck(&self.o, &rep, &share, true, self.criterion, self.ports)
            .into_iter()
            .collect();
        let m = Measurement {
            rep,
            clock_hz: self.o.clock_mhz * 1e6,
            bytes: self.w.mean_bytes(),
        };
        Ok(pktflow_harness::Evaluation {
            window: m.window(),
            clock_hz: m.clock_hz,
            mean_wire_bytes: m.bytes,
            invariant_violation: m.invariant_violation(),
            findings,
        })
    }
}

/// One run as the harness measures it: the window is the whole run (no warm-up); arrivals
/// are the packets offered, departures the packets completed, drops the packets refused for
/// lack of room (input slots and MAC buffer full), and the packets in flight at the end the
/// accepted ones not yet completed (buffered or on a thread).
struct Measurement {
    rep: RunReport,
    clock_hz: f64,
    bytes: f64,
}

impl pktflow_harness::Measured for Measurement {
    fn window(&self) -> pktflow_harness::Window {
        let r = &self.rep;
        pktflow_harness::Window {
            arrivals: r.arrived,
            departures: r.completed,
            drops: r.dropped,
            in_flight_at_start: 0,
            in_flight_at_end: r.arrived.saturating_sub(r.dropped + r.completed),
        }
    }
    fn clock_hz(&self) -> f64 {
        self.clock_hz
    }
    fn mean_wire_bytes(&self) -> f64 {
        self.bytes
    }
    fn invariant_violation(&self) -> Option<String> {
        let r = &self.rep;
        (r.dropped + r.completed > r.arrived).then(|| {
            format!(
                "{} packets dropped and {} completed of {} arrived",
                r.dropped, r.completed, r.arrived
            )
        })
    }
}

struct Runner<'a> {
    o: &'a EngineOptions,
    w: &'a Workload,
    trie: Option<Trie>,
    window: u64,
}

impl Runner<'_> {
    fn run(&self, seed: u64, d: Drive) -> Result<RunReport, String> {
        let mut o = self.o.clone();
        o.seed = seed;
        let mut e = Engine::new(&o, self.w, self.trie.clone())?;
        e.run(d)
    }
}

/// The maximum sustainable rate (or the saturation throughput) of a request.
pub fn rtc(req: &RtcRequest, progress: &mut dyn FnMut(u32, u32)) -> Result<RtcResult, String> {
    req.search.validate()?;
    let o = resolve(req)?;
    let loaded = req.workload.load(0)?;
    let w = &loaded.workload;
    let trie = if o.sync == SyncMode::Tm && o.signature == SignatureKind::Trie {
        Some(train_trie(&req.workload, o.signature_bits, o.contexts())?)
    } else {
        None
    };
    let window = req.search.window_cycles(o.clock_mhz)?;
    let r = Runner {
        o: &o,
        w,
        trie,
        window,
    };
    let clock_hz = o.clock_mhz * 1e6;
    let bytes = w.mean_bytes();
    let arch_name = req.arch.clone().unwrap_or_else(|| "netthreads".into());
    let arch = pktflow_arch::Arch::load_with(&arch_name, &req.arch_set)?;
    let pktflow_arch::Body::NetThreads(nt) = &arch.body else {
        unreachable!("resolve checked the body")
    };
    // Line rate as in section 6.2 of the thesis: frame bytes plus a 12-byte gap.
    let line = nt.ethernet_ports as f64 * nt.port_rate_gbps as f64 * 1e9 / ((bytes + 12.0) * 8.0);
    let s = &req.search;
    let mut probes = Vec::new();
    let mut interrupted = false;
    let (pps, bracket, rep, saturated) = if s.criterion == Criterion::Saturation {
        progress(0, 1);
        let rep = r.run(
            s.seed,
            Drive {
                interarrival_cycles: None,
                cycles: window,
                stop_on_drop: false,
                max_arrivals: None,
            },
        )?;
        progress(1, 1);
        let pps = rep.completed as f64 / (window as f64 / clock_hz);
        (pps, [pps, pps], rep, true)
    } else {
        // Every rate the harness tries (its inter-arrival time in cycles of this clock) is
        // one or more runs of `window` cycles; a run stops at its first drop (the zero-drop
        // criteria need nothing more), and repetition `k` runs with seed `seed + k`.
        let mut measure = |ia: f64, k: u32| -> Result<Measurement, String> {
            let rep = r.run(
                s.seed.wrapping_add(k as u64),
                Drive {
                    interarrival_cycles: Some(ia),
                    cycles: r.window,
                    stop_on_drop: true,
                    max_arrivals: None,
                },
            )?;
            Ok(Measurement {
                rep,
                clock_hz,
                bytes,
            })
        };
        // The line rate first: a machine that takes it without a drop is not saturated (its
        // rate is the ports', never above).
        let cfg = s.harness(clock_hz / line);
        let to_probe = |p: &pktflow_harness::Probe| Probe {
            packets_per_second: clock_hz / p.inter_arrival_cycles,
            passed: p.sustainable,
            clean_runs: p.passing_runs,
            runs_done: p.runs_done,
            runs: p.runs,
        };
        progress(0, 1);
        let (p, at_line) = pktflow_harness::evaluate(&mut measure, &cfg, clock_hz / line)?;
        probes.push(to_probe(&p));
        if p.sustainable {
            (line, [line, line], at_line.rep, false)
        } else {
            {
                // Below the line rate: the search starts at a short saturated run's estimate.
                let est_cycles = window.min(2_000_000);
                let sat = r.run(
                    s.seed,
                    Drive {
                        interarrival_cycles: None,
                        cycles: est_cycles,
                        stop_on_drop: false,
                        max_arrivals: None,
                    },
                )?;
                let est = (sat.completed as f64 / (est_cycles as f64 / clock_hz)).clamp(1.0, line);
                let cfg = s.harness(clock_hz / est);
                let base = probes.len();
                let found =
                    pktflow_harness::max_rate_partial(&mut measure, &cfg, &mut |d, t, _| {
                        progress((base + d) as u32, (base + t) as u32)
                    });
                match found {
                    Ok(m) => {
                        probes.extend(m.probes.iter().map(to_probe));
                        // The line rate failed: a pass above it (a run that is not monotone
                        // in the rate) does not count.
                        let pps = m.packets_per_second.min(line);
                        let hi = m.bracket.packets_per_second[1].min(line);
                        (pps, [pps, hi], m.report.rep, true)
                    }
                    Err(stop) if pktflow_model::cancel::is_cancel_message(&stop.message) => {
                        interrupted = true;
                        probes.extend(stop.probes.iter().map(to_probe));
                        let lo = probes
                            .iter()
                            .filter(|p| p.passed)
                            .map(|p| p.packets_per_second)
                            .fold(0.0, f64::max);
                        let hi = probes
                            .iter()
                            .filter(|p| !p.passed)
                            .map(|p| p.packets_per_second)
                            .fold(line, f64::min);
                        (lo, [lo, hi], RunReport::default(), true)
                    }
                    Err(stop) => return Err(stop.message),
                }
            }
        }
    };
    let cores = o.cores as f64;
    let secs = rep.cycles.max(1) as f64 / clock_hz;
    let cycles_per_packet = if rep.completed > 0 {
        rep.cycles as f64 * cores / rep.completed as f64
    } else {
        0.0
    };
    let tx = rep.transactions.max(1) as f64;
    let slow_path = match o.slow_path.policy {
        None => None,
        Some(_) => {
            let (n, runs, si, ai) = crate::engine::slow_path_share(w, &o.slow_path)?;
            Some(serde_json::json!({
                "packets": n,
                "runs_per_100_packets": 100.0 * runs as f64 / n.max(1) as f64,
                "instruction_share": si as f64 / ai.max(1) as f64,
            }))
        }
    };
    let share = BreakdownShare::from(&rep.breakdown);
    let bottleneck = bottleneck(
        &o,
        &rep,
        &share,
        saturated,
        s.criterion,
        (nt.ethernet_ports, nt.port_rate_gbps as f64),
    );
    Ok(RtcResult {
        app: req.workload.app.clone(),
        criterion: s.criterion,
        packets_per_second: pps,
        gbps: pps * bytes * 8.0 / 1e9,
        bracket,
        saturated,
        line_rate_pps: line,
        mean_packet_bytes: bytes,
        mean_instructions_per_packet: w.mean_instructions(),
        cycles_per_packet,
        ipc_per_core: rep.instructions as f64 / (rep.cycles.max(1) as f64 * cores),
        commits_per_second: rep.commits as f64 / secs,
        aborts_per_transaction: rep.aborts as f64 / tx,
        commit_without_abort: if rep.commits > 0 {
            rep.commits_without_abort as f64 / rep.commits as f64
        } else {
            0.0
        },
        breakdown: share,
        bottleneck,
        report: rep,
        probes,
        settings: serde_json::json!({
            "workload": req.workload,
            "arch": arch_name,
            "arch_set": req.arch_set,
            "engine": o,
            "search": req.search,
            "window_cycles": window,
            "pool_packets": w.packets.len(),
            "truncated_accesses": loaded.truncated_accesses,
            "locks": w.locks,
        }),
        slow_path,
        critical_sections: w.critical_section_stats(),
        interrupted,
    })
}

/// The binding resource of the run at the maximum rate, in the harness's vocabulary. The
/// candidates are the issue-slot categories of the breakdown: computation when the cores issue
/// in at least 80% of their cycles, otherwise the largest non-busy category (locks or
/// transaction restarts, hazard bubbles, memory, shared-cache replays, idle threads). Aborts
/// (their share of redone work and the structure most came from) and the lock-aware scheduler
/// are added as evidence and advice. `None` when no packet completed.
/// Occupancy of the dedicated slow-path context above which it is the binding resource.
const DEDICATED_BOUND: f64 = 0.9;

fn bottleneck(
    o: &EngineOptions,
    rep: &RunReport,
    b: &BreakdownShare,
    saturated: bool,
    criterion: Criterion,
    ports: (u32, f64),
) -> Option<Finding> {
    if !saturated {
        return Some(Finding::with_advice(
            Resource::Ports {
                count: ports.0,
                gbps_each: ports.1,
            },
            1.0,
            vec!["the machine keeps up with the ports' line rate without a drop".into()],
            "none inside the machine binds: only a faster link would show its own limit".into(),
        ));
    }
    if rep.completed == 0 {
        return None;
    }
    let pct = |x: f64| format!("{:.0}%", 100.0 * x);
    let lock = if o.sync == SyncMode::Tm {
        Resource::Aborts {
            structure: top_abort_structure(rep).unwrap_or_else(|| "shared state".into()),
        }
    } else {
        Resource::Lock {
            name: "critical sections".into(),
            class: format!("{} mutexes", o.mutexes),
        }
    };
    let idle = if o.mode == ExecMode::Pipeline {
        (
            Resource::Task {
                name: "slowest pipeline stage".into(),
                class: "pipeline".into(),
            },
            "pipeline imbalance: threads wait for their stage's next packet (the slowest stage sets the rate)",
        )
    } else {
        (
            Resource::InputBuffer {
                slots: o.input_slots,
            },
            "idle threads: packets are not arriving fast enough to keep every thread busy (bursts fill the input buffer)",
        )
    };
    let cats = [
        (
            b.locked,
            lock,
            "synchronization: threads wait for locks or transaction restarts",
        ),
        (
            b.hazard_bubble,
            Resource::IssueSlots,
            "pipeline hazards: too few ready threads to hide them",
        ),
        (
            b.other,
            Resource::Memory {
                name: "data cache and memory queue".into(),
            },
            "memory: loads wait for data-cache misses or the memory queue",
        ),
        (
            b.squashed,
            Resource::Memory {
                name: "shared data cache".into(),
            },
            "shared-cache contention: accesses replayed behind other threads' writes",
        ),
        (b.no_packet, idle.0, idle.1),
    ];
    let mut evidence = Vec::new();
    // Policy fixed: the dedicated context busy nearly all the time sets the rate, whatever the
    // other contexts do.
    let dedicated = o.slow_path.policy == Some(pktflow_protoproc::policy::Policy::Fixed)
        && rep.slow_path_occupancy >= DEDICATED_BOUND;
    let (resource, share, mut advice) = if dedicated {
        evidence.push(format!(
            "the context dedicated to the slow path holds slow-path work {} of the time",
            pct(rep.slow_path_occupancy)
        ));
        (
            Resource::ProtocolProcessor,
            rep.slow_path_occupancy,
            "share the slow path (floating) or make its runs cheaper".to_string(),
        )
    } else if b.busy >= 0.8 {
        evidence.push(format!(
            "computation: the cores issue an instruction in {} of their cycles",
            pct(b.busy)
        ));
        (
            Resource::IssueSlots,
            b.busy,
            "fewer instructions per packet, or more cores".to_string(),
        )
    } else {
        let mut best = 0;
        for (i, c) in cats.iter().enumerate() {
            if c.0 > cats[best].0 {
                best = i;
            }
        }
        let (share, r, what) = cats[best].clone();
        evidence.push(format!("{what} ({} of issue slots)", pct(share)));
        let advice = r.default_advice().to_string();
        (r, share, advice)
    };
    if rep.aborts > 0 && rep.instructions > 0 {
        let wasted = rep.wasted_instructions as f64 / rep.instructions as f64;
        evidence.push(format!(
            "aborted transactions redo {} of the work ({:.2} aborts per transaction, mostly on {})",
            pct(wasted),
            rep.aborts as f64 / rep.transactions.max(1) as f64,
            top_abort_structure(rep).unwrap_or_default()
        ));
    }
    if criterion != Criterion::Saturation && o.scheduler == Scheduler::RoundRobin && b.locked > 0.2
    {
        advice.push_str("; the lock-aware scheduler would give spinning threads' slots away");
    }
    Some(Finding::with_advice(resource, share, evidence, advice))
}

/// The data structure most aborts came from.
fn top_abort_structure(rep: &RunReport) -> Option<String> {
    rep.aborts_by_structure
        .iter()
        .max_by_key(|x| x.1)
        .map(|x| x.0.clone())
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ConflictsRequest {
    pub workload: WorkloadSpec,
    /// `LO:HI` window sizes (default 2:16).
    pub window: Option<String>,
    /// Count the applications' lock words as shared locations (default false: data conflicts
    /// only, as the thesis's Figure 8.1 measures).
    pub include_lock_words: Option<bool>,
}

#[derive(Clone, Debug, Serialize)]
pub struct ConflictsResult {
    pub app: String,
    pub packets: u64,
    /// Packets that touch persistent state at all.
    pub packets_with_shared_state: u64,
    pub windows: Vec<WindowPoint>,
    /// State objects in the overlaps of conflicting packet pairs within the smallest window,
    /// with the number of such pairs (most first, at most 10).
    pub conflicting_objects: Vec<ObjectPairs>,
    pub settings: serde_json::Value,
}

#[derive(Clone, Debug, Serialize)]
pub struct ObjectPairs {
    pub object: String,
    pub pairs: u64,
}

pub fn conflicts(req: &ConflictsRequest) -> Result<ConflictsResult, String> {
    let (lo, hi) = conflicts::parse_window(req.window.as_deref().unwrap_or("2:16"))?;
    let l = req.workload.load(0)?;
    let lock_words = req.include_lock_words.unwrap_or(false);
    let sets = if lock_words {
        &l.sets_with_lock_words
    } else {
        &l.sets
    };
    let windows = conflicts::windows(sets, lo, hi)?;
    let mut objects = conflicts::conflicting_objects(sets, lo);
    objects.truncate(10);
    let conflicting_objects = objects
        .into_iter()
        .map(|(o, pairs)| ObjectPairs {
            object: l
                .workload
                .region_names
                .iter()
                .find(|r| r.1.ends_with(&format!("#{o}")))
                .map(|r| r.1.clone())
                .unwrap_or_else(|| {
                    l.workload
                        .region_names
                        .first()
                        .map(|r| r.1.clone())
                        .filter(|_| o == 0)
                        .unwrap_or_else(|| format!("object {o}"))
                }),
            pairs,
        })
        .collect();
    Ok(ConflictsResult {
        conflicting_objects,
        app: req.workload.app.clone(),
        packets: sets.len() as u64,
        packets_with_shared_state: sets
            .iter()
            .filter(|s| !s.reads.is_empty() || !s.writes.is_empty())
            .count() as u64,
        windows,
        settings: serde_json::json!({
            "workload": req.workload,
            "window": format!("{lo}:{hi}"),
            "include_lock_words": lock_words,
        }),
    })
}

fn parse<T: for<'de> Deserialize<'de>>(what: &str, s: &str) -> Result<T, String> {
    serde_json::from_str(s).map_err(|e| format!("{what} request: {e}"))
}

/// JSON in, JSON out (`progress(done, total)` now and then).
pub fn rtc_json(req: &str, progress: &mut dyn FnMut(u32, u32)) -> Result<String, String> {
    let r: RtcRequest = parse("rtc", req)?;
    let res = rtc(&r, progress)?;
    serde_json::to_string(&res).map_err(|e| e.to_string())
}

pub fn conflicts_json(req: &str) -> Result<String, String> {
    let r: ConflictsRequest = parse("conflicts", req)?;
    let res = conflicts(&r)?;
    serde_json::to_string(&res).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(app: &str) -> RtcRequest {
        RtcRequest {
            workload: WorkloadSpec {
                app: app.into(),
                packets: 200,
                ..Default::default()
            },
            search: SearchSpec {
                window_seconds: 0.002,
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn echo_search_brackets_the_rate_and_reports_a_breakdown() {
        let r = rtc(&req("echo"), &mut |_, _| {}).unwrap();
        assert!(r.saturated, "64-byte echo cannot keep up with 4 GbE ports");
        assert!(r.bracket[0] <= r.bracket[1]);
        assert!((r.bracket[1] - r.bracket[0]) <= 0.011 * r.bracket[1]);
        assert!(r.probes.iter().any(|p| p.passed) && r.probes.iter().any(|p| !p.passed));
        assert_eq!(r.report.dropped, 0);
        assert_eq!(r.report.breakdown.total(), r.report.cycles * 2);
        let b = r.bottleneck.as_ref().unwrap();
        assert!(b.sentence.starts_with(&b.resource.describe()));
        // Determinism.
        let again = rtc(&req("echo"), &mut |_, _| {}).unwrap();
        assert_eq!(r.packets_per_second, again.packets_per_second);
    }

    #[test]
    fn slow_path_policies_on_a_traced_router() {
        use pktflow_protoproc::policy::Policy;
        let mut q = req("router");
        q.search.criterion = Criterion::Saturation;
        let mut pps = Vec::new();
        for policy in [Policy::Single, Policy::Fixed, Policy::Floating] {
            q.engine.slow_path = Some(crate::engine::SlowPathOptions {
                policy: Some(policy),
                elements: vec!["ARPQuerier".into()],
                ..Default::default()
            });
            let r = rtc(&q, &mut |_, _| {}).unwrap();
            let sp = r.slow_path.as_ref().unwrap();
            assert!(sp["runs_per_100_packets"].as_f64().unwrap() > 50.0, "{sp}");
            assert_eq!(r.settings["engine"]["slow_path"]["policy"], policy.name());
            if policy == Policy::Fixed {
                // 130 slow-path runs per 100 packets on one context of eight: it binds.
                let b = r.bottleneck.as_ref().unwrap();
                assert_eq!(b.resource, Resource::ProtocolProcessor, "{}", b.sentence);
                assert!(r.report.slow_path_occupancy >= 0.9);
            } else {
                assert_eq!(r.report.slow_path_occupancy, 0.0);
            }
            pps.push(r.packets_per_second);
        }
        // Every context serves the slow path under Single and Floating; Floating's role switch
        // (140 instructions) is cheaper than Single's interrupt (600).
        assert!(pps[2] > pps[0], "{pps:?}");
        q.engine.slow_path = None;
        assert!(rtc(&q, &mut |_, _| {}).unwrap().slow_path.is_none());
        let mut e = req("echo");
        e.engine.slow_path = Some(crate::engine::SlowPathOptions {
            policy: Some(Policy::Single),
            ..Default::default()
        });
        assert!(rtc(&e, &mut |_, _| {})
            .unwrap_err()
            .contains("traced application"));
    }

    #[test]
    fn traced_application_runs_with_locks_and_transactions() {
        let mut q = req("nat");
        q.search.criterion = Criterion::Saturation;
        let l = rtc(&q, &mut |_, _| {}).unwrap();
        assert!(l.report.completed > 0);
        q.engine.sync = Some(SyncMode::Tm);
        q.engine.scheduler = Some(Scheduler::LockAware);
        let t = rtc(&q, &mut |_, _| {}).unwrap();
        assert!(t.report.completed > 0);
        assert!(
            t.report.commits > 0,
            "nat's critical sections become transactions"
        );
        q.engine.signature = Some(SignatureKind::Trie);
        let tr = rtc(&q, &mut |_, _| {}).unwrap();
        assert!(tr.report.commits > 0);
    }

    #[test]
    fn bad_requests_name_the_option() {
        let mut q = req("echo");
        q.search.window_seconds = f64::NAN;
        assert!(rtc(&q, &mut |_, _| {})
            .unwrap_err()
            .contains("--window-seconds"));
        let mut q = req("echo");
        q.engine.cores = Some(0);
        assert!(rtc(&q, &mut |_, _| {}).unwrap_err().contains("--cores"));
        let mut q = req("echo");
        q.arch = Some("npire".into());
        assert!(rtc(&q, &mut |_, _| {}).unwrap_err().contains("netthreads"));
        assert!(rtc_json("{\"nope\": 1}", &mut |_, _| {}).is_err());
        let c = ConflictsRequest {
            window: Some("1:3".into()),
            ..Default::default()
        };
        assert!(conflicts(&c).unwrap_err().contains("--window"));
    }

    #[test]
    fn conflicts_of_nat_rise_with_the_window_and_echo_has_none() {
        let c = ConflictsRequest {
            workload: WorkloadSpec {
                app: "nat".into(),
                packets: 300,
                ..Default::default()
            },
            window: Some("2:8".into()),
            ..Default::default()
        };
        let r = conflicts(&c).unwrap();
        assert_eq!(r.windows.len(), 7);
        assert!(r.windows.last().unwrap().fraction >= r.windows[0].fraction);
        let e = conflicts(&ConflictsRequest {
            workload: WorkloadSpec {
                app: "echo".into(),
                packets: 50,
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap();
        assert!(e.windows.iter().all(|p| p.conflicting == 0));
    }

    #[test]
    fn conflicts_count_data_only_unless_lock_words_are_asked_for() {
        // nat-nt takes its flow table's global lock in every packet: with the lock word every
        // pair conflicts; without it only packets of the same flow (or sharing table state) do.
        let mut c = ConflictsRequest {
            workload: WorkloadSpec {
                app: "nat-nt".into(),
                packets: 200,
                ..Default::default()
            },
            window: Some("2".into()),
            include_lock_words: Some(true),
        };
        let with = conflicts(&c).unwrap();
        assert_eq!(with.windows[0].fraction, 1.0);
        assert_eq!(with.settings["include_lock_words"], true);
        c.include_lock_words = None;
        let data = conflicts(&c).unwrap();
        assert!(data.windows[0].fraction < 0.9, "{:?}", data.windows);
        assert_eq!(data.settings["include_lock_words"], false);
        assert!(data
            .conflicting_objects
            .iter()
            .all(|o| !o.object.contains("state 0 ")));
    }
}
