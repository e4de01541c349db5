//! The trends of Figures 4-6 of the protocol-processing paper, on inputs reduced so the test
//! runs in seconds (the full inputs are run by experiments/protoproc.py). Each assertion is a
//! sentence of the paper; docs/protoproc.md gives the figures for the full inputs.
use pktflow_protoproc::api::sim_json;
use serde_json::{json, Value};

fn time(app: &str, policy: &str, cpus: u32, threads: u32, extra: Value) -> f64 {
    let mut req = json!({"app": app, "policy": policy, "cpus": cpus, "threads": threads});
    for (k, v) in extra.as_object().unwrap() {
        req[k] = v.clone();
    }
    let v: Value = serde_json::from_str(&sim_json(&req.to_string()).unwrap()).unwrap();
    v["execution_time_us"].as_f64().unwrap()
}

#[test]
fn gauss_fixed_helps_single_two_threads_do_not_fixed_wins_at_four() {
    let x = json!({"n": 672});
    let single = time("gauss", "single", 1, 1, x.clone());
    let fixed2 = time("gauss", "fixed", 2, 1, x.clone());
    // "Fixed improves performance over Single by 28%".
    assert!(single / fixed2 > 1.15, "{single} {fixed2}");
    // "The two-threaded configurations ... do not exhibit any improvements".
    let fixed2t = time("gauss", "fixed", 2, 2, x.clone());
    assert!(fixed2t > 0.97 * fixed2, "{fixed2t} {fixed2}");
    // "Floating initially outperforms Fixed", then Fixed wins as the broadcast dominates.
    let float2 = time("gauss", "floating", 2, 1, x.clone());
    assert!(float2 < fixed2, "{float2} {fixed2}");
    let fixed4 = time("gauss", "fixed", 4, 1, x.clone());
    let float4 = time("gauss", "floating", 4, 1, x);
    assert!(fixed4 < float4, "{fixed4} {float4}");
}

#[test]
fn em3d_fixed_beats_floating_at_saturation() {
    let x = json!({"iterations": 2});
    let fixed4 = time("em3d", "fixed", 4, 1, x.clone());
    let float4 = time("em3d", "floating", 4, 1, x.clone());
    // "Fixed is 30% faster than Floating at the saturation point".
    assert!(float4 / fixed4 > 1.15, "{float4} {fixed4}");
    // Multithreading raises the request rate: two threads help Fixed.
    let fixed2 = time("em3d", "fixed", 2, 1, x.clone());
    let fixed2t = time("em3d", "fixed", 2, 2, x);
    assert!(fixed2t < 0.85 * fixed2, "{fixed2t} {fixed2}");
}

#[test]
fn tomcatv_floating_doubles_single_and_leads_fixed_up_to_three() {
    let x = json!({"iterations": 1});
    let single = time("tomcatv", "single", 1, 1, x.clone());
    let float2 = time("tomcatv", "floating", 2, 1, x.clone());
    // "Floating with 2 processors is nearly a factor 2 faster than Single".
    assert!(single / float2 > 1.6, "{single} {float2}");
    // "with up to three processors, Floating outperforms Fixed".
    let fixed3 = time("tomcatv", "fixed", 3, 1, x.clone());
    let float3 = time("tomcatv", "floating", 3, 1, x.clone());
    assert!(float3 < fixed3, "{float3} {fixed3}");
    // "running two threads per processor does not result in speedups" (under 10% here).
    let single2 = time("tomcatv", "single", 1, 2, x);
    assert!(single2 > 0.9 * single, "{single2} {single}");
}
