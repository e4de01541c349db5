//! The simulator is deterministic for a seed: these runs pin the exact delivery sequence (every
//! packet's source, destination, creation and delivery cycle, hashed in order) and the link
//! counters, so a change of the simulator's data structures cannot silently change results.
//! The expected values come from the simulator before its speed-up (issue 4); a deliberate
//! change of the model must update them. The adaptive values changed once, with the
//! deadlock fix (adaptive and escape VCs are taken only with room for the whole packet,
//! `tests/adaptive_deadlock.rs`), and once with the fix of the adaptive plateau past saturation
//! (a packet leaving its source leaves half a buffer free downstream,
//! `tests/adaptive_plateau.rs`; the 1-flit adaptive run at this load was unaffected); the DOR
//! and circuit values did not.
use pktflow_noc::config::default_mesh;
use pktflow_noc::sim::{Network, PacketRouting};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn fnv(h: &mut u64, x: u64) {
    for b in x.to_le_bytes() {
        *h ^= b as u64;
        *h = h.wrapping_mul(0x100000001b3);
    }
}

/// 4x4 mesh; `var` 1 uses non-default delays, 2 VCs of 4 flits and narrow NIs. Uniform random
/// traffic at 0.3 flits/node/cycle (or, with `circuits`, four row circuits carrying a third of
/// the packets). Returns (flits injected, flits ejected, packets delivered, hash).
fn run(
    var: u32,
    routing: PacketRouting,
    pf: u32,
    circuits: bool,
    cycles: u64,
) -> (u64, u64, u64, u64) {
    let mut a = default_mesh();
    a.cols = 4;
    a.rows = 4;
    if var == 1 {
        a.route_compute_cycles = 2;
        a.link_latency_cycles = 2;
        a.credit_delay_cycles = 3;
        a.virtual_channels = 2;
        a.buffer_depth_flits = 4;
        a.node_injection_flits_per_cycle = 1;
        a.node_ejection_flits_per_cycle = 2;
    }
    let mut net = Network::new(&a, routing).unwrap();
    let n = 16;
    // row r: a circuit from (0, r) east to (3, r)
    let ids = if circuits {
        let c: Vec<(usize, Vec<u8>)> = (0..4).map(|r| (r * 4, vec![0u8, 0, 0])).collect();
        net.set_circuits(&c).unwrap()
    } else {
        Vec::new()
    };
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let mut h = 0xcbf29ce484222325u64;
    let p_inj = 0.3 / pf as f64;
    for t in 0..cycles {
        for src in 0..n {
            if rng.gen::<f64>() < p_inj {
                let d = rng.gen_range(0..n - 1);
                let d = if d >= src { d + 1 } else { d };
                if circuits && src % 4 == 0 && rng.gen_range(0..3) == 0 {
                    net.send(src, src + 3, pf, t, Some(ids[src / 4]));
                } else {
                    net.send(src, d, pf, t, None);
                }
            }
        }
        net.step();
        for d in net.delivered.drain(..) {
            for x in [
                d.tag,
                d.src as u64,
                d.dst as u64,
                d.flits as u64,
                d.created,
                d.delivered,
            ] {
                fnv(&mut h, x);
            }
        }
    }
    net.check_conservation().unwrap();
    for &l in &net.link_flits {
        fnv(&mut h, l);
    }
    (
        net.flits_injected,
        net.flits_ejected,
        net.packets_delivered,
        h,
    )
}

#[test]
fn delivery_sequences_are_unchanged() {
    #![allow(non_upper_case_globals)]
    const Dor: PacketRouting = PacketRouting::Dor;
    const Adaptive: PacketRouting = PacketRouting::Adaptive;
    let cases = [
        (
            0,
            Dor,
            1,
            false,
            (96073, 95970, 95970, 0xe75df90c70bf8d36u64),
        ),
        (0, Dor, 3, false, (96767, 96669, 32221, 0x089a7030f889cf43)),
        (
            0,
            Adaptive,
            1,
            false,
            (96073, 95968, 95968, 0x408e7b98bb204e7e),
        ),
        (
            0,
            Adaptive,
            3,
            false,
            (96767, 96670, 32222, 0xcef0643c90246e93),
        ),
        (1, Dor, 3, false, (96762, 96605, 32201, 0xeef8df96aa3b324b)),
        (
            1,
            Adaptive,
            3,
            false,
            (96693, 96499, 32164, 0xf402abf412e3b489),
        ),
        (0, Dor, 1, true, (95737, 95647, 95647, 0x9e56052cdd5dc0d8)),
        (0, Dor, 3, true, (96720, 96641, 32212, 0xffb422217b3df24c)),
        (1, Dor, 3, true, (96714, 96612, 32204, 0x787b7a96e2ebc33b)),
        (
            0,
            Adaptive,
            2,
            true,
            (96943, 96861, 48429, 0xbdd59f09b9bcc9d6),
        ),
    ];
    for (var, routing, pf, circ, want) in cases {
        let got = run(var, routing, pf, circ, 20_000);
        assert_eq!(
            got, want,
            "var {var} {routing:?} {pf}-flit packets circuits {circ}"
        );
    }
}
