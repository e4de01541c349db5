//! JSON requests and answers for the Python binding and the command line.
//!
//! Request: `{"spec": AppSpec, "sim": SimConfig, "search": MaxRateConfig}`, every part and
//! every field optional (defaults: built-in router, 20,000 synthetic packets, npire with its
//! 16 PEs, global replication; see [`AppSpec`], [`SimConfig`], [`MaxRateConfig`]).
use crate::app::{AppSpec, Prepared};
use crate::config::SimConfig;
use crate::mapper::MapperLog;
use crate::maxrate::MaxRateConfig;
use serde::Deserialize;

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Request {
    pub spec: AppSpec,
    pub sim: SimConfig,
    pub search: MaxRateConfig,
    pub bottleneck: crate::BottleneckConfig,
    pub explore: crate::explore::ExploreConfig,
}

/// Largest request accepted, bytes.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

const SECTIONS: [&str; 5] = ["spec", "sim", "search", "bottleneck", "explore"];

/// One section of a request. On a bad value, the message names `section.key`: every section's
/// fields have defaults, so each key is tried alone to find the one serde refused.
fn section<T: serde::de::DeserializeOwned + Default>(
    obj: &serde_json::Map<String, serde_json::Value>,
    name: &str,
) -> Result<T, String> {
    let Some(v) = obj.get(name) else {
        return Ok(T::default());
    };
    if v.is_null() {
        return Ok(T::default());
    }
    T::deserialize(v).map_err(|e| {
        if let Some(o) = v.as_object() {
            for (k, x) in o {
                let mut one = serde_json::Map::new();
                one.insert(k.clone(), x.clone());
                if let Err(e1) = T::deserialize(&serde_json::Value::Object(one)) {
                    return format!("bad simulation request: {name}.{k}: {e1}");
                }
            }
        }
        format!("bad simulation request: {name}: {e}")
    })
}

/// The `spec` section over `base` (its given keys replace base's); errors as [`section`].
fn spec_section(
    obj: &serde_json::Map<String, serde_json::Value>,
    base: &AppSpec,
) -> Result<AppSpec, String> {
    let over = |keys: &mut dyn Iterator<Item = (&String, &serde_json::Value)>| {
        let mut b = serde_json::to_value(base).unwrap_or_default();
        for (k, x) in keys {
            b[k.as_str()] = x.clone();
        }
        AppSpec::deserialize(&b)
    };
    let Some(v) = obj.get("spec").filter(|v| !v.is_null()) else {
        return Ok(base.clone());
    };
    let Some(o) = v.as_object() else {
        return Err("bad simulation request: spec: expected an object".into());
    };
    over(&mut o.iter()).map_err(|e| {
        for kv in o {
            if let Err(e1) = over(&mut std::iter::once(kv)) {
                return format!("bad simulation request: spec.{}: {e1}", kv.0);
            }
        }
        format!("bad simulation request: spec: {e}")
    })
}

/// Parse and validate a request, and resolve the defaults that depend on other settings: the
/// warm-up is a fifth of the packets (at least 1) unless `sim.warmup_packets` is given. A fifth
/// scales with the run, so a short run still measures (a fixed count would exceed it) and a
/// long one is not dominated by the start.
pub fn parse(request: &str) -> Result<Request, String> {
    parse_with(request, &AppSpec::default())
}

/// Packets of the trace file `path`, counted up to `at_most` (records read until the end or the
/// first damaged one); `None` when it cannot be opened (the run reports why).
fn trace_packets(path: &str, at_most: u64) -> Option<u64> {
    let mut r = pktflow_traffic::TraceFileReader::open(path).ok()?;
    let mut scratch = pktflow_traffic::TracePacket::default();
    let mut n = 0;
    while n < at_most && matches!(r.next_ref(&mut scratch), Ok(Some(_))) {
        n += 1;
    }
    Some(n)
}

/// The defaults of `explore` that differ from the other commands': 2,000 packets per
/// simulation (an exploration runs hundreds of searches) and the `greedy+replicate` mapper
/// (the NPIRE paper's mapping).
pub fn explore_spec_defaults() -> AppSpec {
    AppSpec {
        packets: 2_000,
        mapper: "greedy+replicate".into(),
        ..AppSpec::default()
    }
}

