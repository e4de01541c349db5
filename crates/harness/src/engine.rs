//! Engines: adding one means implementing [`Engine`] and registering a name in an
//! [`EngineRegistry`] (the registry with the NP simulator and the run-to-completion engine is
//! `pktflow_rtc::engines::engines`, the crate that sees both).
//!
//! An engine is built from its own JSON request (application, traffic, machine: everything but
//! the rate), then [`Engine::evaluate`]s one run at a given inter-arrival time with a
//! repetition number (an engine varies its seed with it; a deterministic engine may ignore it).
//! An [`Evaluation`] carries the measurement window, the clock the inter-arrival time counts,
//! the mean frame size and the engine's [`Finding`]s, most binding first, so
//! [`engine_max_rate`] runs the shared search on any engine and reports its binding resource in
//! one vocabulary.
use crate::bottleneck::Finding;
use crate::registry::Registry;
use crate::search::{max_rate_partial, MaxRate, SearchConfig, Stopped};
use crate::window::{Measured, Window};
use serde::Serialize;

/// One run of an engine at a rate.
#[derive(Clone, Debug, Serialize)]
pub struct Evaluation {
    pub window: Window,
    /// Clock of the inter-arrival cycles, Hz.
    pub clock_hz: f64,
    /// Mean frame bytes (for Gb/s).
    pub mean_wire_bytes: f64,
    /// The engine's first broken invariant in this run, if any.
    pub invariant_violation: Option<String>,
    /// Candidate binding resources, most binding first (may be empty).
    pub findings: Vec<Finding>,
}

impl Measured for Evaluation {
    fn window(&self) -> Window {
        self.window
    }
    fn clock_hz(&self) -> f64 {
        self.clock_hz
    }
    fn mean_wire_bytes(&self) -> f64 {
        self.mean_wire_bytes
    }
    fn invariant_violation(&self) -> Option<String> {
        self.invariant_violation.clone()
    }
}

/// A timing model the harness can measure.
pub trait Engine {
    /// Its registered name.
    fn name(&self) -> &'static str;
    /// One run with `inter_arrival_cycles` cycles between packets; repetition `rep` (0, 1, ...)
    /// must select a different seed where the engine has one.
    fn evaluate(&mut self, inter_arrival_cycles: f64, rep: u32) -> Result<Evaluation, String>;
    /// Where the search should start, cycles between packets (a hint: a saturated estimate).
    fn start_cycles(&self) -> Option<f64> {
        None
    }
}

/// Builds an engine from its JSON request.
pub type EngineFactory = fn(request: &str) -> Result<Box<dyn Engine>, String>;

/// Engines by name.
pub type EngineRegistry = Registry<EngineFactory>;

/// The harness's maximum-rate search on any engine (its start hint replaces
/// `cfg.start_cycles` when it gives one). The binding resource is the sustainable run's first
/// finding.
pub fn engine_max_rate(
    engine: &mut dyn Engine,
    cfg: &SearchConfig,
    progress: &mut dyn FnMut(usize, usize, f64),
) -> Result<MaxRate<Evaluation>, Stopped> {
    let mut cfg = cfg.clone();
    if let Some(s) = engine.start_cycles() {
        cfg.start_cycles = s;
    }
    max_rate_partial(|ia, rep| engine.evaluate(ia, rep), &cfg, progress)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bottleneck::Resource;
    use crate::search::Criterion;

    /// A single server with `service` cycles per packet and a 4-packet buffer.
    struct Server {
        service: f64,
    }

    impl Engine for Server {
        fn name(&self) -> &'static str {
            "server"
        }
        fn evaluate(&mut self, ia: f64, _rep: u32) -> Result<Evaluation, String> {
            let n = 1000u64;
            let behind = if self.service > ia {
                ((self.service - ia) / self.service * n as f64) as u64
            } else {
                0
            };
            Ok(Evaluation {
                window: Window {
                    arrivals: n,
                    departures: n - behind,
                    drops: behind.saturating_sub(4),
                    in_flight_at_start: 0,
                    in_flight_at_end: behind.min(4),
                },
                clock_hz: 1e9,
                mean_wire_bytes: 64.0,
                invariant_violation: None,
                findings: vec![Finding::new(
                    Resource::Pe { index: 0 },
                    (self.service / ia).min(1.0),
                    vec![],
                )],
            })
        }
    }

    fn server(_: &str) -> Result<Box<dyn Engine>, String> {
        Ok(Box::new(Server { service: 250.0 }))
    }

    #[test]
    fn an_engine_is_one_trait_and_one_name() {
        let mut reg = EngineRegistry::new("engine");
        reg.register("server", "one server, 250 cycles a packet", server);
        let mut e = (reg.get("server").unwrap())("{}").unwrap();
        assert_eq!(e.name(), "server");
        let cfg = SearchConfig {
            criterion: Criterion::ZeroDrop,
            ..SearchConfig::default()
        };
        let m = engine_max_rate(e.as_mut(), &cfg, &mut |_, _, _| {}).unwrap();
        let [lo, hi] = m.bracket.inter_arrival_cycles;
        assert!(lo < 250.0 && 250.0 <= hi, "{lo}..{hi}");
        assert!(m.report.findings[0].share > 0.98);
        assert!(reg.get("nope").is_err());
    }
}
