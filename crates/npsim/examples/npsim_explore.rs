//! A design-space sweep from Rust (the `pktflow explore` command without Python):
//! `cargo run --release -p pktflow-npsim --example npsim_explore -- [APP] [MAPPER] [PES,..] [PACKETS]`
use pktflow_npsim::app::AppSpec;
use pktflow_npsim::explore::{explore, rep_name, ExploreConfig};
use pktflow_npsim::{MaxRateConfig, SimConfig};

fn main() -> Result<(), String> {
    let a: Vec<String> = std::env::args().collect();
    let app = a.get(1).cloned().unwrap_or_else(|| "router".into());
    let mapper = a
        .get(2)
        .cloned()
        .unwrap_or_else(|| "greedy+replicate".into());
    let pes: Vec<u32> = a
        .get(3)
        .map(|s| s.split(',').map(|x| x.parse().unwrap()).collect())
        .unwrap_or_else(|| vec![4, 8, 16, 32]);
    let packets: u64 = a.get(4).map(|s| s.parse().unwrap()).unwrap_or(2000);
    let spec = AppSpec {
        app,
        mapper,
        packets,
        ..Default::default()
    };
    let cfg = SimConfig {
        packets,
        warmup_packets: packets / 5,
        ..Default::default()
    };
    let e = ExploreConfig {
        pes,
        bottleneck: std::env::var("NPSIM_NO_BOTTLENECK").is_err(),
        replications: match std::env::var("NPSIM_SCOPES") {
            Ok(v) => v
                .split(',')
                .map(pktflow_npsim::Replication::parse)
                .collect::<Result<_, _>>()?,
            Err(_) => ExploreConfig::default().replications,
        },
        ..Default::default()
    };
    let x = explore(&spec, &cfg, &MaxRateConfig::default(), &e, |d, t, l| {
        eprintln!("[{d}/{t}] {l}")
    })?;
    for p in &x.points {
        println!(
            "{:>3} PEs {:>7}: {:>10.0} packets/s {:>6.3} Gb/s speedup {:>5.2}x busy {:.2} replicated {:>2} searches {:>2} {:.1} s | {}",
            p.pes,
            rep_name(p.replication),
            p.packets_per_second,
            p.gbps,
            p.speedup.unwrap_or(f64::NAN),
            p.mean_pe_busy,
            p.replicated.len(),
            p.searches,
            p.wall_seconds,
            p.bottleneck.as_ref().map(|b| b.summary.as_str()).unwrap_or("")
        );
        println!("      limit: {}", p.limit.sentence);
        println!(
            "      replicated: {} ({})",
            p.replicated.join(" "),
            p.replication_stopped
        );
    }
    println!("wall {:.1} s", x.wall_seconds);
    Ok(())
}
