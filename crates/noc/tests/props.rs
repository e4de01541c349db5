//! Property tests of the NoC invariants (issue 4): flit conservation, no deadlock or loss under
//! sustained overload with adaptive routing, balance equations, disjointness of tentacle paths.
use pktflow_noc::config::default_mesh;
use pktflow_noc::graph::{
    flatten, solve_balance, FilterSpec, SplitSpec, StreamNode, StreamProgram,
};
use pktflow_noc::routing::{
    check_disjoint, exact, negotiated, tentacle, tentacle_order, ExactOutcome, Mesh, StreamReq,
};
use pktflow_noc::sim::synthetic::{run_point, Pattern, SynthConfig};
use pktflow_noc::sim::PacketRouting;
use proptest::prelude::*;

fn filt(name: String, pop: u64, push: u64) -> StreamNode {
    StreamNode::Filter(FilterSpec {
        name,
        desc: None,
        builtin: None,
        pop,
        push,
        peek: None,
        stateful: false,
        work: 1.0,
        work_corrected: None,
        reps: None,
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Overload with adaptive routing: the run ends without deadlock, conservation holds
    /// (run_point checks injected = ejected + in flight and fails on a 2000-cycle stall).
    #[test]
    fn adaptive_overload_no_deadlock_no_loss(cols in 2usize..6, rows in 2usize..6, vcs in 2usize..5,
                                             depth in 1usize..6, flits in 1u32..6, rate in 0.3f64..1.0,
                                             bitcomp in any::<bool>(), seed in 0u64..1000) {
        let mut a = default_mesh();
        a.cols = cols; a.rows = rows; a.virtual_channels = vcs; a.buffer_depth_flits = depth;
        let cfg = SynthConfig { pattern: if bitcomp { Pattern::bit_complement() } else { Pattern::uniform() }, rate,
            packet_flits: flits, warmup_cycles: 200, measure_cycles: 1500, drain_cycles: 0, seed, booksim: None };
        let p = run_point(&a, PacketRouting::Adaptive, &cfg).unwrap();
        prop_assert!(p.flits_injected >= p.flits_ejected);
        prop_assert!(p.accepted > 0.0);
    }

    /// DOR with random pipeline delays conserves flits and delivers everything at low load.
    #[test]
    fn dor_low_load_delivers_everything(k in 2usize..6, rc in 1u32..3, va in 1u32..3, lt in 1u32..4,
                                        cd in 1u32..3, flits in 1u32..5, seed in 0u64..1000) {
        let mut a = default_mesh();
        a.cols = k; a.rows = k; a.route_compute_cycles = rc; a.vc_alloc_cycles = va;
        a.link_latency_cycles = lt; a.credit_delay_cycles = cd;
        let cfg = SynthConfig { pattern: Pattern::uniform(), rate: 0.05, packet_flits: flits,
            warmup_cycles: 100, measure_cycles: 1000, drain_cycles: 2000, seed, booksim: None };
        let p = run_point(&a, PacketRouting::Dor, &cfg).unwrap();
        prop_assert_eq!(p.unfinished, 0);
    }

    /// Random pipelines with splitjoins: the solved repetitions satisfy every balance equation
    /// and are the smallest integer solution.
    #[test]
    fn balance_equations_hold(rates in proptest::collection::vec((1u64..6, 1u64..6), 2..7),
                              w1 in 1u64..4, w2 in 1u64..4, inner in (1u64..5, 1u64..5)) {
        let mut children = vec![filt("src".into(), 0, rates[0].1)];
        for (i, &(pop, push)) in rates.iter().enumerate().skip(1) {
            children.push(filt(format!("f{i}"), pop, push));
        }
        children.push(StreamNode::Splitjoin {
            name: "sj".into(),
            split: SplitSpec { kind: "roundrobin".into(), weights: vec![w1, w2], reps: None },
            join: SplitSpec { kind: "roundrobin".into(), weights: vec![w1 * inner.1, w2 * inner.1], reps: None },
            branches: vec![filt("a".into(), inner.0, inner.1 * inner.0), filt("b".into(), inner.0, inner.1 * inner.0)],
        });
        children.push(filt("snk".into(), 1, 0));
        let p = StreamProgram { name: "rand".into(), graph: StreamNode::Pipeline { name: "top".into(), children } };
        let b = solve_balance(flatten(&p, false).unwrap()).unwrap();
        for e in &b.graph.edges {
            prop_assert_eq!(b.reps[e.src] * e.push, b.reps[e.dst] * e.pop);
        }
        let g = b.reps.iter().fold(0u64, |g, &r| { let (mut x, mut y) = (g, r); while y != 0 { let t = x % y; x = y; y = t; } x });
        prop_assert_eq!(g, 1);
    }

    /// Tentacle paths are link-disjoint; a proven-infeasible instance makes every router fail.
    #[test]
    fn tentacle_paths_disjoint(k in 2usize..5, pairs in proptest::collection::vec((0usize..25, 0usize..25), 1..10)) {
        let m = Mesh::new(k, k).unwrap();
        let n = m.nodes();
        let s: Vec<StreamReq> = pairs.iter().map(|&(a, b)| (a % n, b % n)).filter(|(a, b)| a != b)
            .map(|(a, b)| StreamReq { src: a, dst: b, weight: 1.0 }).collect();
        let r = tentacle(&m, &s, &tentacle_order(&s));
        if let Some(p) = &r.paths {
            prop_assert!(check_disjoint(&m, &s, p).is_ok());
        }
        let (o, ep, _) = exact(&m, &s, 200_000);
        if o == ExactOutcome::Infeasible {
            prop_assert!(r.paths.is_none());
            prop_assert!(!negotiated(&m, &s, 20).1);
        }
        if let Some(p) = ep {
            prop_assert!(check_disjoint(&m, &s, &p).is_ok());
        }
        if r.paths.is_some() {
            prop_assert!(o != ExactOutcome::Infeasible);
        }
    }
}
