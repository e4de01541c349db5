//! The closed-form checks of issue 3 ("Done when"): a single-context PE with deterministic
//! service time s keeps up exactly up to 1/s; a workload bound by one bus saturates at the
//! reciprocal of that bus's unpipelined occupancy per packet; Little's law on measured queues.
mod common;
use common::*;
use pktflow_model::{AccessKind::*, MemType::*};
use pktflow_npsim::prog::LockGranularity;
use pktflow_npsim::*;

fn one_task(pes: u32) -> Mapping {
    Mapping {
        tasks: vec![TaskMap::new((0..pes).collect(), u32::MAX)],
    }
}

fn cfg(ia: f64, packets: u64) -> SimConfig {
    SimConfig {
        inter_arrival_cycles: ia,
        packets,
        warmup_packets: packets / 5,
        ..Default::default()
    }
}

#[test]
fn single_context_pe_keeps_up_exactly_up_to_one_over_s() {
    let s = 100u32;
    let a = arch(
        &Hw::default(),
        storage(1, 1, 1, 1, "xbus", false),
        shared_bus(1, 1),
        "ext",
    );
    let traces = vec![trace(&[(0, s, vec![])], 64)];
    let m = one_task(1);
    let run = |ia: f64| {
        let mut src = VecSource::new(traces.clone(), 3000);
        simulate(&a, 1, &m, vec!["t".into()], &cfg(ia, 3000), &mut src)
    };
    // At 1/s: no queueing at all, every packet takes exactly s.
    let r = run(s as f64).unwrap();
    assert!(r.keeps_up(0.0, true), "{:?}", r.window);
    assert_eq!(r.latency.max_cycles, s as u64);
    assert_eq!(r.tasks[0].max_queue_length, 1);
    assert!((r.pes[0].busy - 1.0).abs() < 0.01);
    // 5% faster: departures stay at one per s, the queue grows.
    let r = run(0.95 * s as f64).unwrap();
    assert!(!r.keeps_up(0.02, false));
    assert!((r.mean_inter_departure_cycles - s as f64).abs() < 0.01 * s as f64);
    assert!(r.window.in_flight_at_end > r.window.in_flight_at_start + 50);
    // Bisection: the bracket holds s (criterion tolerance 0.1%, precision 0.1%).
    let mr = max_rate(
        run,
        &MaxRateConfig {
            tolerance: 0.001,
            precision: 0.001,
            ..Default::default()
        },
    )
    .unwrap();
    let [lo, hi] = mr.bracket.inter_arrival_cycles;
    assert!(
        hi >= 0.997 * s as f64 && hi <= 1.001 * s as f64,
        "{lo} {hi}"
    );
    assert!(lo < 0.999 * s as f64);
    assert!((mr.packets_per_second - 1e9 / hi).abs() < 1e-6 * mr.packets_per_second);
    assert!((mr.gbps - mr.packets_per_second * 64.0 * 8.0 / 1e9).abs() < 1e-9);
}

#[test]
fn bus_bound_workload_saturates_at_the_bus_occupancy() {
    // 3 reads of packet data per packet through one shared bus of occupancy 10 cycles: the
    // bus allows one packet per 30 cycles; 4 PEs x 8 contexts compute 20 instructions per
    // packet (5 cycles per packet in aggregate), the 8-channel device needs 3 cycles.
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
    let acc3 = vec![
        acc(PacketData, Read, 5, 0, 0),
        acc(PacketData, Read, 10, 0, 64),
        acc(PacketData, Read, 15, 0, 128),
    ];
    let traces = vec![trace(&[(0, 20, acc3)], 100)];
    let m = one_task(4);
    let run = |ia: f64| {
        let mut src = VecSource::new(traces.clone(), 4000);
        simulate(&a, 4, &m, vec!["t".into()], &cfg(ia, 4000), &mut src)
    };
    let mr = max_rate(
        run,
        &MaxRateConfig {
            tolerance: 0.005,
            precision: 0.002,
            ..Default::default()
        },
    )
    .unwrap();
    let hi = mr.inter_arrival_cycles;
    assert!(
        (hi - 30.0).abs() <= 0.02 * 30.0,
        "saturates at {hi} cycles per packet"
    );
    let bus = mr.report.buses.iter().find(|b| b.name == "xbus").unwrap();
    assert!(
        bus.utilization > 0.95,
        "bus utilization {}",
        bus.utilization
    );
    // Past saturation the departures are one per 30 cycles.
    let r = run(25.0).unwrap();
    assert!(!r.keeps_up(0.005, false));
    assert!((r.mean_inter_departure_cycles - 30.0).abs() < 0.02 * 30.0);
}

