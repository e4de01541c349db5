//! Figures of the foundation (docs/benchmarks.md):
//! - functional run of the built-in IP router on N generated packets, one thread, packets/s
//!   (N = 1,000,000 by default; `PKTFLOW_BENCH_PACKETS` overrides);
//! - parse + flatten + validate the 64-interface router configuration, milliseconds.
//!
//! Run: `cargo bench -p pktflow-profile --bench functional`
use pktflow_profile::app::load_app;
use pktflow_profile::run::{Run, Source};
use std::path::Path;
use std::time::Instant;

fn main() {
    let n: u64 = std::env::var("PKTFLOW_BENCH_PACKETS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    for app in ["router", "nat"] {
        let source = Source::Synthetic {
            packets: n,
            seed: 1,
        };
        // Generation alone, to separate its cost from the run's.
        let a = load_app(app).expect("built-in app");
        let hints =
            pktflow_profile::hints::TrafficHints::from_graph(&a.graph, &a.base_dir).expect("hints");
        let t0 = Instant::now();
        let mut bytes = 0u64;
        for tp in hints.generator(n, 1).expect("generator") {
            bytes += tp.data.len() as u64;
        }
        let gen_s = t0.elapsed().as_secs_f64();
        let mut run = Run::start(app, &source, Path::new("/tmp")).expect("run");
        let t0 = Instant::now();
        let mut packets = 0u64;
        let mut visits = 0u64;
        while let Some(t) = run.next_trace().expect("trace") {
            packets += 1;
            visits += t.visits.len() as u64;
        }
        let s = t0.elapsed().as_secs_f64();
        println!(
            "functional run {app}: {packets} packets in {s:.3} s = {:.0} packets/s ({:.0} packets/s excluding generation; {:.1} visits/packet, {} bytes generated in {gen_s:.3} s)",
            packets as f64 / s,
            packets as f64 / (s - gen_s).max(1e-9),
            visits as f64 / packets as f64,
            bytes
        );
    }
    let reps = 20;
    let mut best = f64::MAX;
    let mut total = 0.0;
    for _ in 0..reps {
        let t0 = Instant::now();
        let a = load_app("router64").expect("router64");
        let r = a.instantiate(Path::new("/tmp")).expect("valid");
        std::hint::black_box(&r);
        let ms = t0.elapsed().as_secs_f64() * 1e3;
        best = best.min(ms);
        total += ms;
    }
    let a = load_app("router64").unwrap();
    println!(
        "parse+flatten+validate router64 ({} elements, {} connections): best {best:.2} ms, mean {:.2} ms over {reps} runs",
        a.graph.elements.len(),
        a.graph.connections.len(),
        total / reps as f64
    );
}
