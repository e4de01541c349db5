//! Cost model against the timing simulator (crates/npsim) for TDPM-all mappings of the three
//! benchmarks on the ixp2400 preset, 1 to 6 MEs. The TDPM mapping is handed to npsim as a task
//! map: every element of an ME task runs on that task's MEs (all 8 contexts of each); receiver
//! and transmitter elements keep npsim's interface PEs (0 and 1), Queue/Discard go with the
//! transmitter. npsim has no XScale: tasks the cost model puts on the XScale (rare paths) run on
//! the MEs of the first ME task. npsim charges no DRAM hand-off between MEs and places packet
//! data by the memory map (DRAM), unlike the cost model (docs/tdpm.md), so the error column
//! measures those modelling differences too.
//! Run: `cargo run --release -p pktflow-tdpm --example tdpm_npsim [PACKETS]`.
use pktflow_npsim::app::{AppSpec, Prepared};
use pktflow_npsim::config::{Replication, SimConfig, TaskMap};
use pktflow_npsim::maxrate::MaxRateConfig;
use pktflow_tdpm::api::load_graph;
use pktflow_tdpm::{map, Machine, Model, Options};

fn main() {
    let packets: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000);
    let arch = pktflow_arch::Arch::load("ixp2400").expect("preset");
    let np = arch.as_np().expect("np");
    println!("app\tMEs\tmodel_Mpps\tnpsim_Mpps\terror_pct\tbusiest_resource\tbusiest_pe");
    for app in ["l3switch", "mpls", "firewall"] {
        let dir = std::env::temp_dir().join(format!("pktflow-tdpm-npsim-{app}"));
        let g = load_graph(app, np, packets, 1, dir.to_str()).expect("graph");
        let spec = AppSpec {
            app: app.into(),
            packets,
            arch: "ixp2400".into(),
            replication: Replication::Global,
            ..AppSpec::default()
        };
        let prep = Prepared::new(&spec).expect("npsim app");
        let contexts = np.np.hardware_contexts_per_pe;
        for n in 1..=6u32 {
            let model = Model::new(&g, Machine::from_arch(np, n).expect("machine")).expect("model");
            let plan = map(&model, "tdpm", &Options::default()).expect("plan");
            let mut mapping = prep.mapping.clone();
            let mut next_pe = np.np.interface_pes;
            let mut first_me: Option<Vec<u32>> = None;
            let mut assigned = vec![None::<Vec<u32>>; prep.names.len()];
            for t in plan.eval.tasks.iter().filter(|t| !t.on_xscale) {
                let pes: Vec<u32> = (next_pe..next_pe + t.engines).collect();
                next_pe += t.engines;
                first_me.get_or_insert_with(|| pes.clone());
                for name in &t.names {
                    if let Some(e) = prep.names.iter().position(|x| x == name) {
                        assigned[e] = Some(pes.clone());
                    }
                }
            }
            let fallback = first_me.unwrap_or_else(|| vec![np.np.interface_pes]);
            for (e, tm) in mapping.tasks.iter_mut().enumerate() {
                if prep.iface[e] {
                    continue;
                }
                let ppf = g.ppfs.iter().any(|p| p.name == prep.names[e]);
                let pes = match (&assigned[e], ppf) {
                    (Some(p), _) => p.clone(),
                    (None, true) => fallback.clone(), // XScale task: no XScale in npsim
                    (None, false) => vec![np.np.interface_pes - 1], // Queue/Discard: with Tx
                };
                *tm = TaskMap {
                    max_concurrent: contexts * pes.len() as u32,
                    pes,
                };
            }
            let res =
                prep.max_rate_mapping(&mapping, &SimConfig::default(), &MaxRateConfig::default());
            let model_pps = plan.eval.packets_per_second;
            match res {
                Ok(r) => {
                    let rep = &r.report;
                    let top = rep
                        .buses
                        .iter()
                        .chain(&rep.channels)
                        .chain(&rep.storage)
                        .max_by(|a, b| a.utilization.total_cmp(&b.utilization))
                        .map(|x| format!("{} {:.0}%", x.name, 100.0 * x.utilization))
                        .unwrap_or_default();
                    let pe = rep
                        .pes
                        .iter()
                        .enumerate()
                        .min_by(|a, b| a.1.idle.total_cmp(&b.1.idle))
                        .map(|(i, p)| format!("PE{i} idle {:.0}%", 100.0 * p.idle))
                        .unwrap_or_default();
                    println!(
                        "{app}\t{n}\t{:.3}\t{:.3}\t{:+.1}\t{top}\t{pe}",
                        model_pps / 1e6,
                        r.packets_per_second / 1e6,
                        100.0 * (model_pps - r.packets_per_second) / r.packets_per_second,
                    )
                }
                Err(e) => println!("{app}\t{n}\t{:.3}\t-\t-\t{e}", model_pps / 1e6),
            }
        }
    }
}
