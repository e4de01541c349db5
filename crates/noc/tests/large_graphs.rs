//! Large stream graphs load, balance and map in near-linear time (a 100,000-filter pipeline and
//! a 10,000-way splitjoin used to hang), and graphs over the documented limits are refused.
use pktflow_noc::api::{stream_graph_load, stream_run};
use serde_json::{json, Value};

fn f(name: String, pop: u64, push: u64) -> Value {
    json!({"type":"filter","name":name,"pop":pop,"push":push,"work":1.0})
}

fn pipeline(n: usize) -> String {
    let mut ch = vec![f("src".into(), 0, 1)];
    ch.extend((0..n).map(|i| f(format!("f{i}"), 1, 1)));
    ch.push(f("snk".into(), 1, 0));
    json!({"name":"long","graph":{"type":"pipeline","name":"p","children":ch}}).to_string()
}

fn splitjoin(n: usize) -> String {
    let br: Vec<Value> = (0..n).map(|i| f(format!("b{i}"), 1, 1)).collect();
    json!({"name":"wide","graph":{"type":"pipeline","name":"p","children":[
        f("src".into(), 0, 1),
        {"type":"splitjoin","name":"sj","split":{"type":"duplicate"},"join":{"type":"roundrobin","weights":[1]},"branches":br},
        f("snk".into(), n as u64, 0)]}})
    .to_string()
}

fn map(g: &str) -> Value {
    let req =
        json!({"graph": g, "mesh": "4x4", "routing": "dor", "no_sim": true, "anneal_moves": 200});
    serde_json::from_str(&stream_run(&req.to_string()).unwrap()).unwrap()
}

#[test]
fn hundred_thousand_filter_pipeline_maps() {
    let g = pipeline(100_000);
    let v: Value = serde_json::from_str(&stream_graph_load(&g).unwrap()).unwrap();
    assert_eq!(v["filters"], 100_002);
    let m = map(&g);
    assert!(m["actors"].as_array().unwrap().len() <= 16);
}

#[test]
fn ten_thousand_way_splitjoin_maps() {
    let g = splitjoin(10_000);
    let m = map(&g);
    assert!(m["actors"].as_array().unwrap().len() <= 16);
    let work: f64 = m["actors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["work"].as_f64().unwrap())
        .sum();
    assert!((work - 10_002.0).abs() < 1e-6, "work is conserved: {work}");
}
