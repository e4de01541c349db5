//! Whole flows: built-in application -> synthetic trace -> functional run -> profile.
use pktflow_profile::run::{profile, Source};
use std::path::Path;

fn prof(app: &str, n: u64, seed: u64) -> serde_json::Value {
    profile(
        app,
        &Source::Synthetic { packets: n, seed },
        Path::new("/tmp"),
        |_| {},
    )
    .unwrap()
}

#[test]
fn router_profile_has_the_shape_of_seed_000() {
    let p = prof("router", 3000, 1);
    println!("{}", serde_json::to_string_pretty(&p).unwrap());
    assert_eq!(p["conservation_errors"], 0);
    let visits = p["elements_visited_per_packet"]["mean"].as_f64().unwrap();
    assert!(
        (12.0..=20.0).contains(&visits),
        "visits per packet {visits}"
    );
    let outputs: u64 = p["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["count"].as_u64().unwrap())
        .sum();
    assert!(outputs as f64 > 0.8 * 3000.0, "delivered {outputs}");
}

#[test]
fn nat_profile_translates_both_directions() {
    let p = prof("nat", 3000, 2);
    assert_eq!(p["conservation_errors"], 0);
    assert!(
        p["far_end_ip_replies"].as_u64().unwrap() > 500,
        "replies come back through the NAT"
    );
    let rw = &p["element_stats"]["rw"];
    assert!(rw["created"].as_u64().unwrap() > 100, "{rw}");
    let share = p["critical_section_instruction_share"].as_f64().unwrap();
    assert!(
        share > 0.05,
        "flow table and queues are shared state: {share}"
    );
    let drops: u64 = p["drops"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["reason"] == "Discard")
        .map(|d| d["count"].as_u64().unwrap())
        .sum();
    assert!(drops < 300, "unsolicited traffic should be rare: {drops}");
}

#[test]
fn same_seed_same_profile() {
    let a = prof("router", 1000, 7);
    let b = prof("router", 1000, 7);
    for k in [
        "packets",
        "elements_visited_per_packet",
        "instructions_per_packet",
        "bytes_per_packet",
        "drops",
        "outputs",
    ] {
        assert_eq!(a[k], b[k], "{k}");
    }
}