#[test]
fn littles_law_holds_on_task_bus_and_channel_queues() {
    let h = Hw {
        pes: 2,
        contexts: 4,
        pending: 1,
        queue: 4,
        ..Default::default()
    };
    let a = arch(
        &h,
        storage(3, 20, 5, 2, "xbus", false),
        shared_bus(4, 10),
        "half",
    );
    let t1 = trace(
        &[
            (
                0,
                30,
                vec![
                    acc(PacketData, Read, 3, 0, 0),
                    acc(PacketMeta, Write, 9, 0, 0),
                ],
            ),
            (
                1,
                50,
                vec![
                    acc(DynamicState, Read, 10, 1 << 8, 7),
                    acc(DynamicState, Write, 40, 1 << 8, 7),
                ],
            ),
        ],
        80,
    );
    let t2 = trace(
        &[
            (0, 10, vec![acc(PacketData, Read, 1, 0, 64)]),
            (1, 5, vec![]),
        ],
        60,
    );
    let m = Mapping {
        tasks: vec![
            TaskMap::new(vec![0], u32::MAX),
            TaskMap::new(vec![0, 1], u32::MAX),
        ],
    };
    let mut src = VecSource::new(vec![t1, t2], 1500);
    let r = simulate(
        &a,
        2,
        &m,
        vec!["a".into(), "b".into()],
        // Locks held until the accesses complete: more contention, so more queues are
        // non-empty and the check covers them.
        &SimConfig {
            lock_release: LockRelease::AfterCompletion,
            ..cfg(30.0, 3000)
        },
        &mut src,
    )
    .unwrap();
    assert!(
        r.invariant_violations.is_empty(),
        "{:?}",
        r.invariant_violations
    );
    let t = r.cycles as f64;
    let mut checked = 0;
    let mut nonzero = 0;
    let mut check = |name: &str, l: f64, n: u64, w: f64| {
        // L = lambda W, lambda = n / T.
        let lw = n as f64 / t * w;
        assert!(
            (l - lw).abs() <= 1e-9 * l.max(1.0),
            "{name}: L {l} vs lambda W {lw}"
        );
        checked += 1;
        if l > 0.0 {
            nonzero += 1;
        }
    };
    for q in &r.tasks {
        check(
            &q.element,
            q.mean_queue_length,
            q.instances,
            q.mean_queue_cycles,
        );
    }
    for b in r
        .buses
        .iter()
        .chain(r.channels.iter())
        .chain(r.storage.iter())
    {
        check(
            &b.name,
            b.mean_queue_length,
            b.requests,
            b.mean_queue_delay_cycles,
        );
    }
    assert!(checked >= 8 && nonzero >= 3, "{checked} {nonzero}");
    // PE time splits into the four states.
    for p in &r.pes {
        let s = p.busy + p.memory_wait + p.lock_wait + p.idle;
        assert!((s - 1.0).abs() < 1e-9, "{s}");
    }
}

