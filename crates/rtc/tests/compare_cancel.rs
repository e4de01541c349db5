//! `compare` interrupted (its own test binary: the flag is process-wide): the models finished
//! are kept and the result says `interrupted`.
#[test]
fn an_interrupted_comparison_returns_what_it_finished() {
    pktflow_model::cancel::request();
    let req = pktflow_rtc::compare::parse(
        r#"{"app": "echo", "packets": 20, "window_seconds": 0.001, "cm": "cm4"}"#,
    )
    .unwrap();
    let c = pktflow_rtc::compare::compare(&req, &mut |_, _, _| {}).unwrap();
    assert!(c.interrupted);
    assert!(c.rows.is_empty(), "{} rows", c.rows.len());
    pktflow_model::cancel::reset();
}
