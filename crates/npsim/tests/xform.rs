//! Each transformation of section 2 of the NPIRE paper pinned on a hand-built workload with a
//! known answer (docs/npsim-transforms.md).
mod common;
use common::*;
use pktflow_model::{AccessKind::*, Fate, MemAccess, MemType::*, PacketTrace};
use pktflow_npsim::prog::LockGranularity;
use pktflow_npsim::xform::early::EarlyPlan;
use pktflow_npsim::xform::split::SplitPlan;
use pktflow_npsim::xform::{Plan, Transforms};
use pktflow_npsim::*;
use std::sync::Arc;

fn bytes(mut a: MemAccess, b: u32) -> MemAccess {
    a.bytes = b;
    a
}

#[allow(clippy::too_many_arguments)]
fn run(
    a: &pktflow_arch::np::NpArch,
    pes: u32,
    m: &Mapping,
    names: &[&str],
    traces: Vec<PacketTrace>,
    repeat: u64,
    ia: f64,
    tf: &str,
    plan: Plan,
    locks: LockGranularity,
) -> SimReport {
    let tf = Transforms::parse(tf).unwrap();
    let mut names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    let mut m = m.clone();
    if tf.split {
        let (n2, m2) = plan.split.extend(&names, &m);
        names = n2;
        m = m2;
    }
    let packets = traces.len() as u64 * repeat;
    let cfg = SimConfig {
        inter_arrival_cycles: ia,
        packets,
        warmup_packets: 0,
        lock_granularity: locks,
        transform: tf.clone(),
        ..Default::default()
    };
    let mut src = VecSource::new(traces, repeat);
    let r = Sim::new(a, pes, &m, names, &cfg)
        .unwrap()
        .with_transforms(Arc::new(plan), &tf, 40, 4)
        .run(&mut src)
        .unwrap();
    assert!(
        r.invariant_violations.is_empty(),
        "{:?}",
        r.invariant_violations
    );
    assert_eq!(r.in_flight_at_end, 0);
    assert_eq!(r.delivered, packets);
    r
}

fn regs_arch(pes: u32, contexts: u32) -> pktflow_arch::np::NpArch {
    arch(
        &Hw {
            pes,
            contexts,
            ..Default::default()
        },
        storage(1, 1, 1, 1, "xbus", false),
        shared_bus(1, 1),
        "regs",
    )
}

/// Two replicas on two PEs, each packet reading then writing counter `key` 200 cycles later.
fn counter(key: u64) -> PacketTrace {
    trace(
        &[(
            0,
            210,
            vec![
                acc(DynamicState, Read, 5, 1, key),
                acc(DynamicState, Write, 205, 1, key),
            ],
        )],
        64,
    )
}

#[test]
fn speculation_rolls_back_the_later_entrant_of_a_real_conflict_only() {
    let a = regs_arch(2, 1);
    let m = Mapping {
        tasks: vec![TaskMap::new(vec![0, 1], u32::MAX)],
    };
    let go = |traces: Vec<PacketTrace>, tf: &str, locks| {
        run(
            &a,
            2,
            &m,
            &["t"],
            traces,
            1,
            1.0,
            tf,
            Plan::default(),
            locks,
        )
    };
    // Same counter: both enter at once; the first entrant commits, the second rolls back once
    // (40 cycles) and re-executes: 3 attempts, 2 commits, 1 abort.
    let r = go(
        vec![counter(0), counter(0)],
        "speculate",
        LockGranularity::Location,
    );
    let s = r.transform.as_ref().unwrap().speculate.clone().unwrap();
    assert_eq!((s.attempts, s.commits, s.aborts), (3, 2, 1));
    assert!((s.failure_rate - 1.0 / 3.0).abs() < 1e-9);
    assert_eq!(s.by_element["t"], (3, 1));
    // Its latency: 5 + 200 to its first commit point, 40 of rollback, the section again and
    // the tail: at least 205 + 40 + 200.
    assert!(r.latency.max_cycles >= 445, "{}", r.latency.max_cycles);
    let locked = go(
        vec![counter(0), counter(0)],
        "none",
        LockGranularity::Location,
    );
    assert!(locked.latency.max_cycles < r.latency.max_cycles);
    // Different counters under one lock (per object): the lock serializes them, speculation
    // runs both at once and nothing rolls back.
    let r = go(
        vec![counter(0), counter(1)],
        "speculate",
        LockGranularity::Object,
    );
    let s = r.transform.as_ref().unwrap().speculate.clone().unwrap();
    assert_eq!((s.attempts, s.aborts), (2, 0));
    let locked = go(
        vec![counter(0), counter(1)],
        "none",
        LockGranularity::Object,
    );
    assert!(
        locked.latency.max_cycles >= 400,
        "{}",
        locked.latency.max_cycles
    );
    assert!(r.latency.max_cycles < 230, "{}", r.latency.max_cycles);
}

