//! Generated PPF graphs for the measurements (runtime growth, gap to the optimum): random
//! dataflow DAGs from rx to tx with a main path and low-rate exception branches, PPF costs of
//! the magnitude of the Click elements' cost rules, code sizes that make the 4K-instruction
//! control store bind after a few groupings, and a few locks. Deterministic in the seed.
use crate::graph::{ChannelFile, LockUse, MemUse, Ppf, PpfGraph};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[derive(Clone, Debug)]
pub struct GenParams {
    pub ppfs: usize,
    pub seed: u64,
    /// Probability that a PPF has a second successor.
    pub branch: f64,
    /// Probability that a branch is a low-rate exception path (1%-5% of the packets).
    pub exception: f64,
    /// Code size range per PPF, instructions.
    pub code: (u32, u32),
    pub lock: f64,
}

impl GenParams {
    /// Small instances (for the exact optimum).
    pub fn small(ppfs: usize, seed: u64) -> GenParams {
        GenParams {
            ppfs,
            seed,
            branch: 0.35,
            exception: 0.5,
            code: (200, 1800),
            lock: 0.2,
        }
    }
    /// Small instances shaped like the Click benchmarks: element-sized code (50-600
    /// instructions, so the control store rarely binds) and fewer locks.
    pub fn element_like(ppfs: usize, seed: u64) -> GenParams {
        GenParams {
            ppfs,
            seed,
            branch: 0.35,
            exception: 0.7,
            code: (50, 600),
            lock: 0.1,
        }
    }
    /// Large instances (runtime growth): smaller PPFs, as in a fine-grained program.
    pub fn large(ppfs: usize, seed: u64) -> GenParams {
        GenParams {
            ppfs,
            seed,
            branch: 0.3,
            exception: 0.5,
            code: (50, 400),
            lock: 0.1,
        }
    }
}

#[allow(clippy::needless_range_loop)] // indices name PPFs in several arrays
pub fn generate(p: &GenParams) -> PpfGraph {
    let m = p.ppfs.max(1);
    let mut rng = ChaCha8Rng::seed_from_u64(p.seed ^ 0x7d9a_11c3);
    // Successors (index > i, or m = tx) with the fraction of i's packets each gets.
    let mut succ: Vec<Vec<(usize, f64)>> = vec![Vec::new(); m];
    let mut has_pred = vec![false; m];
    has_pred[0] = true;
    for i in 0..m {
        let main = if i + 1 < m {
            // Mostly the next PPF (a pipeline), sometimes a little further.
            (i + 1 + rng.gen_range(0..3usize).min(m - i - 1)).min(m - 1)
        } else {
            m
        };
        if rng.gen_bool(p.branch) && i + 1 < m {
            let other = if rng.gen_bool(0.3) {
                m
            } else {
                rng.gen_range(i + 1..m)
            };
            if other != main {
                let f = if rng.gen_bool(p.exception) {
                    rng.gen_range(0.01..0.05)
                } else {
                    rng.gen_range(0.2..0.5)
                };
                succ[i].push((main, 1.0 - f));
                succ[i].push((other, f));
            } else {
                succ[i].push((main, 1.0));
            }
        } else {
            succ[i].push((main, 1.0));
        }
        for &(j, _) in &succ[i] {
            if j < m {
                has_pred[j] = true;
            }
        }
    }
    // Every PPF needs a predecessor: split a little traffic off an earlier PPF.
    for j in 1..m {
        if !has_pred[j] {
            let i = rng.gen_range(0..j);
            let f = rng.gen_range(0.02..0.3);
            for e in succ[i].iter_mut() {
                e.1 *= 1.0 - f;
            }
            succ[i].push((j, f));
        }
    }
    // Rates in index order (edges go forward).
    let mut rate = vec![0.0f64; m];
    rate[0] = 1.0;
    for i in 0..m {
        for &(j, f) in &succ[i] {
            if j < m {
                rate[j] += rate[i] * f;
            }
        }
    }
    let name = |i: usize| {
        if i == m {
            "tx".to_string()
        } else {
            format!("f{i}")
        }
    };
    let mut ppfs = Vec::with_capacity(m);
    for i in 0..m {
        let mut mem = vec![MemUse {
            level: "sram".into(),
            reads: rng.gen_range(0..5) as f64,
            writes: rng.gen_range(0..3) as f64,
        }];
        if rng.gen_bool(0.3) {
            mem.push(MemUse {
                level: "scratchpad".into(),
                reads: rng.gen_range(1..3) as f64,
                writes: 0.0,
            });
        }
        let locks = if rng.gen_bool(p.lock) {
            vec![LockUse {
                name: format!("lock{i}"),
                acquisitions: 1.0,
                cs_cycles: rng.gen_range(20.0..150.0),
            }]
        } else {
            vec![]
        };
        ppfs.push(Ppf {
            name: name(i),
            class: "generated".into(),
            rate: rate[i],
            instructions: rng.gen_range(20.0..600.0),
            mem,
            locks,
            code_size: rng.gen_range(p.code.0..=p.code.1),
            writes_packet: rng.gen_bool(0.5),
        });
    }
    let mut chans = vec![ChannelFile {
        from: "rx".into(),
        to: name(0),
        rate: 1.0,
        bytes: 64,
    }];
    for i in 0..m {
        for &(j, f) in &succ[i] {
            chans.push(ChannelFile {
                from: name(i),
                to: name(j),
                rate: rate[i] * f,
                bytes: if rng.gen_bool(0.2) { 128 } else { 64 },
            });
        }
    }
    PpfGraph::new(&format!("gen-{m}-{}", p.seed), ppfs, &chans, 64.0)
        .expect("generated graphs are valid by construction")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_graphs_are_valid_and_deterministic() {
        for m in [1, 2, 5, 40, 300] {
            for seed in 0..5 {
                let a = generate(&GenParams::small(m, seed));
                let b = generate(&GenParams::small(m, seed));
                assert_eq!(a.ppfs, b.ppfs);
                assert_eq!(a.len(), m);
                // Flow conservation: what enters a PPF is its rate.
                for (i, p) in a.ppfs.iter().enumerate() {
                    let inflow: f64 = a.in_ch[i].iter().map(|&k| a.channels[k].rate).sum();
                    assert!((inflow - p.rate).abs() < 1e-9, "m {m} seed {seed} ppf {i}");
                }
            }
        }
    }
}
