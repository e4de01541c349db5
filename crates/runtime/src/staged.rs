//! Element groups on threads (`--model pipeline` and `--model hybrid`).
//!
//! Every thread builds a router of the whole graph but runs only the elements its
//! [`Placement`] gives it ([`pktflow_elements_fast::Router::set_local`]); a packet leaving one
//! of its elements for an element it does not run is set aside with its destination (element,
//! input port) and handed to a thread that runs that element, through the bounded
//! single-producer single-consumer ring of that ordered pair of threads ([`crate::ring`]), in
//! batches. Which thread: the one holding the element when it is replicated, the one of the
//! packet's flow hash among its holders (so each flow takes one path of threads and keeps its
//! order on the FIFO rings). An element's state lives on the threads holding it; replicas share
//! what Click shares per process (the same `Shared` objects as run-to-completion copies).
//!
//! The I/O thread reads the trace and hands each packet to a thread holding its source element
//! (by flow hash among them). A neighbour's answer (ARP reply, far-end reply) is injected where
//! its source element runs, handed over like any packet when that is another thread.
//!
//! Nothing is allocated per packet in steady state on the way between threads: the I/O thread
//! takes each packet borrowed from the source ([`PacketSource::next_ref`]: a classic pcap file
//! is mapped) and copies its bytes into a [`TraceBatch`] (the bytes of many packets in one
//! buffer) that the worker processes in place; and every ring is a [`link`], whose receiver gives
//! each emptied batch back to its sender, which refills it. Batches are allocated only until
//! each link has its working set, and again when a worker's overflow list grows past it. A
//! batch between workers goes back with as many packet buffers of the receiver's free list as
//! it brought packets, so a thread that makes packets (from the trace) gets back the buffers of
//! those another thread dropped or sent out, hop by hop back along the rings. A neighbour's
//! answer is built in a spare buffer of the driver of the thread whose sink its request left
//! through; once injected, its buffer goes to the driver of the thread that injected it, and a
//! batch goes back with as many of those as it brought answers, so answers circulate as the
//! packet buffers do (each driver keeps at most [`answer_limit`]). A batch that its full ring
//! back cannot take is dropped, and the buffers put in it stay with the receiver.
//!
//! Deadlock freedom with bounded rings: a worker never waits for room in a ring. A batch for a
//! full ring stays in the worker's own overflow list and is retried on the next turn of its loop,
//! while the worker goes on taking batches from all its input rings. Since no worker ever blocks
//! while holding packets, every ring's consumer keeps emptying it, and every pushed batch is
//! eventually taken. Memory stays bounded because the I/O thread, the only producer of new work,
//! stops reading while more than `threads x ring_slots x batch` packets are in flight.
//!
//! Termination ([`InFlight`]): a count of packets handed over and not yet processed. Every
//! packet is counted before it becomes visible to another thread: the I/O thread adds a batch
//! before pushing it; a worker adds what it has handed on so far before a batch of it can enter
//! a ring (when the batch is sealed), and after processing a batch adds in one atomic step the
//! rest of what it handed on minus what it took. A packet taken is thus subtracted only after
//! everything it caused is counted, so the count is zero only when nothing is in a ring, an
//! overflow list, a batch being filled or being processed; once the I/O thread has finished and
//! the count is zero, the workers stop. (Adding a worker's hand-overs only after its batch
//! would let the receiver subtract them first: a batch that causes more packets than it holds
//! could bring the count to zero while some of them are not yet pushed, and the receiver
//! would stop before they arrive; the `loom` test `loom_no_stop_before_the_last_packet`
//! checks the rule.)
use crate::api::{pin_to, thread_cpu_seconds, Io, Request};
use crate::batch::{link, LinkIn, LinkOut, TraceBatch};
use crate::driver::Driver;
use crate::engine::{Balance, Fast};
use crate::mapping::Placement;
use crate::ring;
use crate::ring::sync;
use pktflow_elements_fast::conf::Shared;
use pktflow_profile::app::{format_diagnostics, App};
use pktflow_profile::run::PacketSource;
use pktflow_traffic::{Packet, TracePacket, TraceRef};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What crosses a ring between workers (the trace's packets come from the I/O thread in
/// [`TraceBatch`]es).
pub enum Item {
    /// A neighbour's answer, to enter at its source element.
    Trace { tp: TracePacket, from_source: bool },
    /// A packet on its way between elements: to input `port` of element `to`.
    Deliver {
        to: u32,
        port: u16,
        p: Packet,
        from_source: bool,
    },
}

/// What crosses a ring between workers, and comes back emptied.
struct Batch {
    /// Items with the thread they are for (a batch may pass threads on its way: see
    /// [`next_hop`]).
    items: Vec<(usize, Item)>,
    /// On the way back: buffers of packets the receiver dropped or sent out, as many as it
    /// took, for the sender's router. Packets are made where they enter (from the trace, on a
    /// source thread) and freed where they leave; without this the first would allocate a
    /// buffer for every packet and the last free one.
    free: Vec<Packet>,
    /// On the way back: buffers of neighbours' answers the receiver injected (or got back
    /// itself), as many as the batch brought answers, for the sender's driver to build its next
    /// answers in. An answer is built on the thread of the sink its request left through and
    /// injected on a thread of its source element; without this the first would allocate a
    /// buffer for every answer and the second free one.
    answers: Vec<TracePacket>,
}

impl Batch {
    fn with_capacity(batch: usize) -> Self {
        Batch {
            items: Vec::with_capacity(batch),
            free: Vec::new(),
            answers: Vec::new(),
        }
    }
}

/// What emptied batches brought back to a worker, for its router and its driver.
#[derive(Default)]
struct Spare {
    packets: Vec<Packet>,
    answers: Vec<TracePacket>,
}

/// Bytes of packet data a new trace batch makes room for per packet (it grows past that once,
/// and is then reused).
const BATCH_BYTES_EACH: usize = 256;

/// The ring a packet for thread `dest` takes from thread `k`: forward (to a higher thread)
/// always through the next thread, so everything moving forward passes the same chain of FIFO
/// rings and keeps its order; backward (neighbours' answers, cycles) directly.
#[inline]
pub fn next_hop(k: usize, dest: usize) -> usize {
    if dest > k {
        k + 1
    } else {
        dest
    }
}

/// Among `holders`, the thread for a packet whose frame is `data`.
#[inline]
fn pick(holders: &[usize], data: &[u8]) -> usize {
    if holders.len() == 1 {
        holders[0]
    } else {
        holders[crate::flow::thread_of(data, holders.len())]
    }
}

/// One worker's side of the ring to another thread.
struct Outbox {
    to: usize,
    cur: Batch,
    overflow: VecDeque<Batch>,
    link: LinkOut<Batch>,
    full_waits: u64,
    batches: u64,
}

impl Outbox {
    /// Set the batch being filled aside for the ring, and start an empty one (one the receiver
    /// gave back, when there is one; the packet and answer buffers it brought go to `spare`).
    fn seal(&mut self, batch: usize, spare: &mut Spare) {
        if !self.cur.items.is_empty() {
            let mut fresh = self.link.fresh(|| Batch::with_capacity(batch));
            spare.packets.append(&mut fresh.free);
            spare.answers.append(&mut fresh.answers);
            self.overflow
                .push_back(std::mem::replace(&mut self.cur, fresh));
        }
    }

    /// Move sealed batches into the ring while it has room. True when nothing is left.
    fn pump(&mut self) -> bool {
        while let Some(b) = self.overflow.pop_front() {
            match self.link.try_push(b) {
                Ok(()) => self.batches += 1,
                Err(b) => {
                    self.full_waits += 1;
                    self.overflow.push_front(b);
                    return false;
                }
            }
        }
        true
    }

    fn idle(&self) -> bool {
        self.cur.items.is_empty() && self.overflow.is_empty()
    }
}

/// One worker's side of a ring from the I/O thread (`from` None, batches of trace packets) or
/// from another worker.
struct Input<B> {
    from: Option<usize>,
    link: LinkIn<B>,
    occupancy_sum: u64,
    pops: u64,
}

impl<B> Input<B> {
    /// The next batch, counted.
    fn take(&mut self) -> Option<B> {
        let b = self.link.try_pop()?;
        self.occupancy_sum += self.link.len() as u64 + 1;
        self.pops += 1;
        Some(b)
    }
}

/// What one worker did.
pub struct StageReport {
    pub balance: Balance,
    pub from_source: u64,
    pub neighbor_replies: u64,
    pub ip_replies: u64,
    pub cpu_seconds: f64,
    pub wall_seconds: f64,
    pub empty_waits: u64,
    pub core: Option<usize>,
    /// Read handlers of the elements this thread runs.
    pub stats: Value,
    pub devices: Vec<PathBuf>,
    pub packets_taken: u64,
    /// (from, occupancy sum, pops) per input ring; (to, full waits, batches) per output ring.
    pub inputs: Vec<(Option<usize>, u64, u64)>,
    pub outputs: Vec<(usize, u64, u64)>,
}

/// Packets handed over and not yet processed, and whether the I/O thread has finished: the
/// workers' stop rule (module documentation, "Termination").
pub(crate) struct InFlight {
    n: sync::AtomicI64,
    io_done: sync::AtomicBool,
}

impl InFlight {
    pub(crate) fn new() -> Self {
        InFlight {
            n: sync::AtomicI64::new(0),
            io_done: sync::AtomicBool::new(false),
        }
    }

    /// `n` packets are about to become visible to another thread (call before the push).
    #[inline]
    pub(crate) fn add(&self, n: i64) {
        if n != 0 {
            self.n.fetch_add(n, sync::Ordering::SeqCst);
        }
    }

    /// A worker processed a batch of `took` packets; `pending` of the packets it handed on
    /// since its last count are not counted yet.
    #[inline]
    pub(crate) fn settle(&self, pending: i64, took: i64) {
        self.n.fetch_add(pending - took, sync::Ordering::SeqCst);
    }

    pub(crate) fn count(&self) -> i64 {
        self.n.load(sync::Ordering::SeqCst)
    }

    pub(crate) fn io_finished(&self) {
        self.io_done.store(true, sync::Ordering::SeqCst);
    }

    /// A worker with nothing of its own left may stop.
    pub(crate) fn may_stop(&self) -> bool {
        self.io_done.load(sync::Ordering::SeqCst) && self.n.load(sync::Ordering::SeqCst) == 0
    }
}

/// Shared flags of a run.
struct Flags {
    work: InFlight,
    abort: AtomicBool,
    error: Mutex<Option<String>>,
    /// A configuration's own tasks: a stop was requested on some thread (a script's `stop`,
    /// `COUNT_CALL ... stop`); every thread's sources stop, as Click's driver does.
    stop: AtomicBool,
    /// A configuration's own tasks: threads whose sources have not finished. The last to
    /// finish plays the I/O thread's end ([`InFlight::io_finished`]).
    sources_left: std::sync::atomic::AtomicUsize,
}

impl Flags {
    fn fail(&self, e: String) {
        self.error.lock().unwrap().get_or_insert(e);
        self.abort.store(true, Ordering::SeqCst);
    }
}

/// Run `req` with `placement` on its threads, each writing its outputs into `part_dirs[k]`.
/// Returns the workers' reports, the wall time and the rings as JSON.
///
/// `tasks`: the configuration's own tasks on the threads its hints give them (`crate::tasks`):
/// each thread runs the configuration's sources (FromDump, InfiniteSource, ...) and pulling
/// elements its plan gives it, besides what the rings bring; `source` is then `None` when the
/// configuration makes its own packets. The routers are built here, before the threads start,
/// and the scripts (DriverManager, Script) run once against the elements of all of them:
/// their first phase before the threads start, the rest once every thread has finished.
pub fn run_staged(
    req: &Request,
    app: &App,
    placement: &Placement,
    part_dirs: &[PathBuf],
    mut source: Option<&mut dyn PacketSource>,
    sources: &[u32],
    tasks: Option<&crate::tasks::Plan>,
) -> Result<(Vec<StageReport>, f64, Value), String> {
    let n = placement.threads;
    let slots = req.ring_slots;
    let batch = req.batch;
    // Rings: I/O -> every thread holding a source; thread a -> b when a packet can cross.
    let mut pairs = vec![vec![false; n]; n];
    let mark = |pairs: &mut Vec<Vec<bool>>, x: usize, y: usize| {
        let mut at = x;
        while at != y {
            let h = next_hop(at, y);
            pairs[at][h] = true;
            at = h;
        }
    };
    let graph = &app.graph;
    let probe = Fast::new(
        graph,
        &app.base_dir,
        &part_dirs[0],
        Arc::new(Shared::default()),
    )
    .map_err(|d| format_diagnostics(&d))?;
    for (a, _, b, _) in probe.0.push_connections() {
        // A replicated element's replica is chosen by flow hash: any holder, from any thread.
        let to = &placement.of[b as usize];
        for &x in &placement.of[a as usize] {
            if to.len() > 1 || !to.contains(&x) {
                for &y in to {
                    mark(&mut pairs, x, y);
                }
            }
        }
    }
    // Neighbour answers: from a thread running a sink to one running a source.
    let sinks: Vec<usize> = (0..graph.elements.len())
        .filter(|&e| crate::engine::Engine::device_of(&probe, e as u32).is_some())
        .collect();
    for &s in &sinks {
        for &x in &placement.of[s] {
            for src in sources {
                for &y in &placement.of[*src as usize] {
                    mark(&mut pairs, x, y);
                }
            }
        }
    }
    drop(probe);
    let mut io_inputs: Vec<Option<Input<TraceBatch>>> = (0..n).map(|_| None).collect();
    let mut inputs: Vec<Vec<Input<Batch>>> = (0..n).map(|_| Vec::new()).collect();
    let mut outboxes: Vec<Vec<Outbox>> = (0..n).map(|_| Vec::new()).collect();
    let mut io_links: Vec<Option<LinkOut<TraceBatch>>> = (0..n).map(|_| None).collect();
    for src in sources.iter().filter(|_| source.is_some()) {
        for &y in &placement.of[*src as usize] {
            if io_links[y].is_none() {
                let (tx, rx) = link::<TraceBatch>(slots);
                io_links[y] = Some(tx);
                io_inputs[y] = Some(Input {
                    from: None,
                    link: rx,
                    occupancy_sum: 0,
                    pops: 0,
                });
            }
        }
    }
    for (a, row) in pairs.iter().enumerate() {
        for (b, &on) in row.iter().enumerate() {
            if on && a != b {
                let (tx, rx) = link::<Batch>(slots);
                outboxes[a].push(Outbox {
                    to: b,
                    cur: Batch::with_capacity(batch),
                    overflow: VecDeque::new(),
                    link: tx,
                    full_waits: 0,
                    batches: 0,
                });
                inputs[b].push(Input {
                    from: Some(a),
                    link: rx,
                    occupancy_sum: 0,
                    pops: 0,
                });
            }
        }
    }
    // A thread that hands nothing to another needs no check of where a packet goes.
    let closed: Vec<bool> = pairs
        .iter()
        .enumerate()
        .map(|(a, row)| row.iter().enumerate().all(|(b, &on)| !on || a == b))
        .collect();
    let shared = Arc::new(Shared::default());
    // The configuration's own tasks: every router built here, the scripts' first phase run
    // against all of them.
    let mut engines: Vec<Option<Fast>> = (0..n).map(|_| None).collect();
    let mut stop_now = false;
    let mut with_sources = 0;
    if let Some(plan) = tasks {
        for (k, slot) in engines.iter_mut().enumerate() {
            let mut e = Fast::new_deferred(graph, &app.base_dir, &part_dirs[k], shared.clone())
                .map_err(|d| format_diagnostics(&d))?;
            e.0.keep_tasks(&plan.tasks[k]);
            with_sources += usize::from(e.0.n_generators() > 0);
            *slot = Some(e);
        }
        let owner: Vec<usize> = placement.of.iter().map(|t| t[0]).collect();
        let mut rs: Vec<&mut pktflow_elements_fast::Router> = engines
            .iter_mut()
            .map(|e| &mut e.as_mut().expect("built above").0)
            .collect();
        stop_now = pktflow_elements_fast::run_scripts_across(&mut rs, &owner, false)?;
    }
    let flags = Flags {
        work: InFlight::new(),
        abort: AtomicBool::new(false),
        error: Mutex::new(None),
        stop: AtomicBool::new(stop_now),
        sources_left: std::sync::atomic::AtomicUsize::new(with_sources),
    };
    let own_sources = tasks.is_some() && source.is_none();
    if own_sources && with_sources == 0 {
        flags.work.io_finished();
    }
    let limit = (n * slots * batch).max(1024) as i64;
    let t0 = Instant::now();
    let (reports, io_full_waits) = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (k, (((io_in, ins), outs), engine)) in io_inputs
            .into_iter()
            .zip(inputs)
            .zip(outboxes)
            .zip(engines)
            .enumerate()
        {
            let shared = shared.clone();
            let dir = part_dirs[k].clone();
            let flags = &flags;
            let closed = closed[k];
            handles.push(s.spawn(move || {
                // A panic stops the run with an error instead of leaving the others waiting.
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let setup = Setup {
                        engine,
                        closed,
                        limit,
                    };
                    worker(
                        req, app, placement, k, io_in, ins, outs, &dir, shared, flags, setup,
                    )
                }))
                .unwrap_or_else(|_| Err(format!("worker thread {k} panicked")));
                if let Err(e) = &r {
                    flags.fail(e.clone());
                }
                r
            }));
        }
        let mut full_waits = vec![0u64; n];
        if req.pin && req.io == Io::Dedicated && source.is_some() {
            pin_to(n);
        }
        let io = (|| -> Result<(), String> {
            // The configuration makes its own packets: no I/O thread.
            let Some(source) = source.as_deref_mut() else {
                return Ok(());
            };
            let new_batch = || TraceBatch::with_capacity(batch, BATCH_BYTES_EACH);
            // One batch being filled per thread holding a source (the others' stay empty).
            let mut batches: Vec<TraceBatch> = io_links
                .iter()
                .map(|l| l.as_ref().map_or_else(TraceBatch::default, |_| new_batch()))
                .collect();
            let mut count = 0u64;
            let push = |k: usize,
                        b: TraceBatch,
                        links: &mut Vec<Option<LinkOut<TraceBatch>>>,
                        fw: &mut Vec<u64>|
             -> Result<(), String> {
                let mut w = 0;
                while flags.work.count() > limit {
                    if flags.abort.load(Ordering::SeqCst) {
                        return Err("a worker failed".into());
                    }
                    w += 1;
                    ring::backoff(w);
                }
                flags.work.add(b.len() as i64);
                let l = links[k].as_mut().expect("ring to a source thread");
                let mut b = b;
                let mut w = 0;
                loop {
                    match l.try_push(b) {
                        Ok(()) => return Ok(()),
                        Err(back) => {
                            if flags.abort.load(Ordering::SeqCst) {
                                return Err("a worker failed".into());
                            }
                            b = back;
                            w += 1;
                            fw[k] += 1;
                            ring::backoff(w);
                        }
                    }
                }
            };
            // Each packet borrowed from the source (or read into `scratch`), its bytes copied
            // into the batch of its thread; a full batch is handed over and replaced by one its
            // worker gave back.
            let mut scratch = TracePacket::default();
            while let Some(tp) = source.next_ref(&mut scratch)? {
                count += 1;
                if count.is_multiple_of(1024) {
                    pktflow_model::cancel::check().map_err(|c| c.to_string())?;
                    if flags.abort.load(Ordering::SeqCst) {
                        return Err("a worker failed".into());
                    }
                }
                let src = sources[tp.iface as usize % sources.len()];
                let k = pick(&placement.of[src as usize], tp.data);
                batches[k].push(&tp);
                // Warm-up: each packet handed over alone, and everything it causes finished on
                // every thread (the in-flight count back to zero) before the next is read.
                let warming = count <= req.warmup;
                if warming || batches[k].len() >= batch {
                    let b = std::mem::take(&mut batches[k]);
                    push(k, b, &mut io_links, &mut full_waits)?;
                    let l = io_links[k].as_mut().expect("ring to a source thread");
                    batches[k] = l.fresh(new_batch);
                }
                let mut w = 0;
                while warming && flags.work.count() > 0 {
                    if flags.abort.load(Ordering::SeqCst) {
                        return Err("a worker failed".into());
                    }
                    w += 1;
                    ring::backoff(w);
                }
            }
            for (k, b) in batches.iter_mut().enumerate() {
                if !b.is_empty() {
                    push(k, std::mem::take(b), &mut io_links, &mut full_waits)?;
                }
            }
            Ok(())
        })();
        if let Err(e) = io {
            flags.fail(e);
        }
        if !own_sources {
            flags.work.io_finished();
        }
        drop(io_links);
        let reports: Vec<Result<(StageReport, Driver<Fast>), String>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a worker thread panicked".to_string()))
            })
            .collect();
        (reports, full_waits)
    });
    let secs = t0.elapsed().as_secs_f64();
    if let Some(e) = flags.error.lock().unwrap().take() {
        // The first failure; a worker stopped by another's failure says less.
        return Err(e);
    }
    let done: Vec<(StageReport, Driver<Fast>)> = reports.into_iter().collect::<Result<_, _>>()?;
    let (mut reports, mut drivers): (Vec<StageReport>, Vec<Driver<Fast>>) =
        done.into_iter().unzip();
    if tasks.is_some() {
        // The scripts' waits end with the packets: the rest of them runs now, once.
        let owner: Vec<usize> = placement.of.iter().map(|t| t[0]).collect();
        let mut rs: Vec<&mut pktflow_elements_fast::Router> =
            drivers.iter_mut().map(|d| &mut d.engine.0).collect();
        pktflow_elements_fast::run_scripts_across(&mut rs, &owner, true)?;
    }
    for (k, (r, d)) in reports.iter_mut().zip(drivers.iter_mut()).enumerate() {
        complete(r, d, graph, placement, k)?;
    }
    let mut rings = Vec::new();
    let slots_real = slots.clamp(2, ring::MAX_CAPACITY).next_power_of_two();
    for (k, r) in reports.iter().enumerate() {
        for &(from, occ, pops) in &r.inputs {
            let (fw, batches) = match from {
                None => (io_full_waits[k], pops),
                Some(a) => reports[a]
                    .outputs
                    .iter()
                    .find(|o| o.0 == k)
                    .map_or((0, 0), |o| (o.1, o.2)),
            };
            rings.push(json!({
                "from": from.map_or(json!("io"), |a| json!(a)),
                "to_thread": k,
                "slots": slots_real,
                "batch": batch,
                "batches": batches,
                "full_waits": fw,
                "mean_occupancy_batches": if pops > 0 { occ as f64 / pops as f64 } else { 0.0 },
            }));
        }
    }
    Ok((reports, secs, Value::Array(rings)))
}

