//! Where a TDPM mapper misses the exact optimum: for every generated instance of the gap
//! benchmark (4-8 PPFs, n = 1 + seed % 6) on which MAPPER (default `tdpm`, Figure 4) is below the
//! optimum, classify the difference between its mapping and the optimal one:
//!
//! * `allocation`: same tasks, same XScale set, different duplication;
//! * `xscale-set`: same tasks, different tasks on the XScale;
//! * `under-grouped`: the optimal partition is coarser (every heuristic task lies inside an
//!   optimal task): grouping stopped too early (control store order or a throughput-check
//!   rejection that later groupings would have repaid);
//! * `over-grouped`: the optimal partition is finer (a grouping should not have been made);
//! * `crossing`: neither refines the other (different packing).
//!
//! and count features of the misses (an instance may have several): `control-store` (the
//! mapper rejected a grouping for the control store), `non-adjacent` (an optimal task holds
//! PPFs not joined by channels inside it, which the candidate list never proposes),
//! `xscale-differs` (the PPFs on the XScale differ), `lock-split` (the optimum separates two
//! PPFs the mapper grouped, one of them holding a lock), `one-me` (n = 1).
//!
//! Prints the counts per family and, with `-v`, both mappings of every miss.
//! Run: `cargo run --release -p pktflow-tdpm --example tdpm_diag -- [MAPPER] [SEED0] [SEEDS]
//! [MIN_PPFS] [MAX_PPFS] [-v]` (defaults: tdpm, 0, 50, 4, 8).
use pktflow_tdpm::optimal::{optimal, Limits};
use pktflow_tdpm::{gen, map, End, Eval, Machine, Mapping, Model, Options};
use std::collections::BTreeMap;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let verbose = args.iter().any(|a| a == "-v");
    let pos: Vec<&String> = args.iter().filter(|a| !a.starts_with('-')).collect();
    let mapper = pos.first().map_or("tdpm", |s| s.as_str());
    let seed0: u64 = pos.get(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    let seeds: u64 = pos.get(2).and_then(|s| s.parse().ok()).unwrap_or(50);
    let min_m: usize = pos.get(3).and_then(|s| s.parse().ok()).unwrap_or(4);
    let max_m: usize = pos.get(4).and_then(|s| s.parse().ok()).unwrap_or(8);
    for (label, make) in [
        (
            "small",
            gen::GenParams::small as fn(usize, u64) -> gen::GenParams,
        ),
        ("element_like", gen::GenParams::element_like),
    ] {
        let mut counts: BTreeMap<&str, (u32, f64)> = BTreeMap::new();
        let mut features: BTreeMap<&str, u32> = BTreeMap::new();
        let mut misses = 0;
        let mut total = 0;
        for m in min_m..=max_m {
            for seed in seed0..seed0 + seeds {
                let g = gen::generate(&make(m, seed));
                let n = 1 + (seed % 6) as u32;
                let model = Model::new(&g, Machine::ixp2400(n).unwrap()).unwrap();
                let opt = optimal(&model, &Limits::default()).unwrap();
                let p = map(&model, mapper, &Options::default()).unwrap();
                total += 1;
                let gap = 1.0 - p.eval.packets_per_second / opt.eval.packets_per_second;
                if gap <= 1e-9 {
                    continue;
                }
                let class = classify(&p.mapping, &opt.mapping, g.len());
                let e = counts.entry(class).or_default();
                e.0 += 1;
                e.1 += gap;
                misses += 1;
                for f in feature_list(&g, n, &p, &opt.mapping) {
                    *features.entry(f).or_default() += 1;
                }
                if verbose {
                    println!(
                        "--- {label} m={m} seed={seed} n={n}: gap {:.2}% [{class}] critical {:?}",
                        100.0 * gap,
                        p.critical
                    );
                    show(mapper, &p.eval);
                    show("optimal", &opt.eval);
                }
            }
        }
        println!("== {label}: {mapper} misses by cause ({total} instances)");
        for (k, (c, s)) in &counts {
            println!(
                "{k}\t{c} misses\tmean gap of these {:.2}%",
                100.0 * s / *c as f64
            );
        }
        for (f, c) in &features {
            println!("feature {f}\t{c} of {misses} misses");
        }
    }
}