/// [`parse`] with `base` as the spec's defaults.
pub fn parse_with(request: &str, base: &AppSpec) -> Result<Request, String> {
    if request.len() > MAX_REQUEST_BYTES {
        return Err(format!(
            "bad simulation request: {} bytes, at most {MAX_REQUEST_BYTES}",
            request.len()
        ));
    }
    let v: serde_json::Value =
        serde_json::from_str(request).map_err(|e| format!("bad simulation request: {e}"))?;
    let obj = v
        .as_object()
        .ok_or("bad simulation request: expected a JSON object")?;
    if let Some(k) = obj.keys().find(|k| !SECTIONS.contains(&k.as_str())) {
        return Err(format!(
            "bad simulation request: unknown section '{k}' (expected {})",
            SECTIONS.join(", ")
        ));
    }
    let mut r = Request {
        spec: spec_section(obj, base)?,
        sim: section(obj, "sim")?,
        search: section(obj, "search")?,
        bottleneck: section(obj, "bottleneck")?,
        explore: section(obj, "explore")?,
    };
    let warm_given = obj
        .get("sim")
        .and_then(|s| s.get("warmup_packets"))
        .is_some_and(|w| !w.is_null());
    if !warm_given {
        // A trace file shorter than `spec.packets` would leave nothing to measure after a
        // fifth of `spec.packets`: a fifth of the packets it holds instead.
        let n = match &r.spec.trace {
            Some(t) => trace_packets(t, r.spec.packets).unwrap_or(r.spec.packets),
            None => r.spec.packets,
        };
        r.sim.warmup_packets = (n / 5).max(1);
    }
    r.spec.validate()?;
    r.sim.validate().map_err(|e| {
        if e.starts_with("sim.") {
            e
        } else {
            format!("sim.{e}")
        }
    })?;
    if r.spec.trace.is_none() && r.sim.warmup_packets >= r.spec.packets {
        return Err(format!(
            "sim.warmup_packets (--warmup) = {} leaves nothing to measure of spec.packets (--packets) = {}",
            r.sim.warmup_packets, r.spec.packets
        ));
    }
    r.search.validate()?;
    let b = &r.bottleneck;
    if !(b.threshold.is_finite() && (1.0..=1e6).contains(&b.threshold)) {
        return Err(format!(
            "bottleneck.threshold (--threshold) must be a factor from 1 to 1e6, got {}",
            b.threshold
        ));
    }
    if b.extra.len() > 64 {
        return Err("bottleneck.extra: at most 64 combinations".into());
    }
    for x in &b.extra {
        crate::Ideal::parse(x).map_err(|e| format!("bottleneck.extra (--ideal): {e}"))?;
    }
    r.explore.validate()?;
    Ok(r)
}

/// Wall-clock figures of every simulation report in `v` moved under `"timing"`: the rest of a
/// result is determined by its settings (two runs compare equal without `timing`).
fn timing_apart(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(o) => {
            if let Some(eps) = o.remove("events_per_second") {
                let mut t = serde_json::Map::new();
                t.insert("events_per_second".into(), eps);
                if let Some(w) = o.remove("wall_seconds") {
                    t.insert("wall_seconds".into(), w);
                }
                o.insert("timing".into(), serde_json::Value::Object(t));
            }
            for (k, x) in o.iter_mut() {
                if k != "timing" {
                    timing_apart(x);
                }
            }
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(timing_apart),
        _ => {}
    }
}

/// Everything that determined a result, resolved (defaults filled in), with the architecture's
/// parameters after its base chain and overrides: a result records how to reproduce it.
fn settings(r: &Request, p: &Prepared, with: &[&str]) -> serde_json::Value {
    let mut v = serde_json::json!({
        "spec": r.spec,
        "sim": r.sim,
        "pe_count": p.pes,
        "architecture": pktflow_arch::Arch::load_with(&r.spec.arch, &r.spec.arch_set)
            .map(|a| a.to_json())
            .unwrap_or(serde_json::Value::Null),
    });
    for w in with {
        v[*w] = match *w {
            "search" => serde_json::to_value(&r.search).unwrap_or_default(),
            "bottleneck" => serde_json::to_value(&r.bottleneck).unwrap_or_default(),
            "explore" => serde_json::to_value(&r.explore).unwrap_or_default(),
            _ => serde_json::Value::Null,
        };
    }
    v
}

