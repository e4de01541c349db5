//! The run request parser never panics: arbitrary text, and near-valid requests with keys and
//! values drawn from the valid ones and out of range ones. 256 cases each (a second or two).
use pktflow_runtime::api::Request;
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_is_refused_cleanly(s in ".{0,200}") {
        if let Err(e) = Request::from_json(&s) {
            prop_assert!(!e.is_empty() && !e.contains('\n'));
        }
    }

    #[test]
    fn near_valid_requests(
        key in prop::sample::select(vec!["threads", "batch", "ring_slots", "synthetic", "seed", "reply_every", "model", "io", "pin", "input_port", "warmup", "bogus"]),
        val in prop_oneof![
            any::<i64>().prop_map(|n| serde_json::json!(n)),
            any::<u64>().prop_map(|n| serde_json::json!(n)),
            any::<f64>().prop_map(|x| serde_json::json!(x)),
            "[a-z0-9-]{0,12}".prop_map(|s| serde_json::json!(s)),
            Just(serde_json::json!(null)),
            Just(serde_json::json!(true)),
            Just(serde_json::json!([1, 2])),
        ],
    ) {
        // A pipeline, so that a valid `warmup` is accepted.
        let mut v = serde_json::json!({"app": "router", "synthetic": 10, "model": "pipeline"});
        v[key] = val;
        match Request::from_json(&v.to_string()) {
            Ok(r) => {
                prop_assert!((1..=256).contains(&r.threads));
                prop_assert!((1..=4096).contains(&r.batch));
                prop_assert!((2..=65536).contains(&r.ring_slots));
                prop_assert!(r.warmup <= pktflow_runtime::api::MAX_WARMUP);
            }
            Err(e) => prop_assert!(!e.is_empty() && !e.contains('\n'), "{}", e),
        }
    }
}
