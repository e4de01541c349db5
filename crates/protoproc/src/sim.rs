//! Discrete-event simulation of the three protocol-processing policies (sections 5 and 6 of the
//! protocol-processing paper).
//!
//! The system: `nodes` nodes of `cpus` processors; `threads` application threads per compute
//! processor on one run queue per node (no affinity, as the paper's thread package); one protocol
//! handler slot per node (handlers are mutually exclusive); a network with a fixed one-way latency
//! and no bandwidth limit; optionally a node bus whose saturation slows computation down.
//!
//! A remote miss: the faulting processor spends the fault-detection time; the thread blocks and
//! its dispatch request joins the node's protocol queue; a request handler sends the request;
//! after the network latency the home node's protocol queue gets it and a home handler sends the
//! reply; the reply handler on the requester makes the thread runnable; a processor switches to
//! it (context switch). Who runs the queue's handlers and when is the policy (docs/protoproc.md):
//!
//! * Fixed: processor 0 of the node, at once, with the dedicated costs.
//! * Single and Floating: a processor with no runnable thread, at once (its idle loop polls); a
//!   computing processor at its next poll (only the poll owner polls, ownership passing round
//!   robin on every return from the dispatch code) or after an interrupt; a faulting processor
//!   dispatches right after its fault. Handlers from the idle loop cost the dedicated costs,
//!   from a thread's context (poll, fault, interrupt) the shared ones. Under Floating a processor
//!   that acted as protocol processor pays a role switch when it goes back to computation.
//!
//! Times are integer nanoseconds inside, microseconds outside. Every run checks that each request
//! issued got its reply, and stops with "interrupted" when Ctrl-C is pressed.
use crate::error::ProtoError;
use crate::policy::{HandlerCosts, Notify, Policy, PolicyCosts};
use crate::workload::{App, Op, Place, Program};
use pktflow_model::cancel;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet, VecDeque};

/// Largest system: nodes, processors per node, threads per processor.
pub const MAX_NODES: u32 = 256;
pub const MAX_CPUS: u32 = 64;
pub const MAX_THREADS: u32 = 64;
/// Most compute slices a run may take (each poll ends one; about a minute of simulation).
pub const MAX_SLICES: f64 = 2e8;
/// Largest number of threads over the whole system.
pub const MAX_TOTAL_THREADS: u64 = 65_536;
/// Largest compute slice while a bus is modelled (its slowdown is re-evaluated at each slice).
const BUS_SLICE_NS: u64 = 50_000;

/// Everything a run depends on.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SimConfig {
    pub policy: Policy,
    pub nodes: u32,
    pub cpus: u32,
    /// Threads per compute processor.
    pub threads: u32,
    pub costs: PolicyCosts,
    /// Fraction of the node bus one computing processor occupies (0 = no bus model). With k
    /// processors computing, computation runs max(1, k x share) times slower.
    pub bus_share: f64,
    pub seed: u64,
}

impl SimConfig {
    pub fn validate(&self, app: &App) -> Result<(), ProtoError> {
        let range = |name: &str, v: u32, lo: u32, hi: u32| {
            if v < lo || v > hi {
                Err(ProtoError::Request(format!(
                    "{name} must be between {lo} and {hi}, got {v}"
                )))
            } else {
                Ok(())
            }
        };
        range("nodes", self.nodes, 1, MAX_NODES)?;
        range("cpus", self.cpus, 1, MAX_CPUS)?;
        range("threads", self.threads, 1, MAX_THREADS)?;
        self.policy.check_cpus(self.cpus)?;
        let threads = self.nodes as u64 * self.cpus as u64 * self.threads as u64;
        if threads > MAX_TOTAL_THREADS {
            return Err(ProtoError::Request(format!(
                "nodes x cpus x threads = {threads} threads, at most {MAX_TOTAL_THREADS}"
            )));
        }
        self.costs.validate()?;
        crate::error::check_range("bus_share", self.bus_share, 0.0, 100.0)?;
        app.validate(self.nodes)?;
        // Computation runs in slices that end at each poll (and every 50 us with a bus model):
        // bound their number before starting.
        let polls = self.policy != Policy::Fixed && self.costs.notify == Notify::Poll;
        let mut slice = f64::INFINITY;
        if polls {
            slice = self.costs.poll_interval_us * (1.0 - self.costs.poll_jitter).max(0.01);
        }
        if self.bus_share > 0.0 {
            slice = slice.min(BUS_SLICE_NS as f64 / NS);
        }
        let slices = app.total_compute_us(self.nodes) / slice;
        if slices > MAX_SLICES {
            return Err(ProtoError::Request(format!(
                "poll_interval_us: about {slices:.2e} compute slices ({:.3e} us of computation cut every {slice:.3} us or less), at most {MAX_SLICES:.0e} per run; lengthen the poll interval or shrink the input",
                app.total_compute_us(self.nodes)
            )));
        }
        Ok(())
    }
}

