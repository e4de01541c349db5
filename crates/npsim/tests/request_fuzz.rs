//! Fuzzing of the JSON requests of simulate/maxrate/bottleneck/explore: arbitrary bytes and
//! mutated valid requests never panic, and a refusal is one line naming the section and key
//! (parsing and validation only, no simulation: 256 cases each, well under a second).
use pktflow_npsim::api::parse;
use proptest::prelude::*;

const KEYS: &[(&str, &str)] = &[
    ("spec", "pes"),
    ("spec", "packets"),
    ("spec", "subset_size"),
    ("spec", "traffic_seed"),
    ("spec", "replication"),
    ("spec", "mapper"),
    ("spec", "destinations"),
    ("spec", "arch_set"),
    ("sim", "inter_arrival_cycles"),
    ("sim", "warmup_packets"),
    ("sim", "task_queue_capacity"),
    ("sim", "time_scale"),
    ("sim", "scheduling"),
    ("sim", "lock_release"),
    ("sim", "arrivals"),
    ("sim", "ideal"),
    ("search", "tolerance"),
    ("search", "precision"),
    ("search", "max_runs"),
    ("search", "start_cycles"),
    ("bottleneck", "threshold"),
    ("bottleneck", "extra"),
    ("explore", "pes"),
    ("explore", "replications"),
    ("explore", "threshold"),
    ("explore", "baseline_pes"),
];

fn values() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_string()),
        Just("-1".to_string()),
        Just("\"NaN\"".to_string()),
        Just("\"Infinity\"".to_string()),
        Just("\"-Infinity\"".to_string()),
        Just("1e308".to_string()),
        Just("18446744073709551616".to_string()),
        Just("4294967295".to_string()),
        Just("\"x\"".to_string()),
        Just("null".to_string()),
        Just("[]".to_string()),
        Just("[0, 5000]".to_string()),
        Just("{}".to_string()),
        Just("true".to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| format!("{v:e}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn mutated_requests_never_panic_and_name_the_key(k in 0..KEYS.len(), value in values()) {
        let (section, key) = KEYS[k];
        let req = format!(r#"{{"spec": {{"packets": 500}}, "{section}": {{"{key}": {value}}}}}"#);
        let req = req.replacen(r#"{"spec": {"packets": 500}, "spec": "#, r#"{"spec": "#, 1);
        if let Err(e) = parse(&req) {
            prop_assert!(!e.contains('\n'), "{}", e);
            prop_assert!(
                e.contains(&format!("{section}.{key}")) || e.contains(section) || e.contains("spec.packets"),
                "{}: {}", req, e
            );
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(text in "\\PC{0,300}") {
        if let Err(e) = parse(&text) {
            prop_assert!(!e.is_empty());
        }
    }
}
