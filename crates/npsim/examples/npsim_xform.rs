//! Run one JSON request through the API (used to check the transformations by hand):
//! `cargo run --release -p pktflow-npsim --example npsim_xform -- maxrate|simulate '{"spec": ...}'`
//! prints the rate, the latency and the `transform` record of the report.
fn main() -> Result<(), String> {
    let a: Vec<String> = std::env::args().collect();
    let cmd = a.get(1).map(String::as_str).unwrap_or("maxrate");
    let req = a.get(2).cloned().unwrap_or_else(|| "{}".into());
    let out = match cmd {
        "simulate" => pktflow_npsim::api::simulate_json(&req)?,
        _ => pktflow_npsim::api::maxrate_json(&req)?,
    };
    let v: serde_json::Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    let rep = if cmd == "simulate" { &v } else { &v["report"] };
    println!(
        "pps {} latency_mean {} violations {}",
        v["packets_per_second"]
            .as_f64()
            .or(rep["throughput_packets_per_second"].as_f64())
            .unwrap_or(0.0),
        rep["latency"]["mean_cycles"],
        rep["invariant_violations"]
    );
    println!("transform {}", rep["transform"]);
    if !v["mapping"]["split"].is_null() {
        println!("split {}", v["mapping"]["split"]);
    }
    Ok(())
}
