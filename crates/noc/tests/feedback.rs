//! Stream graphs with feedback loops run (their throughput was 0 when loop delays were lost):
//! the simulated throughput matches the one the balance equations give.
use pktflow_noc::api::{stream_graph_load, stream_run};
use serde_json::{json, Value};

fn graph(src_push: u64, delay: u64, wb: f64, wl: f64) -> String {
    let f = |name: &str, pop: u64, push: u64, work: f64| json!({"type":"filter","name":name,"pop":pop,"push":push,"work":work,"stateful":true});
    json!({"name":"loop","graph":{"type":"pipeline","name":"top","children":[
        f("src", 0, src_push, 1.0),
        {"type":"feedbackloop","name":"fb",
         "join":{"type":"roundrobin","weights":[1,1]},
         "body": f("body", 2, 2, wb),
         "loop": f("back", 1, 1, wl),
         "split":{"type":"roundrobin","weights":[1,1]},
         "delay": delay},
        f("snk", 1, 0, 1.0)
    ]}})
    .to_string()
}

fn run(g: &str, scale: f64) -> Value {
    let req = json!({"graph": g, "mesh": "4x4", "routing": "dor", "scales": [scale],
                     "warmup": 5000, "measure": 60000, "anneal_moves": 500});
    serde_json::from_str(&stream_run(&req.to_string()).unwrap()).unwrap()
}

/// Work per steady state of each flat node, from the balance equations.
fn node_work(g: &str) -> Vec<(String, f64)> {
    let v: Value = serde_json::from_str(&stream_graph_load(g).unwrap()).unwrap();
    v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["name"].as_str().unwrap().to_string(),
                n["work_per_steady_state"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn loop_with_enough_initial_items_runs_at_the_compute_bound() {
    // loop items per iteration = 1, delay 4: the loop pipelines; the body is the bottleneck
    let g = graph(1, 4, 20.0, 10.0);
    let scale = 10.0;
    let wmax = node_work(&g).iter().map(|x| x.1).fold(0.0, f64::max);
    let expected = 1000.0 / (wmax * scale);
    let v = run(&g, scale);
    let t = v["points"][0]["throughput"].as_f64().unwrap();
    assert!(
        (t - expected).abs() <= 0.03 * expected,
        "throughput {t}, expected {expected}"
    );
}

#[test]
fn loop_with_too_few_initial_items_runs_as_one_actor() {
    // loop items per iteration = 2, delay 1: the loop cannot run an iteration ahead, so its
    // actors become one; the throughput is that actor's work per steady state
    let g = graph(2, 1, 20.0, 10.0);
    let scale = 10.0;
    let w = node_work(&g);
    let loop_work: f64 = w
        .iter()
        .filter(|(n, _)| n != "src" && n != "snk")
        .map(|x| x.1)
        .sum();
    let wmax = w
        .iter()
        .filter(|(n, _)| n == "src" || n == "snk")
        .map(|x| x.1)
        .fold(loop_work, f64::max);
    let expected = 1000.0 / (wmax * scale);
    let v = run(&g, scale);
    let t = v["points"][0]["throughput"].as_f64().unwrap();
    assert!(t > 0.0, "feedback loop reported throughput 0");
    assert!(
        (t - expected).abs() <= 0.03 * expected,
        "throughput {t}, expected {expected}"
    );
}
