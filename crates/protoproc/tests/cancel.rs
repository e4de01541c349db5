//! Ctrl-C stops a simulation with "interrupted". In a test binary of its own: the cancellation
//! flag is process-wide.
use pktflow_model::cancel;

#[test]
fn simulation_stops_with_interrupted() {
    let req = r#"{"app": "em3d", "policy": "floating", "cpus": 2, "iterations": 1}"#;
    cancel::reset();
    assert!(pktflow_protoproc::api::sim_json(req).is_ok());
    cancel::request();
    let e = pktflow_protoproc::api::sim_json(req)
        .unwrap_err()
        .to_string();
    assert_eq!(e, "interrupted");
    let e = pktflow_protoproc::api::table2_json("{}")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "interrupted");
    let e = pktflow_protoproc::api::model_json("{}")
        .unwrap_err()
        .to_string();
    assert_eq!(e, "interrupted");
    cancel::reset();
}
