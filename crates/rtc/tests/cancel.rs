//! The cancellation path (its own test binary: the flag is process-wide).
use pktflow_rtc::api::{conflicts, rtc, ConflictsRequest, RtcRequest, SearchSpec, WorkloadSpec};

#[test]
fn interrupted_runs_stop_with_the_interrupted_message() {
    pktflow_model::cancel::request();
    let req = RtcRequest {
        workload: WorkloadSpec {
            app: "echo".into(),
            packets: 10,
            ..Default::default()
        },
        search: SearchSpec {
            window_seconds: 1.0,
            ..Default::default()
        },
        ..Default::default()
    };
    let e = rtc(&req, &mut |_, _| {}).unwrap_err();
    assert!(pktflow_model::cancel::is_cancel_message(&e), "{e}");
    let e = conflicts(&ConflictsRequest {
        workload: WorkloadSpec {
            app: "parametric".into(),
            packets: 10_000,
            ..Default::default()
        },
        window: Some("2:64".into()),
        ..Default::default()
    })
    .unwrap_err();
    assert!(pktflow_model::cancel::is_cancel_message(&e), "{e}");
    pktflow_model::cancel::reset();
}
