//! Regression: minimal adaptive routing with an escape VC deadlocked under load (8x8 uniform at
//! 0.45 and 0.8 flits/node/cycle, 4x4 with 2 VCs under overload) because an adaptive VC was
//! reallocated to a new packet while the previous packet's flits were still in the downstream
//! buffer: the new packet was committed to a full adaptive VC and could never fall back to the
//! escape VC, so committed waits closed a cycle (see docs/noc.md, escape-channel discipline).
use pktflow_noc::config::default_mesh;
use pktflow_noc::sim::synthetic::{run_point, Pattern, SynthConfig, SynthPoint};
use pktflow_noc::sim::PacketRouting;

fn run(
    k: usize,
    vcs: usize,
    depth: usize,
    flits: u32,
    rate: f64,
    seed: u64,
    cycles: u64,
) -> SynthPoint {
    let mut a = default_mesh();
    a.cols = k;
    a.rows = k;
    a.virtual_channels = vcs;
    a.buffer_depth_flits = depth;
    let cfg = SynthConfig {
        pattern: Pattern::uniform(),
        rate,
        packet_flits: flits,
        warmup_cycles: 1_000,
        measure_cycles: cycles,
        drain_cycles: 0,
        seed,
        booksim: None,
    };
    // run_point fails with "deadlock: ..." after 2000 cycles without a flit moving, and checks
    // flit conservation (injected = ejected + in network) at the end
    let p = run_point(&a, PacketRouting::Adaptive, &cfg).unwrap_or_else(|e| {
        panic!("{k}x{k} {vcs} VCs x {depth} flits, rate {rate}, seed {seed}: {e}")
    });
    assert!(p.flits_injected >= p.flits_ejected);
    assert!(
        p.accepted > 0.1,
        "{k}x{k} rate {rate}: accepted only {}",
        p.accepted
    );
    p
}

/// The colleague's reproduction: 8x8, 4 VCs x 8 flits, 1-flit packets, 0.45, seed 3.
#[test]
fn adaptive_8x8_uniform_045_seed3_no_deadlock() {
    run(8, 4, 8, 1, 0.45, 3, 8_000);
}

/// Sustained overload on 8x8.
#[test]
fn adaptive_8x8_uniform_overload_no_deadlock() {
    run(8, 4, 8, 1, 0.8, 3, 10_000);
}

/// 4x4 with 2 VCs (one escape, one adaptive) under overload, a few seeds and packet lengths.
#[test]
fn adaptive_4x4_two_vcs_overload_no_deadlock() {
    for seed in 0..4 {
        for (flits, depth) in [(1, 8), (1, 2), (4, 4), (4, 8)] {
            run(4, 2, depth, flits, 0.9, seed, 10_000);
        }
    }
}
