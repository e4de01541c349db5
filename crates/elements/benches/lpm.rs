//! Longest-prefix match on the real 2014 BGP table (data/bgp): trie build time, memory, and
//! lookup time for addresses half inside random prefixes, half uniformly random.
//! Run: `cargo bench -p pktflow-elements --bench lpm`
use pktflow_elements::elements::ip::lpm::{Lpm, Route};
use pktflow_traffic::RouteTable;
use rand::{Rng, SeedableRng};
use std::time::Instant;

fn main() {
    let t0 = Instant::now();
    let table = RouteTable::load_bundled(16).expect("bundled BGP table (data/bgp)");
    let load = t0.elapsed();
    let routes: Vec<Route> = table
        .entries
        .iter()
        .map(|r| Route {
            addr: r.prefix,
            len: r.len,
            gw: None,
            port: r.next_hop_port,
        })
        .collect();
    let mut best_build = f64::MAX;
    let mut lpm = None;
    for _ in 0..5 {
        let t = Instant::now();
        let l = Lpm::build(&routes).unwrap();
        best_build = best_build.min(t.elapsed().as_secs_f64());
        lpm = Some(l);
    }
    let lpm = lpm.unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2014);
    let n = 1_000_000;
    let addrs: Vec<u32> = (0..n)
        .map(|i| {
            if i % 2 == 0 {
                let r = &routes[rng.gen_range(0..routes.len())];
                r.addr | (rng.gen::<u32>() & !pktflow_elements::conf::mask(r.len))
            } else {
                rng.gen()
            }
        })
        .collect();
    let mut best = f64::MAX;
    let mut levels = 0u64;
    for _ in 0..5 {
        let t = Instant::now();
        levels = 0;
        for &a in &addrs {
            levels += std::hint::black_box(lpm.lookup(a)).levels as u64;
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "LPM on {} prefixes: load {:.0} ms, build best {:.0} ms, {:.1} MB, lookup best {:.1} ns ({:.2} levels/lookup, {} addresses x5)",
        routes.len(),
        load.as_secs_f64() * 1e3,
        best_build * 1e3,
        lpm.bytes() as f64 / 1e6,
        best * 1e9 / n as f64,
        levels as f64 / n as f64,
        n
    );
}
