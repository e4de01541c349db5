//! The built-in applications parse and flatten to the documented graphs.
mod common;
use common::{connections, elements};
use pktflow_click::parse_file;
use std::path::PathBuf;

fn app(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../apps")
        .join(name)
}

#[test]
fn router_has_44_elements_and_57_connections() {
    let out = parse_file(&app("router.click")).unwrap();
    let g = &out.graph;
    assert_eq!(g.elements.len(), 44);
    assert_eq!(g.connections.len(), 57);
    assert!(out.warnings.is_empty() && out.requires.is_empty());
    let count = |class: &str| g.elements.iter().filter(|e| e.class == class).count();
    assert_eq!(count("ICMPError"), 8);
    assert_eq!(count("FromDevice"), 2);
    assert_eq!(count("ToDevice"), 2);
    assert_eq!(count("StaticIPLookup"), 1);
    assert_eq!(count("Discard"), 3);
    let rt = g.index_of("rt").unwrap();
    // Every ICMPError feeds the routing table; each route output 0..2 is used.
    let into_rt = g.connections.iter().filter(|c| c.to == rt).count();
    assert_eq!(into_rt, 9); // GetIPAddress + 8 ICMPErrors
    let mut rt_outs: Vec<usize> = g
        .connections
        .iter()
        .filter(|c| c.from == rt)
        .map(|c| c.from_port)
        .collect();
    rt_outs.sort();
    assert_eq!(rt_outs, vec![0, 1, 2]);
    let e = &g.elements[g.index_of("arpq1").unwrap()];
    assert_eq!(
        (e.class.as_str(), e.config.as_str()),
        ("ARPQuerier", "192.168.1.1, 00:00:c0:4f:71:ef")
    );
    assert_eq!(e.span.file, app("router.click").display().to_string());
    let c = &g.elements[g.index_of("c0").unwrap()];
    assert_eq!(c.config, "12/0806 20/0001, 12/0806 20/0002, 12/0800, -");
}

#[test]
fn generated_two_interface_router_equals_the_hand_written_one() {
    let hand = parse_file(&app("router.click")).unwrap().graph;
    let gen = pktflow_click::parse_str(&pktflow_click::gen::ip_router(2), "gen.click")
        .unwrap()
        .graph;
    let mut a = elements(&hand);
    let mut b = elements(&gen);
    a.sort();
    b.sort();
    // Same element names, classes and configurations (whitespace of the route table aside).
    let norm = |v: Vec<String>| {
        v.into_iter()
            .map(|s| s.split_whitespace().collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
    };
    assert_eq!(norm(a), norm(b));
    assert_eq!(connections(&hand), connections(&gen));
}

#[test]
fn nat_gateway() {
    let out = parse_file(&app("nat.click")).unwrap();
    let g = &out.graph;
    assert_eq!(g.elements.len(), 30, "{:#?}", elements(g));
    assert_eq!(g.connections.len(), 40);
    let get = |n: &str| &g.elements[g.index_of(n).unwrap_or_else(|| panic!("no {}", n))];
    assert_eq!(get("rw").class, "IPRewriter");
    assert_eq!(get("rw").config, "pattern NAT 0 1, drop");
    assert_eq!(get("pats").config, "NAT 1.0.0.1 50000-65535 - -");
    assert_eq!(get("irw").config, "pattern 1.0.0.1 - 0 1, drop");
    assert_eq!(
        get("out_ipc").config,
        "dst host 1.0.0.1 and (tcp or udp), dst host 1.0.0.1 and icmp, -"
    );
    assert_eq!(get("in_arpq").config, "10.0.0.1, 00:00:c0:ae:67:ef");
    let rw = g.index_of("rw").unwrap();
    let ports = |dir_out: bool| {
        let mut v: Vec<usize> = g
            .connections
            .iter()
            .filter(|c| if dir_out { c.from == rw } else { c.to == rw })
            .map(|c| if dir_out { c.from_port } else { c.to_port })
            .collect();
        v.sort();
        v
    };
    assert_eq!(ports(false), vec![0, 1]);
    assert_eq!(ports(true), vec![0, 1]);
    for class in ["IPClassifier", "IPRewriterPatterns", "ARPResponder"] {
        assert!(g.elements.iter().any(|e| e.class == class), "{}", class);
    }
    // Checksums are updated incrementally by the rewriters, never recomputed over the payload.
    for class in ["SetIPChecksum", "SetTCPChecksum"] {
        assert!(!g.elements.iter().any(|e| e.class == class), "{}", class);
    }
}

#[test]
fn router64_file_is_the_generator_output_and_flattens() {
    let text = std::fs::read_to_string(app("router64.click")).unwrap();
    assert_eq!(
        text,
        pktflow_click::gen::ip_router(64),
        "apps/router64.click is stale: regenerate it"
    );
    let g = parse_file(&app("router64.click")).unwrap().graph;
    assert_eq!(g.elements.len(), 19 * 64 + 6);
    assert_eq!(g.connections.len(), 26 * 64 + 5);
    assert_eq!(g.elements[g.index_of("arpt").unwrap()].config, "65");
    assert!(g.index_of("fr63").is_some());
}
