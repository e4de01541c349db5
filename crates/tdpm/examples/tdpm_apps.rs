//! Cost-model forwarding rates of the three benchmarks (seed 001 Figure 5 setting: 64-byte
//! packets offered at 3 Gb/s) for every mapper and 1 to 6 MEs on the ixp2400 preset.
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
        for mapper in ["base", "res", "comm", "tdpm-s", "tdpm", "optimal"] {
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
}