#[test]
fn a_split_forwards_its_live_stack_and_halves_the_compute() {
    let a = regs_arch(1, 2);
    let m = Mapping {
        tasks: vec![TaskMap::new(vec![0], u32::MAX)],
    };
    // 100 instructions: 8 stack bytes written at 10 and read at 80, a meta-data read at 90.
    let t = trace(
        &[(
            0,
            100,
            vec![
                bytes(acc(Stack, Write, 10, 0, 0), 8),
                bytes(acc(Stack, Read, 80, 0, 0), 8),
                acc(PacketMeta, Read, 90, 0, 0),
            ],
        )],
        64,
    );
    let mut sp = SplitPlan::default();
    sp.split(0, &["t".to_string()]);
    let plan = Plan {
        split: sp,
        early: None,
    };
    let r = run(
        &a,
        1,
        &m,
        &["t"],
        vec![t.clone()],
        10,
        1000.0,
        "split",
        plan.clone(),
        LockGranularity::Location,
    );
    let s = r.transform.as_ref().unwrap().split.clone().unwrap();
    // Live set 8 bytes = 2 words, written by the producer and read by the consumer.
    assert_eq!((s.cuts, s.live_bytes, s.live_requests), (10, 80, 40));
    let meta = |r: &SimReport| {
        r.storage
            .iter()
            .find(|x| x.name == "half")
            .unwrap()
            .requests
    };
    let plain = run(
        &a,
        1,
        &m,
        &["t"],
        vec![t],
        10,
        1000.0,
        "none",
        Plan::default(),
        LockGranularity::Location,
    );
    assert_eq!(meta(&plain), 10);
    assert_eq!(meta(&r), 10 + 40);
    // Equal compute halves: 50 cycles each per packet.
    let busy = |n: &str| r.tasks.iter().find(|x| x.element == n).unwrap().busy_cycles;
    assert_eq!((busy("t"), busy("t#2")), (500, 500));
}

#[test]
fn a_lock_held_at_the_split_point_migrates_to_the_consumer() {
    let a = regs_arch(2, 2);
    let m = Mapping {
        tasks: vec![TaskMap::new(vec![0, 1], u32::MAX)],
    };
    let t = trace(
        &[(
            0,
            100,
            vec![
                acc(DynamicState, Read, 20, 1, 0),
                acc(DynamicState, Write, 80, 1, 0),
            ],
        )],
        64,
    );
    let mut sp = SplitPlan::default();
    sp.split(0, &["t".to_string()]);
    let plan = Plan {
        split: sp,
        early: None,
    };
    let r = run(
        &a,
        2,
        &m,
        &["t"],
        vec![t.clone()],
        50,
        20.0,
        "split",
        plan.clone(),
        LockGranularity::Location,
    );
    let s = r.transform.as_ref().unwrap().split.clone().unwrap();
    assert_eq!((s.cuts, s.migrated_locks), (50, 50));
    assert_eq!(r.locks[0].acquisitions, 50);
    // With speculation the cut moves past the section: nothing migrates.
    let r = run(
        &a,
        2,
        &m,
        &["t"],
        vec![t],
        50,
        20.0,
        "split,speculate",
        plan,
        LockGranularity::Location,
    );
    let s = r.transform.as_ref().unwrap().split.clone().unwrap();
    assert_eq!((s.cuts, s.migrated_locks), (50, 0));
}

/// A -> B -> C -> D -> out, one PE each; B writes meta-data D reads (Figure 4).
fn chain(b_instr: u32, out_is_b: bool) -> (PacketTrace, EarlyPlan) {
    let mut t = trace(
        &[
            (0, 100, vec![acc(PacketData, Read, 10, 0, 0)]),
            (1, b_instr, vec![acc(PacketMeta, Write, 10, 0, 8)]),
            (2, 100, vec![acc(PacketData, Read, 10, 0, 40)]),
            (
                3,
                100,
                vec![
                    acc(PacketData, Read, 10, 0, 60),
                    acc(PacketMeta, Read, 50, 0, 8),
                ],
            ),
            (4, 10, vec![]),
        ],
        64,
    );
    if out_is_b {
        t.fates = vec![Fate::Output { element: 1 }];
    }
    let succ = vec![vec![1], vec![2], vec![3], vec![4], vec![]];
    let mut ep = EarlyPlan::new(&succ, &[false, false, false, false, true]);
    ep.observe(&t);
    (t, ep)
}

