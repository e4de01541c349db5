//! `explore.workers`: the points of an exploration run on several threads, and the result is
//! the same, byte for byte once the wall-clock figures are set aside, for any number of workers.
use pktflow_npsim::api::explore_json;

fn without_timing(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(o) => {
            o.remove("timing");
            o.remove("wall_seconds");
            o.values_mut().for_each(without_timing);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(without_timing),
        _ => {}
    }
}

fn run(workers: usize, labels: &mut Vec<(usize, usize, String)>) -> String {
    let req = format!(
        r#"{{"spec": {{"packets": 200, "mapper": "round-robin"}}, "search": {{"precision": 0.2}},
            "explore": {{"pes": [4, 8], "replications": ["none", "global"],
                         "bottleneck": false, "baseline_pes": 2, "workers": {workers}}}}}"#
    );
    let out = explore_json(&req, |d, t, l| labels.push((d, t, l.to_string()))).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&out).unwrap();
    without_timing(&mut v);
    v.to_string()
}

#[test]
fn any_number_of_workers_gives_the_serial_result() {
    let mut l1 = Vec::new();
    let one = run(1, &mut l1);
    for w in [2, 5] {
        let mut lw = Vec::new();
        assert_eq!(run(w, &mut lw), one, "workers = {w}");
        // Progress: step 1, the baseline apart, four points, then done; done never decreases.
        assert_eq!(lw.len(), l1.len(), "{lw:?}");
        assert!(lw.windows(2).all(|p| p[0].0 <= p[1].0), "{lw:?}");
        assert_eq!(lw.last().unwrap().0, 6);
        assert_eq!(lw.last().unwrap().1, 6);
    }
    let v: serde_json::Value = serde_json::from_str(&one).unwrap();
    assert_eq!(v["points"].as_array().unwrap().len(), 4);
    // The baseline (2 PEs) is outside the grid and measured apart: every point has a speedup.
    assert!(v["points"][0]["speedup"].as_f64().unwrap() > 0.0);
    // Not a setting of the result.
    assert!(v["settings"]["explore"].get("workers").is_none());
}

#[test]
fn workers_out_of_range_is_refused() {
    let e = explore_json(r#"{"explore": {"workers": 100000}}"#, |_, _, _| {}).unwrap_err();
    assert!(e.contains("explore.workers (--workers)"), "{e}");
    let e = explore_json(r#"{"explore": {"workers": -1}}"#, |_, _, _| {}).unwrap_err();
    assert!(e.contains("explore.workers"), "{e}");
}