#[test]
fn a_critical_section_bounds_a_replicated_task_and_s_removes_the_bound() {
    // Every packet holds the lock of task 0 for its 200 cycles between two accesses to a
    // private (1-cycle) store: replicas on 4 PEs x 4 contexts cannot beat one packet per ~200.
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
    let m = one_task(4);
    let go = |ideal: Ideal| {
        let a = a.clone();
        let t = t.clone();
        let m = m.clone();
        max_rate(
            move |ia| {
                let mut src = VecSource::new(vec![t.clone()], 3000);
                let c = SimConfig {
                    ideal,
                    ..cfg(ia, 3000)
                };
                simulate(&a, 4, &m, vec!["t".into()], &c, &mut src)
            },
            &MaxRateConfig {
                tolerance: 0.005,
                precision: 0.005,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let locked = go(Ideal::default());
    let x = locked.inter_arrival_cycles;
    assert!(x > 195.0 && x < 210.0, "{x}");
    let lock_wait: f64 = locked.report.pes.iter().map(|p| p.lock_wait).sum();
    assert!(lock_wait > 0.0);
    assert!(locked.report.tasks[0].lock_held > 0.9);
    let free = go(Ideal {
        no_sync: true,
        ..Default::default()
    });
    // 16 contexts, 210 cycles of work on 4 PEs: ~52.5 cycles per packet.
    assert!(
        free.inter_arrival_cycles < 60.0,
        "{}",
        free.inter_arrival_cycles
    );
}

#[test]
fn locks_are_per_location_so_sections_on_different_keys_run_together() {
    // Packets lock key (packet mod 4) of one object for 200 cycles. Per location (section
    // 2.4) four sections run at once on 4 PEs x 4 contexts; one lock per task serializes them.
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
    let traces: Vec<_> = (0..4u64)
        .map(|k| {
            trace(
                &[(
                    0,
                    210,
                    vec![
                        acc(DynamicState, Read, 5, 1, k),
                        acc(DynamicState, Write, 205, 1, k),
                    ],
                )],
                64,
            )
        })
        .collect();
    let m = one_task(4);
    let go = |g: LockGranularity| {
        max_rate(
            |ia| {
                let mut src = VecSource::new(traces.clone(), 750);
                let c = SimConfig {
                    lock_granularity: g,
                    ..cfg(ia, 3000)
                };
                simulate(&a, 4, &m, vec!["t".into()], &c, &mut src)
            },
            &MaxRateConfig {
                tolerance: 0.005,
                precision: 0.005,
                ..Default::default()
            },
        )
        .unwrap()
    };
    let task = go(LockGranularity::Task);
    assert!(
        task.inter_arrival_cycles > 195.0,
        "{}",
        task.inter_arrival_cycles
    );
    assert_eq!(task.report.lock_count, 1);
    let loc = go(LockGranularity::Location);
    // Four independent locks, each held ~200 cycles per packet of its key: ~50 cycles.
    assert!(
        loc.inter_arrival_cycles < 60.0,
        "{}",
        loc.inter_arrival_cycles
    );
    assert_eq!(loc.report.lock_count, 4);
    assert!(loc.report.invariant_violations.is_empty());
}

/// Regression: packets the NP drops at a full task queue used to count as departures, so an
/// overloaded NP "kept up" by shedding load (the router's 4-PE no-replication rate came out
/// 5x too high). Dropping is not departing.
#[test]
fn dropping_at_a_full_task_queue_is_not_keeping_up() {
    let s = 100u32;
    let a = arch(
        &Hw::default(),
        storage(1, 1, 1, 1, "xbus", false),
        shared_bus(1, 1),
        "ext",
    );
    let traces = vec![trace(&[(0, s, vec![])], 64)];
    let m = one_task(1);
    let config = SimConfig {
        task_queue_capacity: 4,
        ..cfg(50.0, 2000)
    };
    let mut src = VecSource::new(traces.clone(), 2000);
    let r = simulate(&a, 1, &m, vec!["t".into()], &config, &mut src).unwrap();
    assert!(r.window.sim_drops > 0, "{:?}", r.window);
    assert!(!r.keeps_up(0.02, false), "{:?}", r.window);
    // The bisection therefore still finds the service time, not the arrival rate.
    let run = |ia: f64| {
        let mut src = VecSource::new(traces.clone(), 2000);
        simulate(
            &a,
            1,
            &m,
            vec!["t".into()],
            &SimConfig {
                task_queue_capacity: 4,
                ..cfg(ia, 2000)
            },
            &mut src,
        )
    };
    let mr = max_rate(run, &MaxRateConfig::default()).unwrap();
    let hi = mr.bracket.inter_arrival_cycles[1];
    assert!(hi >= 0.98 * s as f64 && hi <= 1.02 * s as f64, "{hi}");
}

/// Seed 000 section 3.1's scheduling: "an instance of a task ... is queued before each PE. A
/// task is executed when it reaches the head of the queue and a hardware context is free."
/// Three packets arrive one cycle apart: two for unreplicated task A (100 cycles), then one for
/// task B (10 cycles), on one PE with two contexts. FIFO: the second A heads the queue while
/// the first runs, so B waits behind it until cycle 100 (head-of-line blocking).
/// First-eligible: B starts at once on the free context.
#[test]
fn fifo_scheduling_blocks_behind_an_unreplicated_head() {
    let hw = Hw {
        pes: 1,
        contexts: 2,
        ..Hw::default()
    };
    let a = arch(
        &hw,
        storage(1, 1, 1, 1, "xbus", false),
        shared_bus(1, 1),
        "ext",
    );
    let traces = vec![
        trace(&[(0, 100, vec![])], 64),
        trace(&[(0, 100, vec![])], 64),
        trace(&[(1, 10, vec![])], 64),
    ];
    let m = Mapping {
        tasks: vec![TaskMap::new(vec![0], 1), TaskMap::new(vec![0], 1)],
    };
    let run = |scheduling: Scheduling| {
        let config = SimConfig {
            inter_arrival_cycles: 1.0,
            packets: 3,
            warmup_packets: 0,
            scheduling,
            ..Default::default()
        };
        let mut src = VecSource::new(traces.clone(), 1);
        simulate(&a, 1, &m, vec!["A".into(), "B".into()], &config, &mut src).unwrap()
    };
    let fifo = run(Scheduling::Fifo);
    let fe = run(Scheduling::FirstEligible);
    // B arrives at cycle 2: FIFO starts it at 100 (waits 98), first-eligible at once.
    assert_eq!(fifo.tasks[1].mean_queue_cycles, 98.0, "{:?}", fifo.tasks[1]);
    assert_eq!(fe.tasks[1].mean_queue_cycles, 0.0, "{:?}", fe.tasks[1]);
    // The second A waits for the first either way.
    assert_eq!(fifo.tasks[0].mean_queue_cycles, 49.5);
    assert_eq!(fe.tasks[0].mean_queue_cycles, 49.5);
}

/// Without the locality transformation every word of an access is a request (seed 000
/// section 2.8): one 16-byte read through a bus of occupancy 10 costs 4 bus slots, so the
/// bus-bound rate is one packet per 40 cycles; with wide accesses, one per 10.
#[test]
fn word_sized_requests_unless_accesses_are_wide() {
    let h = Hw {
        pes: 4,
        ..Hw::default()
    };
    let a = arch(
        &h,
        storage(8, 1, 1, 1, "xbus", false),
        shared_bus(10, 1),
        "ext",
    );
    let mut x = acc(PacketData, Read, 0, 0, 0);
    x.bytes = 16;
    let traces = vec![trace(&[(0, 1, vec![x])], 64)];
    let m = one_task(4);
    let rate = |wide: bool| {
        let run = |ia: f64| {
            let config = SimConfig {
                wide_accesses: wide,
                ..cfg(ia, 3000)
            };
            let mut src = VecSource::new(traces.clone(), 3000);
            simulate(&a, 4, &m, vec!["t".into()], &config, &mut src)
        };
        max_rate(run, &MaxRateConfig::default())
            .unwrap()
            .inter_arrival_cycles
    };
    let (narrow, wide) = (rate(false), rate(true));
    assert!((narrow - 40.0).abs() < 0.03 * 40.0, "{narrow}");
    assert!((wide - 10.0).abs() < 0.03 * 10.0, "{wide}");
}

/// Recorded arrivals: packets reach the NP at their trace timestamps (1 GHz PEs: 1 cycle per ns),
/// scaled by `time_scale`. Three packets at 0, 1,000 and 3,000 ns, one 100-cycle task on one
/// context: as recorded nobody waits (latency 100); replayed 100 times faster (0, 10, 30
/// cycles) they queue: latencies 100, 190 and 270.
#[test]
fn recorded_arrivals_follow_the_timestamps() {
    let hw = Hw {
        pes: 1,
        contexts: 1,
        ..Hw::default()
    };
    let a = arch(
        &hw,
        storage(1, 1, 1, 1, "xbus", false),
        shared_bus(1, 1),
        "ext",
    );
    let traces: Vec<_> = [0u64, 1000, 3000]
        .iter()
        .map(|&ts| {
            let mut t = trace(&[(0, 100, vec![])], 64);
            t.timestamp_ns = 1_000_000 + ts;
            t
        })
        .collect();
    let m = one_task(1);
    let run = |scale: f64| {
        let config = SimConfig {
            arrivals: Arrivals::Recorded,
            time_scale: scale,
            warmup_packets: 0,
            ..Default::default()
        };
        let mut src = VecSource::new(traces.clone(), 1);
        simulate(&a, 1, &m, vec!["t".into()], &config, &mut src).unwrap()
    };
    let r = run(1.0);
    assert_eq!(r.injected, 3);
    assert_eq!(r.latency.max_cycles, 100);
    assert_eq!(r.window.end_cycle, 3000);
    // Offered rate: 3 arrivals in 3,000 cycles at 1 GHz.
    assert!(
        (r.offered_packets_per_second - 1e6).abs() < 1e-3,
        "{}",
        r.offered_packets_per_second
    );
    let r = run(0.01);
    assert_eq!(r.latency.max_cycles, 270);
    assert!(
        (r.latency.mean_cycles - 560.0 / 3.0).abs() < 1e-9,
        "{}",
        r.latency.mean_cycles
    );
    assert!(SimConfig {
        time_scale: 0.0,
        ..Default::default()
    }
    .validate()
    .is_err());
}
