//! Fuzzing of every input surface of the NoC crate (256 cases each, a few seconds in all):
//! stream-graph text (JSON and TOML, from arbitrary bytes and from mutated benchmark files),
//! graph files on disk, and the JSON requests of `noc_sweep` and `stream_run` (arbitrary text
//! and valid requests with one field replaced by a hostile value), and BookSim-style
//! configuration files (arbitrary bytes, and a valid file with one value replaced by a hostile
//! token or a `;` removed, then swept). Each must return Ok or a
//! one-line error, never panic, and finish quickly (requests keep the simulation tiny).
use pktflow_noc::api::{load_graph, noc_sweep, stream_graph_load, stream_run};
use pktflow_noc::graph::{flatten, parse_program, solve_balance};
use proptest::prelude::*;

fn load_and_balance(text: &str) {
    if let Ok(p) = parse_program(text, "fuzz") {
        if let Ok(f) = flatten(&p, false) {
            let _ = solve_balance(f);
        }
    }
}

const HOSTILE: &[&str] = &[
    "0",
    "-1",
    "-5",
    "1.5",
    "1e300",
    "-1e300",
    "\"NaN\"",
    "\"inf\"",
    "null",
    "true",
    "[]",
    "{}",
    "\"\"",
    "\"x\"",
    "18446744073709551615",
    "18446744073709551616",
    "2",
    "3",
];

fn mutate(base: &str, pos: usize, cut: usize, insert: &str) -> String {
    let b = base.as_bytes();
    let p = pos % (b.len() + 1);
    let e = (p + cut).min(b.len());
    let mut out = b[..p].to_vec();
    out.extend_from_slice(insert.as_bytes());
    out.extend_from_slice(&b[e..]);
    String::from_utf8_lossy(&out).into_owned()
}

