//! Ctrl-C (the process-wide cancellation flag): a sweep returns the points it finished marked
//! `"interrupted": true`; work with nothing finished stops with the error `interrupted`.
//! In a test binary of its own: the flag is global.
use pktflow_model::cancel;
use pktflow_noc::api::{noc_sweep_with, stream_run, stream_run_with};
use serde_json::Value;

#[test]
fn cancellation_paths() {
    // the flag is raised while the second point runs: the first point is returned
    cancel::reset();
    let out = noc_sweep_with(
        r#"{"mesh":"4x4","rates":[0.05,0.1,0.2],"warmup":200,"measure":2000}"#,
        &mut |_, _, label| {
            if label.contains("(2/") {
                cancel::request();
            }
        },
    )
    .unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["points"].as_array().unwrap().len(), 1);

    // stream simulation: interrupted during the second scale
    cancel::reset();
    let out = stream_run_with(
        r#"{"graph":"FMRadio","mesh":"4x4","routing":"dor","scales":[0.0,1.0,2.0],"warmup":100,"measure":300000,"anneal_moves":500}"#,
        &mut |_, _, label| {
            if label.contains("(2/") {
                cancel::request();
            }
        },
    )
    .unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["interrupted"], true);
    assert_eq!(v["points"].as_array().unwrap().len(), 1);

    // nothing finished: the layout annealing stops with `interrupted`
    cancel::request();
    let e = stream_run(r#"{"graph":"FMRadio","no_sim":true,"anneal_moves":100000000}"#)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "interrupted");
    cancel::reset();
}
