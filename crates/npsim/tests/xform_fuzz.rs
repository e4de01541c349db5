//! `sim.transform` with arbitrary and near-valid values: no panic, one clean line naming the
//! transformation setting (256 cases each, well under a second).
use pktflow_npsim::api::parse;
use proptest::prelude::*;

fn values() -> impl Strategy<Value = String> {
    prop_oneof![
        "\\PC{0,40}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        prop::collection::vec(
            prop_oneof![
                Just("split".to_string()),
                Just("early".to_string()),
                Just("speculate".to_string()),
                Just("locality".to_string()),
                Just("none".to_string()),
                "[a-z]{0,9}",
            ],
            0..6
        )
        .prop_map(|v| serde_json::to_string(&v.join(",")).unwrap()),
        prop::collection::vec("[a-z,]{0,12}", 0..4)
            .prop_map(|v| serde_json::to_string(&v).unwrap()),
        (
            prop_oneof![
                Just("split"),
                Just("wide_bytes"),
                Just("split_candidates"),
                Just("split_iterations"),
                Just("profile_packets"),
                Just("bogus"),
            ],
            prop_oneof![
                Just("0".to_string()),
                Just("-1".to_string()),
                Just("1e308".to_string()),
                Just("18446744073709551616".to_string()),
                Just("\"NaN\"".to_string()),
                Just("true".to_string()),
                Just("[]".to_string()),
                (0u64..100_000).prop_map(|n| n.to_string()),
            ]
        )
            .prop_map(|(k, v)| format!("{{\"{k}\": {v}}}")),
        Just("17".to_string()),
        Just("null".to_string()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn transform_values_never_panic_and_name_the_setting(value in values()) {
        let req = format!(r#"{{"spec": {{"packets": 500}}, "sim": {{"transform": {value}}}}}"#);
        match parse(&req) {
            Ok(r) => {
                let t = &r.sim.transform;
                prop_assert!(t.validate().is_ok());
                // The resolved settings read back to the same transformations.
                let back: pktflow_npsim::xform::Transforms =
                    serde_json::from_value(serde_json::to_value(t).unwrap()).unwrap();
                prop_assert_eq!(&back, t);
            }
            Err(e) => {
                prop_assert!(!e.contains('\n'), "{}", e);
                prop_assert!(e.contains("sim.transform"), "{}: {}", req, e);
            }
        }
    }
}