/// A worker's hand-overs to other threads.
struct Hands<'a> {
    k: usize,
    batch: usize,
    outs: Vec<Outbox>,
    /// Outbox index per destination thread.
    out_of: Vec<usize>,
    /// Items handed on and not yet counted in `work` (counted before a batch can enter a
    /// ring, and when the batch being processed is settled).
    pending: i64,
    work: &'a InFlight,
    /// Packet and answer buffers the receivers gave back with emptied batches, for this
    /// thread's router and driver.
    spare: Spare,
}

impl Hands<'_> {
    /// Send an item to thread `to` (through the next thread when `to` is further on).
    #[inline]
    fn send(&mut self, item: Item, to: usize) {
        let i = self.out_of[next_hop(self.k, to)];
        let o = &mut self.outs[i];
        o.cur.items.push((to, item));
        self.pending += 1;
        if o.cur.items.len() >= self.batch {
            self.work.add(std::mem::take(&mut self.pending));
            o.seal(self.batch, &mut self.spare);
            o.pump();
        }
    }
}

/// A worker's router and what its packets cause.
struct Stage<'a> {
    k: usize,
    placement: &'a Placement,
    d: Driver<Fast>,
    hands: Hands<'a>,
    exported: Vec<(u32, u16, Packet)>,
    /// Items for this thread caused by the packet being processed, in order.
    work: VecDeque<Item>,
    /// Most answer buffers the driver keeps ([`answer_limit`]).
    answer_limit: usize,
}

