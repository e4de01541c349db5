//! Longest-prefix match on the real 2014 BGP table (~510k prefixes): the 16-8-8 trie against
//! an independent reference (a hash set per prefix length, probed from /32 down), on addresses
//! inside random prefixes and uniformly random ones; and the `RadixIPLookup ROUTES_FILE`
//! extension loading the same file. Build and lookup times are measured by
//! `cargo bench -p pktflow-elements --bench lpm`, not here.
use pktflow_elements::conf::InitEnv;
use pktflow_elements::elements::ip::lpm::{Lpm, Route};
use pktflow_traffic::RouteTable;
use rand::{Rng, SeedableRng};
use std::collections::HashMap;
use std::path::PathBuf;

fn table_path() -> PathBuf {
    let repo = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../data/bgp/ipv4-bgp-prefixes-2014.dat.gz"
    ));
    if repo.exists() {
        return repo;
    }
    PathBuf::from("/work/shared/data/ipv4-bgp-prefixes-2014.dat.gz")
}

const PORTS: u16 = 16;

#[test]
fn real_table_matches_reference() {
    let table = RouteTable::load(table_path(), PORTS).expect("BGP table");
    assert!(
        table.entries.len() > 400_000,
        "{} routes",
        table.entries.len()
    );
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
    let lpm = Lpm::build(&routes).unwrap();
    // Reference: per length, prefix -> port; later duplicates win, as in the trie.
    let mut by_len: Vec<HashMap<u32, u16>> = vec![HashMap::new(); 33];
    for r in &routes {
        by_len[r.len as usize].insert(r.addr & pktflow_elements::conf::mask(r.len), r.port);
    }
    let reference = |a: u32| -> Option<u16> {
        (0..=32u8).rev().find_map(|l| {
            by_len[l as usize]
                .get(&(a & pktflow_elements::conf::mask(l)))
                .copied()
        })
    };
    let n = if cfg!(debug_assertions) {
        20_000
    } else {
        400_000
    };
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2014);
    let mut addrs = Vec::with_capacity(n);
    for i in 0..n {
        let a = if i % 2 == 0 {
            let r = &routes[rng.gen_range(0..routes.len())];
            let host = rng.gen::<u32>() & !pktflow_elements::conf::mask(r.len);
            r.addr | host
        } else {
            rng.gen::<u32>()
        };
        addrs.push(a);
    }
    let mut hits = 0;
    for &a in &addrs {
        let got = lpm.lookup(a).result.map(|(p, _)| p);
        assert_eq!(got, reference(a), "address {}", std::net::Ipv4Addr::from(a));
        hits += got.is_some() as usize;
    }
    assert!(hits > n / 2, "hits {hits} of {n}");
}

#[test]
fn radix_ip_lookup_loads_routes_file() {
    let c = pktflow_elements::registry::find("RadixIPLookup").unwrap();
    let path = table_path();
    let env = InitEnv {
        base_dir: path.parent().unwrap().to_path_buf(),
        ..Default::default()
    };
    let cfg = format!(
        "ROUTES_FILE {}, ROUTES_PORTS 4, 10.0.0.1/32 4",
        path.file_name().unwrap().to_str().unwrap()
    );
    let e = (c.make)(&cfg, &env).unwrap();
    assert_eq!(e.ports().outputs, (5, 5));
    assert!(e.stats()["routes"].as_u64().unwrap() > 400_000);
    let err = (c.make)("ROUTES_FILE /nonexistent/table.gz", &env)
        .err()
        .unwrap();
    assert!(err.contains("ROUTES_FILE /nonexistent/table.gz"), "{err}");
}