fn feature_list(
    g: &pktflow_tdpm::PpfGraph,
    n: u32,
    p: &pktflow_tdpm::Plan,
    o: &Mapping,
) -> Vec<&'static str> {
    let mut f = Vec::new();
    if p.steps.rejected_control_store > 0 {
        f.push("control-store");
    }
    // An optimal task whose PPFs are not connected by the channels inside it.
    let connected = |ppfs: &[usize]| {
        let inside = |i: usize| ppfs.contains(&i);
        let mut seen = vec![ppfs[0]];
        let mut k = 0;
        while k < seen.len() {
            let i = seen[k];
            k += 1;
            for c in &g.channels {
                if let (End::Ppf(a), End::Ppf(b)) = (c.from, c.to) {
                    for (x, y) in [(a, b), (b, a)] {
                        if x == i && inside(y) && !seen.contains(&y) {
                            seen.push(y);
                        }
                    }
                }
            }
        }
        seen.len() == ppfs.len()
    };
    if o.tasks.iter().any(|t| !connected(&t.ppfs)) {
        f.push("non-adjacent");
    }
    let xs = |m: &Mapping| {
        let mut v: Vec<usize> = m
            .tasks
            .iter()
            .filter(|t| t.dup == 0)
            .flat_map(|t| t.ppfs.iter().copied())
            .collect();
        v.sort();
        v
    };
    if xs(&p.mapping) != xs(o) {
        f.push("xscale-differs");
    }
    let (bh, bo) = (blocks(&p.mapping, g.len()), blocks(o, g.len()));
    let split_locked = (0..g.len()).any(|i| {
        (0..g.len()).any(|j| {
            i != j
                && bh[i] == bh[j]
                && bo[i] != bo[j]
                && !(g.ppfs[i].locks.is_empty() && g.ppfs[j].locks.is_empty())
        })
    });
    if split_locked {
        f.push("lock-split");
    }
    if n == 1 {
        f.push("one-me");
    }
    f
}

fn show(name: &str, e: &Eval) {
    println!(
        "  {name}: {:.4} Mpps, copies {}, binding {}",
        e.packets_per_second / 1e6,
        e.copies,
        e.binding_text()
    );
    for t in &e.tasks {
        println!(
            "    {:?} {} d={} code={} W={:.0} (comm {:.0}, sync {:.0})",
            t.names,
            if t.on_xscale { "XS" } else { "ME" },
            t.dup,
            t.code_size,
            t.utilization,
            t.communication,
            t.synchronization
        );
    }
}

fn blocks(m: &Mapping, n: usize) -> Vec<usize> {
    let mut b = vec![0; n];
    for (k, t) in m.tasks.iter().enumerate() {
        for &i in &t.ppfs {
            b[i] = k;
        }
    }
    b
}

/// Whether partition `a` refines `b` (every block of a inside a block of b).
fn refines(a: &[usize], b: &[usize]) -> bool {
    let mut to: BTreeMap<usize, usize> = BTreeMap::new();
    a.iter()
        .zip(b)
        .all(|(&x, &y)| *to.entry(x).or_insert(y) == y)
}

fn classify(h: &Mapping, o: &Mapping, n: usize) -> &'static str {
    let (bh, bo) = (blocks(h, n), blocks(o, n));
    let same = refines(&bh, &bo) && refines(&bo, &bh);
    if same {
        let xs = |m: &Mapping| {
            let mut v: Vec<Vec<usize>> = m
                .tasks
                .iter()
                .filter(|t| t.dup == 0)
                .map(|t| t.ppfs.clone())
                .collect();
            v.sort();
            v
        };
        if xs(h) == xs(o) {
            "allocation"
        } else {
            "xscale-set"
        }
    } else if refines(&bh, &bo) {
        "under-grouped"
    } else if refines(&bo, &bh) {
        "over-grouped"
    } else {
        "crossing"
    }
}
