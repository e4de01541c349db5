//! A TDPM plan (crates/tdpm, the TDPM paper's partitioning and mapping) as an explicit mapping
//! of the NP simulator: the bridge `pktflow compare`'s hybrid model and the `tdpm` mapper of
//! npsim use. The plan becomes a mapping as `pktflow_tdpm::simulate::element_mapping` does it
//! (every element of an ME task on that task's consecutive engines after the interface PEs, one
//! hand-off group per task; receivers on PE 0 and the transmitter's elements on the last
//! interface PE). Unlike `tdpm simulate`, nothing else of the simulator changes: packet data
//! stay where the preset's memory map puts them, so the plan is measured on the same machine
//! as every other mapping.
use pktflow_npsim::app::ElementMap;
use serde::Serialize;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Serialize)]
pub struct TdpmMapping {
    /// The explicit mapping by element name.
    pub mapping: BTreeMap<String, ElementMap>,
    /// Tasks of the plan (on engines or the control core).
    pub tasks: usize,
    /// The elements of each task.
    pub task_elements: Vec<Vec<String>>,
    pub engines_used: u32,
    /// Pipeline copies (c of the cost model).
    pub copies: u32,
    /// The cost model's prediction and what sets it.
    pub model_packets_per_second: f64,
    pub model_binding: String,
}

/// The plan of TDPM mapper `mapper` (`tdpm`, `tdpm-refine`, ...) for `app` on architecture
/// `arch` (with `arch_set` overrides) with `pes` PEs in all (default: the architecture's; the
/// engines are those beside the interface PEs), profiled on `packets` synthetic packets of
/// traffic seed `seed`.
pub fn tdpm_mapping(
    app: &str,
    arch: &str,
    arch_set: &[String],
    pes: Option<u32>,
    mapper: &str,
    packets: u64,
    seed: u64,
) -> Result<TdpmMapping, String> {
    let a = pktflow_arch::Arch::load_with(arch, arch_set)?;
    let mut np = a
        .as_np()
        .ok_or_else(|| format!("architecture '{arch}' is not a network processor"))?
        .clone();
    if let Some(p) = pes {
        np.np.pe_count = p;
    }
    let ifp = np.np.interface_pes;
    if np.np.pe_count <= ifp {
        return Err(format!(
            "a TDPM plan needs engines beside the {ifp} interface PEs; {} PEs leave none",
            np.np.pe_count
        ));
    }
    let engines = np.np.pe_count - ifp;
    let g =
        pktflow_tdpm::api::load_graph(app, &np, packets, seed, None).map_err(|e| e.to_string())?;
    let machine =
        pktflow_tdpm::cost::Machine::from_arch(&np, engines).map_err(|e| e.to_string())?;
    let model = pktflow_tdpm::cost::Model::new(&g, machine).map_err(|e| e.to_string())?;
    let plan = pktflow_tdpm::baselines::map(&model, mapper, &Default::default())
        .map_err(|e| e.to_string())?;
    let elements: Vec<(String, String)> = pktflow_profile::app::load_app(app)?
        .graph
        .elements
        .iter()
        .map(|e| (e.name.clone(), e.class.clone()))
        .collect();
    let mapping = pktflow_tdpm::simulate::element_mapping(&plan.eval, &elements, &np)
        .map_err(|e| e.to_string())?;
    let e = &plan.eval;
    Ok(TdpmMapping {
        mapping,
        tasks: e.tasks.len(),
        task_elements: e.tasks.iter().map(|t| t.names.clone()).collect(),
        engines_used: e.engines_used,
        copies: e.copies,
        model_packets_per_second: e.packets_per_second,
        model_binding: e.binding_text(),
    })
}

fn tdpm_plan(
    spec: &pktflow_npsim::app::AppSpec,
    pes: u32,
) -> Result<BTreeMap<String, ElementMap>, String> {
    plan_for(spec, pes, "tdpm")
}

fn tdpm_refine_plan(
    spec: &pktflow_npsim::app::AppSpec,
    pes: u32,
) -> Result<BTreeMap<String, ElementMap>, String> {
    plan_for(spec, pes, "tdpm-refine")
}

