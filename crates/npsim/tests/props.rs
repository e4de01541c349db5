//! Invariants on random workloads and machines: every packet injected is delivered, dropped
//! with a reason or held (nothing in flight after the drain), no context runs two instances,
//! no lock has two holders (checked inside the simulator: `invariant_violations`), PE time
//! splits into its four states, and a run is deterministic.
mod common;
use common::*;
use pktflow_model::{AccessKind, MemAccess, MemType};
use pktflow_npsim::*;
use proptest::prelude::*;

type Acc = (u8, bool, u32, u32, u64);
type V = (u32, u32, Vec<Acc>);

fn access() -> impl Strategy<Value = Acc> {
    (0u8..5, any::<bool>(), 0u32..120, 0u32..3, 0u64..4)
}

fn visit() -> impl Strategy<Value = V> {
    (0u32..4, 0u32..150, prop::collection::vec(access(), 0..5))
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
    #[test]
    fn conservation_exclusion_and_determinism(
        packets in prop::collection::vec(prop::collection::vec(visit(), 1..4), 1..6),
        pes in 1u32..4, contexts in 1u32..4, pending in 1u32..3, queue in 1u32..4,
        cs in 0u32..3, handoff in 0u32..3, rep in 0usize..4, cap in 1u32..6,
        ia in 1.0f64..150.0, dynamic_private in any::<bool>(), seed in 0u64..4,
    ) {
        let h = Hw { pes, contexts, pending, queue, cs, handoff };
        let a = arch(
            &h,
            storage(3, 20, 4, 2, "xbus", false),
            shared_bus(2, 7),
            if dynamic_private { "regs" } else { "half" },
        );
        let traces: Vec<_> = packets.iter().map(|p| build(p)).collect();
        let rep = [Replication::None, Replication::Pe, Replication::Subset, Replication::Global][rep];
        let m = Mapping::default_for(&[false; 4], pes, 0, rep, 2).unwrap();
        let names: Vec<String> = (0..4).map(|i| format!("e{i}")).collect();
        let cfg = SimConfig {
            inter_arrival_cycles: ia,
            packets: 300,
            warmup_packets: 50,
            task_queue_capacity: cap,
            seed,
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
        prop_assert_eq!(r.injected, 300);
        prop_assert_eq!(r.injected, r.delivered + r.dropped_by_app + r.held_by_app + np_drops);
        for p in &r.pes {
            let s = p.busy + p.memory_wait + p.lock_wait + p.idle;
            prop_assert!((s - 1.0).abs() < 1e-9);
        }
        let r2 = run();
        prop_assert_eq!(r.cycles, r2.cycles);
        prop_assert_eq!(r.events, r2.events);
        prop_assert_eq!(r.latency.p99_cycles, r2.latency.p99_cycles);
        prop_assert_eq!(r.dropped_by_np, r2.dropped_by_np);
    }
}
