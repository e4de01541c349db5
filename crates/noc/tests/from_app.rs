//! Click applications through the mesh flow (`stream_run` with a built-in application): every
//! element placed, positive throughput, link loads proportional to the rate, the router's
//! ICMP error cycle pipelined. Small runs (a few hundred packets, short windows).
use pktflow_noc::api::stream_run;
use serde_json::Value;

fn run(app: &str, rate: f64, extra: &str) -> Value {
    let req = format!(
        r#"{{"graph":"{app}","mesh":"4x4","rate":{rate},"packets":300,"warmup":500,"measure":5000,"anneal_moves":2000{extra}}}"#
    );
    let out = stream_run(&req).unwrap_or_else(|e| panic!("{req}: {e}"));
    serde_json::from_str(&out).unwrap()
}

fn check_placed(v: &Value) {
    let tiles = v["tiles"].as_u64().unwrap();
    let elements = v["elements"].as_array().unwrap();
    assert!(!elements.is_empty());
    for e in elements {
        let t = e["tile"].as_u64().unwrap_or_else(|| panic!("unplaced {e}"));
        assert!(t < tiles);
        let share: f64 = e["placements"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["share"].as_f64().unwrap())
            .sum();
        assert!((share - 1.0).abs() < 1e-9, "{e}");
    }
    assert!(v["actors"].as_array().unwrap().len() as u64 <= tiles);
}

#[test]
fn router_runs_with_every_element_placed_and_positive_throughput() {
    // 1e7 packets/s: a packet every 200 cycles, 25 in the measured window
    let v = run("router", 1e7, "");
    if std::env::var("SHOW").is_ok() {
        for k in [
            "actors",
            "points",
            "at_rate",
            "sustainable_rate_pps",
            "saturated_links",
            "max_link_utilization",
            "max_core_utilization",
            "analytic_max_rate_pps",
            "profile",
            "route",
            "notes",
        ] {
            println!("{k}: {}", v[k]);
        }
        for c in v["connections"].as_array().unwrap() {
            println!("{c}");
        }
    }
    check_placed(&v);
    assert_eq!(v["kind"], "application");
    assert!(
        v["sustainable_rate_pps"].as_f64().unwrap_or(0.0) > 0.0,
        "{} {}",
        v["points"],
        v["notes"]
    );
    assert!(v["saturation_throughput"].as_f64().unwrap() > 0.0);
    let at = &v["at_rate"];
    assert!(at["delivered_pps"].as_f64().unwrap() > 0.0, "{at}");
    // the paced run cannot deliver more than it is offered (one packet of slack in the window)
    let expected = at["packets_expected_in_window"].as_f64().unwrap();
    assert!(
        at["packets_completed_in_window"].as_f64().unwrap() <= expected + 1.0,
        "{at}"
    );
    // the 44 elements of the router all appear
    assert_eq!(v["elements"].as_array().unwrap().len(), 44);
}

