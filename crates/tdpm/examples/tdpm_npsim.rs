//! Seed 001 Figure 5 and Table 2 by the cost model and by the timing simulator (crates/npsim):
//! every configuration (Base, RES, COMM, TDPM-S, TDPM-all) of l3switch, mpls and firewall on
//! 1 to 6 MEs of the ixp2400 preset, 3 Gb/s of 64-byte packets offered. Each plan is handed to
//! the simulator by `pktflow_tdpm::simulate` (ME tasks on their MEs, XScale tasks on the control
//! core, a DRAM hand-off where a packet changes task; docs/reproductions.md) and its maximum sustainable
//! rate found by bisection. Error = (model − simulation) / simulation.
//!
//! Run: `cargo run --release -p pktflow-tdpm --example tdpm_npsim -- [SIM_PACKETS] [MODEL_PACKETS] [APPS] [MAPPERS] [lock-free-tx]`
//! (defaults 5000, 5000: the same traffic for the profile and the simulations, which matters on
//! heavy-tailed flows; l3switch,mpls,firewall; base,res,comm,tdpm-s,tdpm; `lock-free-tx`: the
//! transmitter's queues take no lock, a sensitivity run). Prints one tab-separated row per
//! point, then the error summary per app and configuration. `TDPM_SIM_LOCKS=object` simulates
//! one lock per state object (the cost model's) instead of one per location.
use pktflow_tdpm::simulate::{figure5, PointOptions, SimOptions};

fn label(m: &str) -> &str {
    match m {
        "base" => "Base",
        "res" => "RES",
        "comm" => "COMM",
        "tdpm-s" => "TDPM-S",
        "tdpm" => "TDPM-all",
        x => x,
    }
}

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let sim_packets: u64 = a.get(1).and_then(|s| s.parse().ok()).unwrap_or(5000);
    let model_packets: u64 = a.get(2).and_then(|s| s.parse().ok()).unwrap_or(5000);
    let apps: Vec<String> = a
        .get(3)
        .map(|s| s.split(',').map(String::from).collect())
        .unwrap_or_else(|| vec!["l3switch".into(), "mpls".into(), "firewall".into()]);
    let mappers: Vec<String> = a
        .get(4)
        .map(|s| s.split(',').map(String::from).collect())
        .unwrap_or_else(|| {
            ["base", "res", "comm", "tdpm-s", "tdpm"]
                .map(String::from)
                .to_vec()
        });
    let o = PointOptions {
        packets: model_packets,
        offered_gbps: Some(3.0),
        packet_bytes: Some(64.0),
        sim: SimOptions {
            packets: sim_packets,
            lock_free_tx: a.get(5).is_some_and(|s| s == "lock-free-tx"),
            lock_granularity: pktflow_npsim::prog::LockGranularity::parse(
                &std::env::var("TDPM_SIM_LOCKS").unwrap_or_else(|_| "location".into()),
            )
            .unwrap_or_else(|e| panic!("{e}")),
            ..SimOptions::default()
        },
        ..PointOptions::default()
    };
    let t0 = std::time::Instant::now();
    println!(
        "app\tconfig\tMEs\tmodel_Mpps\tsim_Mpps\terror_pct\tmodel_fwd_gbps\tsim_fwd_gbps\tfwd_error_pct\tme_tasks\txscale_tasks\thandoffs_sim\thandoffs_model\tsim_limits\tmodel_binding"
    );
    let apps_ref: Vec<&str> = apps.iter().map(String::as_str).collect();
    let mappers_ref: Vec<&str> = mappers.iter().map(String::as_str).collect();
    let points = figure5(&apps_ref, &mappers_ref, 1..=6, &o, |_, _, p| {
        let limits: Vec<String> = p
            .sim_limits
            .iter()
            .map(|(n, u)| format!("{n} {:.0}%", 100.0 * u))
            .collect();
        println!(
            "{}\t{}\t{}\t{:.3}\t{:.3}\t{:+.1}\t{:.3}\t{:.3}\t{:+.1}\t{}\t{}\t{:.2}\t{:.2}\t{}\t{}",
            p.app,
            label(&p.mapper),
            p.mes,
            p.model_packets_per_second / 1e6,
            p.sim_packets_per_second / 1e6,
            p.error_pct,
            p.model_forwarding_gbps,
            p.sim_forwarding_gbps,
            p.forwarding_error_pct,
            p.me_tasks,
            p.xscale_tasks,
            p.handoff_requests_per_packet,
            p.model_handoff_requests_per_packet,
            limits.join(", "),
            p.model_binding,
        );
    })
    .unwrap_or_else(|e| panic!("{e}"));
    println!("\nerror summary (|model - sim| / sim, uncapped packets/s; forwarding rate capped at 3 Gb/s):");
    println!("app\tconfig\tmean_abs_error_pct\tmax_abs_error_pct\tmean_abs_fwd_error_pct");
    for app in &apps {
        for m in mappers_ref.iter().copied().chain(["all"]) {
            let sel: Vec<_> = points
                .iter()
                .filter(|p| &p.app == app && (m == "all" || p.mapper == m))
                .collect();
            if sel.is_empty() {
                continue;
            }
            let n = sel.len() as f64;
            let mean = sel.iter().map(|p| p.error_pct.abs()).sum::<f64>() / n;
            let max = sel.iter().map(|p| p.error_pct.abs()).fold(0.0, f64::max);
            let fwd = sel
                .iter()
                .map(|p| p.forwarding_error_pct.abs())
                .sum::<f64>()
                / n;
            println!("{app}\t{}\t{mean:.1}\t{max:.1}\t{fwd:.1}", label(m));
        }
    }
    eprintln!(
        "{} points in {:.1} s",
        points.len(),
        t0.elapsed().as_secs_f64()
    );
}