fn one_line(e: &str) {
    assert!(!e.is_empty());
    assert!(!e.contains("panicked"), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn graph_text_from_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400),
                                       json in any::<bool>()) {
        let mut t = String::from_utf8_lossy(&bytes).into_owned();
        if json { t.insert(0, '{'); }
        load_and_balance(&t);
        let _ = stream_graph_load(&t);
    }

    #[test]
    fn mutated_benchmark_graphs(name in prop::sample::select(vec!["FMRadio", "BitonicSort", "AudioBeam"]),
                                pos in any::<usize>(), cut in 0usize..12,
                                ins in prop::sample::select(HOSTILE.to_vec()), as_toml in any::<bool>()) {
        let base = std::fs::read_to_string(format!("{}/../../data/streamit/{name}.json", env!("CARGO_MANIFEST_DIR"))).unwrap();
        let text = if as_toml {
            // the same document as TOML, then mutated
            let v: toml::Value = serde_json::from_str(&base).unwrap();
            mutate(&toml::to_string(&v).unwrap_or_default(), pos, cut, ins)
        } else {
            mutate(&base, pos, cut, ins)
        };
        load_and_balance(&text);
        if !as_toml {
            if let Err(e) = stream_graph_load(&text) { one_line(&e.to_string()); }
        }
    }

    #[test]
    fn graph_files_on_disk(bytes in proptest::collection::vec(any::<u8>(), 0..300),
                           ext in prop::sample::select(vec!["json", "toml"])) {
        let dir = std::env::temp_dir().join(format!("pktflow-noc-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join(format!("g.{ext}"));
        std::fs::write(&p, &bytes).unwrap();
        if let Err(e) = load_graph(p.to_str().unwrap()) { one_line(&e.to_string()); }
    }

    #[test]
    fn sweep_requests(field in prop::sample::select(vec!["mesh", "traffic", "routing", "vcs", "buffer",
                          "packet_flits", "rates", "warmup", "measure", "drain", "seed", "hotspot_fraction", "arch", "bogus",
                          "compat", "config", "ni_flits", "sample_period", "warmup_periods", "max_samples",
                          "latency_thres", "stopping_thres", "acc_stopping_thres"]),
                      val in prop::sample::select(HOSTILE.to_vec()),
                      junk in proptest::collection::vec(any::<u8>(), 0..60)) {
        let mut req: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
            r#"{"mesh":"2x2","rates":[0.1],"warmup":3,"measure":3,"drain":3}"#).unwrap();
        req.insert(field.into(), serde_json::from_str(val).unwrap());
        let text = serde_json::Value::Object(req).to_string();
        if let Err(e) = noc_sweep(&text) { one_line(&e.to_string()); }
        if let Err(e) = noc_sweep(&String::from_utf8_lossy(&junk)) { one_line(&e.to_string()); }
    }

    #[test]
    fn stream_requests(field in prop::sample::select(vec!["graph", "mesh", "routing", "comm", "scales", "warmup",
                           "measure", "seed", "anneal_moves", "retries", "buffer_iterations", "buffer_items",
                           "corrected_work", "exact_budget", "vcs", "buffer", "arch", "bogus"]),
                       val in prop::sample::select(HOSTILE.to_vec())) {
        let mut req: serde_json::Map<String, serde_json::Value> = serde_json::from_str(
            r#"{"graph":"{\"name\":\"t\",\"graph\":{\"type\":\"pipeline\",\"name\":\"p\",\"children\":[{\"type\":\"filter\",\"name\":\"a\",\"push\":1,\"work\":1},{\"type\":\"filter\",\"name\":\"b\",\"pop\":1,\"work\":1}]}}",
                "mesh":"2x2","routing":"dor","scales":[0.5],"warmup":3,"measure":3,"anneal_moves":3,"exact_budget":3}"#).unwrap();
        req.insert(field.into(), serde_json::from_str(val).unwrap());
        let text = serde_json::Value::Object(req).to_string();
        if let Err(e) = stream_run(&text) { one_line(&e.to_string()); }
    }
}

/// Deep nesting in either format is a clean error, not a stack overflow.
#[test]
fn deeply_nested_documents_are_refused() {
    let depth = 100_000;
    let json = format!(
        "{{\"name\":\"x\",\"graph\":{}{}}}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    assert!(parse_program(&json, "deep.json").is_err());
    let toml = format!(
        "name = \"x\"\ngraph = {}{}\n",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    assert!(parse_program(&toml, "deep.toml").is_err());
    let inline = format!("graph = {}1{}\n", "{a=".repeat(depth), "}".repeat(depth));
    assert!(parse_program(&inline, "deep.toml").is_err());
}

/// A BookSim-style configuration that loads (small, so a sweep from it is quick).
const GOOD_CFG: &str =
    "// fuzz base\ntopology = mesh;\nk = 2;\nn = 2;\nrouting_function = dim_order;\n\
num_vcs = 2;\nvc_buf_size = 4;\ntraffic = uniform;\npacket_size = 1;\ninjection_rate = 0.05;\n\
sim_type = latency;\nwarmup_periods = 1;\nsample_period = 50;\nmax_samples = 4;\n";

const HOSTILE_CFG: &[&str] = &[
    "0",
    "-1",
    "1e300",
    "nan",
    "inf",
    "",
    ";",
    "=",
    "\"",
    "//",
    "x",
    "99999999999999999999",
    "1.5",
    "mesh",
    "torus",
    "{0.1,0.2}",
    "k = 3",
    "\u{0}",
    "é",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    /// Arbitrary bytes as a configuration: Ok or one line naming the file.
    #[test]
    fn booksim_config_from_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        if let Err(e) = pktflow_noc::booksim::parse(&text, "f.cfg") {
            let e = e.to_string();
            one_line(&e);
            prop_assert!(e.starts_with("config `f.cfg` line"), "{}", e);
        }
    }

    /// A valid configuration with one value replaced by a hostile token, or one statement cut:
    /// the parse and a sweep from the result end in Ok or one clean line.
    #[test]
    fn booksim_config_near_valid(line in 0usize..14, tok in 0usize..19, cut in any::<bool>()) {
        let mut lines: Vec<String> = GOOD_CFG.lines().map(String::from).collect();
        let i = line.min(lines.len() - 1);
        if cut {
            lines[i] = lines[i].replace(';', "");
        } else if let Some((k, _)) = lines[i].split_once('=') {
            lines[i] = format!("{k}= {};", HOSTILE_CFG[tok]);
        }
        let text = lines.join("\n");
        match pktflow_noc::booksim::parse(&text, "f.cfg") {
            Err(e) => one_line(&e.to_string()),
            Ok(_) => {
                let dir = std::env::temp_dir().join(format!("pktflow-noc-fuzz-{}", std::process::id()));
                std::fs::create_dir_all(&dir).unwrap();
                let p = dir.join(format!("c{line}_{tok}_{cut}.cfg"));
                std::fs::write(&p, &text).unwrap();
                let req = serde_json::json!({"config": p.to_string_lossy(), "drain": 200});
                if let Err(e) = noc_sweep(&req.to_string()) {
                    one_line(&e.to_string());
                }
                let _ = std::fs::remove_file(&p);
            }
        }
    }
}