/// The plan for an NP simulator spec: profiled on the spec's synthetic traffic (its packet
/// count and seed; the TDPM profile is always synthetic, also when the simulation reads a
/// trace file).
fn plan_for(
    spec: &pktflow_npsim::app::AppSpec,
    pes: u32,
    mapper: &str,
) -> Result<BTreeMap<String, ElementMap>, String> {
    Ok(tdpm_mapping(
        &spec.app,
        &spec.arch,
        &spec.arch_set,
        Some(pes),
        mapper,
        spec.packets,
        spec.traffic_seed,
    )?
    .mapping)
}

/// Register the TDPM plans in the NP simulator's mapper registry as `tdpm` (the TDPM paper's
/// Figure 4 heuristic) and `tdpm-refine` (with the local search), so `simulate`, `maxrate`
/// and `explore` take `--mapper tdpm`. Idempotent.
pub fn install() {
    pktflow_npsim::mapper::register_plan_mapper(
        "tdpm",
        "the TDPM paper's partitioning and mapping (elements grouped into tasks, each duplicated over engines); the replication scope is ignored",
        tdpm_plan,
    );
    pktflow_npsim::mapper::register_plan_mapper(
        "tdpm-refine",
        "the TDPM plan improved by a local search under the same cost model; the replication scope is ignored",
        tdpm_refine_plan,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_maps_every_element_within_the_machine() {
        let p = tdpm_mapping("mpls", "ixp2400", &[], None, "tdpm-refine", 300, 1).unwrap();
        let g = pktflow_profile::app::load_app("mpls").unwrap().graph;
        assert_eq!(p.mapping.len(), g.elements.len());
        assert!(
            p.engines_used >= 1 && p.engines_used <= 6,
            "{}",
            p.engines_used
        );
        assert_eq!(p.task_elements.len(), p.tasks);
        // The router's ICMP errors loop back into the lookup: TDPM refuses the cycle.
        let e = tdpm_mapping("router", "ixp2400", &[], None, "tdpm", 300, 1).unwrap_err();
        assert!(e.contains("cycle"), "{e}");
        let e = tdpm_mapping("mpls", "netthreads", &[], None, "tdpm", 300, 1).unwrap_err();
        assert!(e.contains("not a network processor"), "{e}");
        let e = tdpm_mapping("mpls", "ixp2400", &[], Some(2), "tdpm", 300, 1).unwrap_err();
        assert!(e.contains("interface"), "{e}");
    }
}

#[cfg(test)]
mod npsim_mapper {
    #[test]
    fn the_tdpm_plan_is_an_npsim_mapper() {
        super::install();
        super::install();
        let names = pktflow_npsim::mapper::registry().names();
        assert_eq!(names.iter().filter(|n| **n == "tdpm").count(), 1);
        let req = r#"{"spec": {"app": "mpls", "arch": "ixp2400", "packets": 300, "mapper": "tdpm"},
                      "search": {"precision": 0.1}}"#;
        let out: serde_json::Value =
            serde_json::from_str(&pktflow_npsim::api::maxrate_json(req).unwrap()).unwrap();
        assert!(out["packets_per_second"].as_f64().unwrap() > 0.0, "{out}");
        // The plan's mapping: every element of a task on that task's engines.
        let plan = super::tdpm_mapping("mpls", "ixp2400", &[], None, "tdpm", 300, 1).unwrap();
        let spec = pktflow_npsim::app::AppSpec {
            app: "mpls".into(),
            arch: "ixp2400".into(),
            packets: 300,
            mapper: "tdpm".into(),
            ..Default::default()
        };
        let mut p = pktflow_npsim::app::Prepared::new(&spec).unwrap();
        p.apply_mapper(None, &Default::default(), &Default::default())
            .unwrap();
        let mut want = pktflow_npsim::app::Prepared::new(&pktflow_npsim::app::AppSpec {
            mapper: "round-robin".into(),
            mapping: Some(plan.mapping),
            ..spec.clone()
        })
        .unwrap();
        want.apply_mapper(None, &Default::default(), &Default::default())
            .unwrap();
        assert_eq!(
            serde_json::to_string(&p.mapping).unwrap(),
            serde_json::to_string(&want.mapping).unwrap()
        );
        // A cyclic application: the plan's refusal, named.
        let e = pktflow_npsim::api::maxrate_json(
            r#"{"spec": {"app": "router", "arch": "ixp2400", "packets": 100, "mapper": "tdpm"}}"#,
        )
        .unwrap_err();
        assert!(e.contains("mapper tdpm") && e.contains("cycle"), "{e}");
    }
}
