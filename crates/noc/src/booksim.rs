//! BookSim 2 style configuration files for `pktflow noc --config FILE`: `key = value;`
//! statements, `//` comments to the end of a line, BookSim's key names. Each supported key
//! becomes a field of a `noc_sweep` request (options given on the command line win); a key
//! pktflow does not model, a key BookSim does not have, or a value out of range is refused
//! with one line naming the file, the line and the key.
use crate::error::{NocError, Result};
use serde_json::{json, Map, Value};

/// Largest configuration file read, bytes.
pub const MAX_CONFIG_BYTES: usize = 1 << 20;

/// What a supported key needs: an integer range, a number range, or a word from a list.
enum Kind {
    Int(i64, i64),
    Num(f64, f64),
    Word(&'static [&'static str]),
}

/// Supported keys: (BookSim name, value kind, what it sets). Keys whose only accepted value
/// is BookSim's default (e.g. `alloc_iters = 1`) are accepted so that BookSim's example
/// configurations load, and refused with any other value.
const KEYS: &[(&str, Kind, &str)] = &[
    ("topology", Kind::Word(&["mesh"]), "the network (pktflow simulates a 2D mesh)"),
    ("k", Kind::Int(2, 256), "mesh side: a k x k mesh"),
    ("n", Kind::Int(2, 2), "dimensions (2)"),
    ("c", Kind::Int(1, 1), "concentration (1)"),
    ("routing_function", Kind::Word(&[]), "routing (dim_order or dor: XY; min_adapt: minimal adaptive; or a pktflow routing name)"),
    ("traffic", Kind::Word(&[]), "traffic pattern (uniform, transpose, bitcomp, shuffle, tornado, neighbor, or a pktflow pattern name)"),
    ("num_vcs", Kind::Int(1, 11), "virtual channels per port"),
    ("vc_buf_size", Kind::Int(1, 1024), "flits per virtual channel buffer"),
    ("packet_size", Kind::Int(1, 1024), "flits per packet"),
    ("injection_rate", Kind::Num(0.0, 1.0), "offered load (packets/node/cycle unless injection_rate_uses_flits = 1)"),
    ("injection_rate_uses_flits", Kind::Int(0, 1), "injection_rate in flits instead of packets"),
    ("injection_process", Kind::Word(&["bernoulli"]), "injection process"),
    ("sim_type", Kind::Word(&["latency"]), "simulation type"),
    ("sample_period", Kind::Int(1, 100_000_000), "cycles per sample period"),
    ("warmup_periods", Kind::Int(0, 1_000_000), "sample periods of warm-up"),
    ("max_samples", Kind::Int(1, 1_000_000), "most sample periods"),
    ("latency_thres", Kind::Num(0.0, 1e12), "mean latency above which the run is unstable"),
    ("warmup_thres", Kind::Num(0.0, 1e6), "warm-up threshold on latency change"),
    ("acc_warmup_thres", Kind::Num(0.0, 1e6), "warm-up threshold on throughput change"),
    ("stopping_thres", Kind::Num(0.0, 1e6), "convergence threshold on latency change"),
    ("acc_stopping_thres", Kind::Num(0.0, 1e6), "convergence threshold on throughput change"),
    ("seed", Kind::Int(0, i64::MAX), "random seed (pktflow's generator: same seed, other stream than BookSim's)"),
    ("routing_delay", Kind::Int(1, 1000), "route computation cycles"),
    ("vc_alloc_delay", Kind::Int(1, 1000), "VC allocation cycles"),
    ("sw_alloc_delay", Kind::Int(1, 1000), "switch allocation cycles"),
    ("st_final_delay", Kind::Int(1, 1000), "switch traversal cycles"),
    ("credit_delay", Kind::Int(0, 1000), "extra credit cycles (pktflow's credit delay is 1 + this)"),
    ("input_speedup", Kind::Int(1, 1), "input speedup (1)"),
    ("output_speedup", Kind::Int(1, 1), "output speedup (1)"),
    ("internal_speedup", Kind::Num(1.0, 1.0), "internal speedup (1.0)"),
    ("alloc_iters", Kind::Int(1, 1), "allocator iterations (1)"),
    ("speculative", Kind::Int(0, 0), "speculative VC allocation (0)"),
    ("vc_allocator", Kind::Word(&["separable_input_first", "islip"]), "VC allocator"),
    ("sw_allocator", Kind::Word(&["separable_input_first", "islip"]), "switch allocator"),
    ("arb_type", Kind::Word(&["round_robin"]), "arbiter"),
    ("wait_for_tail_credit", Kind::Int(0, 0), "(0)"),
    ("vc_busy_when_full", Kind::Int(0, 0), "(0)"),
    ("vc_prioritize_empty", Kind::Int(0, 0), "(0)"),
    ("include_queuing", Kind::Int(1, 1), "latency includes source queueing (1)"),
    ("classes", Kind::Int(1, 1), "traffic classes (1)"),
    ("use_read_write", Kind::Int(0, 0), "request/reply traffic (0)"),
    ("priority", Kind::Word(&["none"]), "packet priorities (none)"),
    ("print_csv_results", Kind::Int(0, 1), "ignored (output format)"),
];

