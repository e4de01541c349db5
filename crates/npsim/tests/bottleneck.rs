//! Bottleneck finding (seed 000 section 5) on hand-built workloads whose limit is known.
mod common;
use common::*;
use pktflow_model::{AccessKind::*, MemType::*};
use pktflow_npsim::*;

fn mr_cfg() -> MaxRateConfig {
    MaxRateConfig {
        tolerance: 0.01,
        precision: 0.01,
        ..Default::default()
    }
}

/// Maximum rate of one task on `pes` PEs (I: one more PE set of the same size; the task is
/// alone, so I changes nothing here but the PE numbering).
fn search(
    a: &pktflow_arch::np::NpArch,
    pes: u32,
    traces: &[pktflow_model::PacketTrace],
    i: &Ideal,
) -> Result<MaxRate, String> {
    let m = Mapping {
        tasks: vec![TaskMap::new((0..pes).collect(), u32::MAX)],
    };
    let (n, m) = if i.infinite_pes {
        m.infinite(pes * 2)
    } else {
        (pes, m)
    };
    max_rate(
        |ia| {
            let mut src = VecSource::new(traces.to_vec(), 1500);
            let c = SimConfig {
                inter_arrival_cycles: ia,
                packets: 1500,
                warmup_packets: 300,
                ideal: *i,
                // The lock-bound case holds its lock for the memory latency: released after
                // the accesses complete (the default releases once they are issued).
                lock_release: LockRelease::AfterCompletion,
                ..Default::default()
            };
            simulate(a, n, &m, vec!["t".into()], &c, &mut src)
        },
        &mr_cfg(),
    )
}

#[test]
fn a_lock_bound_workload_names_synchronization_first() {
    // Each packet holds one lock across a read and a write of a ~200-cycle pipelined memory
    // (occupancy 1 cycle): about 200 cycles per packet under the lock. Without it 4 PEs x 4
    // contexts overlap the latency (~13 cycles per packet); then contexts limit, so I is next.
    let h = Hw {
        pes: 4,
        contexts: 4,
        ..Default::default()
    };
    let a = arch(
        &h,
        storage(1, 200, 200, 8, "xbus", false),
        shared_bus(1, 1),
        "ext",
    );
    let t = trace(
        &[(
            0,
            20,
            vec![
                acc(DynamicState, Read, 5, 1, 0),
                acc(DynamicState, Write, 6, 1, 0),
            ],
        )],
        64,
    );
    let mut seen = Vec::new();
    let b = bottleneck(
        |i| search(&a, 4, std::slice::from_ref(&t), i),
        &BottleneckConfig {
            chain: false,
            ..Default::default()
        },
        |k, l| seen.push((k, l.to_string())),
    )
    .unwrap();
    assert_eq!(b.ranking[0].ideal, "S", "{}", b.summary);
    assert!(b.ranking[0].gain_alone > 3.0, "{}", b.summary);
    assert!(b
        .summary
        .starts_with("synchronization (S): removing critical sections raises"));
    // With the lock gone, contexts waiting on memory limit: more PEs (I, here twice the
    // PEs) are next, 2x.
    assert_eq!(b.ranking[1].ideal, "I", "{}", b.summary);
    assert!(
        (b.ranking[1].gain_after_top - 2.0).abs() < 0.1,
        "{}",
        b.summary
    );
    assert!(
        b.summary
            .contains("next: processing (number of PEs) (I): with S also idealized"),
        "{}",
        b.summary
    );
    // Buses and memories do not limit it.
    let bm = b.ranking.iter().find(|f| f.ideal == "B").unwrap();
    assert!(!bm.limiting, "{}", b.summary);
    // baseline, 5 alone, 4 pairs with S; the progress callback saw each once.
    assert_eq!(b.runs.len(), 10);
    assert_eq!(seen.len(), 10);
    assert_eq!(seen[0], (0, "none".to_string()));
    assert_eq!(b.runs[0].speedup, 1.0);
}

#[test]
fn a_bus_bound_workload_names_bus_contention_first() {
    // Three packet reads per packet through one bus with 10 cycles of occupancy; everything
    // else is fast: B lifts the bus bound (30 cycles per packet).
    let h = Hw {
        pes: 4,
        contexts: 8,
        ..Default::default()
    };
    let a = arch(
        &h,
        storage(1, 20, 20, 8, "xbus", false),
        shared_bus(10, 30),
        "ext",
    );
    let t = trace(
        &[(
            0,
            20,
            vec![
                acc(PacketData, Read, 5, 0, 0),
                acc(PacketData, Read, 10, 0, 64),
                acc(PacketData, Read, 15, 0, 128),
            ],
        )],
        100,
    );
    let b = bottleneck(
        |i| search(&a, 4, std::slice::from_ref(&t), i),
        &BottleneckConfig {
            chain: true,
            extra: vec!["SB".into()],
            ..Default::default()
        },
        |_, _| {},
    )
    .unwrap();
    assert_eq!(b.ranking[0].ideal, "B", "{}", b.summary);
    assert!(b.ranking[0].gain_alone > 2.0, "{}", b.summary);
    let s = b.ranking.iter().find(|f| f.ideal == "S").unwrap();
    assert!(!s.limiting && s.gain_alone < 1.05, "{}", b.summary);
    // The chain and the extra combination are reported once each.
    for l in ["I", "IZ", "IZS", "IZSB", "IZSBM", "SB"] {
        assert_eq!(b.runs.iter().filter(|r| r.ideal == l).count(), 1, "{l}");
    }
    assert!(bottleneck(
        |_| unreachable!(),
        &BottleneckConfig {
            extra: vec!["Q".into()],
            ..Default::default()
        },
        |_, _| {}
    )
    .unwrap_err()
    .contains("unknown idealization"));
}
