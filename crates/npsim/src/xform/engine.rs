//! The transformations inside the event engine: a child module of `sim` (declared there with
//! `#[path]`), so the hooks in `sim.rs` stay one line each. Everything here runs only when
//! `Sim::xf` is set (some transformation on); see `crate::xform` and
//! `docs/npsim-transforms.md`.
use super::*;
use crate::xform::early::{self, EarlyStats};
use crate::xform::speculate::{AccessSet, Commit, ConflictTable, SpecStats};
use crate::xform::split::SplitStats;
use crate::xform::{Plan, TransformReport, Transforms};
use pktflow_model::{AccessKind, PacketTrace};
use std::sync::Arc;

#[derive(Clone, Debug)]
struct Child {
    fork_at: u32,
    task: u32,
    ops: Vec<Op>,
    acq: Vec<(u32, AccessSet)>,
}

#[derive(Clone, Debug)]
pub(super) struct XSlot {
    /// Speculative sections of this slot's program: (op index of the Acquire, its sets).
    acq: Vec<(u32, AccessSet)>,
    children: Vec<Child>,
    /// For an early instance: its packet's slot and its number there.
    parent: u32,
    child_no: u32,
    left: u32,
    done: u64,
    chain_done: bool,
    dropped: bool,
    waiting: u32,
    wait_child: u32,
}

impl Default for XSlot {
    fn default() -> Self {
        XSlot {
            acq: Vec::new(),
            children: Vec::new(),
            parent: NONE,
            child_no: 0,
            left: 0,
            done: 0,
            chain_done: false,
            dropped: false,
            waiting: NONE,
            wait_child: 0,
        }
    }
}

#[derive(Clone, Copy, Default)]
struct XCtx {
    order: u64,
    ckpt: u32,
}

pub(super) struct XState {
    plan: Arc<Plan>,
    tf: Transforms,
    n_elements: usize,
    pub(super) spec: bool,
    rollback: u64,
    word: u32,
    live_storage: u8,
    table: ConflictTable,
    order_seq: u64,
    slots: Vec<XSlot>,
    ctx: Vec<XCtx>,
    split_stats: SplitStats,
    early_stats: EarlyStats,
    spec_stats: SpecStats,
    // scratch
    sec_spans: Vec<(crate::prog::Loc, u32, u32)>,
    sec_out: Vec<(u32, u32)>,
    sec_members: Vec<Vec<crate::prog::Loc>>,
}

impl Sim {
    /// Turn the transformations of `tf` on for this run (`plan`: splits and early-signalling
    /// analysis; `rollback_cycles`: the architecture's penalty of a failed speculation;
    /// `word_bytes`: `np.memory_word_bytes`).
    pub fn with_transforms(
        mut self,
        plan: Arc<Plan>,
        tf: &Transforms,
        rollback_cycles: u32,
        word_bytes: u32,
    ) -> Sim {
        if !tf.any() {
            return self;
        }
        let bus_behind: [bool; 5] =
            std::array::from_fn(|m| self.storages[self.comp.route[m] as usize].bus.is_some());
        if tf.locality {
            self.compiler.locality = Some(crate::xform::locality::Locality::new(
                tf.wide_bytes,
                bus_behind,
            ));
        }
        self.compiler.record_access_ops = true;
        let mut early_stats = EarlyStats::default();
        if let Some(e) = &plan.early {
            early_stats.profiled_packets = e.profiled_packets;
            early_stats.eligible_elements = (0..e.n)
                .filter(|&i| e.candidate(i))
                .filter_map(|i| self.names.get(i).cloned())
                .collect();
        }
        let n_elements = self.names.len() - plan.split.new_names.len();
        let mut split_stats = SplitStats::default();
        for (&e, pcs) in &plan.split.pieces {
            split_stats.splits.insert(
                self.names[e as usize].clone(),
                pcs.iter()
                    .map(|&(lo, hi, t)| (lo, hi, self.names[t as usize].clone()))
                    .collect(),
            );
        }
        let spec_stats = SpecStats {
            rollback_cycles,
            ..Default::default()
        };
        let nctx = self.ctxs.len();
        self.xf = Some(Box::new(XState {
            plan,
            tf: tf.clone(),
            n_elements,
            spec: tf.speculate && !self.comp.no_sync,
            rollback: rollback_cycles as u64,
            word: word_bytes,
            live_storage: self.comp.route[MemType::PacketMeta as usize],
            table: ConflictTable::default(),
            order_seq: 0,
            slots: Vec::new(),
            ctx: vec![XCtx::default(); nctx],
            split_stats,
            early_stats,
            spec_stats,
            sec_spans: Vec::new(),
            sec_out: Vec::new(),
            sec_members: Vec::new(),
        }));
        self
    }

