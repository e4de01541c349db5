//! Cost-model forwarding rates of the three benchmarks (seed 001 Figure 5 setting: 64-byte
//! packets offered at 3 Gb/s) for every mapper and 1 to 6 MEs on the ixp2400 preset; then the
//! gap of the Figure 4 heuristic (`tdpm`) and of `tdpm-refine` to the exact optimum (branch
//! and bound, 12-13 PPFs) with the search's time.
//! Run: `cargo run --release -p pktflow-tdpm --example tdpm_apps [PACKETS]`.
use pktflow_tdpm::api::load_graph;
use pktflow_tdpm::{map, Machine, Model, Options};

fn main() {
    let packets: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(5000);
    let arch = pktflow_arch::Arch::load("ixp2400").expect("preset");
    let np = arch.as_np().expect("np");
    let offered_pps = 3e9 / (64.0 * 8.0);
    println!("app\tmapper\tMEs\tpredicted_Mpps\tforwarding_Gbps_at_3G_64B\ttasks\tbinding");
    for app in ["l3switch", "mpls", "firewall"] {
        let dir = std::env::temp_dir().join(format!("pktflow-tdpm-apps-{app}"));
        let g = load_graph(app, np, packets, 1, dir.to_str()).expect("graph");
        for mapper in [
            "base",
            "res",
            "comm",
            "tdpm-s",
            "tdpm",
            "tdpm-refine",
            "optimal",
        ] {
            for n in 1..=6 {
                let model =
                    Model::new(&g, Machine::from_arch(np, n).expect("machine")).expect("model");
                let p = match map(&model, mapper, &Options::default()) {
                    Ok(p) => p,
                    Err(e) => {
                        println!("{app}\t{mapper}\t{n}\t-\t-\t-\t{e}");
                        continue;
                    }
                };
                let pps = p.eval.packets_per_second;
                println!(
                    "{app}\t{mapper}\t{n}\t{:.3}\t{:.3}\t{}\t{}",
                    pps / 1e6,
                    pps.min(offered_pps) * 64.0 * 8.0 / 1e9,
                    p.mapping.tasks.iter().filter(|t| t.dup > 0).count(),
                    p.eval.binding_text()
                );
            }
        }
    }
    println!();
    println!("app\tPPFs\tMEs\toptimal_Mpps\ttdpm_gap_pct\ttdpm_refine_gap_pct\toptimal_seconds\tleaves\tpruned");
    for app in ["l3switch", "mpls", "firewall"] {
        let dir = std::env::temp_dir().join(format!("pktflow-tdpm-apps-{app}"));
        let g = load_graph(app, np, packets, 1, dir.to_str()).expect("graph");
        for n in 1..=6 {
            let model = Model::new(&g, Machine::from_arch(np, n).expect("machine")).expect("model");
            let t0 = std::time::Instant::now();
            let opt = map(&model, "optimal", &Options::default()).expect("optimum");
            let secs = t0.elapsed().as_secs_f64();
            let h = opt.eval.packets_per_second;
            let gap = |name: &str| {
                let p = map(&model, name, &Options::default()).expect("plan");
                100.0 * (1.0 - p.eval.packets_per_second / h).max(0.0)
            };
            println!(
                "{app}\t{}\t{n}\t{:.4}\t{:.3}\t{:.3}\t{:.3}\t{}\t{}",
                g.len(),
                h / 1e6,
                gap("tdpm"),
                gap("tdpm-refine"),
                secs,
                opt.steps.candidates_pushed,
                opt.steps.rejected_throughput
            );
        }
    }
}