/// Most answer buffers a worker's driver keeps for reuse: as many answers as one link holds at
/// once (the ring's slots, the batch being filled and the one being read, full). Buffers are
/// made only when none is kept, so a worker keeps no more than were in flight at once; the
/// limit bounds that by the rings, as the packet free lists are bounded.
fn answer_limit(ring_slots: usize, batch: usize) -> usize {
    (ring_slots.clamp(2, ring::MAX_CAPACITY).next_power_of_two() + 2) * batch
}

impl Stage<'_> {
    /// Give the router and the driver the packet and answer buffers the receivers gave back.
    fn reuse_spare(&mut self) {
        for p in self.hands.spare.packets.drain(..) {
            self.d.engine.0.recycle(p);
        }
        for tp in self.hands.spare.answers.drain(..) {
            self.d.reuse_answer(tp, self.answer_limit);
        }
    }

    /// Put into `b`, emptied, up to `n` packet buffers of this router's free list and up to
    /// `answers` answer buffers of the driver's, for the thread that sent it.
    fn give_free(&mut self, b: &mut Batch, n: usize, answers: usize) {
        while b.free.len() < n {
            match self.d.engine.0.take_free() {
                Some(p) => b.free.push(p),
                None => break,
            }
        }
        while b.answers.len() < answers {
            match self.d.take_spare_answer() {
                Some(tp) => b.answers.push(tp),
                None => break,
            }
        }
    }

    /// The next packet of the configuration's own sources on this thread, and what it causes
    /// here, in order; false once they are exhausted or stopped.
    #[inline]
    fn generate(&mut self) -> Result<bool, String> {
        if !self.d.generate_one()? {
            return Ok(false);
        }
        self.route();
        self.run_work()?;
        Ok(true)
    }

    /// A packet of the trace, and what it causes here (replicas chosen on this thread) in order.
    #[inline]
    fn trace(&mut self, tp: &TraceRef<'_>) -> Result<(), String> {
        self.d.process(tp, true)?;
        self.route();
        self.run_work()
    }

    /// An item handed over for thread `dest`: passed on when it is another thread, else
    /// processed with what it causes here, in order.
    #[inline]
    fn item(&mut self, dest: usize, item: Item) -> Result<(), String> {
        if dest != self.k {
            // Passing through on its way forward.
            self.hands.send(item, dest);
            return Ok(());
        }
        self.work.push_back(item);
        self.run_work()
    }

    fn run_work(&mut self) -> Result<(), String> {
        while let Some(item) = self.work.pop_front() {
            match item {
                Item::Trace { tp, from_source } => {
                    self.d.process(&tp.as_ref(), from_source)?;
                    // Its buffer builds a later answer, here or (given back with the batch
                    // that brought it) on the thread that built it.
                    self.d.reuse_answer(tp, self.answer_limit);
                }
                Item::Deliver {
                    to,
                    port,
                    p,
                    from_source,
                } => self.d.deliver(to, port, p, from_source)?,
            }
            self.route();
        }
        Ok(())
    }

    /// What the packet just processed caused for other threads or replicas, and the
    /// neighbours' answers: queued in `work` when for this thread, else handed over.
    fn route(&mut self) {
        let k = self.k;
        let fs = self.d.from_source();
        self.exported.extend(self.d.engine.0.take_exported());
        for (to, port, p) in self.exported.drain(..) {
            let dest = pick(&self.placement.of[to as usize], p.data());
            let item = Item::Deliver {
                to,
                port,
                p,
                from_source: fs,
            };
            hand(&mut self.work, &mut self.hands, k, dest, item);
        }
        while let Some(tp) = self.d.take_pending() {
            let src = self
                .d
                .engine
                .0
                .source_element(tp.iface as usize)
                .expect("an answer enters at a source");
            let dest = pick(&self.placement.of[src as usize], &tp.data);
            let item = Item::Trace {
                tp,
                from_source: false,
            };
            hand(&mut self.work, &mut self.hands, k, dest, item);
        }
    }
}

