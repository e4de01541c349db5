//! Fuzzing the JSON surfaces: arbitrary bytes and near-valid requests never panic; they give a
//! result or one clean error line. 256 cases each, small sizes (runs in seconds).
use pktflow_protoproc::api::{model_json, sim_json, table2_json};
use proptest::prelude::*;

fn check(r: Result<String, pktflow_protoproc::ProtoError>) {
    match r {
        Ok(s) => {
            let v: serde_json::Value = serde_json::from_str(&s).expect("valid JSON result");
            assert!(v.is_object());
        }
        Err(e) => {
            let m = e.to_string();
            assert!(!m.is_empty() && !m.contains('\n'), "{m:?}");
            assert!(!m.starts_with("internal error"), "{m}");
        }
    }
}

fn number() -> impl Strategy<Value = serde_json::Value> {
    prop_oneof![
        Just(serde_json::json!("NaN")),
        Just(serde_json::json!("Infinity")),
        Just(serde_json::json!("-Infinity")),
        Just(serde_json::json!(-1)),
        Just(serde_json::json!(0)),
        Just(serde_json::json!(1e300)),
        Just(serde_json::json!("x")),
        Just(serde_json::json!(null)),
        (0.0f64..500.0).prop_map(|x| serde_json::json!(x)),
        (0u32..6).prop_map(|x| serde_json::json!(x)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes(b in proptest::collection::vec(any::<u8>(), 0..200)) {
        let s = String::from_utf8_lossy(&b);
        check(model_json(&s));
        check(sim_json(&s));
        check(table2_json(&s));
    }

    #[test]
    fn near_valid_model_requests(
        k in prop::sample::select(vec!["l_remote_us", "o_pp_us", "o_reply_us", "requests", "c_us",
                                       "c_min_us", "c_max_us", "tcs_us", "o_request_us", "points"]),
        v in number(),
    ) {
        check(model_json(&serde_json::json!({ k: v }).to_string()));
        check(model_json(&serde_json::json!({ "ratios": [v] }).to_string()));
    }

    #[test]
    fn near_valid_sim_requests(
        app in prop::sample::select(vec!["em3d", "gauss", "tomcatv", "synthetic", "microbench", "nope"]),
        policy in prop::sample::select(vec!["single", "fixed", "floating", "other"]),
        nodes in 0u32..6, cpus in 0u32..5, threads in 0u32..4,
        k in prop::sample::select(vec!["c_us", "l_remote_us", "o_pp_us", "o_reply_us", "bus_share",
                                       "interrupt_us", "role_switch_us", "poll_interval_us", "network_us"]),
        v in number(),
        notify in prop::sample::select(vec!["poll", "interrupt", "never"]),
    ) {
        // Small sizes so that the runs that are accepted stay short.
        let req = serde_json::json!({
            "app": app, "policy": policy, "nodes": nodes, "cpus": cpus, "threads": threads,
            "requests": 20, "iterations": 1, "n": 24, "misses": 20, "notify": notify, k: v,
        });
        check(sim_json(&req.to_string()));
    }
}
