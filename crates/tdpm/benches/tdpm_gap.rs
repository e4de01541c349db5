//! Gap of the heuristics to the exact optimum under the cost model, on generated instances
//! small enough for the exhaustive search: 4 to 8 PPFs, 1 to 6 engines (ixp2400), seeds
//! 0..N, for two instance families (docs/benchmarks.md). Prints per mapper: instances, how
//! often it reaches the optimum (within 1e-9) or comes within 1%, the mean and worst gap
//! (1 - H/H_opt); then TDPM's figures per engine count. Env TDPM_THETA sets the critical-path
//! threshold.
//! Run: `cargo bench -p pktflow-tdpm --bench tdpm_gap` (env TDPM_GAP_SEEDS, default 50).
use pktflow_tdpm::optimal::{optimal, Limits};
use pktflow_tdpm::{gen, map, Machine, Model, Options};

fn main() {
    let seeds: u64 = std::env::var("TDPM_GAP_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    for (label, make) in [
        (
            "small (code 200-1800, locks 20%)",
            gen::GenParams::small as fn(usize, u64) -> gen::GenParams,
        ),
        (
            "element_like (code 50-600, locks 10%)",
            gen::GenParams::element_like,
        ),
    ] {
        println!("== {label}");
        one(seeds, make);
    }
}

fn one(seeds: u64, make: fn(usize, u64) -> gen::GenParams) {
    let mappers = ["tdpm", "tdpm-s", "comm", "res", "base"];
    let mut gaps: Vec<Vec<f64>> = vec![Vec::new(); mappers.len()];
    let mut worst_case = vec![(0.0f64, String::new()); mappers.len()];
    let mut by_n = [(0u32, 0u32, 0.0f64); 7]; // tdpm: instances, optimal, gap sum
    let t0 = std::time::Instant::now();
    for m in 4..=8usize {
        for seed in 0..seeds {
            let g = gen::generate(&make(m, seed));
            let n = 1 + (seed % 6) as u32;
            let model = Model::new(&g, Machine::ixp2400(n).expect("machine")).expect("model");
            let opt = optimal(&model, &Limits::default()).expect("optimum");
            let h_opt = opt.eval.packets_per_second;
            for (k, name) in mappers.iter().enumerate() {
                let opts = Options {
                    critical_threshold: theta(),
                    ..Options::default()
                };
                let p = map(&model, name, &opts).expect("plan");
                let gap = if h_opt > 0.0 {
                    (1.0 - p.eval.packets_per_second / h_opt).max(0.0)
                } else {
                    0.0
                };
                if gap > worst_case[k].0 {
                    worst_case[k] = (gap, format!("m={m} seed={seed} n={n}"));
                }
                gaps[k].push(gap);
                if k == 0 {
                    let e = &mut by_n[n as usize];
                    e.0 += 1;
                    e.1 += u32::from(gap <= 1e-9);
                    e.2 += gap;
                }
            }
        }
    }
    println!(
        "instances: PPFs 4..=8 x seeds 0..{seeds}, engines 1 + seed % 6 ({:.1} s)",
        t0.elapsed().as_secs_f64()
    );
    println!(
        "mapper\tinstances\toptimal\toptimal_pct\twithin_1pct\tmean_gap_pct\tworst_gap_pct\tworst_instance"
    );
    for (k, name) in mappers.iter().enumerate() {
        let v = &gaps[k];
        let hit = v.iter().filter(|&&x| x <= 1e-9).count();
        let near = v.iter().filter(|&&x| x <= 0.01).count();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        println!(
            "{name}\t{}\t{hit}\t{:.1}\t{:.1}\t{:.2}\t{:.2}\t{}",
            v.len(),
            100.0 * hit as f64 / v.len() as f64,
            100.0 * near as f64 / v.len() as f64,
            100.0 * mean,
            100.0 * worst_case[k].0,
            worst_case[k].1
        );
    }
    for (n, e) in by_n.iter().enumerate().skip(1) {
        println!(
            "tdpm with {n} engine(s): {} instances, optimal {:.1}%, mean gap {:.2}%",
            e.0,
            100.0 * e.1 as f64 / e.0.max(1) as f64,
            100.0 * e.2 / e.0.max(1) as f64
        );
    }
}

/// Critical-path threshold θ (env TDPM_THETA; default the mappers' default).
fn theta() -> f64 {
    std::env::var("TDPM_THETA")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(Options::default().critical_threshold)
}
