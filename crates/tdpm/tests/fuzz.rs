//! Fuzzing of the PPF graph files and the map request: arbitrary bytes and mutated valid
//! documents never panic; every refusal is one line naming its source (256 cases each, seconds).
use pktflow_tdpm::api::parse_request;
use pktflow_tdpm::graph::PpfGraph;
use proptest::prelude::*;

const GRAPH: &str = r#"name = "g"
packet_bytes = 64

[[ppf]]
name = "a"
rate = 1.0
instructions = 100
code_size = 200

[[ppf]]
name = "b"
rate = 1.0
instructions = 50
code_size = 100

[[channel]]
from = "rx"
to = "a"
rate = 1.0

[[channel]]
from = "a"
to = "b"
rate = 1.0

[[channel]]
from = "b"
to = "tx"
rate = 1.0
"#;

fn one_line(e: &str, file: &str) {
    assert!(!e.contains('\n'), "{e}");
    assert!(e.starts_with(file), "{e}");
}

#[test]
fn the_fuzzed_graph_is_valid_and_errors_name_the_line() {
    PpfGraph::from_text(GRAPH, "g.toml").unwrap();
    let e = PpfGraph::from_text(
        &GRAPH.replace("instructions = 50", "instructions = \"x\""),
        "g.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(e.starts_with("g.toml:13: instructions: "), "{e}");
    let e = PpfGraph::from_text(
        &GRAPH.replace("code_size = 100", "code_sise = 100"),
        "g.toml",
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("g.toml:14: ") && e.contains("code_sise"),
        "{e}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_graph_text_never_panics(text in "\\PC{0,300}") {
        if let Err(e) = PpfGraph::from_text(&text, "g.toml") {
            one_line(&e.to_string(), "g.toml");
        }
    }

    #[test]
    fn mutated_graphs_never_panic(
        line in 0usize..40,
        value in prop_oneof![
            Just("0"), Just("-1"), Just("nan"), Just("inf"), Just("1e308"), Just("\"a\""),
            Just("\"rx\""), Just("\"tx\""), Just("4294967296"), Just("[]"), Just("true"),
        ],
        json in any::<bool>(),
    ) {
        let mut lines: Vec<String> = GRAPH.lines().map(str::to_string).collect();
        let i = line % lines.len();
        if let Some((k, _)) = lines[i].split_once('=') {
            lines[i] = format!("{k}= {value}");
        }
        let text = lines.join("\n");
        let text = if json {
            match toml::from_str::<toml::Value>(&text) {
                Ok(v) => serde_json::to_string(&v).unwrap(),
                Err(_) => text,
            }
        } else {
            text
        };
        if let Err(e) = PpfGraph::from_text(&text, "g.toml") {
            one_line(&e.to_string(), "g.toml");
        }
    }

    #[test]
    fn map_requests_never_panic(
        key in prop_oneof![
            Just("engines"), Just("packets"), Just("seed"), Just("offered_gbps"),
            Just("packet_bytes"), Just("critical_threshold"), Just("mapper"), Just("arch_set"),
            Just("bogus"),
        ],
        value in prop_oneof![
            Just("0"), Just("-1"), Just("\"NaN\""), Just("\"Infinity\""), Just("1e308"),
            Just("18446744073709551616"), Just("\"x\""), Just("[\"np.pe_count=0\"]"), Just("null"),
        ],
    ) {
        let req = format!(r#"{{"app": "g.toml", "{key}": {value}}}"#);
        if let Err(e) = parse_request(&req) {
            let e = e.to_string();
            assert!(!e.contains('\n'), "{e}");
            assert!(e.contains(key) || e.starts_with("bad map request"), "{req}: {e}");
        }
    }

    #[test]
    fn arbitrary_request_bytes_never_panic(text in "\\PC{0,200}") {
        let _ = parse_request(&text);
    }
}