/// Parse a BookSim-style configuration text into `noc_sweep` request fields.
pub fn parse(text: &str, file: &str) -> Result<Map<String, Value>> {
    let err = |line: usize, msg: String| NocError::Config {
        file: file.to_string(),
        line,
        msg,
    };
    if text.len() > MAX_CONFIG_BYTES {
        return Err(err(
            0,
            format!(
                "{} bytes is more than the {MAX_CONFIG_BYTES} accepted",
                text.len()
            ),
        ));
    }
    let mut raw: Vec<(usize, String, String)> = Vec::new();
    for (i, full) in text.lines().enumerate() {
        let line = i + 1;
        let code = full.split("//").next().unwrap_or("");
        let mut parts: Vec<&str> = code.split(';').collect();
        let rest = parts.pop().unwrap_or("");
        if !rest.trim().is_empty() {
            return Err(err(
                line,
                format!("`{}` does not end with `;`", shorten(rest.trim())),
            ));
        }
        for st in parts {
            let st = st.trim();
            if st.is_empty() {
                continue;
            }
            let Some((k, v)) = st.split_once('=') else {
                return Err(err(line, format!("`{}` is not `key = value`", shorten(st))));
            };
            let (k, v) = (k.trim(), v.trim().trim_matches('"').trim());
            if k.is_empty() || v.is_empty() {
                return Err(err(line, format!("`{}` is not `key = value`", shorten(st))));
            }
            if raw.iter().any(|(_, rk, _)| rk == k) {
                return Err(err(line, format!("key `{}` is set twice", shorten(k))));
            }
            raw.push((line, k.to_string(), v.to_string()));
        }
    }
    let mut out = Map::new();
    let mut rate: Option<(usize, f64)> = None;
    let (mut uses_flits, mut psize) = (false, 1u64);
    let mut arch = Map::new();
    for (line, k, v) in &raw {
        let Some((_, kind, _)) = KEYS.iter().find(|(name, _, _)| name == k) else {
            return Err(err(
                *line,
                format!(
                    "unknown or unsupported key `{}` (supported: {})",
                    shorten(k),
                    KEYS.iter().map(|x| x.0).collect::<Vec<_>>().join(", ")
                ),
            ));
        };
        let bad = |what: String| err(*line, format!("key `{k}`: {what}"));
        let val: Value = match kind {
            Kind::Int(lo, hi) => {
                let x: i64 = v
                    .parse()
                    .map_err(|_| bad(format!("expected an integer, got `{}`", shorten(v))))?;
                if x < *lo || x > *hi {
                    return Err(bad(if lo == hi {
                        format!("pktflow supports only {lo}, got {x}")
                    } else {
                        format!("must be from {lo} to {hi}, got {x}")
                    }));
                }
                json!(x)
            }
            Kind::Num(lo, hi) => {
                let x: f64 = v
                    .parse()
                    .map_err(|_| bad(format!("expected a number, got `{}`", shorten(v))))?;
                if !x.is_finite() || x < *lo || x > *hi {
                    return Err(bad(if lo == hi {
                        format!("pktflow supports only {lo}, got {v}")
                    } else {
                        format!("must be a finite number from {lo} to {hi}, got {v}")
                    }));
                }
                json!(x)
            }
            Kind::Word(list) => {
                if !list.is_empty() && !list.contains(&v.as_str()) {
                    return Err(bad(format!(
                        "pktflow supports {}, got `{}`",
                        list.join(" or "),
                        shorten(v)
                    )));
                }
                json!(v)
            }
        };
        match k.as_str() {
            "k" => {
                out.insert("mesh".into(), json!(format!("{v}x{v}")));
            }
            "routing_function" => {
                let r = match v.as_str() {
                    "dim_order" | "dor" | "dim_order_mesh" => "dor",
                    "min_adapt" | "min_adapt_mesh" => "adaptive",
                    other => other,
                };
                out.insert("routing".into(), json!(r));
            }
            "traffic" => {
                out.insert("traffic".into(), val);
            }
            "num_vcs" => {
                out.insert("vcs".into(), val);
            }
            "vc_buf_size" => {
                out.insert("buffer".into(), val);
            }
            "packet_size" => {
                psize = val.as_u64().unwrap_or(1);
                out.insert("packet_flits".into(), val);
            }
            "injection_rate" => rate = Some((*line, val.as_f64().unwrap_or(0.0))),
            "injection_rate_uses_flits" => uses_flits = val.as_i64() == Some(1),
            "seed" => {
                out.insert("seed".into(), val);
            }
            "sample_period" | "warmup_periods" | "max_samples" | "latency_thres"
            | "warmup_thres" | "acc_warmup_thres" | "stopping_thres" | "acc_stopping_thres" => {
                out.insert(k.clone(), val);
            }
            "routing_delay" => {
                arch.insert("route_compute_cycles".into(), val);
            }
            "vc_alloc_delay" => {
                arch.insert("vc_alloc_cycles".into(), val);
            }
            "sw_alloc_delay" => {
                arch.insert("switch_alloc_cycles".into(), val);
            }
            "st_final_delay" => {
                arch.insert("switch_traversal_cycles".into(), val);
            }
            "credit_delay" => {
                arch.insert(
                    "credit_delay_cycles".into(),
                    json!(val.as_i64().unwrap_or(0) + 1),
                );
            }
            // accepted with BookSim's default value only, or not affecting the result
            _ => {}
        }
    }
    if let Some((line, r)) = rate {
        // pktflow's rates are flits/node/cycle
        let flits = if uses_flits { r } else { r * psize as f64 };
        if flits > 1.0 {
            return Err(err(
                line,
                format!(
                    "key `injection_rate`: {r} packets of {psize} flits is {flits} flits/node/cycle; at most 1 can be offered"
                ),
            ));
        }
        out.insert("rates".into(), json!([flits]));
    }
    if !arch.is_empty() {
        out.insert("arch".into(), Value::Object(arch));
    }
    out.insert("compat".into(), json!("booksim"));
    Ok(out)
}

