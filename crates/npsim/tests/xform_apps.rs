//! The transformations on the built-in applications: every combination runs to the end with
//! every packet accounted for and no invariant violated.
use pktflow_npsim::app::{AppSpec, Prepared};
use pktflow_npsim::xform::{simulate_planned, split::SplitPlan, Transforms};
use pktflow_npsim::{Replication, SimConfig};

fn run(app: &str, tf: &str, split_all: bool, ia: f64) -> pktflow_npsim::SimReport {
    let spec = AppSpec {
        app: app.into(),
        pes: Some(8),
        packets: 300,
        replication: Replication::Subset,
        ..Default::default()
    };
    let p = Prepared::new(&spec).unwrap();
    let mut sp = SplitPlan::default();
    if split_all {
        for e in 0..p.names.len() as u32 {
            if !p.iface[e as usize] {
                sp.split(e, &p.names);
            }
        }
    }
    let cfg = SimConfig {
        inter_arrival_cycles: ia,
        packets: 300,
        warmup_packets: 60,
        transform: Transforms::parse(tf).unwrap(),
        ..Default::default()
    };
    let (pes, m) = p.machine(&cfg.ideal);
    let r = simulate_planned(&p, pes, &m, &sp, &cfg, &mut |_| {}).unwrap();
    assert!(
        r.invariant_violations.is_empty(),
        "{app} {tf}: {:?}",
        r.invariant_violations
    );
    assert_eq!(r.in_flight_at_end, 0);
    assert_eq!(
        r.injected,
        r.delivered + r.dropped_by_app + r.held_by_app + r.dropped_by_np.values().sum::<u64>()
    );
    r
}

#[test]
fn every_transformation_alone_and_together_keeps_the_invariants() {
    for app in ["router", "nat"] {
        for tf in [
            "split",
            "early",
            "speculate",
            "locality",
            "split,early,speculate,locality",
        ] {
            for ia in [200.0, 2000.0] {
                run(app, tf, tf.contains("split"), ia);
            }
        }
    }
}
