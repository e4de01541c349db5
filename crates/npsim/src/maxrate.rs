//! Maximum sustainable rate (seed 000 section 4): "we derive this rate by finding, through a
//! bisection search, the smallest effective packet inter-arrival time where the packet
//! inter-departure time is equivalent (i.e., the NP can keep up)". The criterion is
//! [`SimReport::keeps_up`]: departures match arrivals within a tolerance and the packets in
//! flight do not grow; optionally no drop in the window (seed 004).
use crate::stats::SimReport;
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

#[derive(Clone, Debug, Serialize)]
pub struct Probe {
    pub inter_arrival_cycles: f64,
    pub keeps_up: bool,
    pub departures: u64,
    pub arrivals: u64,
    pub in_flight_growth: i64,
    pub np_drops: u64,
}

/// The bisection's final bracket.
#[derive(Clone, Debug, Serialize)]
pub struct Bracket {
    /// [largest failing, smallest sustainable] inter-arrival time, cycles.
    pub inter_arrival_cycles: [f64; 2],
    /// [sustainable, failing] rates, packets per second.
    pub packets_per_second: [f64; 2],
}

#[derive(Clone, Debug, Serialize)]
pub struct MaxRate {
    /// Smallest inter-arrival time found sustainable, cycles.
    pub inter_arrival_cycles: f64,
    pub packets_per_second: f64,
    /// At the trace's mean wire size.
    pub gbps: f64,
    pub bracket: Bracket,
    pub mean_wire_bytes: f64,
    pub probes: Vec<Probe>,
    /// The run at the sustainable end of the bracket.
    pub report: SimReport,
}

/// Bisection over the inter-arrival time; `run(ia)` simulates at inter-arrival `ia` cycles.
pub fn max_rate(
    run: impl FnMut(f64) -> Result<SimReport, String>,
    cfg: &MaxRateConfig,
) -> Result<MaxRate, String> {
    max_rate_with(run, cfg, &mut |_, _, _| {})
}

/// Simulations a bisection still needs to shrink a bracket of relative width `width` below
/// `precision`.
fn halvings(width: f64, precision: f64) -> usize {
    if width <= precision {
        0
    } else {
        (width / precision).log2().ceil().max(0.0) as usize
    }
}

/// [`max_rate`] calling `progress(done, estimated_total, inter_arrival)` before each
/// simulation (the total is an estimate: the bisection's length depends on where it lands).
pub fn max_rate_with(
    mut run: impl FnMut(f64) -> Result<SimReport, String>,
    cfg: &MaxRateConfig,
    progress: &mut dyn FnMut(usize, usize, f64),
) -> Result<MaxRate, String> {
    cfg.validate()?;
    let mut probes = Vec::new();
    let mut runs = 0u32;
    let mut probe = |ia: f64,
                     left: usize,
                     probes: &mut Vec<Probe>|
     -> Result<(bool, SimReport), String> {
        pktflow_model::cancel::check().map_err(|e| e.to_string())?;
        progress(probes.len(), probes.len() + left, ia);
        runs += 1;
        if runs > cfg.max_runs {
            return Err(format!(
                "no bracket within {} simulations (last tried {ia:.3} cycles)",
                cfg.max_runs
            ));
        }
        let r = run(ia)?;
        if r.window.arrivals == 0 {
            return Err(
                "the measurement window is empty: simulate more packets than the warm-up".into(),
            );
        }
        if let Some(v) = r.invariant_violations.first() {
            return Err(format!("simulator invariant violated: {v}"));
        }
        let ok = r.keeps_up(cfg.tolerance, cfg.zero_drop);
        probes.push(Probe {
            inter_arrival_cycles: ia,
            keeps_up: ok,
            departures: r.window.departures,
            arrivals: r.window.arrivals,
            in_flight_growth: r.window.in_flight_at_end as i64 - r.window.in_flight_at_start as i64,
            np_drops: r.window.sim_drops,
        });
        Ok((ok, r))
    };
    let mut x = cfg.start_cycles;
    // Before a bracket: this probe, one more to bracket, then the halvings of a factor-2 bracket.
    let unbracketed = 2 + halvings(0.5, cfg.precision);
    let (ok, r) = probe(x, unbracketed, &mut probes)?;
    let (mut lo, mut hi, mut best);
    if ok {
        best = r;
        hi = x;
        loop {
            x /= 2.0;
            if x < 1e-3 {
                return Err("the NP keeps up at any rate (the workload takes no time)".into());
            }
            let (ok, r) = probe(x, unbracketed - 1, &mut probes)?;
            if ok {
                hi = x;
                best = r;
            } else {
                lo = x;
                break;
            }
        }
    } else {
        lo = x;
        loop {
            x *= 2.0;
            if x > crate::config::MAX_INTER_ARRIVAL_CYCLES {
                return Err(format!(
                    "the NP keeps up at no rate: it falls behind even with {:e} cycles between packets",
                    x / 2.0
                ));
            }
            let (ok, r) = probe(x, unbracketed - 1, &mut probes)?;
            if ok {
                hi = x;
                best = r;
                break;
            }
            lo = x;
        }
    }
    while (hi - lo) / hi > cfg.precision {
        let mid = 0.5 * (lo + hi);
        let (ok, r) = probe(mid, halvings((hi - lo) / hi, cfg.precision), &mut probes)?;
        if ok {
            hi = mid;
            best = r;
        } else {
            lo = mid;
        }
    }
    let hz = best.pe_frequency_mhz as f64 * 1e6;
    let pps = hz / hi;
    Ok(MaxRate {
        inter_arrival_cycles: hi,
        packets_per_second: pps,
        gbps: pps * best.mean_wire_bytes * 8.0 / 1e9,
        bracket: Bracket {
            inter_arrival_cycles: [lo, hi],
            packets_per_second: [pps, hz / lo],
        },
        mean_wire_bytes: best.mean_wire_bytes,
        probes,
        report: best,
    })
}
