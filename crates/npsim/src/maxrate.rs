//! Maximum sustainable rate (seed 000 section 4): "we derive this rate by finding, through a
//! bisection search, the smallest effective packet inter-arrival time where the packet
//! inter-departure time is equivalent (i.e., the NP can keep up)". The search itself is the
//! evaluation harness's ([`pktflow_harness::search`]), shared with every engine; this module
//! keeps the simulator's settings (`search.*` of the requests) and says how a [`SimReport`]
//! is measured.
use crate::stats::SimReport;
use pktflow_harness::{Criterion, Measured, SearchConfig, Window};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MaxRateConfig {
    /// Relative tolerance of the keep-up test.
    #[serde(deserialize_with = "crate::config::lenient_f64")]
    pub tolerance: f64,
    /// Stop when (hi - lo) / hi is below this.
    #[serde(deserialize_with = "crate::config::lenient_f64")]
    pub precision: f64,
    /// Also require no drop by the NP during the window.
    pub zero_drop: bool,
    /// Simulations at most.
    pub max_runs: u32,
    /// First inter-arrival time tried, cycles.
    #[serde(deserialize_with = "crate::config::lenient_f64")]
    pub start_cycles: f64,
}

impl MaxRateConfig {
    /// Every field in its range; messages name the field as `search.FIELD`.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.tolerance.is_finite() && (0.0..1.0).contains(&self.tolerance)) {
            return Err(format!(
                "search.tolerance (--tolerance) must be a number from 0 to below 1 (a relative tolerance), got {}",
                self.tolerance
            ));
        }
        if !(self.precision.is_finite() && self.precision > 0.0 && self.precision < 1.0) {
            return Err(format!(
                "search.precision (--precision) must be a number between 0 and 1 (a relative bracket width), got {}",
                self.precision
            ));
        }
        if self.max_runs == 0 || self.max_runs > 1000 {
            return Err(format!(
                "search.max_runs must be 1 to 1000, got {}",
                self.max_runs
            ));
        }
        crate::config::check_positive(
            "search.start_cycles",
            self.start_cycles,
            crate::config::MAX_INTER_ARRIVAL_CYCLES,
        )
    }
}

impl Default for MaxRateConfig {
    fn default() -> Self {
        MaxRateConfig {
            tolerance: 0.02,
            precision: 0.01,
            zero_drop: false,
            max_runs: 40,
            start_cycles: 1000.0,
        }
    }
}

impl MaxRateConfig {
    /// The harness's search settings.
    pub fn search(&self) -> SearchConfig {
        SearchConfig {
            tolerance: self.tolerance,
            precision: self.precision,
            criterion: if self.zero_drop {
                Criterion::ZeroDrop
            } else {
                Criterion::KeepUp
            },
            confidence_runs: 1,
            max_probes: self.max_runs,
            start_cycles: self.start_cycles,
        }
    }
}

impl Measured for SimReport {
    fn window(&self) -> Window {
        let w = &self.window;
        Window {
            arrivals: w.arrivals,
            departures: w.departures,
            drops: w.sim_drops,
            in_flight_at_start: w.in_flight_at_start,
            in_flight_at_end: w.in_flight_at_end,
        }
    }
    fn clock_hz(&self) -> f64 {
        self.pe_frequency_mhz as f64 * 1e6
    }
    fn mean_wire_bytes(&self) -> f64 {
        self.mean_wire_bytes
    }
    fn invariant_violation(&self) -> Option<String> {
        self.invariant_violations.first().cloned()
    }
}

/// The search's result, with the run at the sustainable end of the bracket.
pub type MaxRate = pktflow_harness::MaxRate<SimReport>;

/// Bisection over the inter-arrival time; `run(ia)` simulates at inter-arrival `ia` cycles.
pub fn max_rate(
    run: impl FnMut(f64) -> Result<SimReport, String>,
    cfg: &MaxRateConfig,
) -> Result<MaxRate, String> {
    max_rate_with(run, cfg, &mut |_, _, _| {})
}

/// [`max_rate`] calling `progress(done, estimated_total, inter_arrival)` before each
/// simulation (the total is an estimate: the bisection's length depends on where it lands).
pub fn max_rate_with(
    mut run: impl FnMut(f64) -> Result<SimReport, String>,
    cfg: &MaxRateConfig,
    progress: &mut dyn FnMut(usize, usize, f64),
) -> Result<MaxRate, String> {
    cfg.validate()?;
    pktflow_harness::max_rate_with(|ia, _rep| run(ia), &cfg.search(), progress)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_map_onto_the_harness() {
        let c = MaxRateConfig {
            zero_drop: true,
            max_runs: 7,
            ..MaxRateConfig::default()
        };
        let s = c.search();
        assert_eq!(s.criterion, Criterion::ZeroDrop);
        assert_eq!(s.max_probes, 7);
        assert_eq!(s.tolerance, c.tolerance);
        assert!(s.validate().is_ok());
        assert_eq!(
            MaxRateConfig::default().search().criterion,
            Criterion::KeepUp
        );
    }
}