#[test]
fn early_signalling_overlaps_independent_tasks_and_d_waits_for_b() {
    let a = regs_arch(5, 1);
    let m = Mapping {
        tasks: (0..5).map(|p| TaskMap::new(vec![p], u32::MAX)).collect(),
    };
    let names = ["A", "B", "C", "D", "out"];
    let (t, ep) = chain(300, false);
    let plan = Plan {
        split: SplitPlan::default(),
        early: Some(Arc::new(ep)),
    };
    let base = run(
        &a,
        5,
        &m,
        &names,
        vec![t.clone()],
        5,
        5000.0,
        "none",
        Plan::default(),
        LockGranularity::Location,
    );
    let r = run(
        &a,
        5,
        &m,
        &names,
        vec![t],
        5,
        5000.0,
        "early",
        plan,
        LockGranularity::Location,
    );
    let e = r.transform.as_ref().unwrap().early.clone().unwrap();
    // B and C start with A; D depends on B and waits for it before its meta-data read.
    assert_eq!((e.early_instances, e.visits), (10, 25));
    assert_eq!((e.waits, e.waits_blocked), (5, 5));
    // Sequential: 100 + 300 + 100 + 100 + 10 cycles of work and the memory; early: B's 300 in
    // parallel with A, then D's last 50 and out after B's end.
    assert!(
        base.latency.max_cycles >= 610,
        "{}",
        base.latency.max_cycles
    );
    assert!(
        r.latency.max_cycles < base.latency.max_cycles - 200,
        "{} {}",
        r.latency.max_cycles,
        base.latency.max_cycles
    );
    assert!(r.latency.max_cycles >= 360, "{}", r.latency.max_cycles);
}

#[test]
fn a_task_that_outputs_packets_is_never_signalled_early() {
    let a = regs_arch(5, 1);
    let m = Mapping {
        tasks: (0..5).map(|p| TaskMap::new(vec![p], u32::MAX)).collect(),
    };
    let names = ["A", "B", "C", "D", "out"];
    let (t, ep) = chain(300, true);
    assert!(!ep.candidate(1));
    let plan = Plan {
        split: SplitPlan::default(),
        early: Some(Arc::new(ep)),
    };
    let r = run(
        &a,
        5,
        &m,
        &names,
        vec![t],
        5,
        5000.0,
        "early",
        plan,
        LockGranularity::Location,
    );
    let e = r.transform.as_ref().unwrap().early.clone().unwrap();
    // Only C goes early (B outputs the packet); no wait on B.
    assert_eq!((e.early_instances, e.waits), (5, 0));
}

#[test]
fn wide_accesses_save_a_known_number_of_requests() {
    let a = regs_arch(1, 1);
    let m = Mapping {
        tasks: vec![TaskMap::new(vec![0], u32::MAX)],
    };
    // Five consecutive 4-byte header reads and one 40-byte read elsewhere: 5 + 10 word
    // requests; wide (64 bytes): 1 + 1.
    let t = trace(
        &[(
            0,
            50,
            vec![
                acc(PacketData, Read, 1, 0, 0),
                acc(PacketData, Read, 2, 0, 4),
                acc(PacketData, Read, 3, 0, 8),
                acc(PacketData, Read, 4, 0, 12),
                acc(PacketData, Read, 5, 0, 16),
                bytes(acc(PacketData, Read, 6, 0, 500), 40),
            ],
        )],
        64,
    );
    let ext = |r: &SimReport| r.storage.iter().find(|x| x.name == "ext").unwrap().requests;
    let plain = run(
        &a,
        1,
        &m,
        &["t"],
        vec![t.clone()],
        10,
        1000.0,
        "none",
        Plan::default(),
        LockGranularity::Location,
    );
    let r = run(
        &a,
        1,
        &m,
        &["t"],
        vec![t],
        10,
        1000.0,
        "locality",
        Plan::default(),
        LockGranularity::Location,
    );
    assert_eq!((ext(&plain), ext(&r)), (150, 20));
    let l = r.transform.as_ref().unwrap().locality.clone().unwrap();
    assert_eq!((l.word_requests, l.wide_requests), (150, 20));
    assert!(r.latency.mean_cycles < plain.latency.mean_cycles);
}
