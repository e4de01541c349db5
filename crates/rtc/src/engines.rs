//! The engines of pktflow by name, for the evaluation harness: `npsim` (the network-processor
//! simulator) and `rtc` (this crate's run-to-completion engine). This crate hosts the registry
//! because it is the one that sees both engines.
use crate::api::{self, RtcRequest};
use pktflow_harness::{Engine, EngineRegistry, Evaluation, Measured};
use pktflow_npsim::app::Prepared;
use pktflow_npsim::config::SimConfig;

/// Every engine with a help line each.
pub fn engines() -> EngineRegistry {
    // The TDPM plans as NP simulator mappers (`--mapper tdpm`).
    crate::plan::install();
    let mut r = EngineRegistry::new("engine");
    r.register(
        "npsim",
        "network-processor simulator: tasks mapped onto PEs with hardware contexts, buses and memory channels (request: npsim's JSON)",
        npsim,
    )
    .register(
        "rtc",
        "run-to-completion on multithreaded cores with locks or transactional memory (request: rtc's JSON)",
        rtc,
    );
    r
}

/// The NP simulator on one prepared application and mapping. It is deterministic: every
/// repetition is the same run.
pub struct NpsimEngine {
    p: Prepared,
    sim: SimConfig,
    start: f64,
}

fn npsim(request: &str) -> Result<Box<dyn Engine>, String> {
    let r = pktflow_npsim::api::parse(request)?;
    let (p, _, _) = pktflow_npsim::api::prepare(&r)?;
    Ok(Box::new(NpsimEngine {
        p,
        sim: r.sim,
        start: r.search.start_cycles,
    }))
}

impl Engine for NpsimEngine {
    fn name(&self) -> &'static str {
        "npsim"
    }
    fn evaluate(&mut self, ia: f64, _rep: u32) -> Result<Evaluation, String> {
        let c = SimConfig {
            inter_arrival_cycles: ia,
            ..self.sim.clone()
        };
        let rep = self.p.simulate_mapping(&self.p.mapping, &c)?;
        Ok(Evaluation {
            window: rep.window(),
            clock_hz: rep.clock_hz(),
            mean_wire_bytes: rep.mean_wire_bytes(),
            invariant_violation: rep.invariant_violation(),
            findings: self.p.diagnose(&rep).limits,
        })
    }
    fn start_cycles(&self) -> Option<f64> {
        Some(self.start)
    }
}

fn rtc(request: &str) -> Result<Box<dyn Engine>, String> {
    let r: RtcRequest = serde_json::from_str(request).map_err(|e| format!("rtc request: {e}"))?;
    Ok(Box::new(api::RtcEngine::new(&r)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktflow_harness::{engine_max_rate, Criterion, SearchConfig};

    #[test]
    fn both_engines_run_the_shared_search_by_name() {
        let reg = engines();
        assert_eq!(reg.names(), vec!["npsim", "rtc"]);
        let cfg = SearchConfig {
            criterion: Criterion::ZeroDrop,
            precision: 0.05,
            ..SearchConfig::default()
        };
        for (name, req) in [
            ("npsim", r#"{"spec": {"app": "router", "packets": 60}}"#),
            (
                "rtc",
                r#"{"workload": {"app": "echo", "packets": 50}, "search": {"window_seconds": 0.001}}"#,
            ),
        ] {
            let mut e = (reg.get(name).unwrap())(req).unwrap();
            assert_eq!(e.name(), name);
            let m = engine_max_rate(e.as_mut(), &cfg, &mut |_, _, _| {}).unwrap();
            let [lo, hi] = m.bracket.inter_arrival_cycles;
            assert!(lo < hi && (hi - lo) / hi <= 0.05, "{name}: {lo}..{hi}");
            let f = &m.report.findings[0];
            assert!(
                (0.0..=1.0).contains(&f.share) && f.sentence.starts_with(&f.what),
                "{name}"
            );
        }
        assert!(reg
            .get("gem5")
            .err()
            .unwrap()
            .to_string()
            .contains("known: npsim, rtc"));
    }
}