    fn xs(&mut self) -> &mut XState {
        self.xf.as_mut().expect("transformations on")
    }

    fn xslot(&mut self, s: u32) -> &mut XSlot {
        let x = self.xs();
        if x.slots.len() <= s as usize {
            x.slots.resize_with(s as usize + 1, XSlot::default);
        }
        &mut x.slots[s as usize]
    }

    /// After a packet's program is compiled: speculative sections' sets, early visits and their
    /// waits, and the cuts of split tasks.
    pub(super) fn x_after_compile(&mut self, s: u32, t: &PacketTrace) {
        let mut xf = self.xf.take().expect("transformations on");
        if xf.slots.len() <= s as usize {
            xf.slots.resize_with(s as usize + 1, XSlot::default);
        }
        xf.slots[s as usize] = XSlot::default();
        let slot = &mut self.slots[s as usize];
        let nv = t.visits.len();
        let aops = &self.compiler.access_ops;
        // Sections of each visit, as the compiler placed them (same sharing rule and lock
        // granularity), with their read and write sets over (object, key).
        let mut vsets: Vec<Vec<AccessSet>> = vec![Vec::new(); nv];
        if xf.spec {
            let ws = &self.compiler.written_static;
            let g = self.comp.lock_granularity;
            for (v, vis) in t.visits.iter().enumerate() {
                if self
                    .compiler
                    .no_sync_elements
                    .get(vis.element as usize)
                    .copied()
                    .unwrap_or(false)
                {
                    continue;
                }
                let acc = t.accesses_of(vis);
                let shared = |a: &pktflow_model::MemAccess| {
                    a.mem == MemType::DynamicState
                        || (a.mem == MemType::StaticState && ws.contains(&a.object))
                };
                let element = vis.element;
                crate::prog::critical_sections(
                    acc,
                    |a| {
                        shared(a).then_some(match g {
                            crate::prog::LockGranularity::Location => (a.object, a.key),
                            crate::prog::LockGranularity::Object => (a.object, 0),
                            crate::prog::LockGranularity::Task => (element, u64::MAX),
                        })
                    },
                    &mut xf.sec_spans,
                    &mut xf.sec_out,
                    &mut xf.sec_members,
                );
                for &(lo, hi) in &xf.sec_out {
                    let (mut r, mut w) = (Vec::new(), Vec::new());
                    for a in &acc[lo as usize..=hi as usize] {
                        if shared(a) {
                            if a.kind == AccessKind::Write {
                                w.push((a.object, a.key));
                            } else {
                                r.push((a.object, a.key));
                            }
                        }
                    }
                    vsets[v].push(AccessSet::new(r, w));
                }
            }
        }
        // Early visits and the waits of later visits on them.
        let mut early_of: Vec<Option<u32>> = vec![None; nv];
        let mut waits: Vec<(u32, u32)> = Vec::new(); // (op index, child number)
        let mut forks: Vec<early::EarlyVisit> = Vec::new();
        if let Some(ep) = &xf.plan.early {
            let split = &xf.plan.split;
            forks = early::decide(ep, t, &|e| split.pieces.contains_key(&e));
            forks.truncate(64);
            for (k, f) in forks.iter().enumerate() {
                early_of[f.visit] = Some(k as u32);
            }
            for (k, f) in forks.iter().enumerate() {
                let b = t.visits[f.visit].element as usize;
                for (d, eo) in early_of.iter().enumerate().skip(f.visit + 1) {
                    if eo.is_some() || !ep.dep(b, t.visits[d].element as usize) {
                        continue;
                    }
                    if let Some(i) = early::first_conflict(t, f.visit, d) {
                        let gi = t.visits[d].access_start as usize + i;
                        if let Some(&op) = aops.get(gi) {
                            waits.push((op, k as u32));
                        }
                    }
                }
            }
            waits.sort_unstable();
            xf.early_stats.visits += nv as u64;
            xf.early_stats.early_instances += forks.len() as u64;
            xf.early_stats.waits += waits.len() as u64;
        }
        // Rebuild the program.
        let old_ops = std::mem::take(&mut slot.ops);
        let old_vstart = std::mem::take(&mut slot.vstart);
        let old_vtask = std::mem::take(&mut slot.vtask);
        let mut ops = Vec::with_capacity(old_ops.len() + 8);
        let mut vstart = Vec::with_capacity(nv + 4);
        let mut vtask = Vec::with_capacity(nv + 4);
        let mut first_final = vec![0u32; nv];
        let mut children: Vec<Child> = Vec::new();
        let mut acq_main: Vec<(u32, AccessSet)> = Vec::new();
        let mut wi = 0usize;
        let word = xf.word;
        let live_storage = xf.live_storage;
        let seed = self.comp.seed;
        for v in 0..nv {
            let from = old_vstart[v] as usize;
            let to = if v + 1 < nv {
                old_vstart[v + 1] as usize
            } else {
                old_ops.len()
            };
            let seg = &old_ops[from..to];
            let mut sets = std::mem::take(&mut vsets[v]).into_iter();
            if let Some(k) = early_of[v] {
                let mut c = Child {
                    fork_at: 0,
                    task: old_vtask[v],
                    ops: Vec::with_capacity(seg.len()),
                    acq: Vec::new(),
                };
                for op in seg {
                    if matches!(op, Op::Acquire(_)) {
                        if let Some(st) = sets.next() {
                            c.acq.push((c.ops.len() as u32, st));
                        }
                    }
                    c.ops.push(*op);
                }
                let _ = k;
                children.push(c);
                continue;
            }
            first_final[v] = vstart.len() as u32;
            vstart.push(ops.len() as u32);
            vtask.push(old_vtask[v]);
            let pieces = xf.plan.split.pieces.get(&old_vtask[v]).cloned();
            // Cut targets in compute cycles (none when the task is not split).
            let total: u64 = seg
                .iter()
                .map(|o| if let Op::Compute(n) = o { *n as u64 } else { 0 })
                .sum();
            let mut cuts: Vec<(u64, u32)> = match &pieces {
                Some(p) if total > 0 => p
                    .windows(2)
                    .map(|w| (((total as f64) * w[0].1).round() as u64, w[1].2))
                    .collect(),
                _ => Vec::new(),
            };
            cuts.reverse(); // pop from the end = next cut
            let vis = &t.visits[v];
            let acc = t.accesses_of(vis);
            let acc_base = vis.access_start as usize;
            let mut done = 0u64;
            let mut in_section = false;
            let mut i = 0usize;
            let mut pending: Option<Op> = None;
            loop {
                let op = match pending.take() {
                    Some(o) => o,
                    None => {
                        if i >= seg.len() {
                            break;
                        }
                        let o = seg[i];
                        i += 1;
                        o
                    }
                };
                let orig = (from + i - 1) as u32;
                // A cut before this op? Not at the start of a piece, not before its End, and
                // with speculation not inside a critical section.
                if let Some(&(target, task)) = cuts.last() {
                    let free = !(xf.spec && in_section);
                    if free && done >= target && done > 0 && !matches!(op, Op::End) {
                        cuts.pop();
                        Self::x_cut(
                            &mut xf,
                            &mut ops,
                            &mut vstart,
                            &mut vtask,
                            task,
                            acc,
                            aops,
                            acc_base,
                            orig,
                            word,
                            live_storage,
                            seed ^ t.packet.wrapping_mul(0x9e37) ^ ((v as u64) << 40),
                        );
                        pending = Some(op);
                        continue;
                    }
                    if let Op::Compute(n) = op {
                        if free && done < target && done + n as u64 > target {
                            let first = (target - done) as u32;
                            ops.push(Op::Compute(first));
                            done = target;
                            pending = Some(Op::Compute(n - first));
                            continue;
                        }
                    }
                }
                while wi < waits.len() && waits[wi].0 <= orig {
                    if waits[wi].0 == orig {
                        ops.push(Op::Wait(waits[wi].1));
                    }
                    wi += 1;
                }
                match op {
                    Op::Compute(n) => done += n as u64,
                    Op::Acquire(_) => {
                        in_section = true;
                        if let Some(st) = sets.next() {
                            acq_main.push((ops.len() as u32, st));
                        }
                    }
                    Op::Release(_) => in_section = false,
                    _ => {}
                }
                ops.push(op);
            }
        }
        for (k, f) in forks.iter().enumerate() {
            children[k].fork_at = first_final[f.fork_at];
        }
        slot.ops = ops;
        slot.vstart = vstart;
        slot.vtask = vtask;
        let xs = &mut xf.slots[s as usize];
        xs.acq = acq_main;
        xs.left = children.len() as u32;
        xs.children = children;
        self.xf = Some(xf);
    }

