// The lock release point (the NPIRE paper section 2.4) and the bottleneck sentence on
// workloads whose binding resource is known by construction.
mod common;
use common::*;
use pktflow_model::{AccessKind::*, MemType::*};
use pktflow_npsim::*;

fn cfg(ia: f64, packets: u64) -> SimConfig {
    SimConfig {
        inter_arrival_cycles: ia,
        packets,
        warmup_packets: packets / 5,
        ..Default::default()
    }
}

fn search(
    a: &pktflow_arch::np::NpArch,
    pes: u32,
    m: &Mapping,
    names: &[&str],
    t: &pktflow_model::PacketTrace,
    base: &SimConfig,
) -> MaxRate {
    let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
    max_rate(
        |ia| {
            let mut src = VecSource::new(vec![t.clone()], 2000);
            let c = SimConfig {
                inter_arrival_cycles: ia,
                ..base.clone()
            };
            simulate(a, pes, m, names.clone(), &c, &mut src)
        },
        &MaxRateConfig::default(),
    )
    .unwrap()
}

/// Cycles a lock is held per acquisition, from the report.
fn hold_per_acquisition(r: &SimReport) -> f64 {
    let l = &r.locks[0];
    l.held * r.cycles as f64 / l.acquisitions as f64
}

#[test]
fn the_lock_is_released_after_the_last_access_is_issued_by_default() {
    // A section: read a shared word, 100 instructions, write it back; the shared word lives
    // behind a bus with a 500-cycle pipelined latency. Released after the write is issued (the
    // paper's "after the last read or write"), the lock is held for about the 100 cycles
    // between the two accesses; waiting for completion adds the write's ~500 cycles.
    let h = Hw {
        pes: 1,
        contexts: 4,
        ..Default::default()
    };
    let a = arch(
        &h,
        storage(1, 500, 500, 1, "xbus", false),
        shared_bus(1, 1),
        "ext",
    );
    let t = trace(
        &[(
            0,
            120,
            vec![
                acc(DynamicState, Read, 5, 1, 0),
                acc(DynamicState, Write, 105, 1, 0),
            ],
        )],
        64,
    );
    let m = Mapping {
        tasks: vec![TaskMap::new(vec![0], u32::MAX)],
    };
    assert_eq!(SimConfig::default().lock_release, LockRelease::AfterIssue);
    let run = |lr: LockRelease| {
        let c = SimConfig {
            lock_release: lr,
            ..cfg(2000.0, 200)
        };
        let mut src = VecSource::new(vec![t.clone()], 200);
        simulate(&a, 1, &m, vec!["t".into()], &c, &mut src).unwrap()
    };
    let issue = hold_per_acquisition(&run(LockRelease::AfterIssue));
    let done = hold_per_acquisition(&run(LockRelease::AfterCompletion));
    assert!((100.0..=110.0).contains(&issue), "after issue: {issue}");
    assert!(done >= 590.0, "after completion: {done}");
}

#[test]
fn a_replicated_task_bound_by_its_critical_section_is_reported_as_its_lock() {
    let h = Hw {
        pes: 4,
        contexts: 4,
        ..Default::default()
    };
    let a = arch(
        &h,
        storage(1, 1, 1, 1, "xbus", false),
        shared_bus(1, 1),
        "regs",
    );
    let t = trace(
        &[(
            0,
            210,
            vec![
                acc(DynamicState, Read, 5, 1, 0),
                acc(DynamicState, Write, 205, 1, 0),
            ],
        )],
        64,
    );
    let m = Mapping {
        tasks: vec![TaskMap::new((0..4).collect(), u32::MAX)],
    };
    let r = search(&a, 4, &m, &["out0"], &t, &cfg(1000.0, 2000));
    let d = diagnose(&r.report, &m, &["Queue".to_string()], 4);
    let top = &d.limits[0];
    assert_eq!(
        top.resource,
        pktflow_harness::Resource::Lock {
            name: "out0".into(),
            class: "Queue".into()
        },
        "{}",
        d.sentence
    );
    assert!(top.share > 0.9, "{}", d.sentence);
    assert!(
        d.sentence.starts_with("lock of out0 (Queue) held "),
        "{}",
        d.sentence
    );
    assert!(d.sentence.contains("cycles each"), "{}", d.sentence);
}

#[test]
fn an_unreplicated_heavy_task_is_reported_as_the_task_to_replicate() {
    let h = Hw {
        pes: 3,
        contexts: 4,
        ..Default::default()
    };
    let a = arch(
        &h,
        storage(1, 1, 1, 1, "xbus", false),
        shared_bus(1, 1),
        "regs",
    );
    let t = trace(&[(0, 20, vec![]), (1, 300, vec![]), (2, 20, vec![])], 64);
    let m = Mapping {
        tasks: vec![
            TaskMap::new(vec![0], u32::MAX),
            TaskMap::new(vec![1], 1),
            TaskMap::new(vec![2], u32::MAX),
        ],
    };
    let r = search(&a, 3, &m, &["in", "heavy", "out"], &t, &cfg(1000.0, 2000));
    let classes = ["A".to_string(), "Heavy".to_string(), "B".to_string()];
    let d = diagnose(&r.report, &m, &classes, 4);
    let top = &d.limits[0];
    // The heavy task's single instance and its PE tie; the task (the thing to act on) ranks
    // first.
    assert_eq!(
        top.resource,
        pktflow_harness::Resource::Task {
            name: "heavy".into(),
            class: "Heavy".into()
        },
        "{}",
        d.sentence
    );
    assert!(
        d.sentence.starts_with("task heavy (Heavy) busy ")
            && d.sentence.contains("(runs one instance at a time"),
        "{}",
        d.sentence
    );
    assert!(d.sentence.contains("replicate it"), "{}", d.sentence);
}

#[test]
fn a_bus_bound_workload_is_reported_as_its_bus() {
    // Three reads per packet through one shared bus of occupancy 10; everything else ample.
    let h = Hw {
        pes: 4,
        contexts: 8,
        ..Default::default()
    };
    let a = arch(
        &h,
        storage(1, 5, 5, 4, "xbus", false),
        shared_bus(10, 5),
        "regs",
    );
    let t = trace(
        &[(
            0,
            10,
            vec![
                acc(PacketData, Read, 1, 0, 0),
                acc(PacketData, Read, 2, 0, 64),
                acc(PacketData, Read, 3, 0, 128),
            ],
        )],
        64,
    );
    let m = Mapping {
        tasks: vec![TaskMap::new((0..4).collect(), u32::MAX)],
    };
    let r = search(&a, 4, &m, &["t"], &t, &cfg(1000.0, 2000));
    let d = diagnose(&r.report, &m, &[], 8);
    assert!(
        matches!(d.limits[0].resource, pktflow_harness::Resource::Bus { .. }),
        "{}",
        d.sentence
    );
    assert!(d.sentence.starts_with("bus xbus"), "{}", d.sentence);
    assert!(!d.sentence.contains("none of"), "{}", d.sentence);
}
