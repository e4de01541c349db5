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

mod fuzz {
    use pktflow_npsim::api::parse;
    use proptest::prelude::*;

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("null".to_string()),
            Just("-1".to_string()),
            Just("1e99".to_string()),
            Just("\"NaN\"".to_string()),
            Just("[]".to_string()),
            Just("{}".to_string()),
            Just("\"fixed\"".to_string()),
            Just("[\"ARPQuerier\", 3]".to_string()),
            any::<u64>().prop_map(|x| x.to_string()),
            "[a-z]{0,8}".prop_map(|s| format!("\"{s}\"")),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        /// Near-valid `sim.slow_path` sections: parsed or refused with one line naming
        /// `slow_path`, never a panic.
        #[test]
        fn slow_path_sections_never_panic(
            key in prop_oneof![
                Just("policy"), Just("elements"), Just("interrupt_cycles"),
                Just("role_switch_cycles"), Just("message_cycles"), Just("other")
            ],
            v in value(),
        ) {
            let req = format!(
                r#"{{"spec": {{"app": "router", "packets": 50}}, "sim": {{"inter_arrival_cycles": 1000, "slow_path": {{"{key}": {v}}}}}}}"#
            );
            if let Err(e) = parse(&req) {
                prop_assert!(e.contains("slow_path") && !e.contains('\n'), "{}", e);
            }
        }

        #[test]
        fn arbitrary_slow_path_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..64)) {
            let s = String::from_utf8_lossy(&b);
            let req = format!(
                r#"{{"spec": {{"app": "router"}}, "sim": {{"slow_path": {s}}}}}"#
            );
            let _ = parse(&req);
        }
    }
}