#[test]
fn doubling_the_rate_doubles_every_link_load_and_utilization() {
    let a = run("router", 1e6, r#","no_sim":true"#);
    let b = run("router", 2e6, r#","no_sim":true"#);
    let la = a["link_rate_loads"].as_array().unwrap();
    let lb = b["link_rate_loads"].as_array().unwrap();
    assert_eq!(la.len(), lb.len());
    let mut loaded = 0;
    for (x, y) in la.iter().zip(lb) {
        let (fx, fy) = (
            x["flits_per_cycle"].as_f64().unwrap(),
            y["flits_per_cycle"].as_f64().unwrap(),
        );
        assert!((fy - 2.0 * fx).abs() <= 1e-12 * fy.max(1.0), "{x} {y}");
        loaded += (fx > 0.0) as usize;
    }
    assert!(loaded > 0, "no link carries anything");
    let (ua, ub) = (
        a["max_core_utilization"].as_f64().unwrap(),
        b["max_core_utilization"].as_f64().unwrap(),
    );
    assert!(ua > 0.0 && (ub - 2.0 * ua).abs() < 1e-9 * ub);
    // the same mapping at both rates (the profile and the layout do not depend on the rate)
    let place = |v: &Value| -> Vec<(Value, Value)> {
        v["actors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| (x["tile"].clone(), x["elements"].clone()))
            .collect()
    };
    assert_eq!(place(&a), place(&b));
}

#[test]
fn a_rate_beyond_a_link_saturates_it_and_is_not_sustained() {
    // at the analytic bound x 4 some core or link is loaded beyond 1
    let a = run("router", 1e6, r#","no_sim":true"#);
    let bound = a["analytic_max_rate_pps"].as_f64().unwrap();
    let v = run("router", (bound * 4.0).min(2e9), "");
    let over = v["max_core_utilization"].as_f64().unwrap() > 1.0
        || !v["saturated_links"].as_array().unwrap().is_empty();
    assert!(over, "{}", v["max_link_utilization"]);
    assert_eq!(v["at_rate"]["keeps_up"], false, "{}", v["at_rate"]);
}

#[test]
fn nat_runs_and_descriptors_carry_less_than_packets() {
    let p = run("nat", 1e6, r#","no_sim":true"#);
    check_placed(&p);
    let d = run(
        "nat",
        1e6,
        r#","no_sim":true,"edge_bytes":"descriptor","descriptor_bytes":16"#,
    );
    let sum = |v: &Value| -> f64 {
        v["connections"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["bytes_per_packet"].as_f64().unwrap())
            .sum()
    };
    assert!(sum(&d) < sum(&p), "{} vs {}", sum(&d), sum(&p));
    for c in d["connections"].as_array().unwrap() {
        let ppp = c["packets_per_packet"].as_f64().unwrap();
        assert!((c["bytes_per_packet"].as_f64().unwrap() - 16.0 * ppp).abs() < 1e-9);
    }
    let s = run("nat", 1e6, "");
    assert!(s["sustainable_rate_pps"].as_f64().unwrap() > 0.0);
}

#[test]
fn a_click_file_runs_and_a_mesh_of_one_tile_holds_everything() {
    let dir = std::env::temp_dir().join(format!("pktflow-from-app-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("tiny.click");
    std::fs::write(
        &f,
        "FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> Queue(64) -> ToDevice(eth1);\n",
    )
    .unwrap();
    let v = run(f.to_str().unwrap(), 1e5, "");
    check_placed(&v);
    assert_eq!(v["elements"].as_array().unwrap().len(), 5);
    assert!(v["sustainable_rate_pps"].as_f64().unwrap() > 0.0);
    let one = stream_run(&format!(
        r#"{{"graph":"{}","mesh":"1x1","rate":1e5,"packets":50,"warmup":100,"measure":2000}}"#,
        f.to_str().unwrap()
    ))
    .unwrap();
    let one: Value = serde_json::from_str(&one).unwrap();
    check_placed(&one);
    assert_eq!(one["actors"].as_array().unwrap().len(), 1);
    std::fs::write(&f, "FromDevice(eth0) -> NoSuchElement -> Discard;\n").unwrap();
    let e = stream_run(&format!(
        r#"{{"graph":"{}","rate":1e5}}"#,
        f.to_str().unwrap()
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("tiny.click") && !e.contains('\n'), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// A cycle that every packet crosses (TTL 1: DecIPTTL -> ICMPError -> back to the header
/// check, as in the IP router's error paths): the closing connection is a back edge, its
/// stream starts with one packet's items, and the pipelined loop simulates without deadlock.
#[test]
fn a_crossed_cycle_is_pipelined_by_one_packet() {
    let dir = std::env::temp_dir().join(format!("pktflow-from-app-cyc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("ttl.click");
    std::fs::write(
        &f,
        "src :: InfiniteSource(DATA \\<4500001c000100000111a5ce0a0000020a0000010035003500080000>, LIMIT 40);\n\
         ck :: CheckIPHeader;\n\
         dt :: DecIPTTL;\n\
         src -> ck -> GetIPAddress(16) -> dt -> Discard;\n\
         dt[1] -> ICMPError(10.0.0.1, timeexceeded) -> ck;\n",
    )
    .unwrap();
    let out = stream_run(&format!(
        r#"{{"graph":"{}","mesh":"3x3","rate":1e7,"warmup":500,"measure":5000,"anneal_moves":1000}}"#,
        f.to_str().unwrap()
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let v: Value = serde_json::from_str(&out).unwrap();
    let back: Vec<&Value> = v["connections"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["back_edge"] == true)
        .collect();
    assert_eq!(back.len(), 1, "{}", v["connections"]);
    assert_eq!(back[0]["to"], "ck");
    // every packet comes back once as an ICMP error (generated while it is handled)
    assert_eq!(
        back[0]["packets_per_packet"].as_f64().unwrap(),
        1.0,
        "{}",
        back[0]
    );
    for s in back[0]["streams"].as_array().unwrap() {
        let r = &v["routes"][s.as_u64().unwrap() as usize];
        assert!(r["initial_items"].as_f64().unwrap() >= r["items"].as_f64().unwrap().ceil());
    }
    assert!(
        v["sustainable_rate_pps"].as_f64().unwrap() > 0.0,
        "{}",
        v["points"]
    );
    check_placed(&v);
    let _ = std::fs::remove_dir_all(&dir);
}

mod fuzz {
    use super::*;
    use proptest::prelude::*;

    fn one_line(r: Result<String, pktflow_noc::NocError>) {
        if let Err(e) = r {
            let m = e.to_string();
            assert!(!m.is_empty() && !m.contains('\n'), "{m:?}");
        }
    }

    const FIELDS: &[&str] = &[
        "rate",
        "packets",
        "edge_bytes",
        "descriptor_bytes",
        "clock_hz",
        "cycles_per_instruction",
        "mesh",
        "seed",
        "measure",
        "warmup",
        "anneal_moves",
        "routing",
        "comm",
    ];
    const HOSTILE: &[&str] = &[
        "0",
        "-1",
        "1.5",
        "\"nan\"",
        "\"inf\"",
        "1e300",
        "null",
        "true",
        "[]",
        "{}",
        "\"\"",
        "\"0x0\"",
        "18446744073709551616",
        "\"descriptor\"",
        "\"packet\"",
        "3",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

        /// Arbitrary request text for an application never panics.
        #[test]
        fn arbitrary_request_text(s in ".{0,200}") {
            one_line(stream_run(&format!(r#"{{"graph":"router","rate":1e6,{s}}}"#)));
            one_line(stream_run(&s));
        }

        /// A valid small request with one field replaced by a hostile value: a result or one
        /// line naming the problem.
        #[test]
        fn one_hostile_field(f in 0..FIELDS.len(), h in 0..HOSTILE.len()) {
            let req = format!(
                r#"{{"graph":"nat","rate":1e6,"packets":20,"no_sim":true,"anneal_moves":200,"{}":{}}}"#,
                FIELDS[f], HOSTILE[h]
            );
            one_line(stream_run(&req));
        }

        /// A Click file of arbitrary bytes, or a valid one with a span replaced: never a panic.
        #[test]
        fn click_file_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..300),
                            cut in 0usize..80, junk in "[ -~]{0,12}") {
            let dir = std::env::temp_dir().join(format!("pktflow-from-app-fuzz-{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let f = dir.join("f.click");
            std::fs::write(&f, &bytes).unwrap();
            let req = format!(r#"{{"graph":"{}","rate":1e6,"packets":10,"no_sim":true,"anneal_moves":100}}"#, f.display());
            one_line(stream_run(&req));
            let good = "FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> Queue(64) -> ToDevice(eth1);\n";
            let at = cut.min(good.len());
            let text = format!("{}{}{}", &good[..at], junk, &good[(at + 3).min(good.len())..]);
            std::fs::write(&f, text).unwrap();
            one_line(stream_run(&req));
        }
    }
}

/// A PPF graph file (`pktflow map`'s format) goes through the same flow: rx, its PPFs and tx are
/// the elements, work = rate x instructions, streams = channel rates x packet bytes.
#[test]
fn a_ppf_graph_file_runs() {
    let dir = std::env::temp_dir().join(format!("pktflow-from-app-ppf-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("demo.toml");
    std::fs::write(
        &f,
        "name = \"demo\"\npacket_bytes = 128\n\
         [[ppf]]\nname = \"cls\"\nrate = 1.0\ninstructions = 100\ncode_size = 300\n\
         [[ppf]]\nname = \"fwd\"\nrate = 0.5\ninstructions = 40\ncode_size = 100\n\
         [[channel]]\nfrom = \"rx\"\nto = \"cls\"\nrate = 1.0\n\
         [[channel]]\nfrom = \"cls\"\nto = \"fwd\"\nrate = 0.5\n\
         [[channel]]\nfrom = \"fwd\"\nto = \"tx\"\nrate = 0.5\n\
         [[channel]]\nfrom = \"cls\"\nto = \"tx\"\nrate = 0.5\n",
    )
    .unwrap();
    let spec = f.to_str().unwrap();
    let out = stream_run(&format!(
        r#"{{"graph":"{spec}","mesh":"2x2","rate":1e7,"warmup":200,"measure":5000,"anneal_moves":500}}"#
    ))
    .unwrap_or_else(|e| panic!("{e}"));
    let v: Value = serde_json::from_str(&out).unwrap();
    check_placed(&v);
    let names: Vec<&str> = v["elements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["rx", "cls", "fwd", "tx"]);
    assert!(
        (v["elements"][1]["instructions_per_packet"]
            .as_f64()
            .unwrap()
            - 100.0)
            .abs()
            < 1e-6
    );
    assert!(
        (v["elements"][2]["instructions_per_packet"]
            .as_f64()
            .unwrap()
            - 20.0)
            .abs()
            < 1e-6
    );
    let c = v["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["from"] == "cls" && c["to"] == "fwd")
        .unwrap();
    // half the packets, 128 bytes each: 64 bytes = 16 items per entering packet
    assert!(
        (c["items_per_packet"].as_f64().unwrap() - 16.0).abs() < 1e-6,
        "{c}"
    );
    assert!(v["sustainable_rate_pps"].as_f64().unwrap() > 0.0);
    let e = stream_run(&format!(r#"{{"graph":"{spec}","rate":1e6,"packets":10}}"#))
        .unwrap_err()
        .to_string();
    assert!(e.starts_with("packets must not be given"), "{e}");
    std::fs::write(&f, "[[ppf]]\nname = 3\n").unwrap();
    let e = stream_run(&format!(r#"{{"graph":"{spec}","rate":1e6}}"#))
        .unwrap_err()
        .to_string();
    assert!(e.contains("demo.toml") && !e.contains('\n'), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