/// Time a processor spent in each activity, microseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Breakdown {
    /// Application computation (including bus stalls).
    pub compute_us: f64,
    /// Protocol handlers, fault detection, interrupts.
    pub protocol_us: f64,
    /// Poll stubs.
    pub polling_us: f64,
    /// Context switches and Floating's role switches.
    pub switch_us: f64,
    /// Nothing to do (waiting for a reply, a barrier or a message).
    pub idle_us: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct CpuReport {
    pub node: u32,
    pub cpu: u32,
    /// "protocol" for Fixed's dedicated processor, "compute" otherwise.
    pub role: &'static str,
    #[serde(flatten)]
    pub time: Breakdown,
}

#[derive(Debug, Clone, Serialize)]
pub struct SimResult {
    /// When the last (non-background) thread finished.
    pub execution_time_us: f64,
    /// Mean over nodes of the time their last thread finished (the model's per-processor time,
    /// without the load imbalance of random workloads).
    pub mean_node_finish_us: f64,
    pub processors: Vec<CpuReport>,
    /// Sum over processors.
    pub total: Breakdown,
    /// Remote misses (request/reply pairs) and their mean latency from fault to runnable thread.
    pub misses: u64,
    pub mean_miss_latency_us: f64,
    /// Every other message (barrier arrivals and releases, reduction exchanges).
    pub messages: u64,
    /// Mean time a protocol item waited in its node's queue before a handler took it.
    pub mean_queue_wait_us: f64,
    /// Requests issued and replies received (equal at the end of every run).
    pub requests_issued: u64,
    pub replies_received: u64,
    /// Time spent in protocol handlers per node (fault detection and interrupts excluded).
    pub handler_us_per_node: Vec<f64>,
    pub events: u64,
}

const NS: f64 = 1000.0;

