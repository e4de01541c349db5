//! Fuzzing of the input surfaces: request JSON, window strings, hashes and trie training.
//! Small case counts so the whole file runs in seconds.
use pktflow_rtc::api::{conflicts_json, rtc_json};
use pktflow_rtc::conflicts::parse_window;
use pktflow_rtc::tm::{Hasher, SignatureKind, Trie};
use proptest::prelude::*;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..200)) {
        let s = String::from_utf8_lossy(&b);
        // A valid request (e.g. `{}`) would start a full-length run: only malformed input here.
        if serde_json::from_str::<serde_json::Value>(&s).is_err() {
            let noop = &mut |_: u32, _: u32| {};
            prop_assert!(rtc_json(&s, noop).is_err());
            prop_assert!(conflicts_json(&s).is_err());
        }
    }

    #[test]
    fn window_strings_parse_or_fail_cleanly(s in "[0-9:a -]{0,12}") {
        if let Ok((lo, hi)) = parse_window(&s) {
            prop_assert!(lo >= 2 && lo <= hi);
        }
    }

    #[test]
    fn hashes_and_tries_stay_in_range(
        bits in 0u32..5000, k in 0u32..10, seed in any::<u64>(),
        addrs in proptest::collection::vec((any::<u32>(), 0u64..100), 0..200),
    ) {
        for kind in SignatureKind::ALL {
            if let Ok(h) = Hasher::new(kind, bits, k, seed, None) {
                for &(a, _) in &addrs {
                    for i in 0..h.k {
                        prop_assert!(h.bit(i, a) < h.bits());
                    }
                }
            }
        }
        if let Ok(t) = Trie::train(addrs.clone(), bits) {
            for &(a, _) in &addrs {
                prop_assert!(t.bit(a) < t.bits());
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Near-valid requests: numbers anywhere in (and beyond) their ranges.
    #[test]
    fn near_valid_requests_run_or_fail_cleanly(
        cores in 0u32..80, threads in 0u32..80, bits in 0u32..3000, mutexes in 0u32..40,
        window in prop_oneof![Just(-1.0f64), Just(0.0), 1e-6f64..2e-4],
        sig in 0usize..6, sync in 0usize..2, sched in 0usize..2, crit in 0usize..3,
        packets in 0u32..30, app in 0usize..3,
    ) {
        let sigs = ["perfect", "bitsel", "h3", "pbx", "lepbx", "trie"];
        let apps = ["echo", "parametric", "nonexistent-app"];
        let sync = ["locks", "tm"][sync];
        let sched = ["round-robin", "lock-aware"][sched];
        let crit = ["zero-drop", "confidence90", "saturation"][crit];
        let req = serde_json::json!({
            "workload": {"app": apps[app], "packets": packets},
            "engine": {"cores": cores, "threads": threads, "signature_bits": bits,
                       "mutexes": mutexes, "signature": sigs[sig],
                       "sync": sync,
                       "scheduler": sched},
            "search": {"window_seconds": window,
                       "criterion": crit, "runs": 2},
        });
        let noop = &mut |_: u32, _: u32| {};
        match rtc_json(&req.to_string(), noop) {
            Ok(s) => prop_assert!(s.contains("packets_per_second")),
            Err(e) => prop_assert!(!e.is_empty() && !e.contains('\n')),
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// `compare` requests: arbitrary bytes and near-valid field values parse or are refused
    /// with one line (parsing only: a valid request would start the searches).
    #[test]
    fn compare_requests_parse_or_fail_cleanly(
        b in proptest::collection::vec(any::<u8>(), 0..120),
        window in prop_oneof![Just(-1.0f64), Just(0.0), Just(61.0), 1e-6f64..1.0],
        precision in prop_oneof![Just(0.0f64), Just(0.9), 1e-5f64..0.6],
        packets in 0u32..2_000_000, model in 0usize..6,
    ) {
        let s = String::from_utf8_lossy(&b);
        if let Err(e) = pktflow_rtc::compare::parse(&s) {
            prop_assert!(!e.contains('\n') && !e.is_empty());
        }
        let models = ["pipeline", "rtc-locks", "rtc-tm", "hybrid", "warp", ""];
        let req = serde_json::json!({
            "app": "echo", "window_seconds": window, "precision": precision,
            "packets": packets, "models": [models[model]],
        });
        match pktflow_rtc::compare::parse(&req.to_string()) {
            Ok(r) => {
                prop_assert!(r.window_seconds > 0.0 && r.window_seconds <= 60.0);
                prop_assert!(r.precision >= 1e-4 && r.precision <= 0.5);
                prop_assert!(r.packets >= 1 && r.packets <= 1_000_000);
            }
            Err(e) => prop_assert!(!e.contains('\n') && !e.is_empty(), "{}", e),
        }
    }

    /// Slow-path sections of an rtc request: costs in and beyond their range, unknown
    /// policies and names; parsed and validated, or refused with one line naming the option.
    #[test]
    fn slow_path_sections_validate_or_fail_cleanly(
        policy in 0usize..5, cost in prop_oneof![0u64..1000, 9_999_000u64..10_000_100, Just(u64::MAX)],
        which in 0usize..3, names in proptest::collection::vec("[a-zA-Z0-9]{0,8}", 0..3),
    ) {
        let policies = ["single", "fixed", "floating", "sometimes", ""];
        let keys = ["interrupt_instructions", "role_switch_instructions", "message_instructions"];
        let mut sp = serde_json::json!({"policy": policies[policy], "elements": names});
        sp[keys[which]] = serde_json::json!(cost);
        let req = serde_json::json!({"workload": {"app": "router", "packets": 5},
                                     "engine": {"slow_path": sp}});
        match serde_json::from_value::<pktflow_rtc::api::RtcRequest>(req) {
            Err(e) => prop_assert!(!e.to_string().is_empty()),
            Ok(r) => {
                if let Err(e) = pktflow_rtc::api::resolve(&r) {
                    prop_assert!(!e.contains('\n') && e.contains("--slow"), "{}", e);
                }
            }
        }
    }
}