/// Read and parse a configuration file.
pub fn load(path: &str) -> Result<Map<String, Value>> {
    let meta = std::fs::metadata(path).map_err(|e| NocError::Config {
        file: path.into(),
        line: 0,
        msg: format!("cannot read: {e}"),
    })?;
    if meta.len() > MAX_CONFIG_BYTES as u64 {
        return Err(NocError::Config {
            file: path.into(),
            line: 0,
            msg: format!(
                "{} bytes is more than the {MAX_CONFIG_BYTES} accepted",
                meta.len()
            ),
        });
    }
    let bytes = std::fs::read(path).map_err(|e| NocError::Config {
        file: path.into(),
        line: 0,
        msg: format!("cannot read: {e}"),
    })?;
    let text = String::from_utf8(bytes).map_err(|_| NocError::Config {
        file: path.into(),
        line: 0,
        msg: "not UTF-8 text".into(),
    })?;
    parse(&text, path)
}

fn shorten(s: &str) -> String {
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(37).collect::<String>())
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn booksim_example_maps_to_request_fields() {
        let t = "// 8x8 mesh\ntopology = mesh;\nk = 8; n = 2;\nrouting_function = dim_order;\n\
                 num_vcs = 4; vc_buf_size = 8;\ntraffic = bitcomp;\npacket_size = 5;\n\
                 injection_rate = 0.02; // packets\nsim_type = latency;\nwarmup_periods = 3;\n";
        let m = parse(t, "a.cfg").unwrap();
        assert_eq!(m["mesh"], json!("8x8"));
        assert_eq!(m["routing"], json!("dor"));
        assert_eq!(m["traffic"], json!("bitcomp"));
        assert_eq!(m["vcs"], json!(4));
        assert_eq!(m["packet_flits"], json!(5));
        // 0.02 packets of 5 flits = 0.1 flits/node/cycle
        assert!((m["rates"][0].as_f64().unwrap() - 0.1).abs() < 1e-12);
        assert_eq!(m["warmup_periods"], json!(3));
        assert_eq!(m["compat"], json!("booksim"));
    }

    #[test]
    fn errors_name_file_line_and_key() {
        for (t, want) in [
            (
                "k = 8;\nfoo = 1;\n",
                "line 2: unknown or unsupported key `foo`",
            ),
            ("k = 8\n", "line 1: `k = 8` does not end with `;`"),
            (
                "num_vcs = 40;",
                "line 1: key `num_vcs`: must be from 1 to 11, got 40",
            ),
            (
                "alloc_iters = 2;",
                "key `alloc_iters`: pktflow supports only 1, got 2",
            ),
            (
                "injection_rate = nan;",
                "key `injection_rate`: must be a finite number",
            ),
            (
                "sim_type = throughput;",
                "pktflow supports latency, got `throughput`",
            ),
            ("k = 4;\nk = 8;", "line 2: key `k` is set twice"),
            (
                "packet_size = 5;\ninjection_rate = 0.5;",
                "line 2: key `injection_rate`: 0.5 packets",
            ),
            ("just words;", "is not `key = value`"),
        ] {
            let e = parse(t, "x.cfg").unwrap_err().to_string();
            assert!(e.starts_with("config `x.cfg` line"), "{e}");
            assert!(e.contains(want), "{t:?}: {e}");
            assert!(!e.contains('\n'));
        }
    }
}
