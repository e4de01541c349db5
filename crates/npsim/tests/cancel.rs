//! Ctrl-C: the simulator's loops stop on the shared cancellation flag. In a test binary of its
//! own (the flag is process-wide). Each test sets the flag itself, so they run one at a time.
use pktflow_model::cancel;
use pktflow_npsim::api::{bottleneck_json, explore_json, maxrate_json, simulate_json};
use std::sync::Mutex;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn simulate_maxrate_and_bottleneck_stop_with_interrupted() {
    let _g = ONE_AT_A_TIME.lock().unwrap();
    cancel::request();
    let small = r#"{"spec": {"packets": 20000}, "sim": {"inter_arrival_cycles": 500}}"#;
    assert_eq!(simulate_json(small).unwrap_err(), "interrupted");
    assert_eq!(maxrate_json(small).unwrap_err(), "interrupted");
    assert_eq!(
        bottleneck_json(small, |_, _| {}).unwrap_err(),
        "interrupted"
    );
    cancel::reset();
}

#[test]
fn explore_returns_the_finished_points_marked_interrupted() {
    let _g = ONE_AT_A_TIME.lock().unwrap();
    cancel::reset();
    let req = r#"{"spec": {"packets": 300, "mapper": "round-robin"},
                  "explore": {"pes": [4, 8, 12], "replications": ["none"], "bottleneck": false,
                              "workers": 1}}"#;
    // One worker runs the points in order. Interrupt once the first point (4 PEs) is done: the progress call before the second.
    let out = explore_json(req, |done, _, _| {
        if done == 2 {
            cancel::request();
        }
    })
    .unwrap();
    cancel::reset();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["interrupted"], true);
    let pts = v["points"].as_array().unwrap();
    assert_eq!(pts.len(), 1, "{pts:?}");
    assert_eq!(pts[0]["pes"], 4);
    assert_eq!(pts[0]["speedup"], 1.0);
    // Interrupted during step 1: nothing finished, an error.
    let e = explore_json(req, |done, _, _| {
        if done == 0 {
            cancel::request();
        }
    })
    .unwrap_err();
    cancel::reset();
    assert_eq!(e, "interrupted");
}

#[test]
fn parallel_explore_keeps_finished_points_in_grid_order() {
    let _g = ONE_AT_A_TIME.lock().unwrap();
    cancel::reset();
    let req = r#"{"spec": {"packets": 300, "mapper": "round-robin"},
                  "explore": {"pes": [4, 8, 12, 16], "replications": ["none"], "bottleneck": false,
                              "workers": 2}}"#;
    // Interrupt once two points have finished: at most the two running then may still finish.
    let out = explore_json(req, |done, _, _| {
        if done >= 3 {
            cancel::request();
        }
    })
    .unwrap();
    cancel::reset();
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["interrupted"], true);
    let pes: Vec<u64> = v["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pes"].as_u64().unwrap())
        .collect();
    assert!(pes.len() >= 2 && pes.len() < 4, "{pes:?}");
    let mut sorted = pes.clone();
    sorted.sort();
    assert_eq!(pes, sorted, "points out of grid order");
}
