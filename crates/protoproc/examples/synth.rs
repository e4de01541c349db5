use pktflow_protoproc::model::Model;
use pktflow_protoproc::sim::*;
use pktflow_protoproc::workload::*;
use pktflow_protoproc::*;
fn main() {
    let (l, opp, orep) = (113.0, 55.0, 27.0);
    let nodes: u32 = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(4);
    let m = 2000u64;
    let md = Model::new(l, opp, orep, m as f64).unwrap();
    for c in [10.0, 30.0, 60.0, 113.0, 250.0, 600.0, 2000.0] {
        let mut out = vec![];
        for (pol, cpus) in [
            (Policy::Fixed, 2),
            (Policy::Single, 1),
            (Policy::Floating, 2),
        ] {
            let cfg = SimConfig {
                policy: pol,
                nodes,
                cpus,
                threads: 1,
                costs: PolicyCosts::from_model(l, opp, orep).unwrap(),
                bus_share: 0.0,
                seed: 1,
            };
            let r = simulate(
                &cfg,
                &App::Synthetic(Synthetic {
                    requests: m,
                    c_us: c,
                    spread: Spread::Exponential,
                }),
            )
            .unwrap();
            out.push((r.mean_node_finish_us, r.mean_queue_wait_us));
        }
        println!("C={c} fixed {:.0} vs {:.0} ({:+.1}%) w={:.1} | single {:.0} vs {:.0} ({:+.1}%) w={:.1} | floating {:.0} vs {:.0} ({:+.1}%)",
          out[0].0, md.t_fixed(c), 100.0*(out[0].0/md.t_fixed(c)-1.0), out[0].1,
          out[1].0, md.t_single(c), 100.0*(out[1].0/md.t_single(c)-1.0), out[1].1,
          out[2].0, md.t_floating(c), 100.0*(out[2].0/md.t_floating(c)-1.0));
    }
}