/// `item` for thread `dest`: queued in `work` when that is this thread `k`, else handed over.
fn hand(work: &mut VecDeque<Item>, hands: &mut Hands<'_>, k: usize, dest: usize, item: Item) {
    if dest == k {
        work.push_back(item);
    } else {
        hands.send(item, dest);
    }
}

#[allow(clippy::too_many_arguments)]
fn worker(
    req: &Request,
    app: &App,
    placement: &Placement,
    k: usize,
    mut io: Option<Input<TraceBatch>>,
    mut ins: Vec<Input<Batch>>,
    outs: Vec<Outbox>,
    dir: &Path,
    shared: Arc<Shared>,
    flags: &Flags,
    setup: Setup,
) -> Result<(StageReport, Driver<Fast>), String> {
    let core = if req.pin { pin_to(k) } else { None };
    let graph = &app.graph;
    let own_tasks = setup.engine.is_some();
    let mut engine = match setup.engine {
        Some(e) => e,
        None => Fast::new(graph, &app.base_dir, dir, shared).map_err(|d| format_diagnostics(&d))?,
    };
    // A thread of a configuration's own tasks that hands nothing on runs its elements as one
    // thread does (its tasks are already its own: `keep_tasks`).
    if !(own_tasks && setup.closed) {
        engine.0.set_local(placement.local_mask(k));
    }
    // A packet for a replicated element held here is visited at once when its flow picks this
    // replica (depth first, as on one thread), else set aside for the replica it picks.
    let replicated: Vec<bool> = placement
        .of
        .iter()
        .map(|ts| ts.len() > 1 && ts.contains(&k))
        .collect();
    let of = placement.of.clone();
    engine.0.set_replica_choice(
        replicated,
        Box::new(move |e, p| pick(&of[e as usize], p.data()) == k),
    );
    let d = Driver::new(
        engine,
        graph,
        req.out_dir.is_some().then_some(dir),
        req.reply_every,
    )?;
    let mut out_of = vec![usize::MAX; placement.threads];
    for (i, o) in outs.iter().enumerate() {
        out_of[o.to] = i;
    }
    let batch = req.batch;
    let mut st = Stage {
        k,
        placement,
        d,
        hands: Hands {
            k,
            batch,
            outs,
            out_of,
            pending: 0,
            work: &flags.work,
            spare: Spare::default(),
        },
        exported: Vec::with_capacity(64),
        work: VecDeque::new(),
        answer_limit: answer_limit(req.ring_slots, batch),
    };
    let cpu0 = thread_cpu_seconds();
    let t = Instant::now();
    let mut empty_waits = 0u64;
    let mut idle = 0u64;
    let mut taken = 0u64;
    // The configuration's own sources on this thread (FromDump, InfiniteSource, ...): those
    // that do not end by themselves stop after MAX_CONFIG_SOURCE_PACKETS on each thread.
    let mut generating = own_tasks && st.d.engine.0.n_generators() > 0;
    let capped = !st.d.engine.0.generators_finite();
    let mut turns = 0u64;
    'run: loop {
        if flags.abort.load(Ordering::Relaxed) {
            break;
        }
        let mut did = false;
        if generating && flags.work.count() <= setup.limit {
            did = true;
            let mut more = !flags.stop.load(Ordering::Relaxed);
            for _ in 0..batch {
                if !more {
                    break;
                }
                if capped
                    && st.d.from_source_count >= pktflow_profile::run::MAX_CONFIG_SOURCE_PACKETS
                {
                    st.d.source_limit_hit = true;
                    more = false;
                    break;
                }
                match st.generate() {
                    Ok(m) => more = m,
                    Err(e) => {
                        flags.fail(e);
                        break 'run;
                    }
                }
            }
            if st.d.engine.0.stopped() {
                flags.stop.store(true, Ordering::Relaxed);
                more = false;
            }
            // What this thread handed on while generating (nothing, on a thread that hands
            // nothing on: no shared counter touched).
            let pending = std::mem::take(&mut st.hands.pending);
            if pending != 0 {
                flags.work.settle(pending, 0);
            }
            turns += 1;
            if turns.is_multiple_of(32) {
                if let Err(c) = pktflow_model::cancel::check() {
                    flags.fail(c.to_string());
                    break 'run;
                }
            }
            if !more {
                generating = false;
                // Everything this thread made is counted: the last to finish ends the input.
                if flags.sources_left.fetch_sub(1, Ordering::SeqCst) == 1 {
                    flags.work.io_finished();
                }
            }
        }
        // Trace packets from the I/O thread, processed where they lie in their batch, which
        // then goes back to the I/O thread.
        if let Some(mut b) = io.as_mut().and_then(Input::take) {
            did = true;
            let took = b.len() as i64;
            taken += b.len() as u64;
            for tp in b.iter() {
                if let Err(e) = st.trace(&tp) {
                    flags.fail(e);
                    break 'run;
                }
            }
            flags
                .work
                .settle(std::mem::take(&mut st.hands.pending), took);
            b.clear();
            io.as_mut().expect("took from it").link.give_back(b);
            st.reuse_spare();
        }
        for input in ins.iter_mut() {
            let Some(mut b) = input.take() else {
                continue;
            };
            did = true;
            let took = b.items.len();
            taken += took as u64;
            let mut answers = 0;
            for (dest, item) in b.items.drain(..) {
                answers += usize::from(matches!(item, Item::Trace { .. }));
                if let Err(e) = st.item(dest, item) {
                    flags.fail(e);
                    break 'run;
                }
            }
            flags
                .work
                .settle(std::mem::take(&mut st.hands.pending), took as i64);
            // A packet buffer for each packet it brought, an answer buffer for each answer (whose
            // packet is made here).
            st.give_free(&mut b, took - answers, answers);
            if let Err(mut b) = input.link.try_give_back(b) {
                // The ring back is full (the sender made batches while its overflow list grew):
                // the batch goes, the buffers stay here.
                st.hands.spare.packets.append(&mut b.free);
                st.hands.spare.answers.append(&mut b.answers);
            }
            st.reuse_spare();
        }
        // Hand on what is ready; partial batches too when there was nothing to take.
        let mut all_idle = true;
        for o in st.hands.outs.iter_mut() {
            if !did {
                o.seal(batch, &mut st.hands.spare);
            }
            o.pump();
            all_idle &= o.idle();
        }
        st.reuse_spare();
        if did {
            idle = 0;
            continue;
        }
        if all_idle && flags.work.may_stop() {
            break;
        }
        empty_waits += 1;
        idle += 1;
        ring::backoff(idle);
    }
    let wall = t.elapsed().as_secs_f64();
    let cpu = thread_cpu_seconds() - cpu0;
    if flags.abort.load(Ordering::SeqCst) {
        return Err(flags
            .error
            .lock()
            .unwrap()
            .clone()
            .unwrap_or_else(|| "stopped".into()));
    }
    let d = st.d;
    let report = StageReport {
        balance: Balance::default(),
        from_source: 0,
        neighbor_replies: 0,
        ip_replies: 0,
        cpu_seconds: cpu,
        wall_seconds: wall,
        empty_waits,
        core,
        stats: Value::Null,
        devices: Vec::new(),
        packets_taken: taken,
        inputs: io
            .iter()
            .map(|i| (i.from, i.occupancy_sum, i.pops))
            .chain(ins.iter().map(|i| (i.from, i.occupancy_sum, i.pops)))
            .collect(),
        outputs: st
            .hands
            .outs
            .iter()
            .map(|o| (o.to, o.full_waits, o.batches))
            .collect(),
    };
    Ok((report, d))
}

