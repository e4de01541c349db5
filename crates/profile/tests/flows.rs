//! Whole flows: built-in application -> synthetic trace -> functional run -> profile.
use pktflow_profile::run::{profile, Source};
use std::path::Path;

fn prof(app: &str, n: u64, seed: u64) -> serde_json::Value {
    profile(
        app,
        &Source::Synthetic { packets: n, seed },
        Path::new("/tmp"),
        |_| true,
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
