//! The control core (a task on the XScale runs at its CPI and clock, with its own contexts) and
//! the hand-off cost between task groups (seed 001 section 3: the receiving task loads the
//! header, the sending task writes it back if it modified the packet).
mod common;
use common::*;
use pktflow_arch::np::{ControlCore, NpArch};
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

/// One PE with `contexts` contexts at 1000 MHz, CPI 1, and a control core.
fn with_core(contexts: u32, core_mhz: u32, core_cpi: u32, core_contexts: u32) -> NpArch {
    let mut a = arch(
        &Hw {
            contexts,
            ..Default::default()
        },
        storage(1, 1, 1, 1, "xbus", false),
        shared_bus(1, 1),
        "ext",
    );
    a.control_core = Some(ControlCore {
        name: "xscale".into(),
        frequency_mhz: core_mhz,
        cycles_per_instruction: core_cpi,
        hardware_contexts: core_contexts,
    });
    a
}

#[test]
fn a_task_on_the_control_core_runs_at_its_cpi() {
    // s instructions per packet, one task on the control core (PE 1 of a 1-PE machine), one
    // context: service time s x CPI core cycles = s x CPI x (1000 / f) PE cycles.
    let s = 100u32;
    for (mhz, cpi, service) in [(1000, 2, 200u64), (500, 2, 400), (1000, 3, 300)] {
        let a = with_core(8, mhz, cpi, 1);
        let traces = vec![trace(&[(0, s, vec![])], 64)];
        let m = Mapping {
            tasks: vec![TaskMap::new(vec![1], u32::MAX)],
        };
        let run = |ia: f64| {
            let mut src = VecSource::new(traces.clone(), 2000);
            simulate(&a, 1, &m, vec!["t".into()], &cfg(ia, 2000), &mut src)
        };
        let r = run(service as f64).unwrap();
        assert!(r.keeps_up(0.0, true), "{mhz} MHz CPI {cpi}: {:?}", r.window);
        assert_eq!(r.latency.max_cycles, service, "{mhz} MHz CPI {cpi}");
        assert_eq!(r.pes.len(), 2);
        assert!(r.pes[1].control_core && !r.pes[0].control_core);
        assert!((r.pes[1].busy - 1.0).abs() < 0.01);
        assert_eq!(r.pes[0].busy, 0.0);
        assert_eq!(r.tasks[0].busy_cycles, service * 2000);
        // One context: slightly faster arrivals queue (unlike the 8-context PE).
        let r = run(0.95 * service as f64).unwrap();
        assert!(!r.keeps_up(0.02, false));
        assert!((r.mean_inter_departure_cycles - service as f64).abs() < 0.01 * service as f64);
    }
}

#[test]
fn control_core_contexts_come_from_the_architecture() {
    // 10 instructions and one load of 104 cycles (bus 1+1, device 1+101) per packet: a context
    // ends an instance only when its load is back, 109 cycles after the start; one context
    // serves a packet per 109 cycles, four about one per 109 / 4 = 27.
    let core = |n: u32| {
        let mut a = with_core(1, 1000, 1, n);
        a.storage.get_mut("ext").unwrap().pipelined_read_cycles = 101;
        a
    };
    let traces = vec![trace(&[(0, 10, vec![acc(PacketData, Read, 5, 0, 0)])], 64)];
    let m = Mapping {
        tasks: vec![TaskMap::new(vec![1], u32::MAX)],
    };
    let run = |a: &NpArch, ia: f64| {
        let mut src = VecSource::new(traces.clone(), 2000);
        simulate(a, 1, &m, vec!["t".into()], &cfg(ia, 2000), &mut src).unwrap()
    };
    let (a1, a4) = (core(1), core(4));
    let r = run(&a1, 110.0);
    assert!(r.keeps_up(0.0, true));
    assert_eq!(r.latency.max_cycles, 5 + 104 - 1 + 1); // issued after 5, back 104 later
    assert!(!run(&a1, 80.0).keeps_up(0.02, false));
    assert!(run(&a4, 30.0).keeps_up(0.02, false));
    assert!(!run(&a4, 20.0).keeps_up(0.02, false));
}

#[test]
fn mapping_to_a_missing_control_core_is_refused_with_the_element() {
    let a = arch(
        &Hw::default(),
        storage(1, 1, 1, 1, "xbus", false),
        shared_bus(1, 1),
        "ext",
    );
    let m = Mapping {
        tasks: vec![TaskMap::new(vec![0], 1), TaskMap::new(vec![1], 1)],
    };
    let mut src = VecSource::new(vec![trace(&[(0, 1, vec![])], 64)], 1);
    let e = simulate(
        &a,
        1,
        &m,
        vec!["a".into(), "b".into()],
        &cfg(10.0, 1),
        &mut src,
    )
    .err()
    .unwrap();
    assert!(
        e.contains("element 'b'") && e.contains("no [control_core]"),
        "{e}"
    );
    let m = Mapping {
        tasks: vec![TaskMap::new(vec![0], 1), TaskMap::new(vec![3], 1)],
    };
    let mut src = VecSource::new(vec![trace(&[(0, 1, vec![])], 64)], 1);
    let e = simulate(
        &a,
        1,
        &m,
        vec!["a".into(), "b".into()],
        &cfg(10.0, 1),
        &mut src,
    )
    .err()
    .unwrap();
    assert!(e.contains("element 'b' (task 1) is mapped to PE 3"), "{e}");
}