fn ns(us: f64) -> u64 {
    (us * NS).round().max(0.0) as u64
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    /// Requester: dispatch thread `t`'s fault and send the request.
    Fault { t: usize, home: u32 },
    /// Home: serve a request of thread `t` of node `from`.
    Request { from: u32, t: usize },
    /// Requester: the reply for thread `t`.
    Reply { t: usize },
    /// Send a message (barrier or exchange) to `dest`.
    Send { dest: u32, msg: Msg },
    /// Receive a message.
    Recv { msg: Msg },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Msg {
    BarrierArrive,
    BarrierRelease,
    Exchange(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Dedicated,
    Shared,
}

/// What a processor does when its current activity ends.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Next {
    Segment,
    Poll,
    Handler(Item),
    Detected { t: usize, home: u32 },
    SwitchTo(usize),
    RoleSwitch,
    Interrupt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cat {
    Compute,
    Protocol,
    Polling,
    Switch,
}

struct Cpu {
    node: usize,
    local: u32,
    dedicated: bool,
    /// Thread on this processor (running or in dispatch from its context).
    thread: Option<usize>,
    /// Pending completion: (what, end, category, start); None = idle.
    busy: Option<(Next, u64, Cat, u64)>,
    version: u64,
    /// Holds the node's handler slot; `shared_ctx`: entered dispatch from a thread's context.
    slot: bool,
    shared_ctx: bool,
    /// Acted as protocol processor while idle since it last computed (Floating role switch).
    acted: bool,
    /// Work left until the next poll, ns.
    to_poll: u64,
    /// Current compute slice: work (ns) and slowdown.
    slice: Option<(u64, f64)>,
    acct: [u64; 4],
}

struct Thread {
    node: usize,
    prog: Program,
    /// Compute work left in the current Compute op, ns.
    left: u64,
    done: bool,
    fault_at: u64,
    waiting_tag: Option<u64>,
}

struct Node {
    runq: VecDeque<usize>,
    queue: VecDeque<(Item, u64)>,
    slot_busy: bool,
    poll_owner: u32,
    threads: Vec<usize>,
    live: usize,
    node_barrier: Vec<usize>,
    barrier: Vec<usize>,
    /// Node 0: nodes arrived at the global barrier.
    arrived: u32,
    received: HashSet<u64>,
    interrupt_pending: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Cpu { cpu: usize, version: u64 },
    Arrive { node: u32, item_ix: usize },
}

struct Sim {
    cfg: SimConfig,
    now: u64,
    seq: u64,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    in_flight: Vec<Option<Item>>,
    free_slots: Vec<usize>,
    cpus: Vec<Cpu>,
    threads: Vec<Thread>,
    nodes: Vec<Node>,
    foreground_left: usize,
    issued: u64,
    replied: u64,
    misses: u64,
    miss_latency: u64,
    messages: u64,
    waits: u64,
    wait_sum: u64,
    events: u64,
    net: u64,
    rng: ChaCha8Rng,
    handler_ns: Vec<u64>,
    node_finish: Vec<u64>,
}

/// Run `app` on the system `cfg`.
pub fn simulate(cfg: &SimConfig, app: &App) -> Result<SimResult, ProtoError> {
    simulate_with_progress(cfg, app, &mut |_, _| {})
}

/// [`simulate`], calling `progress(misses_done, misses_expected)` about every 64k events.
pub fn simulate_with_progress(
    cfg: &SimConfig,
    app: &App,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<SimResult, ProtoError> {
    cfg.validate(app)?;
    let mut s = Sim::new(cfg.clone(), app);
    let expected = app.expected_misses(cfg.nodes).round() as u64;
    s.run(&mut |done| progress(done, expected.max(done)))?;
    progress(s.replied, s.replied);
    s.report()
}

impl Sim {
    fn new(cfg: SimConfig, app: &App) -> Sim {
        let compute = cfg.policy.compute_cpus(cfg.cpus);
        let per_node = (compute * cfg.threads) as usize;
        let mut cpus = Vec::new();
        let mut threads = Vec::new();
        let mut nodes = Vec::new();
        let mut fg = 0;
        for n in 0..cfg.nodes as usize {
            for c in 0..cfg.cpus {
                cpus.push(Cpu {
                    node: n,
                    local: c,
                    dedicated: cfg.policy == Policy::Fixed && c == 0,
                    thread: None,
                    busy: None,
                    version: 0,
                    slot: false,
                    shared_ctx: false,
                    acted: false,
                    to_poll: 1,
                    slice: None,
                    acct: [0; 4],
                });
            }
            let mut ids = Vec::new();
            for t in 0..per_node {
                let place = Place {
                    node: n as u32,
                    nodes: cfg.nodes,
                    thread: t as u32,
                    threads: per_node as u32,
                    seed: cfg.seed,
                };
                let prog = Program::new(*app, place);
                if !prog.background {
                    fg += 1;
                }
                ids.push(threads.len());
                threads.push(Thread {
                    node: n,
                    prog,
                    left: 0,
                    done: false,
                    fault_at: 0,
                    waiting_tag: None,
                });
            }
            nodes.push(Node {
                runq: ids.iter().copied().collect(),
                queue: VecDeque::new(),
                slot_busy: false,
                poll_owner: if cfg.policy == Policy::Fixed { 1 } else { 0 },
                live: ids.len(),
                threads: ids,
                node_barrier: Vec::new(),
                barrier: Vec::new(),
                arrived: 0,
                received: HashSet::new(),
                interrupt_pending: false,
            });
        }
        let net = ns(cfg.costs.network_us);
        let cfg_seed = cfg.seed ^ 0x005e_ed0f_9011;
        let n_nodes = cfg.nodes as usize;
        Sim {
            cfg,
            now: 0,
            seq: 0,
            heap: BinaryHeap::new(),
            in_flight: Vec::new(),
            free_slots: Vec::new(),
            cpus,
            threads,
            nodes,
            foreground_left: fg,
            issued: 0,
            replied: 0,
            misses: 0,
            miss_latency: 0,
            messages: 0,
            waits: 0,
            wait_sum: 0,
            events: 0,
            net,
            rng: ChaCha8Rng::seed_from_u64(cfg_seed),
            handler_ns: vec![0; n_nodes],
            node_finish: vec![0; n_nodes],
        }
        .with_poll_phases()
    }

    /// Every processor starts at a random point of its first poll interval.
    fn with_poll_phases(mut self) -> Sim {
        for c in 0..self.cpus.len() {
            let first = self.poll_interval();
            self.cpus[c].to_poll = ((first as f64) * self.rng.gen::<f64>()).ceil().max(1.0) as u64;
        }
        self
    }

    /// One poll interval, ns (drawn within the configured spread).
    fn poll_interval(&mut self) -> u64 {
        let c = &self.cfg.costs;
        let j = c.poll_jitter;
        let f = if j > 0.0 {
            1.0 + j * (2.0 * self.rng.gen::<f64>() - 1.0)
        } else {
            1.0
        };
        ns(c.poll_interval_us * f).max(1)
    }

    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev)));
    }

    fn send(&mut self, from: u32, dest: u32, item: Item) {
        let ix = if let Some(i) = self.free_slots.pop() {
            self.in_flight[i] = Some(item);
            i
        } else {
            self.in_flight.push(Some(item));
            self.in_flight.len() - 1
        };
        let delay = if from == dest { 0 } else { self.net };
        self.push(
            self.now + delay,
            Ev::Arrive {
                node: dest,
                item_ix: ix,
            },
        );
    }

    fn run(&mut self, progress: &mut dyn FnMut(u64)) -> Result<(), ProtoError> {
        for c in 0..self.cpus.len() {
            self.next(c);
        }
        while self.foreground_left > 0 {
            let Some(Reverse((at, _, ev))) = self.heap.pop() else {
                return Err(ProtoError::Internal(format!(
                    "the simulation stopped with {} thread(s) unfinished and nothing left to happen",
                    self.foreground_left
                )));
            };
            self.events += 1;
            if self.events & 4095 == 0 {
                cancel::check()?;
                if self.events & 65535 == 0 {
                    progress(self.replied);
                }
            }
            self.now = at;
            match ev {
                Ev::Cpu { cpu, version } => {
                    if self.cpus[cpu].version != version {
                        continue;
                    }
                    let Some((what, _, _, _)) = self.cpus[cpu].busy.take() else {
                        continue;
                    };
                    self.finish(cpu, what);
                }
                Ev::Arrive { node, item_ix } => {
                    let item = self.in_flight[item_ix].take().expect("in-flight message");
                    self.free_slots.push(item_ix);
                    self.enqueue(node as usize, item);
                }
            }
        }
        Ok(())
    }

    /// Start an activity of `dur` ns on `cpu`.
    fn start(&mut self, cpu: usize, what: Next, dur: u64, cat: Cat) {
        let c = &mut self.cpus[cpu];
        c.version += 1;
        c.busy = Some((what, self.now + dur, cat, self.now));
        c.acct[cat as usize] += dur;
        let v = c.version;
        self.push(self.now + dur, Ev::Cpu { cpu, version: v });
    }

    /// The processors of `node` (contiguous: node n has n x cpus .. (n + 1) x cpus).
    fn on(&self, node: usize) -> std::ops::Range<usize> {
        let p = self.cfg.cpus as usize;
        node * p..(node + 1) * p
    }

    fn computing_on(&self, node: usize) -> usize {
        self.cpus[self.on(node)]
            .iter()
            .filter(|c| matches!(c.busy, Some((Next::Segment, ..))))
            .count()
    }

    fn slowdown(&self, k: usize) -> f64 {
        (k as f64 * self.cfg.bus_share).max(1.0)
    }

    fn costs_for(&self, cpu: usize) -> (HandlerCosts, Class) {
        let c = &self.cpus[cpu];
        // A processor that handles from its idle loop acts as a protocol processor without
        // switching from computation: the paper's em3d under Single "spends most of time acting
        // as a protocol processor, not incurring the overhead of switching between computation
        // and protocol processing".
        let cls = match self.cfg.policy {
            Policy::Fixed => Class::Dedicated,
            _ if c.shared_ctx => Class::Shared,
            _ => Class::Dedicated,
        };
        let h = if cls == Class::Shared {
            self.cfg.costs.shared
        } else {
            self.cfg.costs.dedicated
        };
        (h, cls)
    }

    /// Extra bus-bound refill time when a handler or role switch runs on a computing processor
    /// while the bus is loaded.
    fn pollution(&self, node: usize) -> u64 {
        if self.cfg.bus_share <= 0.0 {
            return 0;
        }
        let k = self.computing_on(node) + 1;
        ns(self.cfg.costs.pollution_us * (self.slowdown(k) - 1.0))
    }

    fn polls(&self, cpu: usize) -> bool {
        self.cfg.policy != Policy::Fixed
            && self.cfg.costs.notify == Notify::Poll
            && !self.cpus[cpu].dedicated
    }

    /// Decide what an idle (not busy) processor does next.
    fn next(&mut self, cpu: usize) {
        if self.cpus[cpu].busy.is_some() {
            return;
        }
        let node = self.cpus[cpu].node;
        // 1. Draining the protocol queue while holding the slot.
        if self.cpus[cpu].slot {
            if let Some((item, since)) = self.nodes[node].queue.pop_front() {
                self.waits += 1;
                self.wait_sum += self.now - since;
                let (h, cls) = self.costs_for(cpu);
                let base = match item {
                    Item::Fault { .. } | Item::Send { .. } => h.request_us,
                    Item::Request { .. } => h.home_us,
                    Item::Reply { .. } => h.reply_us,
                    Item::Recv {
                        msg: Msg::BarrierRelease,
                    } => h.reply_us,
                    Item::Recv { .. } => h.home_us,
                };
                let extra = if cls == Class::Shared {
                    self.pollution(node)
                } else {
                    0
                };
                self.handler_ns[node] += ns(base) + extra;
                self.start(cpu, Next::Handler(item), ns(base) + extra, Cat::Protocol);
                return;
            }
            let c = &mut self.cpus[cpu];
            c.slot = false;
            self.nodes[node].slot_busy = false;
            if c.shared_ctx && c.thread.is_some() {
                self.pass_poll_ownership(node);
            }
            self.cpus[cpu].shared_ctx = false;
        }
        if self.cpus[cpu].dedicated {
            if !self.nodes[node].queue.is_empty() && !self.nodes[node].slot_busy {
                self.take_slot(cpu, false);
                self.next(cpu);
            }
            return;
        }
        // 2. A thread on this processor: keep running it.
        if let Some(t) = self.cpus[cpu].thread {
            self.run_thread(cpu, t);
            return;
        }
        // 3. No thread: act as protocol processor if there is protocol work.
        if self.cfg.policy != Policy::Fixed
            && !self.nodes[node].queue.is_empty()
            && !self.nodes[node].slot_busy
        {
            self.take_slot(cpu, false);
            self.cpus[cpu].acted = true;
            self.next(cpu);
            return;
        }
        // 4. Pick a runnable thread.
        if let Some(t) = self.nodes[node].runq.pop_front() {
            if self.cfg.policy == Policy::Floating && self.cpus[cpu].acted {
                self.cpus[cpu].acted = false;
                self.nodes[node].runq.push_front(t);
                let d = ns(self.cfg.costs.role_switch_us) + self.pollution(node);
                self.start(cpu, Next::RoleSwitch, d, Cat::Switch);
                return;
            }
            self.cpus[cpu].acted = false;
            self.start(
                cpu,
                Next::SwitchTo(t),
                ns(self.cfg.costs.context_switch_us),
                Cat::Switch,
            );
        }
        // 5. Otherwise idle: woken by a message or a runnable thread.
    }

    fn take_slot(&mut self, cpu: usize, shared_ctx: bool) {
        let node = self.cpus[cpu].node;
        self.nodes[node].slot_busy = true;
        self.cpus[cpu].slot = true;
        self.cpus[cpu].shared_ctx = shared_ctx;
    }

    fn pass_poll_ownership(&mut self, node: usize) {
        let n = &mut self.nodes[node];
        let first = if self.cfg.policy == Policy::Fixed {
            1
        } else {
            0
        };
        let count = self.cfg.cpus - first;
        if count > 0 {
            n.poll_owner = first + (n.poll_owner - first + 1) % count;
        }
    }

    fn run_thread(&mut self, cpu: usize, t: usize) {
        let node = self.cpus[cpu].node;
        // Interrupt mode: a message waiting for a computing processor.
        if self.cfg.costs.notify == Notify::Interrupt
            && self.cfg.policy != Policy::Fixed
            && self.nodes[node].interrupt_pending
            && !self.nodes[node].slot_busy
            && !self.nodes[node].queue.is_empty()
        {
            self.nodes[node].interrupt_pending = false;
            self.start(
                cpu,
                Next::Interrupt,
                ns(self.cfg.costs.interrupt_us),
                Cat::Protocol,
            );
            return;
        }
        self.nodes[node].interrupt_pending &= !self.nodes[node].queue.is_empty();
        loop {
            if self.threads[t].left > 0 {
                let polls = self.polls(cpu);
                let mut work = self.threads[t].left;
                if polls {
                    work = work.min(self.cpus[cpu].to_poll);
                }
                if self.cfg.bus_share > 0.0 {
                    work = work.min(BUS_SLICE_NS);
                }
                let k = self.computing_on(node) + 1;
                let sd = self.slowdown(k);
                self.cpus[cpu].slice = Some((work, sd));
                let dur = (work as f64 * sd).ceil() as u64;
                self.start(cpu, Next::Segment, dur, Cat::Compute);
                return;
            }
            match self.threads[t].prog.next_op() {
                Some(Op::Compute(us)) => self.threads[t].left = ns(us),
                Some(Op::Miss { home }) => {
                    self.threads[t].fault_at = self.now;
                    self.start(
                        cpu,
                        Next::Detected { t, home },
                        ns(self.cfg.costs.miss_detect_us),
                        Cat::Protocol,
                    );
                    return;
                }
                Some(Op::NodeBarrier) => {
                    let n = &mut self.nodes[node];
                    n.node_barrier.push(t);
                    if n.node_barrier.len() == n.live {
                        let all: Vec<usize> = n.node_barrier.drain(..).collect();
                        for w in all {
                            if w != t {
                                self.make_runnable(w);
                            }
                        }
                        continue;
                    }
                    self.block(cpu);
                    return;
                }
                Some(Op::Barrier) => {
                    let n = &mut self.nodes[node];
                    n.barrier.push(t);
                    if n.barrier.len() == n.live {
                        self.enqueue(
                            node,
                            Item::Send {
                                dest: 0,
                                msg: Msg::BarrierArrive,
                            },
                        );
                    }
                    self.block(cpu);
                    return;
                }
                Some(Op::Exchange { partner, tag }) => {
                    self.enqueue(
                        node,
                        Item::Send {
                            dest: partner,
                            msg: Msg::Exchange(tag),
                        },
                    );
                    if self.nodes[node].received.remove(&tag) {
                        continue;
                    }
                    self.threads[t].waiting_tag = Some(tag);
                    self.block(cpu);
                    return;
                }
                None => {
                    self.threads[t].done = true;
                    self.nodes[node].live -= 1;
                    if !self.threads[t].prog.background {
                        self.foreground_left -= 1;
                        self.node_finish[node] = self.now;
                    }
                    // A thread leaving may complete a barrier the others wait at.
                    self.check_barriers(node);
                    self.block(cpu);
                    return;
                }
            }
        }
    }

    fn check_barriers(&mut self, node: usize) {
        let n = &mut self.nodes[node];
        if !n.node_barrier.is_empty() && n.node_barrier.len() == n.live {
            let all: Vec<usize> = n.node_barrier.drain(..).collect();
            for w in all {
                self.make_runnable(w);
            }
        }
        let n = &self.nodes[node];
        if !n.barrier.is_empty() && n.barrier.len() == n.live {
            self.enqueue(
                node,
                Item::Send {
                    dest: 0,
                    msg: Msg::BarrierArrive,
                },
            );
        }
    }

    /// The thread on `cpu` stops running (blocked or finished); the processor looks for work.
    fn block(&mut self, cpu: usize) {
        self.cpus[cpu].thread = None;
        self.next(cpu);
    }

    fn make_runnable(&mut self, t: usize) {
        let node = self.threads[t].node;
        self.nodes[node].runq.push_back(t);
        self.wake_idle(node);
    }

    fn wake_idle(&mut self, node: usize) {
        for c in self.on(node) {
            if self.cpus[c].busy.is_none() && self.cpus[c].thread.is_none() {
                self.next(c);
            }
        }
    }

    fn enqueue(&mut self, node: usize, item: Item) {
        self.nodes[node].queue.push_back((item, self.now));
        if self.nodes[node].slot_busy {
            return;
        }
        // An idle processor (or Fixed's protocol processor) takes it at once.
        for c in self.on(node) {
            let cp = &self.cpus[c];
            if cp.busy.is_none()
                && cp.thread.is_none()
                && (self.cfg.policy != Policy::Fixed || cp.dedicated)
            {
                self.next(c);
                if self.nodes[node].slot_busy || self.nodes[node].queue.is_empty() {
                    return;
                }
            }
        }
        if self.cfg.policy == Policy::Fixed || self.cfg.costs.notify != Notify::Interrupt {
            return; // noticed at the next poll
        }
        // Interrupt the first computing processor.
        self.nodes[node].interrupt_pending = true;
        let victim = self
            .on(node)
            .find(|&c| matches!(self.cpus[c].busy, Some((Next::Segment, ..))));
        if let Some(c) = victim {
            self.preempt(c);
            self.nodes[node].interrupt_pending = false;
            self.start(
                c,
                Next::Interrupt,
                ns(self.cfg.costs.interrupt_us),
                Cat::Protocol,
            );
        }
    }

    /// Stop a compute slice midway, keeping the work done.
    fn preempt(&mut self, cpu: usize) {
        let Some((Next::Segment, end, _, start)) = self.cpus[cpu].busy else {
            return;
        };
        let (work, sd) = self.cpus[cpu].slice.take().expect("slice");
        let elapsed = self.now - start;
        let done = ((elapsed as f64 / sd).floor() as u64).min(work);
        let t = self.cpus[cpu].thread.expect("computing thread");
        self.threads[t].left -= done;
        if self.polls(cpu) {
            self.cpus[cpu].to_poll -= done;
        }
        self.cpus[cpu].acct[Cat::Compute as usize] -= end - self.now;
        self.cpus[cpu].busy = None;
        self.cpus[cpu].version += 1;
    }

    fn finish(&mut self, cpu: usize, what: Next) {
        let node = self.cpus[cpu].node;
        match what {
            Next::Segment => {
                let (work, _) = self.cpus[cpu].slice.take().expect("slice");
                let t = self.cpus[cpu].thread.expect("computing thread");
                self.threads[t].left -= work;
                if self.polls(cpu) {
                    self.cpus[cpu].to_poll -= work;
                    if self.cpus[cpu].to_poll == 0 {
                        self.cpus[cpu].to_poll = self.poll_interval();
                        if self.nodes[node].poll_owner == self.cpus[cpu].local {
                            self.start(
                                cpu,
                                Next::Poll,
                                ns(self.cfg.costs.poll_cost_us),
                                Cat::Polling,
                            );
                            return;
                        }
                    }
                }
                self.next(cpu);
            }
            Next::Poll => {
                if !self.nodes[node].queue.is_empty() && !self.nodes[node].slot_busy {
                    self.take_slot(cpu, true);
                } else {
                    self.pass_poll_ownership(node);
                }
                self.next(cpu);
            }
            Next::Interrupt => {
                if !self.nodes[node].slot_busy {
                    self.take_slot(cpu, true);
                }
                self.next(cpu);
            }
            Next::Detected { t, home } => {
                self.enqueue_fault(cpu, t, home);
            }
            Next::SwitchTo(t) => {
                self.cpus[cpu].thread = Some(t);
                self.next(cpu);
            }
            Next::RoleSwitch => self.next(cpu),
            Next::Handler(item) => {
                self.handled(node, item);
                self.next(cpu);
            }
        }
    }

    fn enqueue_fault(&mut self, cpu: usize, t: usize, home: u32) {
        let node = self.cpus[cpu].node;
        self.cpus[cpu].thread = None;
        self.nodes[node]
            .queue
            .push_back((Item::Fault { t, home }, self.now));
        if self.cfg.policy == Policy::Fixed {
            let pp = self
                .on(node)
                .find(|&c| self.cpus[c].dedicated)
                .expect("protocol processor");
            self.next(pp);
            self.next(cpu);
            return;
        }
        // Single / Floating: the faulting processor runs the dispatch code itself.
        if !self.nodes[node].slot_busy {
            self.take_slot(cpu, true);
        }
        self.next(cpu);
    }

    fn handled(&mut self, node: usize, item: Item) {
        let me = node as u32;
        match item {
            Item::Fault { t, home } => {
                self.issued += 1;
                self.send(me, home, Item::Request { from: me, t });
            }
            Item::Request { from, t } => self.send(me, from, Item::Reply { t }),
            Item::Reply { t } => {
                self.replied += 1;
                self.misses += 1;
                self.miss_latency += self.now - self.threads[t].fault_at;
                self.make_runnable(t);
            }
            Item::Send { dest, msg } => {
                self.messages += 1;
                self.send(me, dest, Item::Recv { msg });
            }
            Item::Recv {
                msg: Msg::BarrierArrive,
            } => {
                self.nodes[0].arrived += 1;
                if self.nodes[0].arrived == self.cfg.nodes {
                    self.nodes[0].arrived = 0;
                    for d in 0..self.cfg.nodes {
                        self.nodes[0].queue.push_back((
                            Item::Send {
                                dest: d,
                                msg: Msg::BarrierRelease,
                            },
                            self.now,
                        ));
                    }
                }
            }
            Item::Recv {
                msg: Msg::BarrierRelease,
            } => {
                let all: Vec<usize> = self.nodes[node].barrier.drain(..).collect();
                for t in all {
                    self.make_runnable(t);
                }
            }
            Item::Recv {
                msg: Msg::Exchange(tag),
            } => {
                let waiter = self.nodes[node]
                    .threads
                    .iter()
                    .copied()
                    .find(|&t| self.threads[t].waiting_tag == Some(tag));
                if let Some(t) = waiter {
                    self.threads[t].waiting_tag = None;
                    self.make_runnable(t);
                } else {
                    self.nodes[node].received.insert(tag);
                }
            }
        }
    }

    fn report(&self) -> Result<SimResult, ProtoError> {
        if self.issued != self.replied {
            return Err(ProtoError::Internal(format!(
                "{} requests issued but {} replies received at the end",
                self.issued, self.replied
            )));
        }
        let end = self.now;
        let us = |x: u64| x as f64 / NS;
        let mut total = Breakdown::default();
        let mut processors = Vec::new();
        for c in &self.cpus {
            let mut a = c.acct;
            // Activities still running at the end (the microbenchmark's spinning node) count
            // only up to the end.
            if let Some((_, stop, cat, _)) = c.busy {
                a[cat as usize] -= stop.saturating_sub(end).min(a[cat as usize]);
            }
            let busy: u64 = a.iter().sum();
            let b = Breakdown {
                compute_us: us(a[Cat::Compute as usize]),
                protocol_us: us(a[Cat::Protocol as usize]),
                polling_us: us(a[Cat::Polling as usize]),
                switch_us: us(a[Cat::Switch as usize]),
                idle_us: us(end.saturating_sub(busy)),
            };
            total.compute_us += b.compute_us;
            total.protocol_us += b.protocol_us;
            total.polling_us += b.polling_us;
            total.switch_us += b.switch_us;
            total.idle_us += b.idle_us;
            processors.push(CpuReport {
                node: c.node as u32,
                cpu: c.local,
                role: if c.dedicated { "protocol" } else { "compute" },
                time: b,
            });
        }
        let finishing: Vec<u64> = self
            .nodes
            .iter()
            .zip(&self.node_finish)
            .filter(|(n, _)| n.threads.iter().any(|&t| !self.threads[t].prog.background))
            .map(|(_, &f)| f)
            .collect();
        Ok(SimResult {
            execution_time_us: us(end),
            mean_node_finish_us: us(finishing.iter().sum::<u64>()) / finishing.len().max(1) as f64,
            processors,
            total,
            misses: self.misses,
            mean_miss_latency_us: if self.misses > 0 {
                us(self.miss_latency) / self.misses as f64
            } else {
                0.0
            },
            messages: self.messages,
            mean_queue_wait_us: if self.waits > 0 {
                us(self.wait_sum) / self.waits as f64
            } else {
                0.0
            },
            requests_issued: self.issued,
            replies_received: self.replied,
            handler_us_per_node: self.handler_ns.iter().map(|&x| us(x)).collect(),
            events: self.events,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Model;
    use crate::workload::{Em3d, Spread, Synthetic, Tomcatv};

    fn cfg(policy: Policy, cpus: u32, costs: PolicyCosts) -> SimConfig {
        SimConfig {
            policy,
            nodes: 4,
            cpus,
            threads: 1,
            costs,
            bus_share: 0.0,
            seed: 3,
        }
    }

    fn synthetic(c: f64, requests: u64) -> App {
        App::Synthetic(Synthetic {
            requests,
            c_us: c,
            spread: Spread::Exponential,
        })
    }

    #[test]
    fn breakdown_adds_up_and_every_request_is_replied() {
        let app = App::Em3d(Em3d {
            iterations: 1,
            ..Em3d::default()
        });
        for (p, cpus) in [
            (Policy::Single, 1),
            (Policy::Fixed, 3),
            (Policy::Floating, 3),
        ] {
            let r = simulate(&cfg(p, cpus, PolicyCosts::table2()), &app).unwrap();
            assert_eq!(r.requests_issued, r.replies_received);
            assert!(r.misses > 300, "{}", r.misses);
            for c in &r.processors {
                let t = &c.time;
                let sum = t.compute_us + t.protocol_us + t.polling_us + t.switch_us + t.idle_us;
                assert!((sum - r.execution_time_us).abs() < 1e-6 * r.execution_time_us.max(1.0));
                assert!(t.idle_us >= 0.0);
                if c.role == "protocol" {
                    assert_eq!(t.compute_us, 0.0);
                    assert_eq!(t.polling_us, 0.0);
                }
            }
            // em3d computes 1.7 us per edge: the total is fixed by the input.
            assert!((r.total.compute_us - 8160.0 / 2.0 * 5.0 * 2.0 * 1.7).abs() < 1.0);
            if p == Policy::Fixed {
                assert_eq!(r.total.polling_us, 0.0);
            } else {
                assert!(r.total.polling_us > 0.0);
            }
        }
    }

    #[test]
    fn runs_are_deterministic_per_seed() {
        let c = cfg(Policy::Floating, 2, PolicyCosts::table2());
        let a = simulate(&c, &synthetic(50.0, 300)).unwrap();
        let b = simulate(&c, &synthetic(50.0, 300)).unwrap();
        assert_eq!(a.execution_time_us, b.execution_time_us);
        assert_eq!(a.events, b.events);
        let c2 = SimConfig { seed: 4, ..c };
        let d = simulate(&c2, &synthetic(50.0, 300)).unwrap();
        assert_ne!(a.execution_time_us, d.execution_time_us);
    }

    /// Where the model's assumptions hold (little contention: C at least Lremote, protocol
    /// processors under 40% busy), the simulation agrees with Tfixed, Tsingle and Tfloating
    /// within 5%.
    #[test]
    fn simulation_matches_the_model_without_contention() {
        let (l, opp, orep) = (113.0, 55.0, 27.0);
        let costs = PolicyCosts::from_model(l, opp, orep).unwrap();
        let m = 1500;
        let md = Model::new(l, opp, orep, m as f64).unwrap();
        for c in [113.0, 600.0] {
            for (p, cpus, want) in [
                (Policy::Fixed, 2, md.t_fixed(c)),
                (Policy::Single, 1, md.t_single(c)),
                (Policy::Floating, 2, md.t_floating(c)),
            ] {
                let r = simulate(&cfg(p, cpus, costs), &synthetic(c, m)).unwrap();
                let err = (r.mean_node_finish_us - want) / want;
                assert!(
                    err.abs() < 0.05,
                    "{p:?} C={c}: sim {} model {want} ({:+.1}%)",
                    r.mean_node_finish_us,
                    100.0 * err
                );
            }
        }
    }

    /// With contention (C far below Lremote) the model underestimates, as the paper says.
    #[test]
    fn the_model_underestimates_under_contention() {
        let costs = PolicyCosts::from_model(113.0, 55.0, 27.0).unwrap();
        let md = Model::new(113.0, 55.0, 27.0, 1500.0).unwrap();
        let r = simulate(&cfg(Policy::Fixed, 2, costs), &synthetic(10.0, 1500)).unwrap();
        assert!(r.mean_node_finish_us > 1.05 * md.t_fixed(10.0));
        assert!(r.mean_queue_wait_us > 1.0);
    }

    #[test]
    fn interrupts_replace_polling() {
        let mut costs = PolicyCosts::table2();
        costs.notify = Notify::Interrupt;
        let r = simulate(&cfg(Policy::Single, 1, costs), &synthetic(200.0, 200)).unwrap();
        assert_eq!(r.total.polling_us, 0.0);
        let p = simulate(
            &cfg(Policy::Single, 1, PolicyCosts::table2()),
            &synthetic(200.0, 200),
        )
        .unwrap();
        assert!(p.total.polling_us > 0.0);
        // A 60 us interrupt costs more than waiting for a poll every ~28 us.
        assert!(r.mean_miss_latency_us > p.mean_miss_latency_us);
    }

    #[test]
    fn floating_pays_a_role_switch_when_an_idle_processor_goes_back_to_work() {
        let app = synthetic(40.0, 300);
        let mut costs = PolicyCosts::table2();
        costs.role_switch_us = 0.0;
        let free = simulate(&cfg(Policy::Floating, 2, costs), &app).unwrap();
        costs.role_switch_us = 50.0;
        let dear = simulate(&cfg(Policy::Floating, 2, costs), &app).unwrap();
        assert!(dear.total.switch_us > free.total.switch_us + 50.0 * 100.0);
        assert!(dear.execution_time_us > free.execution_time_us);
        // Fixed and Single never pay it.
        let fixed = simulate(&cfg(Policy::Fixed, 2, costs), &app).unwrap();
        costs.role_switch_us = 0.0;
        let fixed0 = simulate(&cfg(Policy::Fixed, 2, costs), &app).unwrap();
        assert_eq!(fixed.execution_time_us, fixed0.execution_time_us);
    }

    #[test]
    fn a_saturated_bus_slows_computation_down() {
        let app = App::Tomcatv(Tomcatv {
            iterations: 1,
            ..Tomcatv::default()
        });
        let mut c = cfg(Policy::Floating, 4, PolicyCosts::table2());
        let free = simulate(&c, &app).unwrap();
        c.bus_share = 0.5;
        let busy = simulate(&c, &app).unwrap();
        assert!(busy.total.compute_us > 1.2 * free.total.compute_us);
        assert!(
            busy.execution_time_us > free.execution_time_us,
            "{} {} {:?} {:?}",
            busy.execution_time_us,
            free.execution_time_us,
            busy.total,
            free.total
        );
    }
}

#[cfg(test)]
mod limits {
    use super::*;
    use crate::workload::Gauss;

    #[test]
    fn runs_with_too_many_compute_slices_are_refused_before_they_start() {
        let app = App::Gauss(Gauss {
            n: 9000,
            ..Gauss::default()
        });
        let cfg = SimConfig {
            policy: Policy::Single,
            nodes: 4,
            cpus: 1,
            threads: 1,
            costs: PolicyCosts::table2(),
            bus_share: 0.0,
            seed: 1,
        };
        let e = simulate(&cfg, &app).unwrap_err().to_string();
        assert!(e.contains("compute slices") && e.contains("at most"), "{e}");
        // Fixed does not poll: the same input is accepted by validation.
        let fixed = SimConfig {
            policy: Policy::Fixed,
            cpus: 2,
            ..cfg
        };
        assert!(fixed.validate(&app).is_ok());
    }
}
