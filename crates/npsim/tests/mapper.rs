//! Task mapping (seed 000 section 3.1 steps 2 and 3): the greedy assignment against
//! round-robin on random task weights, and replication on a workload bound by one task.
#![allow(clippy::needless_range_loop)]
mod common;
use common::*;
use pktflow_model::{AccessKind::*, MemType::*};
use pktflow_npsim::mapper::*;
use pktflow_npsim::*;
use proptest::prelude::*;

fn max_load(l: &[f64]) -> f64 {
    l.iter().copied().fold(0.0, f64::max)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// Greedy's largest PE load is never above round-robin's; interface tasks stay on the
    /// interface PEs and processing tasks on processing PEs; every PE exists.
    #[test]
    fn greedy_never_loads_a_pe_more_than_round_robin(
        tasks in prop::collection::vec((any::<bool>(), 0.0f64..1000.0), 1..40),
        pe_count in 1u32..33,
        interface_pes in 0u32..5,
    ) {
        let iface: Vec<bool> = tasks.iter().map(|t| t.0).collect();
        let w: Vec<f64> = tasks.iter().map(|t| t.1).collect();
        let rr = round_robin_assign(&iface, pe_count, interface_pes);
        let g = greedy_assign(&w, &iface, pe_count, interface_pes);
        let lg = max_load(&pe_loads(&g, &w, pe_count));
        let lr = max_load(&pe_loads(&rr, &w, pe_count));
        prop_assert!(lg <= lr + 1e-9, "greedy {lg} > round-robin {lr}");
        let (ifs, proc) = pe_split(pe_count, interface_pes);
        for t in 0..iface.len() {
            prop_assert!(g[t] < pe_count);
            if iface[t] {
                prop_assert_eq!(g[t], rr[t]);
            } else {
                prop_assert!(proc.contains(&g[t]));
            }
        }
        prop_assert!(!ifs.is_empty());
        // Lower bound: no assignment of the processing tasks beats the mean or the heaviest.
        let heaviest = w.iter().zip(&iface).filter(|x| !*x.1).map(|x| *x.0).fold(0.0, f64::max);
        prop_assert!(lg + 1e-9 >= heaviest);
        for rep in [Replication::None, Replication::Pe, Replication::Subset, Replication::Global] {
            let m = mapping_from(&g, &iface, &vec![true; iface.len()], pe_count, interface_pes, rep, 3);
            prop_assert!(m.validate(pe_count).is_ok());
            for t in 0..iface.len() {
                prop_assert!(m.tasks[t].pes.contains(&g[t]));
            }
        }
    }
}

