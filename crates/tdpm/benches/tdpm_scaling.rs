//! Runtime growth of the TDPM heuristic (seed 001 section 4.4 claims O((n + m) m)) on generated
//! PPF graphs of 100 to 1,000 PPFs with n = 64 engines (ixp2400 latencies, no bound on the
//! engine count). Prints one row per size: PPFs, channels, heuristic seconds (median of 3),
//! groupings, duplications, rejected actions, ns / (m (n + m)); then the same heuristic with
//! every PPF critical (TDPM-S, all PPFs take part in grouping); then tdpm-refine (Figure 4 and
//! the refinement, one run): seconds, evaluations, kept changes, and its H over Figure 4's.
//! Run: `cargo bench -p pktflow-tdpm --bench tdpm_scaling`.
use pktflow_tdpm::{gen, heuristic, Machine, Model, Options};
use std::time::Instant;

fn main() {
    let n = 64;
    println!("ppfs\tchannels\tcritical\tseconds\tgroupings\tduplications\trejected\tns_per_m(n+m)\ttdpm_s_seconds\ttdpm_s_groupings\trefine_seconds\trefine_evaluations\trefine_changes\trefine_gain_pct");
    for m in (100..=1000).step_by(100) {
        let g = gen::generate(&gen::GenParams::large(m, 7));
        let model = Model::new(&g, Machine::ixp2400(n).expect("machine")).expect("model");
        let mut times = Vec::new();
        let mut last = None;
        for _ in 0..3 {
            let t0 = Instant::now();
            let plan = heuristic::tdpm(&model, &Options::default()).expect("plan");
            times.push(t0.elapsed().as_secs_f64());
            last = Some(plan);
        }
        times.sort_by(f64::total_cmp);
        let p = last.expect("ran");
        let s = &p.steps;
        // TDPM-S: every PPF critical, so every PPF takes part in grouping (the worst case).
        let t0 = Instant::now();
        let all = heuristic::tdpm(
            &model,
            &Options {
                differentiate_critical: false,
                ..Options::default()
            },
        )
        .expect("plan");
        let ts = t0.elapsed().as_secs_f64();
        // Figure 4 followed by the refinement (tdpm-refine), whole mapper time.
        let t0 = Instant::now();
        let r =
            heuristic::tdpm_refine(&model, &Options::default(), &Default::default()).expect("plan");
        let tr = t0.elapsed().as_secs_f64();
        let rs = r.steps.refine.clone().unwrap_or_default();
        println!(
            "{m}\t{}\t{}\t{:.4}\t{}\t{}\t{}\t{:.1}\t{:.4}\t{}\t{:.4}\t{}\t{}\t{:.2}",
            g.channels.len(),
            p.critical.iter().filter(|&&c| c).count(),
            times[1],
            s.groupings,
            s.duplications,
            s.rejected_control_store + s.rejected_cycle + s.rejected_throughput,
            times[1] * 1e9 / (m as f64 * (n as f64 + m as f64)),
            ts,
            all.steps.groupings,
            tr,
            rs.evaluations,
            rs.moves + rs.splits + rs.swaps + rs.merges,
            100.0 * (r.eval.packets_per_second / p.eval.packets_per_second - 1.0)
        );
    }
}
