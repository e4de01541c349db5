//! Simulator speed figures for docs/benchmarks.md (issue 4).
//!
//! `cargo run --release -p pktflow-noc --bin noc-bench -- speed` : simulated cycles per second and
//! flits per second on an 8x8 mesh, 4 VCs, uniform traffic at 0.1 and 0.3 flits/node/cycle;
//! `... -- sweep '{"mesh":"8x8","routing":"adaptive","rates":[0.5]}'` : one `noc_sweep` request,
//! one CSV line per point;
//! `... -- map [MESH]` : time to partition, lay out and route each benchmark (default 6x6).
use pktflow_noc::api::{map_graph, route, StreamReqJson};
use pktflow_noc::bench;
use pktflow_noc::config::default_mesh;
use pktflow_noc::report::contention;
use pktflow_noc::routing::{link_loads_paths, StreamReq};
use pktflow_noc::sim::synthetic::{run_point, Pattern, SynthConfig};
use pktflow_noc::sim::PacketRouting;
use std::time::Instant;

/// CPU time of this process (user + system), seconds, from /proc/self/stat (Linux; 0 elsewhere).
/// Reported beside wall time because the machine is shared.
fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    // fields after the command: state(0) ... utime(11) stime(12), in clock ticks (100 Hz)
    let ticks = |i: usize| f.get(i).and_then(|x| x.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn speed() {
    let mut a = default_mesh();
    a.cols = 8;
    a.rows = 8;
    println!(
        "# simulator speed: 8x8 mesh, {} VCs x {} flits, uniform traffic, 1-flit packets, 10k warm-up + 100k measured cycles",
        a.virtual_channels, a.buffer_depth_flits
    );
    println!("routing,rate,cycles,wall_s,cycles_per_s,flits_per_s,cpu_s,cycles_per_cpu_s,accepted,latency");
    for routing in [PacketRouting::Dor, PacketRouting::Adaptive] {
        for rate in [0.1, 0.3] {
            let cfg = SynthConfig {
                pattern: Pattern::uniform(),
                rate,
                packet_flits: 1,
                warmup_cycles: 10_000,
                measure_cycles: 100_000,
                drain_cycles: 0,
                seed: 1,
                booksim: None,
            };
            let c0 = cpu_seconds();
            let p = run_point(&a, routing, &cfg).expect("run");
            let cpu = cpu_seconds() - c0;
            println!(
                "{:?},{rate},{},{:.3},{:.0},{:.0},{:.2},{:.0},{:.4},{:.2}",
                routing,
                p.cycles_simulated,
                p.wall_seconds,
                p.cycles_simulated as f64 / p.wall_seconds,
                p.flits_ejected as f64 / p.wall_seconds,
                cpu,
                p.cycles_simulated as f64 / cpu.max(1e-9),
                p.accepted,
                p.latency.unwrap_or(f64::NAN)
            );
        }
    }
}

fn map(mesh: &str) {
    println!(
        "# time to partition, lay out (20000 annealing moves) and route each benchmark on {mesh}"
    );
    println!("benchmark,actors,streams,balance,partition_s,layout_s,tentacle_s,tentacle_ok,negotiated_s,negotiated_ok,relayout_s,tentacle_ok_after_relayout,dor_max_link_load,dor_contended_links");
    for name in bench::names() {
        let req: StreamReqJson =
            serde_json::from_value(serde_json::json!({"graph": name, "mesh": mesh})).unwrap();
        let t = Instant::now();
        let m = map_graph(&req).expect("map");
        let _ = t;
        let ro = route(&m, "tentacle", &req, &m.layout.tile_of).expect("route");
        let rn = route(&m, "negotiated", &req, &m.layout.tile_of).expect("route");
        let reqs: Vec<StreamReq> = m.reqs.clone();
        let dor: Vec<Vec<u8>> = reqs.iter().map(|q| m.mesh.dor_path(q.src, q.dst)).collect();
        let (mx, over) = contention(&link_loads_paths(&m.mesh, &reqs, &dor));
        let t = Instant::now();
        let l2 =
            pktflow_noc::layout::anneal_routable(&m.mesh, &m.part, 1001, 20_000).expect("relayout");
        let relayout_s = t.elapsed().as_secs_f64();
        let ro2 = route(&m, "tentacle", &req, &l2.tile_of).expect("route");
        println!(
            "{name},{},{},{:.3},{:.4},{:.4},{:.6},{},{:.4},{},{:.3},{},{mx},{over}",
            m.part.actors.len(),
            m.part.streams.len(),
            m.part.balance,
            m.t_partition,
            m.t_layout,
            ro.seconds,
            ro.circuits,
            rn.seconds,
            rn.circuits,
            relayout_s,
            ro2.circuits
        );
    }
}

/// Quick look at Figure 5 (saturation at scale 0 only; the full reproduction is
/// experiments/noc_fig5.py).
fn fig5(mesh: &str, measure: u64) {
    use pktflow_noc::api::{simulate, StreamReqJson};
    use pktflow_noc::sim::stream::Comm;
    println!(
        "benchmark,pull_dor,pull_adaptive,push_dor,push_adaptive,tentacle,ideal,tentacle_circuits"
    );
    for name in bench::names() {
        let req: StreamReqJson = serde_json::from_value(serde_json::json!({"graph": name, "mesh": mesh, "measure": measure, "warmup": 5000, "retries": 3})).unwrap();
        let m = map_graph(&req).expect("map");
        let mut row = Vec::new();
        let mut circ = false;
        for (routing, comm) in [
            ("dor", Comm::Pull),
            ("adaptive", Comm::Pull),
            ("dor", Comm::Push),
            ("adaptive", Comm::Push),
            ("tentacle", Comm::Push),
            ("ideal", Comm::Push),
        ] {
            let mut tile_of = m.layout.tile_of.clone();
            let mut ro = route(&m, routing, &req, &tile_of).expect("route");
            if routing == "tentacle" {
                let mut k = 0;
                while ro.fallback && k < 3 {
                    k += 1;
                    let l =
                        pktflow_noc::layout::anneal_routable(&m.mesh, &m.part, 1000 + k, 20_000)
                            .unwrap();
                    let r2 = route(&m, routing, &req, &l.tile_of).unwrap();
                    if r2.circuits {
                        tile_of = l.tile_of;
                        ro = r2;
                    }
                }
                circ = ro.circuits;
            }
            let (_, sat) = simulate(&m, &ro, comm, &[0.0], &req, &tile_of).expect("sim");
            row.push(sat);
        }
        let base = row[3];
        println!(
            "{name},{}",
            row.iter()
                .map(|x| format!("{:.3}", x / base))
                .collect::<Vec<_>>()
                .join(",")
                + &format!(",{circ}")
        );
    }
}

/// One synthetic sweep from a `noc_sweep` JSON request: rate, offered, accepted, latency per point.
fn sweep(req: &str) {
    let out = pktflow_noc::api::noc_sweep(req).unwrap_or_else(|e| panic!("{e}"));
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    println!("rate,offered,accepted,latency,saturated,cycles,wall_s");
    for p in v["points"].as_array().into_iter().flatten() {
        println!(
            "{},{:.4},{:.4},{:.2},{},{},{:.2}",
            p["requested_rate"],
            p["offered"].as_f64().unwrap_or(f64::NAN),
            p["accepted"].as_f64().unwrap_or(f64::NAN),
            p["latency"].as_f64().unwrap_or(f64::NAN),
            p["saturated"],
            p["cycles_simulated"],
            p["wall_seconds"].as_f64().unwrap_or(f64::NAN)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(|s| s.as_str()) {
        Some("fig5") => fig5(args.get(2).map(|s| s.as_str()).unwrap_or("4x4"), 20_000),
        Some("map") => map(args.get(2).map(|s| s.as_str()).unwrap_or("6x6")),
        Some("sweep") => sweep(args.get(2).map(|s| s.as_str()).unwrap_or("{}")),
        Some("speed") | None => speed(),
        Some(o) => eprintln!("unknown mode `{o}` (speed | map [MESH] | fig5 [MESH] | sweep JSON)"),
    }
}