    /// Insert a cut: the producer's live-data writes and end, the consumer's start and reads.
    #[allow(clippy::too_many_arguments)]
    fn x_cut(
        xf: &mut XState,
        ops: &mut Vec<Op>,
        vstart: &mut Vec<u32>,
        vtask: &mut Vec<u32>,
        task: u32,
        acc: &[pktflow_model::MemAccess],
        aops: &[u32],
        acc_base: usize,
        cut_op: u32,
        word: u32,
        storage: u8,
        seed: u64,
    ) {
        let (mut wb, mut rb) = (0u64, 0u64);
        for (i, a) in acc.iter().enumerate() {
            if a.mem != MemType::Stack {
                continue;
            }
            let before = aops.get(acc_base + i).is_some_and(|&o| o < cut_op);
            match (a.kind, before) {
                (AccessKind::Write, true) => wb += a.bytes as u64,
                (AccessKind::Read, false) => rb += a.bytes as u64,
                _ => {}
            }
        }
        let live = wb.min(rb);
        let reqs = if live == 0 {
            0
        } else if word == 0 {
            1
        } else {
            live.div_ceil(word as u64)
        };
        let st = &mut xf.split_stats;
        st.cuts += 1;
        st.live_bytes += live;
        st.live_requests += 2 * reqs;
        for w in 0..reqs {
            ops.push(Op::Mem {
                storage,
                write: true,
                hash: mix(seed ^ w) as u32,
            });
        }
        ops.push(Op::End);
        vstart.push(ops.len() as u32);
        vtask.push(task);
        for w in 0..reqs {
            ops.push(Op::Mem {
                storage,
                write: false,
                hash: mix(seed ^ w) as u32,
            });
        }
    }

