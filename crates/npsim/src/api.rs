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

pub fn parse(request: &str) -> Result<Request, String> {
    let r: Request =
        serde_json::from_str(request).map_err(|e| format!("bad simulation request: {e}"))?;
    r.sim.validate()?;
    Ok(r)
}

/// The application prepared with the spec's mapper applied (section 3.1); for
/// `greedy+replicate` also the final mapping's maximum rate.
fn prepare(r: &Request) -> Result<(Prepared, MapperLog, Option<crate::MaxRate>), String> {
    let mut p = Prepared::new(&r.spec)?;
    let (log, best) = p.apply_mapper(None, &r.sim, &r.search)?;
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
    serde_json::json!({"tasks": tasks, "mapper": log})
}

/// One run at `sim.inter_arrival_cycles`: the [`crate::SimReport`] as JSON.
pub fn simulate_json(request: &str) -> Result<String, String> {
    let r = parse(request)?;
    let (p, log, _) = prepare(&r)?;
    let rep = p.simulate(&r.sim)?;
    let mut v = serde_json::to_value(&rep).map_err(|e| e.to_string())?;
    v["spec"] = serde_json::to_value(&r.spec).map_err(|e| e.to_string())?;
    v["mapping"] = mapping_json(&p, &log);
    Ok(v.to_string())
}

/// Maximum sustainable rate: [`crate::MaxRate`] as JSON (`packets_per_second`, `gbps`,
/// `bracket`, `probes`, `report`).
pub fn maxrate_json(request: &str) -> Result<String, String> {
    let r = parse(request)?;
    let (p, log, best) = prepare(&r)?;
    let m = match best {
        Some(m) => m,
        None => p.max_rate(&r.sim, &r.search)?,
    };
    let mut v = serde_json::to_value(&m).map_err(|e| e.to_string())?;
    v["spec"] = serde_json::to_value(&r.spec).map_err(|e| e.to_string())?;
    v["mapping"] = mapping_json(&p, &log);
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
    Ok(v.to_string())
}

/// Design-space exploration ([`crate::explore::Explore`] as JSON). `progress(done, total,
/// label)` is called before each point.
pub fn explore_json(
    request: &str,
    progress: impl FnMut(usize, usize, &str),
) -> Result<String, String> {
    let r = parse(request)?;
    let x = crate::explore::explore(&r.spec, &r.sim, &r.search, &r.explore, progress)?;
    serde_json::to_string(&x).map_err(|e| e.to_string())
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
