//! Ctrl-C during an application run on the mesh (a file of its own: the flag is process-wide).
//! Raised before the run, the functional profile stops at once with `interrupted`; raised from
//! the progress callback during the simulation, the run returns the points finished with
//! `"interrupted": true`.
use pktflow_model::cancel;
use pktflow_noc::api::stream_run_with;
use serde_json::Value;

#[test]
fn ctrl_c_stops_an_application_run() {
    cancel::request();
    let e = stream_run_with(
        r#"{"graph":"router","rate":1e7,"packets":500,"warmup":100,"measure":2000}"#,
        &mut |_, _, _| {},
    )
    .unwrap_err()
    .to_string();
    cancel::reset();
    assert_eq!(e, "interrupted");

    // during the second (unpaced) simulation: the paced point is kept
    let mut calls = 0u64;
    let out = stream_run_with(
        r#"{"graph":"router","rate":1e7,"packets":200,"warmup":100,"measure":40000,"anneal_moves":500}"#,
        &mut |done, total, _| {
            calls += 1;
            if done > total / 2 {
                cancel::request();
            }
        },
    );
    cancel::reset();
    let v: Value = serde_json::from_str(&out.unwrap()).unwrap();
    assert!(calls > 0);
    assert_eq!(v["interrupted"], true);
    assert!(
        v["points"].as_array().unwrap().len() <= 1,
        "{}",
        v["points"]
    );
}
