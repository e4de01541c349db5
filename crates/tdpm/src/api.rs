//! JSON entry point for the command line and Python (`pktflow map`): load a PPF graph (a Click
//! application run functionally, or a native graph file), run one mapper, and report the tasks,
//! their duplication and engines, the predicted throughput and the binding constraint.
use crate::click::{from_click, ClickOptions};
use crate::cost::{Binding, Machine, Model};
use crate::error::TdpmError;
use crate::graph::{End, PpfGraph};
use crate::heuristic::{Options, Plan};
use pktflow_profile::run::Source;
use serde::Deserialize;
use serde_json::json;
use std::fmt::Write as _;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Built-in app name, Click file, or native graph file (`.toml` / `.json`).
    pub app: String,
    #[serde(default = "default_arch")]
    pub arch: String,
    /// Overrides of the architecture's parameters, `KEY=VALUE` in TOML syntax.
    #[serde(default)]
    pub arch_set: Vec<String>,
    #[serde(default = "default_mapper")]
    pub mapper: String,
    /// MEs for the application (default: all the architecture leaves to it).
    #[serde(default)]
    pub engines: Option<u32>,
    #[serde(default = "default_packets")]
    pub packets: u64,
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Offered load, Gb/s (the forwarding rate is capped by it); none = uncapped.
    #[serde(default, deserialize_with = "lenient_opt_f64")]
    pub offered_gbps: Option<f64>,
    #[serde(default, deserialize_with = "lenient_opt_f64")]
    pub critical_threshold: Option<f64>,
    /// Bytes per packet for the Gb/s figures (default: the graph's, i.e. the mean wire size of
    /// the functional run for Click apps; the paper's setting is 64).
    #[serde(default, deserialize_with = "lenient_opt_f64")]
    pub packet_bytes: Option<f64>,
    #[serde(default)]
    pub dot: bool,
    /// Where the functional run writes its outputs (default: a temporary folder).
    #[serde(default)]
    pub out_dir: Option<String>,
    /// Allow more engines than the architecture leaves to the application (generated
    /// instances).
    #[serde(default)]
    pub unchecked_engines: bool,
}

/// An optional number: JSON number, null, or `"NaN"`/`"Infinity"`/`"-Infinity"` (so that
/// validation, not the JSON parser, names the option).
fn lenient_opt_f64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    struct W(#[serde(deserialize_with = "pktflow_npsim::config::lenient_f64")] f64);
    Ok(Option::<W>::deserialize(d)?.map(|w| w.0))
}

/// Largest request, bytes.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;
/// Largest synthetic packet count of the functional run.
pub const MAX_PACKETS: u64 = 100_000_000;

/// Parse a map request; a bad value is reported as `KEY: what` (each key is tried alone, with
/// `app`, to find the one refused).
pub fn parse_request(request: &str) -> Result<Request, TdpmError> {
    let bad = |m: String| TdpmError::Request(format!("bad map request: {m}"));
    if request.len() > MAX_REQUEST_BYTES {
        return Err(bad(format!(
            "{} bytes, at most {MAX_REQUEST_BYTES}",
            request.len()
        )));
    }
    let v: serde_json::Value = serde_json::from_str(request).map_err(|e| bad(e.to_string()))?;
    let r = Request::deserialize(&v).map_err(|e| {
        if let Some(o) = v.as_object() {
            for (k, x) in o {
                let mut one = serde_json::Map::new();
                one.insert("app".into(), json!("x"));
                one.insert(k.clone(), x.clone());
                if let Err(e1) = Request::deserialize(&serde_json::Value::Object(one)) {
                    return bad(format!("{k}: {e1}"));
                }
            }
        }
        bad(e.to_string())
    })?;
    let req = |m: String| TdpmError::Request(m);
    if r.packets == 0 || r.packets > MAX_PACKETS {
        return Err(req(format!(
            "packets (--packets) must be 1 to {MAX_PACKETS}, got {}",
            r.packets
        )));
    }
    if let Some(e) = r.engines {
        if e == 0 || e > pktflow_arch::np::MAX_PES {
            return Err(req(format!(
                "engines (--engines) must be 1 to {}, got {e}",
                pktflow_arch::np::MAX_PES
            )));
        }
    }
    if let Some(o) = r.offered_gbps {
        if !(o.is_finite() && o > 0.0 && o <= 1e6) {
            return Err(req(format!(
                "offered_gbps (--offered-gbps) must be a positive number of Gb/s up to 1e6, got {o}"
            )));
        }
    }
    if let Some(b) = r.packet_bytes {
        if !(b.is_finite() && b > 0.0 && b <= 1e6) {
            return Err(req(format!(
                "packet_bytes (--packet-bytes) must be a positive number of bytes up to 1e6, got {b}"
            )));
        }
    }
    if let Some(t) = r.critical_threshold {
        if !(t.is_finite() && (0.0..=1.0).contains(&t)) {
            return Err(req(format!(
                "critical_threshold must be in [0, 1], got {t}"
            )));
        }
    }
    Ok(r)
}