    /// Whether `s` is an early instance (never dropped by a full queue: its packet is in).
    pub(super) fn x_is_child(&self, s: u32) -> bool {
        self.xf
            .as_ref()
            .and_then(|x| x.slots.get(s as usize))
            .is_some_and(|x| x.parent != NONE)
    }

    /// The packet of slot `s` is dropped by a full queue: true when its early instances are
    /// still running (it leaves when they end).
    pub(super) fn x_defer_drop(&mut self, s: u32) -> bool {
        let x = self.xslot(s);
        if x.left > 0 {
            x.dropped = true;
            x.chain_done = true;
            true
        } else {
            false
        }
    }

    /// The main chain of slot `s` enqueues its visit `visit`: fork the early instances
    /// signalled there.
    pub(super) fn x_forks(&mut self, s: u32, visit: u32) {
        let kids: Vec<(u32, Child)> = {
            let x = self.xslot(s);
            if x.children.is_empty() {
                return;
            }
            x.children
                .iter()
                .enumerate()
                .filter(|(_, c)| c.fork_at == visit && !c.ops.is_empty())
                .map(|(k, c)| (k as u32, c.clone()))
                .collect()
        };
        for (k, c) in kids {
            self.xslot(s).children[k as usize].ops = Vec::new();
            let cs = match self.free_slots.pop() {
                Some(x) => x,
                None => {
                    self.slots.push(Slot::default());
                    (self.slots.len() - 1) as u32
                }
            };
            let (id, arrival) = {
                let p = &self.slots[s as usize];
                (p.id, p.arrival)
            };
            let sl = &mut self.slots[cs as usize];
            sl.ops = c.ops;
            sl.vstart.clear();
            sl.vstart.push(0);
            sl.vtask.clear();
            sl.vtask.push(c.task);
            sl.visit = 0;
            sl.id = id;
            sl.arrival = arrival;
            sl.measured = false;
            sl.fate = 2;
            sl.reason = NONE;
            let xc = self.xslot(cs);
            *xc = XSlot {
                acq: c.acq,
                parent: s,
                child_no: k,
                ..XSlot::default()
            };
            self.enqueue(c.task, cs);
        }
    }