/// The application prepared with the spec's mapper applied (section 3.1); for
/// `greedy+replicate` also the final mapping's maximum rate.
pub fn prepare(r: &Request) -> Result<(Prepared, MapperLog, Option<crate::MaxRate>), String> {
    let mut p = Prepared::new(&r.spec)?;
    let (log, best) = p.apply_mapper(None, &r.sim, &r.search)?;
    // [xform hook] the transformations' feedback loop (splitting), after the mapping
    let best = crate::xform::plan(&mut p, &r.sim, &r.search)?.or(best);
    Ok((p, log, best))
}

fn mapping_json(p: &Prepared, log: &MapperLog) -> serde_json::Value {
    let tasks: Vec<serde_json::Value> = p
        .mapping
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut v = serde_json::json!({
                "element": p.names[i],
                "pes": t.pes,
                "max_concurrent": if t.max_concurrent == u32::MAX { None } else { Some(t.max_concurrent) },
                "weight_cycles_per_packet": log.weights.get(i),
            });
            if let Some(g) = t.group {
                v["group"] = g.into();
            }
            v
        })
        .collect();
    let mut v = serde_json::json!({"tasks": tasks, "mapper": log});
    if let Some(l) = &p.xform.log {
        v["split"] = serde_json::to_value(l).unwrap_or_default(); // [xform hook]
    }
    v
}

/// One run at `sim.inter_arrival_cycles`: the [`crate::SimReport`] as JSON.
pub fn simulate_json(request: &str) -> Result<String, String> {
    simulate_json_with(request, &mut |_, _| {})
}

