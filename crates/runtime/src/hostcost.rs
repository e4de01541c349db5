//! What each element costs on this host, for `pktflow run --predict host` (docs/runtime.md,
//! "Prediction"): the run's packets driven once more, on one thread, through the timed build of
//! the elements (`pktflow-elements-timed`: the fast build with each visit timed, see
//! crates/elements/src/timing.rs), by the same [`Driver`] as `pktflow run`.
//!
//! Measured, in ticks of the clock (the time-stamp counter on x86_64), converted to nanoseconds
//! with the tick rate measured over the same run against `Instant`:
//! - per element: its visits and the mean time of a visit, minus the time an empty timed region
//!   measures ([`timing::calibrate`]);
//! - per packet outside the elements (the driver): the whole run's time minus the time inside
//!   the elements and the clock reads' own cost outside the regions, over the packets injected
//!   (source packets and the neighbours' answers). It is reading or generating the packet,
//!   filling its buffer, carrying it between elements, and handling what leaves.
//!
//! Conversion to the simulator's cycles is the caller's (it knows the architecture's clock):
//! `cycles = ns x pe_frequency_mhz / 1000`.
use crate::driver::Driver;
use crate::engine::Engine;
use pktflow_elements_timed::timing;
use pktflow_model::AppGraph;
use pktflow_profile::app::{format_diagnostics, load_app};
use pktflow_profile::run::{packet_source, Source};

use serde_json::{json, Value};
use std::path::Path;
use std::time::Instant;

/// Empty regions per round of the clock's calibration.
const CALIBRATION_REGIONS: u64 = 100_000;

/// The timed build of the elements behind the driver's interface.
pub struct Timed(pub pktflow_elements_timed::Router);

impl Timed {
    pub fn new(graph: &AppGraph, base_dir: &Path, out_dir: &Path) -> Result<Self, String> {
        let opts = pktflow_elements_timed::RouterOptions {
            base_dir: base_dir.to_path_buf(),
            out_dir: out_dir.to_path_buf(),
        };
        pktflow_elements_timed::Router::new(graph.clone(), &opts)
            .map(Timed)
            .map_err(|d| format_diagnostics(&d))
    }
}

impl Engine for Timed {
    crate::engine::reusing_engine!();
}

/// Raw totals of one timed run.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Totals {
    /// Per element (index order): ticks inside its visits, and visits.
    pub ticks: Vec<u64>,
    pub visits: Vec<u64>,
    /// Ticks and seconds of the whole run (first packet read to last processed).
    pub run_ticks: u64,
    pub run_seconds: f64,
    /// Packets injected (from the source, and the neighbours' answers), and from the source.
    pub injected: u64,
    pub from_source: u64,
    pub calibration: Option<timing::Calibration>,
}

/// Costs in nanoseconds derived from [`Totals`].
#[derive(Clone, Debug, PartialEq)]
pub struct Costs {
    pub tick_hz: f64,
    /// Per element: mean ns per visit (0 for an element never visited).
    pub ns_per_visit: Vec<f64>,
    /// Per injected packet, outside the elements.
    pub driver_ns_per_packet: f64,
    /// The whole run per injected packet (timing overhead included).
    pub run_ns_per_packet: f64,
}

impl Totals {
    /// Subtract the clock's own cost and convert to nanoseconds (see the module documentation).
    pub fn costs(&self) -> Costs {
        let hz = if self.run_seconds > 0.0 && self.run_ticks > 0 {
            self.run_ticks as f64 / self.run_seconds
        } else {
            1e9
        };
        let ns = |ticks: f64| ticks / hz * 1e9;
        let (empty, per_visit) = self.calibration.map_or((0.0, 0.0), |c| {
            (c.empty_region_ticks, c.ticks_per_timed_visit)
        });
        let ns_per_visit = self
            .ticks
            .iter()
            .zip(&self.visits)
            .map(|(&t, &v)| {
                if v == 0 {
                    0.0
                } else {
                    ns((t as f64 / v as f64 - empty).max(0.0))
                }
            })
            .collect();
        let inside: f64 = self.ticks.iter().map(|&t| t as f64).sum();
        let visits: f64 = self.visits.iter().map(|&v| v as f64).sum();
        let outside = self.run_ticks as f64 - inside - visits * (per_visit - empty).max(0.0);
        let packets = self.injected.max(1) as f64;
        Costs {
            tick_hz: hz,
            ns_per_visit,
            driver_ns_per_packet: ns(outside.max(0.0) / packets),
            run_ns_per_packet: ns(self.run_ticks as f64 / packets),
        }
    }
}