    /// The chain of slot `s` ended (its last visit finished): true when this module took care
    /// of it (an early instance ended, or the packet still waits for its early instances).
    pub(super) fn x_chain_end(&mut self, s: u32) -> bool {
        let (parent, k) = {
            let x = self.xslot(s);
            (x.parent, x.child_no)
        };
        if parent == NONE {
            let x = self.xslot(s);
            if x.left > 0 {
                x.chain_done = true;
                return true;
            }
            return false;
        }
        // An early instance ended: resume a waiter, and finish the packet if it was the last.
        *self.xslot(s) = XSlot::default();
        self.free_slots.push(s);
        let (waiter, finish, dropped) = {
            let p = self.xslot(parent);
            p.left -= 1;
            p.done |= 1u64 << k;
            let w = if p.waiting != NONE && p.wait_child == k {
                let w = p.waiting;
                p.waiting = NONE;
                w
            } else {
                NONE
            };
            (w, p.left == 0 && p.chain_done, p.dropped)
        };
        if waiter != NONE {
            self.ctxs[waiter as usize].op += 1;
            self.make_ready(waiter);
        }
        if finish {
            if dropped {
                self.leave(parent, false);
            } else {
                self.complete_packet(parent);
            }
        }
        true
    }

    /// `Op::Wait(k)`: true when early instance k of the packet is done (the context goes on).
    pub(super) fn x_wait(&mut self, c: u32, k: u32) -> bool {
        let s = self.ctxs[c as usize].slot;
        let done = self.xslot(s).done & (1u64 << k) != 0;
        if done {
            self.ctxs[c as usize].op += 1;
            return true;
        }
        self.xs().early_stats.waits_blocked += 1;
        let x = self.xslot(s);
        x.waiting = c;
        x.wait_child = k;
        self.set_state(c, CState::WaitLock);
        false
    }

