//! `pktflow run` (the API, as the command runs it) over a pcap file, a few times: packets/s of
//! each run. For profiling (`perf record`, or callgrind with `--toggle-collect='*run_source*'`
//! on one thread, `--separate-threads=yes` on several) on inputs kept by the benchmark
//! (`PKTFLOW_BENCH_KEEP=1`). `PKTFLOW_RUN` adds keys to the request (a JSON object, e.g.
//! `{"threads": 2}`).
//!
//! Run: `cargo run --release -p pktflow-runtime --example run_trace -- APP TRACE.pcap [RUNS]`
//! (TRACE `-` for a configuration that reads its own packets)
use pktflow_runtime::api::{run, Request};

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(app), Some(trace)) = (args.next(), args.next()) else {
        eprintln!("usage: run_trace APP TRACE.pcap [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    // `-`: the configuration reads its own packets (FromDump).
    let mut v = if trace == "-" {
        serde_json::json!({ "app": app })
    } else {
        serde_json::json!({"app": app, "trace": trace})
    };
    if let Ok(extra) = std::env::var("PKTFLOW_RUN") {
        let extra: serde_json::Value = serde_json::from_str(&extra).unwrap_or_else(|e| {
            eprintln!("PKTFLOW_RUN: {e}");
            std::process::exit(2);
        });
        for (k, x) in extra.as_object().into_iter().flatten() {
            v[k] = x.clone();
        }
    }
    let req = Request::from_json(&v.to_string()).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2);
    });
    for k in 0..runs {
        let r = run(&req, &mut |_| {}).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(1);
        });
        println!(
            "run {k}: {:.0} packets/s, balance {}, per thread {}",
            r["timing"]["packets_per_second"].as_f64().unwrap_or(0.0),
            r["balance"],
            r["packets"]["per_thread_from_source"]
        );
    }
}