/// Drive the request's packets through the timed build on this thread.
pub fn measure_totals(req: &crate::api::Request) -> Result<Totals, String> {
    req.source.validate()?;
    let app = load_app(&req.app)?;
    let scratch = std::env::temp_dir().join(format!("pktflow-hostcost-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let result = (|| {
        let engine = Timed::new(&app.graph, &app.base_dir, &scratch)?;
        let generators = engine.n_generators() > 0;
        if generators && !matches!(req.source, Source::Auto { .. }) {
            return Err(format!(
                "{}: the configuration reads its own packets ({}); measure it without --trace or --synthetic",
                app.graph.file,
                engine.generator_names().join(", ")
            ));
        }
        let mut it = if generators {
            None
        } else {
            Some(packet_source(&app, &req.source)?)
        };
        let calibration = timing::calibrate(CALIBRATION_REGIONS);
        let mut d = Driver::new(engine, &app.graph, None, req.reply_every)?;
        let (i0, t0) = (Instant::now(), timing::now());
        match it.as_mut() {
            Some(it) => d.run_source(it.as_mut(), |_| {})?,
            None => d.run_generators()?,
        }
        let (t1, i1) = (timing::now(), Instant::now());
        d.finish()?;
        let clock = d.engine.0.visit_clock();
        let n = app.graph.elements.len();
        let mut ticks = clock.ticks.clone();
        let mut visits = clock.visits.clone();
        ticks.resize(n, 0);
        visits.resize(n, 0);
        Ok(Totals {
            ticks,
            visits,
            run_ticks: t1.wrapping_sub(t0),
            run_seconds: (i1 - i0).as_secs_f64(),
            injected: d.engine.0.counts().injected,
            from_source: d.from_source_count,
            calibration: Some(calibration),
        })
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
}

/// The measured costs of a request (its app, source and `reply_every`; threads and the rest are
/// ignored: one thread) as the JSON document `predict` records.
pub fn measure(req: &crate::api::Request) -> Result<Value, String> {
    let app = load_app(&req.app)?;
    let t = measure_totals(req)?;
    let c = t.costs();
    let cal = t.calibration.expect("measured");
    let elements: Vec<Value> = app
        .graph
        .elements
        .iter()
        .enumerate()
        .map(|(i, e)| {
            json!({
                "name": e.name,
                "class": e.class,
                "visits": t.visits[i],
                "ns_per_visit": c.ns_per_visit[i],
            })
        })
        .collect();
    Ok(json!({
        "app": app.name,
        "source": req.source.describe(),
        "clock": timing::CLOCK,
        "clock_ticks_per_second": c.tick_hz,
        "empty_region_ticks": cal.empty_region_ticks,
        "timing_ticks_per_visit": cal.ticks_per_timed_visit,
        "packets_injected": t.injected,
        "packets_from_source": t.from_source,
        "seconds": t.run_seconds,
        "elements": elements,
        "driver_ns_per_packet": c.driver_ns_per_packet,
        "run_ns_per_packet": c.run_ns_per_packet,
        "method": "one thread, the timed build of the elements (the fast build with a clock read \
                   at the start and end of every element visit); per element the mean time of a \
                   visit minus an empty timed region's; per packet the run's time outside the \
                   elements (reading the packet, filling its buffer, carrying it between \
                   elements, handling what leaves) less the clock reads' own cost; ticks \
                   converted to ns with the tick rate measured over the run",
    }))
}

/// The JSON entry point of the binding: a `pktflow run` request in, the measured costs out.
pub fn measure_json(request: &str) -> Result<String, String> {
    let req = crate::api::Request::from_json(request)?;
    Ok(measure(&req)?.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_subtract_the_clock_and_leave_the_rest_to_the_driver() {
        // 1 GHz ticks: a tick is a ns. Two elements, 100 visits each, 10 packets.
        let t = Totals {
            ticks: vec![100 * 50, 100 * 30, 0],
            visits: vec![100, 100, 0],
            run_ticks: 20_000,
            run_seconds: 20e-6,
            injected: 10,
            from_source: 10,
            calibration: Some(timing::Calibration {
                empty_region_ticks: 10.0,
                ticks_per_timed_visit: 25.0,
            }),
        };
        let c = t.costs();
        assert!((c.tick_hz - 1e9).abs() < 1e-3);
        let near = |a: f64, b: f64| (a - b).abs() < 1e-9;
        assert!(near(c.ns_per_visit[0], 40.0) && near(c.ns_per_visit[1], 20.0));
        assert_eq!(c.ns_per_visit[2], 0.0);
        // 20,000 - 8,000 inside - 200 visits x 15 outside the regions = 9,000 over 10 packets.
        assert!(
            near(c.driver_ns_per_packet, 900.0),
            "{}",
            c.driver_ns_per_packet
        );
        assert!(near(c.run_ns_per_packet, 2000.0));
        // Elements and driver add up to the run, less the clock's own cost.
        let sum = 100.0 * (40.0 + 20.0) + 10.0 * 900.0;
        assert!(near(sum + 200.0 * 25.0, 20_000.0));
    }

    #[test]
    fn a_timed_run_visits_what_the_fast_run_visits() {
        let req = crate::api::Request::from_json(r#"{"app": "router", "synthetic": 500}"#).unwrap();
        let t = measure_totals(&req).unwrap();
        assert_eq!(t.from_source, 500);
        assert!(t.injected >= 500);
        assert!(t.run_ticks > 0);
        // Every element visited as often as the functional run with recording records it,
        // except the source element, whose visit is the driver's work here.
        let mut run =
            pktflow_profile::run::Run::start("router", &req.source, &std::env::temp_dir()).unwrap();
        let mut recorded = vec![0u64; t.visits.len()];
        let mut first = vec![false; t.visits.len()];
        while let Some(tr) = run.next_trace().unwrap() {
            for v in &tr.visits {
                recorded[v.element as usize] += 1;
            }
            first[tr.visits[0].element as usize] = true;
        }
        for e in 0..t.visits.len() {
            let want = if first[e] { 0 } else { recorded[e] };
            assert_eq!(t.visits[e], want, "element {e}");
        }
        // The measured costs JSON names every element.
        let v = measure(&req).unwrap();
        let app = load_app("router").unwrap();
        assert_eq!(
            v["elements"].as_array().unwrap().len(),
            app.graph.elements.len()
        );
        assert!(v["driver_ns_per_packet"].as_f64().unwrap() >= 0.0);
    }
}