/// Three tasks in sequence; task 1 computes 400 cycles, the others 20. Unreplicated, task 1
/// runs one instance at a time (>= 400 cycles per packet); replicated over the processing PEs
/// (global) or a subset of them, several PEs compute it at once. The mapper must pick task 1
/// (the longest queue) and the maximum rate must rise.
#[test]
fn replicating_the_bottleneck_task_raises_the_maximum_rate() {
    let h = Hw {
        pes: 6,
        contexts: 4,
        ..Default::default()
    };
    let a = arch(
        &h,
        storage(2, 20, 20, 2, "xbus", false),
        shared_bus(1, 5),
        "half",
    );
    let tr = trace(
        &[
            (0, 20, vec![acc(PacketMeta, Read, 0, 0, 0)]),
            (1, 400, vec![acc(PacketMeta, Read, 10, 0, 1)]),
            (2, 20, vec![acc(PacketData, Write, 5, 0, 2)]),
        ],
        64,
    );
    let names: Vec<String> = ["in", "heavy", "out"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let iface = [false, false, false];
    let eval = |m: &Mapping| {
        max_rate(
            |ia| {
                let mut src = VecSource::new(vec![tr.clone()], 1200);
                let c = SimConfig {
                    inter_arrival_cycles: ia,
                    packets: 1200,
                    warmup_packets: 300,
                    ..Default::default()
                };
                simulate(&a, 6, m, names.clone(), &c, &mut src)
            },
            &MaxRateConfig::default(),
        )
    };
    let probe = |m: &Mapping, ia: f64| {
        let mut src = VecSource::new(vec![tr.clone()], 1200);
        let c = SimConfig {
            inter_arrival_cycles: ia,
            packets: 1200,
            warmup_packets: 300,
            ..Default::default()
        };
        simulate(&a, 6, m, names.clone(), &c, &mut src)
    };
    let w = [20.0, 400.0, 20.0];
    let home = greedy_assign(&w, &iface, 6, 0);
    for (rep, gain) in [(Replication::Global, 3.0), (Replication::Subset, 1.8)] {
        let mut log = MapperLog::default();
        let (m, best) = replicate(
            &home,
            &iface,
            &names,
            6,
            0,
            rep,
            2,
            &ReplicateConfig::default(),
            &mut log,
            eval,
            probe,
        )
        .unwrap();
        let first = &log.steps[0];
        assert_eq!(first.task, "heavy", "{:?}", log.steps);
        assert!(first.improved);
        assert!(log.replicated.contains(&"heavy".to_string()));
        let base = first.packets_per_second_before;
        assert!(
            best.packets_per_second > gain * base,
            "{rep:?}: {} vs {base}",
            best.packets_per_second
        );
        assert_eq!(m.tasks[1].max_concurrent, u32::MAX);
        // Unreplicated, the heavy task alone takes 400+ cycles per packet (1 GHz PEs).
        // (the keep-up test tolerates 2%)
        assert!(base < 1e9 / 400.0 * 1.03, "{base}");
    }
    // No replication: the mapper does not replicate.
    let mut log = MapperLog::default();
    let (m, _) = replicate(
        &home,
        &iface,
        &names,
        6,
        0,
        Replication::None,
        2,
        &ReplicateConfig::default(),
        &mut log,
        eval,
        probe,
    )
    .unwrap();
    assert!(log.steps.is_empty() && m.tasks.iter().all(|t| t.max_concurrent == 1));
}

#[test]
fn replication_goes_on_until_the_np_is_well_utilized_not_after_three_failures() {
    // Four tasks of 300 cycles in a chain: replicating any one, two or three of them gains
    // nothing (the others still serialize one packet per 300 cycles); all four gain a lot.
    // The paper's rule ("repeat this step until the NP is well utilized") gets there; stopping
    // after three replications without gain (the optional `patience`) does not.
    let h = Hw {
        pes: 16,
        contexts: 4,
        ..Default::default()
    };
    let a = arch(
        &h,
        storage(2, 20, 20, 2, "xbus", false),
        shared_bus(1, 5),
        "half",
    );
    let tr = trace(
        &[
            (0, 300, vec![]),
            (1, 300, vec![]),
            (2, 300, vec![]),
            (3, 300, vec![]),
        ],
        64,
    );
    let names: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
    let iface = [false; 4];
    let eval = |m: &Mapping| {
        max_rate(
            |ia| {
                let mut src = VecSource::new(vec![tr.clone()], 1000);
                let c = SimConfig {
                    inter_arrival_cycles: ia,
                    packets: 1000,
                    warmup_packets: 200,
                    ..Default::default()
                };
                simulate(&a, 16, m, names.clone(), &c, &mut src)
            },
            &MaxRateConfig::default(),
        )
    };
    let probe = |m: &Mapping, ia: f64| {
        let mut src = VecSource::new(vec![tr.clone()], 1000);
        let c = SimConfig {
            inter_arrival_cycles: ia,
            packets: 1000,
            warmup_packets: 200,
            ..Default::default()
        };
        simulate(&a, 16, m, names.clone(), &c, &mut src)
    };
    let home = greedy_assign(&[300.0; 4], &iface, 16, 0);
    let go = |cfg: &ReplicateConfig| {
        let mut log = MapperLog::default();
        let (_, best) = replicate(
            &home,
            &iface,
            &names,
            16,
            0,
            Replication::Global,
            2,
            cfg,
            &mut log,
            eval,
            probe,
        )
        .unwrap();
        (log, best.packets_per_second)
    };
    let (log, rate) = go(&ReplicateConfig::default());
    assert_eq!(log.replicated.len(), 4, "{:?}", log.steps);
    // Unreplicated, one packet per 300 cycles at best (1 GHz PEs).
    let base = 1e9 / 300.0;
    assert!(rate > 3.0 * base, "{rate} vs {base}");
    assert!(!log.stopped.is_empty());
    let (log3, rate3) = go(&ReplicateConfig {
        patience: Some(3),
        ..Default::default()
    });
    assert_eq!(log3.steps.len(), 3, "{:?}", log3.steps);
    assert_eq!(log3.replicated.len(), 3, "{:?}", log3.replicated);
    assert!(rate3 < 1.1 * base, "{rate3} vs {base}");
    assert!(log3.stopped.contains("in a row"), "{}", log3.stopped);
    // Already well utilized: nothing to replicate.
    let (log0, _) = go(&ReplicateConfig {
        well_utilized: 0.0,
        ..Default::default()
    });
    assert!(log0.steps.is_empty());
    assert!(
        log0.stopped.starts_with("well utilized"),
        "{}",
        log0.stopped
    );
}