fn default_arch() -> String {
    "ixp2400".into()
}
/// The mapper when the request names none: the Figure 4 heuristic followed by the refinement
/// (`tdpm-refine`, docs/tdpm.md section 3a), the best mapping the tool finds quickly. `tdpm` is
/// the paper's Figure 4 as published (TDPM-all).
fn default_mapper() -> String {
    "tdpm-refine".into()
}
fn default_packets() -> u64 {
    2000
}
fn default_seed() -> u64 {
    1
}

/// Load the PPF graph named by `app` for `arch`.
pub fn load_graph(
    app: &str,
    arch: &pktflow_arch::NpArch,
    packets: u64,
    seed: u64,
    out_dir: Option<&str>,
) -> Result<PpfGraph, TdpmError> {
    let lower = app.to_ascii_lowercase();
    if lower.ends_with(".toml") || lower.ends_with(".json") {
        return PpfGraph::load(std::path::Path::new(app));
    }
    let dir = match out_dir {
        Some(d) => std::path::PathBuf::from(d),
        None => std::env::temp_dir().join(format!("pktflow-map-{}", std::process::id())),
    };
    from_click(
        app,
        &Source::Synthetic { packets, seed },
        arch,
        &ClickOptions::default(),
        &dir,
    )
}

pub fn map_json(request: &str) -> Result<String, TdpmError> {
    let r = parse_request(request)?;
    let arch = pktflow_arch::Arch::load_with(&r.arch, &r.arch_set).map_err(TdpmError::Machine)?;
    let np = arch.as_np().ok_or_else(|| {
        TdpmError::Machine(format!(
            "architecture '{}' is not a network processor (use ixp2400)",
            r.arch
        ))
    })?;
    let avail = np.np.pe_count.saturating_sub(np.np.interface_pes);
    let engines = r.engines.unwrap_or(avail);
    let machine = if r.unchecked_engines {
        Machine::from_arch_unchecked(np, engines)?
    } else {
        Machine::from_arch(np, engines)?
    };
    let mut g = load_graph(&r.app, np, r.packets, r.seed, r.out_dir.as_deref())?;
    if let Some(b) = r.packet_bytes {
        if !(b.is_finite() && b > 0.0) {
            return Err(TdpmError::Request(format!(
                "packet bytes must be positive (got {b})"
            )));
        }
        g.packet_bytes = b;
    }
    let model = Model::new(&g, machine)?;
    let mut opts = Options::default();
    if let Some(t) = r.critical_threshold {
        if !(0.0..=1.0).contains(&t) {
            return Err(TdpmError::Request(format!(
                "critical threshold must be in [0, 1] (got {t})"
            )));
        }
        opts.critical_threshold = t;
    }
    let t0 = std::time::Instant::now();
    let plan = crate::baselines::map(&model, &r.mapper, &opts)?;
    let secs = t0.elapsed().as_secs_f64();
    let mut doc = report(&model, &plan, r.offered_gbps);
    let o = doc.as_object_mut().expect("object");
    o.insert("arch".into(), json!(r.arch));
    o.insert("timing".into(), json!({"mapper_seconds": secs}));
    o.insert(
        "settings".into(),
        json!({
            "app": r.app,
            "arch": r.arch,
            "arch_set": r.arch_set,
            "mapper": r.mapper,
            "engines": engines,
            "packets": r.packets,
            "seed": r.seed,
            "offered_gbps": r.offered_gbps,
            "critical_threshold": opts.critical_threshold,
            "packet_bytes": g.packet_bytes,
            "unchecked_engines": r.unchecked_engines,
            "architecture": arch.to_json(),
        }),
    );
    if r.dot {
        o.insert("dot".into(), json!(to_dot(&model, &plan)));
    }
    Ok(serde_json::to_string(&doc).expect("serializes"))
}

/// The report of a plan as JSON.
pub fn report(model: &Model, plan: &Plan, offered_gbps: Option<f64>) -> serde_json::Value {
    let e = &plan.eval;
    let g = model.g;
    let bits = g.packet_bytes * 8.0;
    let offered_pps = offered_gbps.map(|x| x * 1e9 / bits);
    let forwarding = offered_pps.map_or(e.packets_per_second, |o| o.min(e.packets_per_second));
    let binding = match (offered_pps, e.binding) {
        (Some(o), _) if o <= e.packets_per_second => "offered load".to_string(),
        _ => e.binding_text(),
    };
    let tasks: Vec<serde_json::Value> = e
        .tasks
        .iter()
        .enumerate()
        .map(|(k, t)| {
            json!({
                "task": k,
                "ppfs": t.names,
                "critical": t.ppfs.iter().all(|&i| plan.critical[i]),
                "processor": if t.on_xscale { "xscale" } else { "me" },
                "duplication": t.dup,
                "engines": t.engines,
                "rate": t.rate,
                "computation": t.computation,
                "memory": t.memory,
                "communication": t.communication,
                "synchronization": t.synchronization,
                "utilization": t.utilization,
                "f_rsp_core": t.f_rsp_core,
                "code_size": t.code_size,
                "binding": matches!(e.binding, Binding::Task(b) if b == k),
            })
        })
        .collect();
    json!({
        "app": g.name,
        "mapper": plan.mapper,
        "engines": model.m.engines,
        "ppfs": g.len(),
        "packet_bytes": g.packet_bytes,
        "packets_per_second": e.packets_per_second,
        "gbps": e.gbps,
        "offered_gbps": offered_gbps,
        "forwarding_packets_per_second": forwarding,
        "forwarding_gbps": forwarding * bits / 1e9,
        "k_packets_per_cycle": e.k_packets_per_cycle,
        "copies": e.copies,
        "stages": e.stages,
        "engines_used": e.engines_used,
        "me_bound_pps": e.me_bound_pps,
        "xscale_bound_pps": e.xscale_bound_pps,
        "binding": binding,
        "tasks": tasks,
        "steps": plan.steps,
    })
}

