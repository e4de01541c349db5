//! How the coarse model of the `anneal` mapper (seed 000 section 3.1 step 4) ranks mappings
//! against the full simulator: random mappings of APP on PES PEs under REPLICATION, each rated
//! by both; prints Spearman's rank correlation and whether both pick the same best mapping.
//! `cargo run --release -p pktflow-npsim --example npsim_coarse -- [APP] [PES] [REPLICATION] [N] [PACKETS]`
use pktflow_npsim::app::{AppSpec, Prepared};
use pktflow_npsim::mapper::{mapping_from, pe_split, CoarseModel};
use pktflow_npsim::{MaxRateConfig, Replication, SimConfig};

fn ranks(v: &[f64]) -> Vec<f64> {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < idx.len() {
        let mut j = i;
        while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
            j += 1;
        }
        for k in i..=j {
            r[idx[k]] = (i + j) as f64 / 2.0;
        }
        i = j + 1;
    }
    r
}

fn pearson(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len() as f64;
    let (ma, mb) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let cov: f64 = a.iter().zip(b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let va: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let vb: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    cov / (va * vb).sqrt()
}

fn main() -> Result<(), String> {
    let a: Vec<String> = std::env::args().collect();
    let app = a.get(1).cloned().unwrap_or_else(|| "router".into());
    let pes: u32 = a.get(2).map(|s| s.parse().unwrap()).unwrap_or(16);
    let rep = Replication::parse(a.get(3).map(String::as_str).unwrap_or("global"))?;
    let n: usize = a.get(4).map(|s| s.parse().unwrap()).unwrap_or(20);
    let packets: u64 = a.get(5).map(|s| s.parse().unwrap()).unwrap_or(2000);
    let spec = AppSpec {
        app,
        pes: Some(pes),
        replication: rep,
        packets,
        ..Default::default()
    };
    let p = Prepared::new(&spec)?;
    let cfg = SimConfig {
        packets,
        warmup_packets: packets / 5,
        ..Default::default()
    };
    let prof = p.measure(&cfg, 1000.0)?;
    let model = CoarseModel {
        weights: prof.weights.clone(),
        occupancy: prof.occupancy.clone(),
        contexts: p.arch.np.hardware_contexts_per_pe as f64,
        lock_cycles_per_packet: prof.lock_cycles_per_packet,
    };
    let ifp = p.arch.np.interface_pes;
    let (_, proc) = pe_split(pes, ifp);
    let mut seed = 12345u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let rr = pktflow_npsim::mapper::round_robin_assign(&p.iface, pes, ifp);
    let (mut coarse, mut full) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let home: Vec<u32> = (0..p.iface.len())
            .map(|t| {
                if p.iface[t] {
                    rr[t]
                } else {
                    proc[(rnd() % proc.len() as u64) as usize]
                }
            })
            .collect();
        let repl: Vec<bool> = (0..p.iface.len()).map(|_| rnd() % 2 == 0).collect();
        let m = mapping_from(&home, &p.iface, &repl, pes, ifp, rep, spec.subset_size);
        let c = 1e9 / model.cycles_per_packet(&m, pes) / 1e6;
        let f = p
            .max_rate_mapping(&m, &cfg, &MaxRateConfig::default())?
            .packets_per_second
            / 1e6;
        println!("coarse {c:8.3} Mpackets/s  full {f:8.3} Mpackets/s");
        coarse.push(c);
        full.push(f);
    }
    let best = |v: &[f64]| (0..v.len()).max_by(|&a, &b| v[a].total_cmp(&v[b])).unwrap();
    println!(
        "{} mappings: Spearman {:.3}, Pearson {:.3}; coarse's best is full's best: {} (full rate of coarse's pick {:.3} vs best {:.3})",
        n,
        pearson(&ranks(&coarse), &ranks(&full)),
        pearson(&coarse, &full),
        best(&coarse) == best(&full),
        full[best(&coarse)],
        full[best(&full)]
    );
    Ok(())
}