/// Four visits: element 0 writes packet data, 1 reads it, 2 does nothing, 3 ends.
fn four_visits() -> Vec<pktflow_model::PacketTrace> {
    vec![trace(
        &[
            (0, 20, vec![acc(PacketData, Write, 5, 0, 0)]),
            (1, 20, vec![acc(PacketData, Read, 5, 0, 0)]),
            (2, 20, vec![]),
            (3, 20, vec![]),
        ],
        64,
    )]
}

fn run_groups(a: &NpArch, groups: [Option<u32>; 4], packets: u64) -> SimReport {
    let m = Mapping {
        tasks: groups
            .iter()
            .map(|&g| TaskMap {
                group: g,
                ..TaskMap::new(vec![0, 1], u32::MAX)
            })
            .collect(),
    };
    let mut src = VecSource::new(four_visits(), packets);
    let names = (0..4).map(|i| format!("e{i}")).collect();
    let r = simulate(a, 2, &m, names, &cfg(2000.0, packets), &mut src).unwrap();
    assert!(
        r.invariant_violations.is_empty(),
        "{:?}",
        r.invariant_violations
    );
    r
}

fn ext_requests(r: &SimReport) -> u64 {
    r.storage.iter().find(|s| s.name == "ext").unwrap().requests
}

#[test]
fn handoff_adds_the_configured_requests_only_where_the_group_changes() {
    let h = Hw {
        pes: 2,
        contexts: 4,
        ..Default::default()
    };
    let mut a = arch(
        &h,
        storage(2, 30, 20, 1, "xbus", false),
        shared_bus(1, 2),
        "ext",
    );
    a.np.handoff_storage = Some("ext".into());
    a.np.handoff_requests = 2;
    let n = 500u64;
    let base = run_groups(&a, [None; 4], n);
    assert_eq!(ext_requests(&base), 2 * n); // the trace's own two accesses
                                            // Groups 0,0,1,none: entering group 0 at the first visit (2 reads), leaving it after
                                            // visit 1 having written the packet at visit 0 (2 writes), entering group 1 (2 reads),
                                            // leaving group 1 unmodified (no write), element 3 without a group (nothing).
    let r = run_groups(&a, [Some(0), Some(0), Some(1), None], n);
    assert_eq!(ext_requests(&r), 2 * n + 6 * n);
    let by = |e: &str| r.tasks.iter().find(|t| t.element == e).unwrap();
    assert_eq!(
        (by("e0").handoff_reads, by("e0").handoff_writes),
        (2 * n, 0)
    );
    assert_eq!(
        (by("e1").handoff_reads, by("e1").handoff_writes),
        (0, 2 * n)
    );
    assert_eq!(
        (by("e2").handoff_reads, by("e2").handoff_writes),
        (2 * n, 0)
    );
    assert_eq!((by("e3").handoff_reads, by("e3").handoff_writes), (0, 0));
    assert!(r.latency.mean_cycles > base.latency.mean_cycles);
    // One group for all: only the read on entry (nothing is written after the last visit).
    let r = run_groups(&a, [Some(7); 4], n);
    assert_eq!(ext_requests(&r), 2 * n + 2 * n);
    // Every element its own group: reads at 4 entries, a write only after visit 0.
    let r = run_groups(&a, [Some(0), Some(1), Some(2), Some(3)], n);
    assert_eq!(ext_requests(&r), 2 * n + 8 * n + 2 * n);
    // Hand-off off (0 requests, or no storage as on npire): groups change nothing.
    a.np.handoff_requests = 0;
    let r = run_groups(&a, [Some(0), Some(1), Some(2), Some(3)], n);
    assert_eq!(ext_requests(&r), 2 * n);
    assert_eq!(r.latency.mean_cycles, base.latency.mean_cycles);
    let npire = pktflow_arch::Arch::load("npire").unwrap();
    assert!(npire.as_np().unwrap().np.handoff_storage.is_none());
}