    /// A producer split ends holding its lock: the lock migrates to the consumer split, which
    /// starts at once on the same context (a lock holder never waits for a free context, so
    /// instances waiting for the lock cannot starve it: the deadlock the NPIRE paper handles by
    /// pre-emption). False when there is no consumer (or with speculation, whose cuts avoid
    /// sections).
    pub(super) fn x_carry(&mut self, c: u32) -> bool {
        if self.xs().spec {
            return false;
        }
        let now = self.now;
        let (s, t, start) = {
            let x = &self.ctxs[c as usize];
            (x.slot, x.task, x.start)
        };
        let slot = &mut self.slots[s as usize];
        if slot.visit as usize + 1 >= slot.vtask.len() {
            return false;
        }
        slot.visit += 1;
        let next = slot.vtask[slot.visit as usize];
        let op = slot.vstart[slot.visit as usize];
        self.tasks[t as usize].running -= 1;
        self.tasks[t as usize].occ += now - start;
        let nt = &mut self.tasks[next as usize];
        nt.running += 1;
        nt.n += 1;
        let ctx = &mut self.ctxs[c as usize];
        ctx.task = next;
        ctx.op = op;
        ctx.start = now;
        self.xs().split_stats.migrated_locks += 1;
        self.dispatch_task(t);
        true
    }

    /// Speculative entry into the section of lock `l` (no waiting): checkpoint and sets.
    pub(super) fn x_spec_enter(&mut self, c: u32, l: u32) {
        let op = self.ctxs[c as usize].op;
        let s = self.ctxs[c as usize].slot;
        let set = self
            .xslot(s)
            .acq
            .iter()
            .find(|a| a.0 == op)
            .map(|a| a.1.clone())
            .unwrap_or_default();
        let window = self.window_open && !self.arrivals_done;
        let x = self.xs();
        let xc = &mut x.ctx[c as usize];
        if xc.order == 0 {
            x.order_seq += 1;
            xc.order = x.order_seq;
        }
        xc.ckpt = op;
        let order = xc.order;
        x.table.enter(l, c, order, set);
        x.spec_stats.attempts += 1;
        if window {
            x.spec_stats.window_attempts += 1;
        }
        self.locks[l as usize].acquisitions += 1;
        let ctx = &mut self.ctxs[c as usize];
        ctx.lock = l;
        ctx.op += 1;
    }

    /// Commit point of a speculative section: true when it commits; false when it rolls back
    /// (the context re-executes from its checkpoint after the rollback penalty, which the
    /// caller charges as computation).
    pub(super) fn x_spec_commit(&mut self, c: u32, l: u32) -> bool {
        let window = self.window_open && !self.arrivals_done;
        let task = self.ctxs[c as usize].task;
        let name = self.names.get(task as usize).cloned().unwrap_or_default();
        let x = self.xs();
        let outcome = x.table.commit(l, c);
        let e = x.spec_stats.by_element.entry(name).or_insert((0, 0));
        e.0 += 1;
        self.ctxs[c as usize].lock = NONE;
        match outcome {
            Commit::Done { .. } => {
                let x = self.xs();
                x.spec_stats.commits += 1;
                x.ctx[c as usize].order = 0;
                self.ctxs[c as usize].op += 1;
                true
            }
            Commit::RollBack => {
                let x = self.xs();
                x.spec_stats.aborts += 1;
                if window {
                    x.spec_stats.window_aborts += 1;
                }
                let ckpt = x.ctx[c as usize].ckpt;
                let name = self.names.get(task as usize).cloned().unwrap_or_default();
                if let Some(e) = self.xs().spec_stats.by_element.get_mut(&name) {
                    e.1 += 1;
                }
                self.ctxs[c as usize].op = ckpt;
                false
            }
        }
    }

    pub(super) fn x_rollback_cycles(&self) -> u64 {
        self.xf.as_ref().map_or(0, |x| x.rollback)
    }

    pub(super) fn x_report(&self) -> Option<TransformReport> {
        let x = self.xf.as_ref()?;
        let mut r = TransformReport {
            applied: x.tf.label(),
            ..Default::default()
        };
        if x.tf.split {
            r.split = Some(x.split_stats.clone());
        }
        if x.tf.early {
            r.early = Some(x.early_stats.clone());
        }
        if x.tf.speculate {
            let mut s = x.spec_stats.clone();
            s.finish();
            r.speculate = Some(s);
        }
        if x.tf.locality {
            r.locality = self.compiler.locality.as_ref().map(|l| l.stats());
        }
        let _ = x.n_elements;
        Some(r)
    }
}
