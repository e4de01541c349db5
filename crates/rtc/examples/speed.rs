//! Engine speed in simulated instructions per second, and the wall time of one maximum-rate
//! search. Run with `cargo run --release -p pktflow-rtc --example speed -- [APP] [WINDOW_SECONDS]`.
use pktflow_rtc::api::{rtc, Criterion, RtcRequest, SearchSpec, WorkloadSpec};
use pktflow_rtc::engine::{Drive, Engine, Scheduler};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let app = args.get(1).cloned().unwrap_or_else(|| "nat".into());
    let window: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    let spec = WorkloadSpec {
        app: app.clone(),
        packets: 2000,
        ..Default::default()
    };
    let loaded = spec.load(0).expect("workload");
    let req = RtcRequest {
        workload: spec.clone(),
        ..Default::default()
    };
    for (cores, sched) in [
        (1, Scheduler::RoundRobin),
        (1, Scheduler::LockAware),
        (2, Scheduler::RoundRobin),
    ] {
        let mut o = pktflow_rtc::api::resolve(&req).unwrap();
        o.cores = cores;
        o.scheduler = sched;
        let mut e = Engine::new(&o, &loaded.workload, None).unwrap();
        let t = Instant::now();
        let r = e
            .run(Drive {
                interarrival_cycles: None,
                cycles: 50_000_000,
                stop_on_drop: false,
                max_arrivals: None,
            })
            .unwrap();
        let s = t.elapsed().as_secs_f64();
        println!(
            "{app} {cores} core(s) {sched:?}: {} instructions, {} cycles in {s:.2} s: {:.1} M instructions/s, {:.1} M core-cycles/s",
            r.instructions,
            r.cycles,
            r.instructions as f64 / s / 1e6,
            r.cycles as f64 * cores as f64 / s / 1e6
        );
    }
    let t = Instant::now();
    let res = rtc(
        &RtcRequest {
            workload: spec,
            search: SearchSpec {
                criterion: Criterion::ZeroDrop,
                window_seconds: window,
                ..Default::default()
            },
            ..Default::default()
        },
        &mut |_, _| {},
    )
    .unwrap();
    println!(
        "max-rate search, zero-drop over {window} s: {:.0} pps in {} probes, {:.1} s wall",
        res.packets_per_second,
        res.probes.len(),
        t.elapsed().as_secs_f64()
    );
}