/// What a worker is given besides its rings.
struct Setup {
    /// The configuration's own tasks: the router built before the threads started.
    engine: Option<Fast>,
    /// The thread hands nothing to another.
    closed: bool,
    /// Most packets in flight before a thread's own sources wait.
    limit: i64,
}

/// Finish thread `k`'s driver (its files, the device pcaps) and fill in its report: counts,
/// and the read handlers of the elements it holds.
fn complete(
    r: &mut StageReport,
    d: &mut Driver<Fast>,
    graph: &pktflow_model::AppGraph,
    placement: &Placement,
    k: usize,
) -> Result<(), String> {
    r.devices = d
        .finish()?
        .into_iter()
        .filter_map(|p| p.file_name().map(PathBuf::from))
        .collect();
    let all = crate::engine::Engine::stats(&d.engine);
    let mut stats = serde_json::Map::new();
    for (e, decl) in graph.elements.iter().enumerate() {
        if placement.of[e].contains(&k) {
            if let Some(v) = all.get(&decl.name) {
                stats.insert(decl.name.clone(), v.clone());
            }
        }
    }
    r.stats = Value::Object(stats);
    r.balance = d.engine.balance();
    r.from_source = d.from_source_count;
    r.neighbor_replies = d.neighbor_replies;
    r.ip_replies = d.ip_replies;
    Ok(())
}

