//! Simulator speed and one maximum-rate search on a built-in application:
//! `cargo run --release -p pktflow-npsim --example npsim_bench -- [APP] [PES] [REPLICATION] [PACKETS] [LOCKS]`
//! (LOCKS: location, object or task). Model options from the environment: NPSIM_SCHEDULING
//! (fifo, first-eligible), NPSIM_LOCK_RELEASE (after-completion, after-issue), NPSIM_WIDE=1,
//! NPSIM_DESTINATIONS=per-port.
use pktflow_npsim::app::{AppSpec, Prepared};
use pktflow_npsim::{MaxRateConfig, Replication, SimConfig};
use std::time::Instant;

fn main() -> Result<(), String> {
    let a: Vec<String> = std::env::args().collect();
    let app = a.get(1).cloned().unwrap_or_else(|| "router".into());
    let pes: u32 = a.get(2).map(|s| s.parse().unwrap()).unwrap_or(16);
    let rep = Replication::parse(a.get(3).map(String::as_str).unwrap_or("global"))?;
    let packets: u64 = a.get(4).map(|s| s.parse().unwrap()).unwrap_or(20_000);
    let locks = pktflow_npsim::prog::LockGranularity::parse(
        a.get(5).map(String::as_str).unwrap_or("location"),
    )?;
    let spec = AppSpec {
        app,
        pes: Some(pes),
        replication: rep,
        packets,
        destinations: match std::env::var("NPSIM_DESTINATIONS").as_deref() {
            Ok("per-port") => Some(pktflow_traffic::PrefixWeighting::PerPort),
            _ => None,
        },
        ..Default::default()
    };
    let p = Prepared::new(&spec)?;
    let cfg = SimConfig {
        packets,
        warmup_packets: packets / 5,
        lock_granularity: locks,
        scheduling: pktflow_npsim::Scheduling::parse(
            &std::env::var("NPSIM_SCHEDULING").unwrap_or_else(|_| "fifo".into()),
        )?,
        lock_release: pktflow_npsim::LockRelease::parse(
            &std::env::var("NPSIM_LOCK_RELEASE").unwrap_or_else(|_| "after-issue".into()),
        )?,
        wide_accesses: std::env::var("NPSIM_WIDE").is_ok_and(|v| v == "1"),
        ..Default::default()
    };
    let t0 = Instant::now();
    let mr = p.max_rate(&cfg, &MaxRateConfig::default())?;
    let search = t0.elapsed().as_secs_f64();
    println!(
        "{} on {} PEs ({:?}): {:.0} packets/s = {:.3} Gb/s, bracket {:?} cycles, {} simulations, search {:.2} s",
        spec.app,
        pes,
        rep,
        mr.packets_per_second,
        mr.gbps,
        mr.bracket.inter_arrival_cycles,
        mr.probes.len(),
        search
    );
    // Near saturation: the sustainable end of the bracket.
    let c = SimConfig {
        inter_arrival_cycles: mr.inter_arrival_cycles,
        ..cfg.clone()
    };
    let t1 = Instant::now();
    let c1 = thread_cpu_seconds();
    let r = p.simulate(&c)?;
    let wall = t1.elapsed().as_secs_f64();
    let cpu = thread_cpu_seconds() - c1;
    // Functional run alone, to separate it from the timing model.
    let t2 = Instant::now();
    let mut run = pktflow_profile::run::Run::start(
        &spec.app,
        &pktflow_profile::run::Source::Synthetic {
            packets,
            seed: spec.traffic_seed,
        },
        &std::env::temp_dir(),
    )?;
    let c2 = thread_cpu_seconds();
    while run.next_trace()?.is_some() {}
    let func = t2.elapsed().as_secs_f64();
    let func_cpu = thread_cpu_seconds() - c2;
    let sim = (wall - func).max(1e-9);
    let sim_cpu = (cpu - func_cpu).max(1e-9);
    println!(
        "one run at {:.1} cycles/packet: {} events, {:.3} s wall ({:.3} s functional run), timing model {:.2} M events/s, {:.0} simulated packets/s (with the functional run)",
        mr.inter_arrival_cycles,
        r.events,
        wall,
        func,
        r.events as f64 / sim / 1e6,
        r.injected as f64 / wall
    );
    println!(
        "the same run in CPU time of its thread: {:.3} s ({:.3} s functional run), timing model {:.2} M events per CPU-second, {:.0} simulated packets per CPU-second",
        cpu,
        func_cpu,
        r.events as f64 / sim_cpu / 1e6,
        r.injected as f64 / cpu.max(1e-9)
    );
    let busy: f64 = r.pes.iter().map(|x| x.busy).sum::<f64>() / r.pes.len() as f64;
    let memw: f64 = r.pes.iter().map(|x| x.memory_wait).sum::<f64>() / r.pes.len() as f64;
    let lockw: f64 = r.pes.iter().map(|x| x.lock_wait).sum::<f64>() / r.pes.len() as f64;
    println!(
        "PE mean: busy {busy:.3} memory wait {memw:.3} lock wait {lockw:.3}; latency mean {:.0} p99 {} cycles",
        r.latency.mean_cycles, r.latency.p99_cycles
    );
    for b in &r.buses {
        if b.requests > 0 {
            println!(
                "  bus {:<24} util {:.3} queue delay {:.1}",
                b.name, b.utilization, b.mean_queue_delay_cycles
            );
        }
    }
    for s in &r.storage {
        if s.requests > 0 {
            println!(
                "  storage {:<20} util {:.3} queue delay {:.1} requests {}",
                s.name, s.utilization, s.mean_queue_delay_cycles, s.requests
            );
        }
    }
    let mut tasks = r.tasks.clone();
    tasks.sort_by(|a, b| b.mean_queue_cycles.total_cmp(&a.mean_queue_cycles));
    for t in tasks.iter().take(5) {
        println!(
            "  task {:<22} queue {:.1} cycles, lock held {:.3}",
            t.element, t.mean_queue_cycles, t.lock_held
        );
    }
    println!("{} locks; busiest:", r.lock_count);
    for l in r.locks.iter().take(3) {
        println!(
            "  lock {} of {:<20} ({} locations) held {:.3} of the time, {} acquisitions",
            l.lock, l.element, l.locations, l.held, l.acquisitions
        );
    }
    if !r.invariant_violations.is_empty() {
        println!("INVARIANT VIOLATIONS: {:?}", r.invariant_violations);
    }
    Ok(())
}

/// CPU time consumed by the calling thread, seconds (steadier than wall time when other
/// processes share the cores).
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec through the valid pointer we pass.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0.0;
    }
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}