/// [`simulate_json`] calling `progress(packets_injected, packets_expected)` now and then
/// (`packets_expected`: the synthetic packet count, or 0 when a trace file sets it).
pub fn simulate_json_with(
    request: &str,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<String, String> {
    let r = parse(request)?;
    let (p, log, _) = prepare(&r)?;
    let expected = match (&r.spec.trace, r.sim.packets) {
        (_, n) if n > 0 => n,
        (None, _) => r.spec.packets,
        (Some(_), _) => 0,
    };
    let rep = p.simulate_mapping_with(&p.mapping, &r.sim, &mut |k| progress(k, expected))?;
    if rep.injected == 0 {
        // An empty trace used to report 0 packets/s and blame an idle bus: nothing was measured.
        return Err(match &r.spec.trace {
            Some(t) => format!("{t}: the trace holds no packets: nothing to simulate"),
            None => "no packets to simulate".into(),
        });
    }
    let mut v = serde_json::to_value(&rep).map_err(|e| e.to_string())?;
    v["diagnosis"] = serde_json::to_value(p.diagnose(&rep)).map_err(|e| e.to_string())?;
    v["spec"] = serde_json::to_value(&r.spec).map_err(|e| e.to_string())?;
    v["mapping"] = mapping_json(&p, &log);
    v["settings"] = settings(&r, &p, &["search"]);
    timing_apart(&mut v);
    Ok(v.to_string())
}

/// Maximum sustainable rate: [`crate::MaxRate`] as JSON (`packets_per_second`, `gbps`,
/// `bracket`, `probes`, `report`).
pub fn maxrate_json(request: &str) -> Result<String, String> {
    maxrate_json_with(request, &mut |_, _, _| {})
}

/// [`maxrate_json`] with `progress(done, estimated_total, inter_arrival)` before each
/// simulation of the final search.
pub fn maxrate_json_with(
    request: &str,
    progress: &mut dyn FnMut(usize, usize, f64),
) -> Result<String, String> {
    let r = parse(request)?;
    let (p, log, best) = prepare(&r)?;
    let m = match best {
        Some(m) => m,
        None => p.max_rate_mapping_with(&p.mapping, &r.sim, &r.search, progress)?,
    };
    let mut v = serde_json::to_value(&m).map_err(|e| e.to_string())?;
    v["diagnosis"] = serde_json::to_value(p.diagnose(&m.report)).map_err(|e| e.to_string())?;
    v["spec"] = serde_json::to_value(&r.spec).map_err(|e| e.to_string())?;
    v["report"]["spec"] = v["spec"].clone();
    v["mapping"] = mapping_json(&p, &log);
    v["settings"] = settings(&r, &p, &["search"]);
    timing_apart(&mut v);
    Ok(v.to_string())
}

/// Bottleneck finding by idealized executions: [`crate::Bottleneck`] as JSON (`runs`,
/// `ranking`, `summary`). `progress(done, label)` is called before each maximum-rate search.
pub fn bottleneck_json(request: &str, progress: impl FnMut(usize, &str)) -> Result<String, String> {
    let r = parse(request)?;
    let (p, log, _) = prepare(&r)?;
    let b = p.bottleneck(&r.sim, &r.search, &r.bottleneck, progress)?;
    let mut v = serde_json::to_value(&b).map_err(|e| e.to_string())?;
    v["spec"] = serde_json::to_value(&r.spec).map_err(|e| e.to_string())?;
    v["mapping"] = mapping_json(&p, &log);
    v["settings"] = settings(&r, &p, &["search", "bottleneck"]);
    timing_apart(&mut v);
    Ok(v.to_string())
}

/// Design-space exploration ([`crate::explore::Explore`] as JSON). `progress(done, total,
/// label)` is called before each point.
pub fn explore_json(
    request: &str,
    progress: impl FnMut(usize, usize, &str),
) -> Result<String, String> {
    let r = parse_with(request, &explore_spec_defaults())?;
    let x = crate::explore::explore(&r.spec, &r.sim, &r.search, &r.explore, progress)?;
    let mut v = serde_json::to_value(&x).map_err(|e| e.to_string())?;
    v["settings"] = serde_json::json!({
        "spec": r.spec,
        "sim": r.sim,
        "search": r.search,
        "explore": r.explore,
        "architecture": pktflow_arch::Arch::load_with(&r.spec.arch, &r.spec.arch_set)
            .map(|a| a.to_json())
            .unwrap_or(serde_json::Value::Null),
    });
    timing_apart(&mut v);
    Ok(v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_checked_with_clear_messages() {
        assert!(parse(r#"{"spec": {"pes": 8}, "bogus": 1}"#)
            .unwrap_err()
            .contains("bogus"));
        assert!(parse(r#"{"sim": {"inter_arrival_cycles": -1}}"#)
            .unwrap_err()
            .contains("inter_arrival_cycles"));
        assert!(parse(r#"{"spec": {"replication": "sometimes"}}"#).is_err());
        let e = simulate_json(r#"{"spec": {"arch": "mesh"}}"#).unwrap_err();
        assert!(e.contains("not a network processor"), "{e}");
        let e = simulate_json(r#"{"spec": {"app": "no-such-app"}}"#).unwrap_err();
        assert!(!e.is_empty());
    }

    #[test]
    fn every_bad_value_is_refused_naming_its_option() {
        for (req, want) in [
            (
                r#"{"sim": {"inter_arrival_cycles": "NaN"}}"#,
                "sim.inter_arrival_cycles (--inter-arrival) must be a positive number, got NaN",
            ),
            (
                r#"{"sim": {"inter_arrival_cycles": "Infinity"}}"#,
                "sim.inter_arrival_cycles",
            ),
            (
                r#"{"sim": {"inter_arrival_cycles": -3}}"#,
                "sim.inter_arrival_cycles",
            ),
            (
                r#"{"sim": {"inter_arrival_cycles": 1e300}}"#,
                "sim.inter_arrival_cycles (--inter-arrival) = 1e300 is larger",
            ),
            (
                // every packet would arrive in cycle 0: no rate (a traceback in the CLI before)
                r#"{"sim": {"inter_arrival_cycles": 1e-300}}"#,
                "sim.inter_arrival_cycles (--inter-arrival) = 1e-300 is below the 1e-3 cycles",
            ),
            (r#"{"sim": {"time_scale": 0}}"#, "sim.time_scale"),
            (
                r#"{"sim": {"task_queue_capacity": 4000000000}}"#,
                "sim.task_queue_capacity",
            ),
            (
                r#"{"sim": {"warmup_packets": "x"}}"#,
                "sim.warmup_packets: invalid type",
            ),
            (
                r#"{"sim": {"warmup_packets": 600}, "spec": {"packets": 600}}"#,
                "sim.warmup_packets (--warmup) = 600 leaves nothing",
            ),
            (
                r#"{"sim": {"scheduling": "lifo"}}"#,
                "sim.scheduling: unknown variant",
            ),
            (
                r#"{"spec": {"pes": 100000}}"#,
                "spec.pes (--pes) must be 1 to 4096, got 100000",
            ),
            (r#"{"spec": {"pes": 0}}"#, "spec.pes"),
            (r#"{"spec": {"pes": -1}}"#, "spec.pes: invalid value"),
            (r#"{"spec": {"packets": 0}}"#, "spec.packets (--packets)"),
            (
                r#"{"spec": {"packets": 1000000000000}}"#,
                "spec.packets (--packets)",
            ),
            (r#"{"spec": {"subset_size": 0}}"#, "spec.subset_size"),
            (r#"{"spec": {"mapper": "best"}}"#, "spec.mapper"),
            (
                r#"{"spec": {"replication": "sometimes"}}"#,
                "spec.replication: unknown variant",
            ),
            (
                r#"{"search": {"tolerance": "NaN"}}"#,
                "search.tolerance (--tolerance)",
            ),
            (r#"{"search": {"tolerance": -0.5}}"#, "search.tolerance"),
            (
                r#"{"search": {"precision": 0}}"#,
                "search.precision (--precision)",
            ),
            (
                r#"{"search": {"precision": "-Infinity"}}"#,
                "search.precision",
            ),
            (r#"{"search": {"max_runs": 0}}"#, "search.max_runs"),
            (r#"{"search": {"start_cycles": 0}}"#, "search.start_cycles"),
            (
                r#"{"bottleneck": {"threshold": "NaN"}}"#,
                "bottleneck.threshold (--threshold)",
            ),
            (
                r#"{"bottleneck": {"threshold": 0.5}}"#,
                "bottleneck.threshold",
            ),
            (
                r#"{"bottleneck": {"extra": ["IQ"]}}"#,
                "bottleneck.extra (--ideal)",
            ),
            (
                r#"{"explore": {"pes": [4, 100000]}}"#,
                "explore.pes (--pes): PE count 100000",
            ),
            (
                r#"{"explore": {"threshold": "Infinity"}}"#,
                "explore.threshold",
            ),
            (
                r#"{"explore": {"baseline_pes": 0}}"#,
                "explore.baseline_pes",
            ),
            (
                r#"{"sim": {"inter_arrival_cycles": "fast"}}"#,
                "sim.inter_arrival_cycles: expected a number",
            ),
            (r#"{"nope": {}}"#, "unknown section 'nope'"),
            (r#"[1]"#, "expected a JSON object"),
        ] {
            let e = parse(req).unwrap_err();
            assert!(e.contains(want), "{req}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn the_warm_up_default_is_a_fifth_of_the_packets_unless_given() {
        let r = parse(r#"{"spec": {"packets": 500}}"#).unwrap();
        assert_eq!(r.sim.warmup_packets, 100);
        let r = parse(r#"{"spec": {"packets": 3}}"#).unwrap();
        assert_eq!(r.sim.warmup_packets, 1);
        let r = parse(r#"{"spec": {"packets": 500}, "sim": {"warmup_packets": 7}}"#).unwrap();
        assert_eq!(r.sim.warmup_packets, 7);
        let r = parse("{}").unwrap();
        assert_eq!(r.sim.warmup_packets, AppSpec::default().packets / 5);
        // A trace shorter than spec.packets: a fifth of its packets; longer: of spec.packets.
        let dir = std::env::temp_dir().join(format!("pktflow-warm-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.pcap");
        let mut w = pktflow_traffic::PcapWriter::create(&path, 1).unwrap();
        for i in 0..3000u64 {
            let tp = pktflow_traffic::TracePacket {
                timestamp_ns: i,
                iface: 0,
                data: vec![0u8; 60],
                orig_len: 60,
            };
            w.write(&tp).unwrap();
        }
        w.finish().unwrap();
        let t = path.to_str().unwrap();
        let req = |packets: u64| format!(r#"{{"spec": {{"trace": "{t}", "packets": {packets}}}}}"#);
        assert_eq!(parse(&req(20_000)).unwrap().sim.warmup_packets, 600);
        assert_eq!(parse(&req(1_000)).unwrap().sim.warmup_packets, 200);
        // A file that cannot be opened keeps the default; the run reports why.
        let missing = r#"{"spec": {"trace": "/nonexistent/x.pcap", "packets": 500}}"#;
        assert_eq!(parse(missing).unwrap().sim.warmup_packets, 100);
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn huge_architectures_are_refused_before_simulating() {
        for (set, want) in [
            ("np.hardware_contexts_per_pe=1000000", "256 supported"),
            ("np.pe_count=4294967295", "4096 supported"),
            ("np.queue_size_requests=4294967295", "65536 supported"),
            ("storage.dram.channels=4294967295", "1024 supported"),
        ] {
            let req = format!(
                r#"{{"spec": {{"packets": 50, "arch_set": ["{set}"]}}, "sim": {{"inter_arrival_cycles": 1000}}}}"#
            );
            let e = simulate_json(&req).unwrap_err();
            assert!(e.contains(want), "{set}: {e}");
        }
    }

    #[test]
    fn results_record_the_resolved_settings_and_architecture() {
        let out = simulate_json(
            r#"{"spec": {"packets": 200, "pes": 6, "arch_set": ["np.hardware_contexts_per_pe=4"]},
                "sim": {"inter_arrival_cycles": 3000}}"#,
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let s = &v["settings"];
        assert_eq!(s["sim"]["warmup_packets"], 40);
        assert_eq!(s["sim"]["inter_arrival_cycles"], 3000.0);
        assert_eq!(s["spec"]["packets"], 200);
        assert_eq!(s["pe_count"], 6);
        assert_eq!(s["spec"]["arch_set"][0], "np.hardware_contexts_per_pe=4");
        assert_eq!(
            s["architecture"]["params"]["np"]["hardware_contexts_per_pe"],
            4
        );
        assert_eq!(s["search"]["precision"], 0.01);
        // Wall-clock figures only under "timing", once.
        assert!(v.get("events_per_second").is_none());
        assert!(v["timing"]["events_per_second"].is_number());
        assert!(v["timing"].get("timing").is_none());
        // Replaying the recorded settings gives the same result.
        let again = simulate_json(
            &serde_json::json!({"spec": s["spec"], "sim": s["sim"], "search": s["search"]})
                .to_string(),
        )
        .unwrap();
        let w: serde_json::Value = serde_json::from_str(&again).unwrap();
        assert_eq!(v["delivered"], w["delivered"]);
        assert_eq!(v["latency"], w["latency"]);
    }

    #[test]
    fn a_run_leaves_no_folder_in_the_temporary_directory() {
        let d = std::env::temp_dir().join(format!("pktflow-npsim-{}", std::process::id()));
        simulate_json(r#"{"spec": {"packets": 50}, "sim": {"inter_arrival_cycles": 3000}}"#)
            .unwrap();
        assert!(!d.exists(), "{} left behind", d.display());
    }

    #[test]
    fn router_runs_end_to_end_from_json() {
        let out = simulate_json(
            r#"{"spec": {"app": "router", "packets": 600, "pes": 8},
                "sim": {"inter_arrival_cycles": 2000, "warmup_packets": 100}}"#,
        )
        .unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        // The 600 source packets plus the ARP replies the simulated neighbours send back.
        let injected = v["injected"].as_u64().unwrap();
        assert!(injected >= 600, "{injected}");
        let np: u64 = v["dropped_by_np"]
            .as_object()
            .unwrap()
            .values()
            .map(|x| x.as_u64().unwrap())
            .sum();
        let left = ["delivered", "dropped_by_app", "held_by_app"]
            .iter()
            .map(|k| v[*k].as_u64().unwrap())
            .sum::<u64>();
        assert_eq!(injected, left + np);
        assert_eq!(v["in_flight_at_end"], 0);
        assert!(v["invariant_violations"].as_array().unwrap().is_empty());
        assert!(v["delivered"].as_u64().unwrap() > 0);
        assert_eq!(v["pes"].as_array().unwrap().len(), 8);
    }
}
