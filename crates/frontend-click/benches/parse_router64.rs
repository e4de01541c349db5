//! Parse + flatten of the generated 64-interface IP router (`apps/router64.click`).
//!
//! `cargo bench -p pktflow-click --bench parse_router64` prints criterion's estimate and a
//! plain `parse_router64: X.XXX ms` line (mean of a fixed number of runs) for scripts.
use criterion::{black_box, Criterion};
use std::time::Instant;

fn main() {
    let text = pktflow_click::gen::ip_router(64);
    let out = pktflow_click::parse_str(&text, "router64.click").expect("router64 parses");
    assert_eq!(out.graph.elements.len(), 19 * 64 + 6);

    let mut c = Criterion::default().configure_from_args();
    c.bench_function("parse_router64", |b| {
        b.iter(|| pktflow_click::parse_str(black_box(&text), "router64.click").unwrap())
    });
    c.final_summary();

    let runs = 200;
    let t = Instant::now();
    for _ in 0..runs {
        black_box(pktflow_click::parse_str(black_box(&text), "router64.click").unwrap());
    }
    let ms = t.elapsed().as_secs_f64() * 1e3 / runs as f64;
    println!(
        "parse_router64: {:.3} ms per parse+flatten ({} bytes, {} elements, {} connections; mean of {} runs)",
        ms,
        text.len(),
        out.graph.elements.len(),
        out.graph.connections.len(),
        runs
    );
}
