//! `pktflow run` on one thread (the API, as the command runs it) over a pcap file, a few times:
//! packets/s of each run. For profiling the one-thread path (`perf record`, or callgrind with
//! `--toggle-collect='*run_source*'`) on inputs kept by the benchmark (`PKTFLOW_BENCH_KEEP=1`).
//!
//! Run: `cargo run --release -p pktflow-runtime --example run_trace -- APP TRACE.pcap [RUNS]`
use pktflow_runtime::api::{run, Request};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(app), Some(trace)) = (args.next(), args.next()) else {
        eprintln!("usage: run_trace APP TRACE.pcap [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let req = Request::from_json(&serde_json::json!({"app": app, "trace": trace}).to_string())
        .unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2);
        });
    for k in 0..runs {
        let r = run(&req, &mut |_| {}).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1);
        });
        println!(
            "run {k}: {:.0} packets/s, balance {}",
            r["timing"]["packets_per_second"].as_f64().unwrap_or(0.0),
            r["balance"]
        );
    }
}
