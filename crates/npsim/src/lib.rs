//! Network-processor timing simulator after NPIRE (seed 000, `000_3853cd1582c2b67c.txt`,
//! sections 2.4, 3.1, 3.2 and 4; architecture of Table 3 in `presets/npire.toml`).
//!
//! A discrete-event model driven by the per-packet traces of the functional run: each element
//! visit is a task instance that waits in its task's queue, runs on a hardware context of a PE
//! it is mapped to, executes its instructions one per cycle, issues its memory accesses to the
//! storage its memory type maps to through the buses of the architecture (each with an
//! unpipelined occupancy, a pipelined latency and a bounded request queue), and takes a lock
//! around its accesses to shared persistent state (one per shared location, section 2.4). See `docs/npsim.md`.
//!
//! Traces are streamed: the simulator pulls the next packet's trace from a [`TraceSource`] when
//! that packet arrives, compiles it into the operations of its visits and keeps only packets in
//! flight, so memory does not grow with the length of the trace.
pub mod api;
pub mod app;
pub mod bottleneck;
pub mod config;
pub mod diagnose;
pub mod explore;
pub mod mapper;
pub mod maxrate;
pub mod prog;
pub mod sim;
pub mod slowpath; // [slowpath hook]
pub mod stats;
pub mod xform; // [xform hook]

pub use bottleneck::{bottleneck, Bottleneck, BottleneckConfig};
pub use config::{
    Arrivals, Ideal, LockRelease, Mapping, Replication, Scheduling, SimConfig, TaskMap,
};
pub use diagnose::{diagnose, Diagnosis};
pub use maxrate::{max_rate, MaxRate, MaxRateConfig};
pub use sim::Sim;
pub use stats::SimReport;

use pktflow_model::PacketTrace;

/// Where the simulator gets the next packet's trace.
pub trait TraceSource {
    fn next_trace(&mut self) -> Result<Option<&PacketTrace>, String>;
}

impl TraceSource for pktflow_profile::run::Run {
    fn next_trace(&mut self) -> Result<Option<&PacketTrace>, String> {
        pktflow_profile::run::Run::next_trace(self)
    }
}

/// Traces held in memory (tests, and short hand-built workloads), replayed `repeat` times with
/// packet numbers continuing.
pub struct VecSource {
    traces: Vec<PacketTrace>,
    repeat: u64,
    i: u64,
    cur: PacketTrace,
}

impl VecSource {
    pub fn new(traces: Vec<PacketTrace>, repeat: u64) -> VecSource {
        VecSource {
            traces,
            repeat,
            i: 0,
            cur: PacketTrace::default(),
        }
    }
}

impl TraceSource for VecSource {
    fn next_trace(&mut self) -> Result<Option<&PacketTrace>, String> {
        let n = self.traces.len() as u64;
        if n == 0 || self.i >= n * self.repeat {
            return Ok(None);
        }
        let t = &self.traces[(self.i % n) as usize];
        self.cur.clone_from(t);
        self.cur.packet = self.i;
        self.i += 1;
        Ok(Some(&self.cur))
    }
}

/// Simulate one configuration.
pub fn simulate(
    arch: &pktflow_arch::np::NpArch,
    pe_count: u32,
    mapping: &Mapping,
    names: Vec<String>,
    cfg: &SimConfig,
    src: &mut dyn TraceSource,
) -> Result<SimReport, String> {
    Sim::new(arch, pe_count, mapping, names, cfg)?.run(src)
}

/// [`simulate`] calling `progress(packets_injected)` now and then (every 65,536 events).
pub fn simulate_with(
    arch: &pktflow_arch::np::NpArch,
    pe_count: u32,
    mapping: &Mapping,
    names: Vec<String>,
    cfg: &SimConfig,
    src: &mut dyn TraceSource,
    progress: &mut dyn FnMut(u64),
) -> Result<SimReport, String> {
    Sim::new(arch, pe_count, mapping, names, cfg)?.run_with(src, progress)
}
