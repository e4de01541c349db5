//! Ctrl-C during the transformations' own work (the splitting feedback loop, the early
//! signalling profile): `interrupted`, promptly. A test binary of its own (the flag is global).
use pktflow_model::cancel;
use pktflow_npsim::api::{maxrate_json, simulate_json};

#[test]
fn the_splitting_loop_and_the_early_profile_stop_with_interrupted() {
    cancel::request();
    let split = r#"{"spec": {"packets": 2000, "pes": 8}, "sim": {"transform": "split"}}"#;
    assert_eq!(maxrate_json(split).unwrap_err(), "interrupted");
    let early = r#"{"spec": {"packets": 20000}, "sim": {"inter_arrival_cycles": 500,
                    "transform": "early,speculate,locality", "packets": 20000}}"#;
    assert_eq!(simulate_json(early).unwrap_err(), "interrupted");
    cancel::reset();
}
