//! The slow-path policies on the router (docs/protoproc.md section 6): the orderings the model
//! predicts, from the JSON API.
use pktflow_npsim::api::simulate_json;
use serde_json::Value;

fn run(pes: u32, slow: &str) -> Result<Value, String> {
    let req = format!(
        r#"{{"spec": {{"app": "router", "packets": 400, "pes": {pes}}},
            "sim": {{"inter_arrival_cycles": 3000, "warmup_packets": 80, {slow}}}}}"#
    );
    simulate_json(&req).map(|s| serde_json::from_str(&s).unwrap())
}

fn latency(v: &Value) -> f64 {
    v["latency"]["mean_cycles"].as_f64().unwrap()
}

#[test]
fn with_a_large_interrupt_cost_fixed_and_floating_beat_single() {
    // Every forwarded packet's ARPQuerier visit marked slow path; a 20,000-cycle interrupt.
    let costs = r#""elements": ["ARPQuerier"], "interrupt_cycles": 20000, "role_switch_cycles": 0, "message_cycles": 50"#;
    let lat = |p: &str| {
        let v = run(8, &format!(r#""slow_path": {{"policy": "{p}", {costs}}}"#)).unwrap();
        assert_eq!(v["in_flight_at_end"], 0);
        latency(&v)
    };
    let (single, fixed, floating) = (lat("single"), lat("fixed"), lat("floating"));
    assert!(single > 20_000.0, "single {single}");
    assert!(fixed < single, "fixed {fixed} single {single}");
    assert!(floating < single, "floating {floating} single {single}");
}

#[test]
fn costs_are_charged_per_slow_visit_and_nothing_without_a_policy() {
    let base = latency(&run(8, r#""seed": 1"#).unwrap());
    let none = latency(
        &run(
            8,
            r#""slow_path": {"elements": [], "interrupt_cycles": 50000}"#,
        )
        .unwrap(),
    );
    assert_eq!(base, none);
    let cheap = latency(
        &run(8, r#""slow_path": {"policy": "single", "elements": ["ARPQuerier"], "interrupt_cycles": 0}"#).unwrap(),
    );
    let dear = latency(
        &run(8, r#""slow_path": {"policy": "single", "elements": ["ARPQuerier"], "interrupt_cycles": 5000}"#)
            .unwrap(),
    );
    assert!(dear >= cheap + 4000.0, "cheap {cheap} dear {dear}");
}

#[test]
fn fixed_needs_two_pes_and_bad_values_name_their_key() {
    let e = run(1, r#""slow_path": {"policy": "fixed"}"#).unwrap_err();
    assert!(e.contains("at least 2 PEs"), "{e}");
    let e = run(8, r#""slow_path": {"policy": "sideways"}"#).unwrap_err();
    assert!(e.contains("slow_path"), "{e}");
    let e = run(
        8,
        r#""slow_path": {"policy": "single", "interrupt_cycles": 99999999999}"#,
    )
    .unwrap_err();
    assert!(e.contains("slow_path"), "{e}");
    let e = run(
        8,
        r#""slow_path": {"policy": "single", "interrupt_cycles": 20000000}"#,
    )
    .unwrap_err();
    assert!(
        e.contains("interrupt_cycles") && e.contains("10000000"),
        "{e}"
    );
    let e = run(
        8,
        r#""slow_path": {"policy": "single", "elements": ["nope"]}"#,
    )
    .unwrap_err();
    assert!(e.contains("'nope'"), "{e}");
}
