//! Engine speed in simulated instructions per second, and the wall time of one maximum-rate
//! search. Run with `cargo run --release -p pktflow-rtc --example speed -- [APP] [WINDOW_SECONDS]
//! [CYCLES] [PACKETS]`: CYCLES (default 50 M) per speed run, PACKETS (default 2,000) in the
//! workload, whose load time is printed; a window of 0 skips the search (for
//! `valgrind --tool=callgrind` on short runs).
use pktflow_rtc::api::{rtc, Criterion, RtcRequest, SearchSpec, WorkloadSpec};
use pktflow_rtc::engine::{Drive, Engine, Scheduler};
use std::time::Instant;

/// CPU seconds of this process (user + system), from /proc on Linux; the machine may be shared,
/// so rates are given per CPU second as well as per wall second.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest = s.rsplit_once(')')?.1.to_string();
            let f: Vec<&str> = rest.split_whitespace().collect();
            let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
            Some(ticks / 100.0)
        })
        .unwrap_or(f64::NAN)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let app = args.get(1).cloned().unwrap_or_else(|| "nat".into());
    let window: f64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    let cycles: u64 = args
        .get(3)
        .and_then(|s| s.parse().ok())
        .unwrap_or(50_000_000);
    let packets: u32 = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(2000);
    let t_load = Instant::now();
    let spec = WorkloadSpec {
        app: app.clone(),
        packets,
        ..Default::default()
    };
    let loaded = spec.load(0).expect("workload");
    println!(
        "{app}: {packets} packets loaded in {:.2} s",
        t_load.elapsed().as_secs_f64()
    );
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
        let cpu0 = cpu_seconds();
        let r = e
            .run(Drive {
                interarrival_cycles: None,
                cycles,
                stop_on_drop: false,
                max_arrivals: None,
            })
            .unwrap();
        let s = t.elapsed().as_secs_f64();
        let cpu = cpu_seconds() - cpu0;
        println!(
            "{app} {cores} core(s) {sched:?}: {} instructions, {} cycles in {s:.2} s wall ({cpu:.2} s CPU): {:.1} M instructions per wall s, {:.1} M per CPU s, {:.1} M core-cycles per CPU s",
            r.instructions,
            r.cycles,
            r.instructions as f64 / s / 1e6,
            r.instructions as f64 / cpu / 1e6,
            r.cycles as f64 * cores as f64 / cpu / 1e6
        );
    }
    if window == 0.0 {
        return;
    }
    let t = Instant::now();
    let cpu0 = cpu_seconds();
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
        "max-rate search, zero-drop over {window} s: {:.0} pps in {} probes ({} passed), {:.1} s wall, {:.1} s CPU",
        res.packets_per_second,
        res.probes.len(),
        res.probes.iter().filter(|p| p.passed).count(),
        t.elapsed().as_secs_f64(),
        cpu_seconds() - cpu0
    );
}