/// Graphviz DOT of the partitioned graph: one cluster per task (label: processor,
/// duplication and engines), PPFs inside, channels as edges labelled with their rate; edges
/// inside a task (replaced by calls) are dashed.
pub fn to_dot(model: &Model, plan: &Plan) -> String {
    let g = model.g;
    let mut task_of = vec![0usize; g.len()];
    let mut s = String::from(
        "digraph tdpm {\n  rankdir=LR;\n  node [shape=box, fontname=\"Helvetica\"];\n  rx [shape=cds];\n  tx [shape=cds];\n",
    );
    for (k, t) in plan.eval.tasks.iter().enumerate() {
        let where_ = if t.on_xscale {
            "XScale".to_string()
        } else {
            format!("ME x{} (d={}, {} engines)", t.dup, t.dup, t.engines)
        };
        let _ = writeln!(
            s,
            "  subgraph cluster_{k} {{\n    label=\"task {k}: {}\";\n    style={};",
            where_,
            if t.on_xscale { "dashed" } else { "solid" }
        );
        for &i in &t.ppfs {
            task_of[i] = k;
            let _ = writeln!(
                s,
                "    p{i} [label=\"{}\\nλ={:.3}\"];",
                g.ppfs[i].name.replace('"', "\\\""),
                g.ppfs[i].rate
            );
        }
        s.push_str("  }\n");
    }
    let node = |e: End| match e {
        End::Rx => "rx".to_string(),
        End::Tx => "tx".to_string(),
        End::Ppf(i) => format!("p{i}"),
    };
    for c in &g.channels {
        let inside =
            matches!((c.from, c.to), (End::Ppf(a), End::Ppf(b)) if task_of[a] == task_of[b]);
        let _ = writeln!(
            s,
            "  {} -> {} [label=\"{:.3}\"{}];",
            node(c.from),
            node(c.to),
            c.rate,
            if inside { ", style=dashed" } else { "" }
        );
    }
    s.push_str("}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_request_on_a_graph_file_and_errors() {
        let dir = std::env::temp_dir().join("pktflow-tdpm-api");
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("g.json");
        let g = crate::gen::generate(&crate::gen::GenParams::small(6, 2));
        std::fs::write(&f, serde_json::to_string(&g.to_file()).unwrap()).unwrap();
        let req = json!({"app": f.to_str().unwrap(), "mapper": "tdpm", "engines": 4, "dot": true, "offered_gbps": 3.0});
        let out: serde_json::Value =
            serde_json::from_str(&map_json(&req.to_string()).unwrap()).unwrap();
        assert!(out["gbps"].as_f64().unwrap() > 0.0);
        assert!(out["packets_per_second"].as_f64().unwrap() > 0.0);
        assert!(out["forwarding_gbps"].as_f64().unwrap() <= 3.0 + 1e-9);
        assert!(out["dot"].as_str().unwrap().contains("cluster_0"));
        // No mapper named: tdpm-refine, which reports its refinement steps.
        let req = json!({"app": f.to_str().unwrap(), "engines": 3});
        let def: serde_json::Value =
            serde_json::from_str(&map_json(&req.to_string()).unwrap()).unwrap();
        assert_eq!(def["mapper"], "tdpm-refine");
        assert!(def["steps"]["refine"]["evaluations"].as_u64().unwrap() > 0);
        let req = json!({"app": f.to_str().unwrap(), "engines": 3, "mapper": "tdpm"});
        let paper: serde_json::Value =
            serde_json::from_str(&map_json(&req.to_string()).unwrap()).unwrap();
        assert!(paper["steps"]["refine"].is_null());
        assert!(
            def["packets_per_second"].as_f64().unwrap()
                >= paper["packets_per_second"].as_f64().unwrap()
        );
        let bad = json!({"app": f.to_str().unwrap(), "engines": 9}).to_string();
        assert!(map_json(&bad)
            .unwrap_err()
            .to_string()
            .contains("at most 6"));
        let bad = json!({"app": f.to_str().unwrap(), "mapper": "x"}).to_string();
        assert!(map_json(&bad)
            .unwrap_err()
            .to_string()
            .contains("unknown mapper"));
        let bad = json!({"app": "nonexistent-app"}).to_string();
        assert!(map_json(&bad)
            .unwrap_err()
            .to_string()
            .contains("unknown application"));
    }
}