#[test]
fn no_sync_elements_drop_the_locks_of_named_elements_only() {
    // Two elements updating their own dynamic state (a lock each); lifting e1's lock keeps e0's.
    let a = arch(
        &Hw::default(),
        storage(1, 1, 1, 1, "xbus", false),
        shared_bus(1, 1),
        "ext",
    );
    let traces = vec![trace(
        &[
            (0, 10, vec![acc(DynamicState, Write, 2, 1, 0)]),
            (1, 10, vec![acc(DynamicState, Write, 2, 1 << 8, 0)]),
        ],
        64,
    )];
    let m = Mapping {
        tasks: vec![TaskMap::new(vec![0], u32::MAX); 2],
    };
    let names = vec!["e0".to_string(), "e1".to_string()];
    let run = |no_sync: Vec<String>| {
        let mut src = VecSource::new(traces.clone(), 100);
        let c = SimConfig {
            no_sync_elements: no_sync,
            ..cfg(100.0, 100)
        };
        simulate(&a, 1, &m, names.clone(), &c, &mut src)
    };
    let both = run(vec![]).unwrap();
    assert_eq!(both.locks.len(), 2);
    let one = run(vec!["e1".into()]).unwrap();
    assert_eq!(one.locks.len(), 1);
    assert_eq!(one.locks[0].element, "e0");
    let e = run(vec!["e9".into()]).err().unwrap();
    assert!(e.contains("unknown element 'e9'"), "{e}");
}

mod random {
    use super::*;
    use pktflow_model::{AccessKind, MemAccess, MemType};
    use proptest::prelude::*;

    type Acc = (u8, bool, u32, u32, u64);
    type V = (u32, u32, Vec<Acc>);

    fn visit() -> impl Strategy<Value = V> {
        (
            0u32..4,
            0u32..150,
            prop::collection::vec((0u8..5, any::<bool>(), 0u32..120, 0u32..3, 0u64..4), 0..5),
        )
    }

    fn build(v: &[V]) -> pktflow_model::PacketTrace {
        let visits: Vec<(u32, u32, Vec<MemAccess>)> = v
            .iter()
            .map(|(e, n, a)| {
                let mut a: Vec<MemAccess> = a
                    .iter()
                    .map(|&(m, w, at, o, k)| {
                        let mem = MemType::ALL[m as usize];
                        let kind = if w {
                            AccessKind::Write
                        } else {
                            AccessKind::Read
                        };
                        let object = if mem.is_persistent() { (e << 8) | o } else { 0 };
                        acc(mem, kind, at.min(*n), object, k)
                    })
                    .collect();
                a.sort_by_key(|x| x.at_instr);
                (*e, *n, a)
            })
            .collect();
        trace(&visits, 64)
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]
        /// The invariants of `props.rs` with tasks on the control core and hand-offs between
        /// random groups.
        #[test]
        fn invariants_hold_with_control_core_and_handoffs(
            packets in prop::collection::vec(prop::collection::vec(visit(), 1..5), 1..6),
            pes in 1u32..3, contexts in 1u32..3, queue in 1u32..4,
            core_cpi in 1u32..4, core_contexts in 1u32..3, requests in 0u32..3,
            on_core in prop::collection::vec(any::<bool>(), 4),
            groups in prop::collection::vec(prop::option::of(0u32..3), 4),
            ia in 1.0f64..200.0, cap in 1u32..6,
        ) {
            let h = Hw { pes, contexts, queue, ..Default::default() };
            let mut a = arch(&h, storage(3, 20, 4, 2, "xbus", false), shared_bus(2, 7), "half");
            a.control_core = Some(ControlCore {
                name: "xscale".into(),
                frequency_mhz: 500,
                cycles_per_instruction: core_cpi,
                hardware_contexts: core_contexts,
            });
            a.np.handoff_storage = Some("ext".into());
            a.np.handoff_requests = requests;
            let m = Mapping {
                tasks: (0..4)
                    .map(|i| TaskMap {
                        group: groups[i],
                        ..TaskMap::new(
                            if on_core[i] { vec![pes] } else { (0..pes).collect() },
                            u32::MAX,
                        )
                    })
                    .collect(),
            };
            let traces: Vec<_> = packets.iter().map(|p| build(p)).collect();
            let names: Vec<String> = (0..4).map(|i| format!("e{i}")).collect();
            let cfg = SimConfig {
                inter_arrival_cycles: ia,
                packets: 300,
                warmup_packets: 50,
                task_queue_capacity: cap,
                ..Default::default()
            };
            let run = || {
                let mut src = VecSource::new(traces.clone(), 1000);
                simulate(&a, pes, &m, names.clone(), &cfg, &mut src).unwrap()
            };
            let r = run();
            prop_assert!(r.invariant_violations.is_empty(), "{:?}", r.invariant_violations);
            prop_assert_eq!(r.in_flight_at_end, 0);
            let np_drops: u64 = r.dropped_by_np.values().sum();
            prop_assert_eq!(r.injected, r.delivered + r.dropped_by_app + r.held_by_app + np_drops);
            prop_assert_eq!(r.pes.len() as u32, pes + on_core.iter().any(|&c| c) as u32);
            for p in &r.pes {
                let s = p.busy + p.memory_wait + p.lock_wait + p.idle;
                prop_assert!((s - 1.0).abs() < 1e-9);
            }
            let ho: u64 = r.tasks.iter().map(|t| t.handoff_reads + t.handoff_writes).sum();
            if requests == 0 || groups.iter().all(|g| g.is_none()) {
                prop_assert_eq!(ho, 0);
            }
            let r2 = run();
            prop_assert_eq!(r.cycles, r2.cycles);
            prop_assert_eq!(r.events, r2.events);
        }
    }
}
