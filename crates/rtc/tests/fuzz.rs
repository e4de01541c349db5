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
