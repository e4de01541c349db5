//! Gap of the heuristics to the exact optimum under the cost model, on generated instances
//! small enough for the exact search: 4 to 8 PPFs (by default), 1 to 6 engines (ixp2400), seeds
//! SEED0..SEED0+N, for two instance families (docs/benchmarks.md). Prints per mapper: instances,
//! how often it reaches the optimum (within 1e-9) or comes within 1%, the mean and worst gap
//! (1 - H/H_opt) and its mean time per instance; then the figures of tdpm and tdpm-refine per
//! engine count. `tdpm-descent` is tdpm-refine without the iterated search.
//! Run: `cargo bench -p pktflow-tdpm --bench tdpm_gap`. Env: TDPM_GAP_SEEDS (default 50);
//! TDPM_GAP_SEED0, the first seed (default 0; a second seed range checks that a change was not
//! fitted to the first); TDPM_GAP_MIN_PPFS / TDPM_GAP_MAX_PPFS (default 4 / 8, at most 14 for
//! the exact search); TDPM_REFINE_BUDGET (evaluations of tdpm-refine, default
//! `refine::default_budget`); TDPM_THETA (the critical-path threshold).
use pktflow_tdpm::optimal::{optimal, Limits};
use pktflow_tdpm::refine::RefineOptions;
use pktflow_tdpm::{gen, heuristic, map, Machine, Model, Options};

fn main() {
    let seeds: u64 = std::env::var("TDPM_GAP_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(50);
    let seed0 = env_or("TDPM_GAP_SEED0", 0);
    let sizes = (
        env_or("TDPM_GAP_MIN_PPFS", 4) as usize,
        env_or("TDPM_GAP_MAX_PPFS", 8) as usize,
    );
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
        one(seed0, seeds, sizes, make);
    }
}

fn one(seed0: u64, seeds: u64, sizes: (usize, usize), make: fn(usize, u64) -> gen::GenParams) {
    // "tdpm-descent": the refinement's first descent alone (no iterated search), to show what
    // each part contributes.
    let mappers = [
        "tdpm",
        "tdpm-refine",
        "tdpm-descent",
        "tdpm-s",
        "comm",
        "res",
        "base",
    ];
    let mut gaps: Vec<Vec<f64>> = vec![Vec::new(); mappers.len()];
    let mut worst_case = vec![(0.0f64, String::new()); mappers.len()];
    // tdpm and tdpm-refine per engine count: instances, optimal, gap sum.
    let mut by_n = [[(0u32, 0u32, 0.0f64); 7]; 2];
    let mut secs = vec![0.0f64; mappers.len()];
    // TDPM_REFINE_BUDGET: evaluations for tdpm-refine (default: refine::default_budget).
    let budget = std::env::var("TDPM_REFINE_BUDGET")
        .ok()
        .and_then(|s| s.parse::<u64>().ok());
    let t0 = std::time::Instant::now();
    for m in sizes.0..=sizes.1 {
        for seed in seed0..seed0 + seeds {
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
                let t1 = std::time::Instant::now();
                let p = if *name == "tdpm-descent" {
                    let r = RefineOptions {
                        kicks: false,
                        ..Default::default()
                    };
                    heuristic::tdpm_refine(&model, &opts, &r).expect("plan")
                } else if *name == "tdpm-refine" && budget.is_some() {
                    let r = RefineOptions {
                        budget,
                        ..Default::default()
                    };
                    heuristic::tdpm_refine(&model, &opts, &r).expect("plan")
                } else {
                    map(&model, name, &opts).expect("plan")
                };
                secs[k] += t1.elapsed().as_secs_f64();
                let gap = if h_opt > 0.0 {
                    (1.0 - p.eval.packets_per_second / h_opt).max(0.0)
                } else {
                    0.0
                };
                if gap > worst_case[k].0 {
                    worst_case[k] = (gap, format!("m={m} seed={seed} n={n}"));
                }
                gaps[k].push(gap);
                if k < 2 {
                    let e = &mut by_n[k][n as usize];
                    e.0 += 1;
                    e.1 += u32::from(gap <= 1e-9);
                    e.2 += gap;
                }
            }
        }
    }
    println!(
        "instances: PPFs {}..={} x seeds {seed0}..{}, engines 1 + seed % 6 ({:.1} s)",
        sizes.0,
        sizes.1,
        seed0 + seeds,
        t0.elapsed().as_secs_f64()
    );
    println!(
        "mapper\tinstances\toptimal\toptimal_pct\twithin_1pct\tmean_gap_pct\tworst_gap_pct\tms_per_instance\tworst_instance"
    );
    for (k, name) in mappers.iter().enumerate() {
        let v = &gaps[k];
        let hit = v.iter().filter(|&&x| x <= 1e-9).count();
        let near = v.iter().filter(|&&x| x <= 0.01).count();
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        println!(
            "{name}\t{}\t{hit}\t{:.1}\t{:.1}\t{:.2}\t{:.2}\t{:.3}\t{}",
            v.len(),
            100.0 * hit as f64 / v.len() as f64,
            100.0 * near as f64 / v.len() as f64,
            100.0 * mean,
            100.0 * worst_case[k].0,
            1e3 * secs[k] / v.len() as f64,
            worst_case[k].1
        );
    }
    for (k, rows) in by_n.iter().enumerate() {
        for (n, e) in rows.iter().enumerate().skip(1) {
            println!(
                "{} with {n} engine(s): {} instances, optimal {:.1}%, mean gap {:.2}%",
                mappers[k],
                e.0,
                100.0 * e.1 as f64 / e.0.max(1) as f64,
                100.0 * e.2 / e.0.max(1) as f64
            );
        }
    }
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Critical-path threshold θ (env TDPM_THETA; default the mappers' default).
fn theta() -> f64 {
    std::env::var("TDPM_THETA")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(Options::default().critical_threshold)
}
