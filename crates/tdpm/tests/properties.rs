//! Invariants of the mappers on generated PPF graphs (proptest): every mapping is a partition
//! within the engine budget whose ME tasks fit the control store; TDPM never rates below Base,
//! and the refined TDPM never below Figure 4;
//! the exact optimum is at least every mapper; the fast evaluation inside the heuristic agrees
//! with the full cost model.
use pktflow_tdpm::optimal::{optimal, Limits};
use pktflow_tdpm::{gen, map, Machine, Model, Options};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn mappings_are_valid_and_ordered(m in 1usize..8, seed in 0u64..10_000, n in 1u32..7) {
        let g = gen::generate(&gen::GenParams::small(m, seed));
        let model = Model::new(&g, Machine::ixp2400(n).unwrap()).unwrap();
        let base = map(&model, "base", &Options::default()).unwrap();
        let opt = optimal(&model, &Limits::default()).unwrap();
        let paper = map(&model, "tdpm", &Options::default()).unwrap();
        for name in ["tdpm", "tdpm-refine", "tdpm-s", "comm", "res", "base"] {
            let p = map(&model, name, &Options::default()).unwrap();
            // A partition of all PPFs.
            let mut seen = vec![false; g.len()];
            for t in &p.mapping.tasks {
                for &i in &t.ppfs {
                    prop_assert!(!seen[i]);
                    seen[i] = true;
                }
            }
            prop_assert!(seen.iter().all(|&s| s));
            prop_assert!(p.eval.engines_used <= n);
            for t in &p.eval.tasks {
                prop_assert!(t.on_xscale || t.code_size <= 4096);
            }
            // Re-evaluating the returned mapping gives the reported throughput.
            let again = model.evaluate(&p.mapping).unwrap();
            prop_assert!((again.packets_per_second - p.eval.packets_per_second).abs()
                <= 1e-9 * p.eval.packets_per_second.max(1.0));
            prop_assert!(opt.eval.packets_per_second >= p.eval.packets_per_second * (1.0 - 1e-9),
                "{} {} > optimum {}", name, p.eval.packets_per_second, opt.eval.packets_per_second);
            if name.starts_with("tdpm") {
                prop_assert!(p.eval.packets_per_second >= base.eval.packets_per_second * (1.0 - 1e-9),
                    "{} below base", name);
            }
            if name == "tdpm-refine" {
                prop_assert!(p.eval.packets_per_second >= paper.eval.packets_per_second,
                    "tdpm-refine {} below Figure 4 {}", p.eval.packets_per_second,
                    paper.eval.packets_per_second);
            }
        }
    }

    #[test]
    fn more_engines_never_hurt_the_optimum(m in 1usize..7, seed in 0u64..10_000, n in 1u32..6) {
        let g = gen::generate(&gen::GenParams::small(m, seed));
        let a = optimal(&Model::new(&g, Machine::ixp2400(n).unwrap()).unwrap(), &Limits::default()).unwrap();
        let b = optimal(&Model::new(&g, Machine::ixp2400(n + 1).unwrap()).unwrap(), &Limits::default()).unwrap();
        prop_assert!(b.eval.packets_per_second >= a.eval.packets_per_second * (1.0 - 1e-9));
    }
}