/// Model check of the stop rule (`RUSTFLAGS="--cfg loom" cargo test -p pktflow-runtime
/// --release --lib loom`, docs/runtime.md): the I/O thread has handed one packet to worker A and
/// finished; A's processing of it hands two packets on to worker B in batches of one (so the
/// first is visible before A has finished), through the real rings and [`InFlight`], in the
/// order of operations of [`worker`]. In every interleaving of A and B, B stops only after both
/// packets arrived, and both stop.
#[cfg(all(test, loom))]
mod loom_tests {
    use super::InFlight;
    use crate::ring::ring;
    use loom::sync::Arc;
    use loom::thread;

    /// Take batches until the stop rule says so; what was taken, in order.
    fn consume(
        mut input: crate::ring::Consumer<Vec<u32>>,
        work: &InFlight,
        mut process: impl FnMut(u32, &mut i64),
    ) {
        loop {
            if let Some(batch) = input.try_pop() {
                let took = batch.len() as i64;
                let mut pending = 0i64;
                for p in batch {
                    process(p, &mut pending);
                }
                work.settle(pending, took);
            } else if work.may_stop() {
                return;
            } else {
                thread::yield_now();
            }
        }
    }

    #[test]
    fn loom_no_stop_before_the_last_packet() {
        let mut b = loom::model::Builder::new();
        b.preemption_bound.get_or_insert(3);
        b.check(|| {
            let work = Arc::new(InFlight::new());
            let (mut io, a_in) = ring::<Vec<u32>>(2);
            let (mut a_out, b_in) = ring::<Vec<u32>>(2);
            // The I/O thread: counted, then pushed; then finished.
            work.add(1);
            io.push(vec![7]);
            drop(io);
            work.io_finished();
            let wa = work.clone();
            let a = thread::spawn(move || {
                consume(a_in, &wa, |p, pending| {
                    for q in [2 * p, 2 * p + 1] {
                        // Handed on in a batch of one, full at once: counted, then pushed.
                        *pending += 1;
                        wa.add(std::mem::take(pending));
                        a_out.push(vec![q]);
                    }
                });
            });
            let mut got = Vec::new();
            consume(b_in, &work, |p, _| got.push(p));
            assert_eq!(got, vec![14, 15], "B stopped early");
            a.join().unwrap();
        });
    }
}
