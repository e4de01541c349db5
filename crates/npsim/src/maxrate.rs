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
    pub tolerance: f64,
    /// Stop when (hi - lo) / hi is below this.
    pub precision: f64,
    /// Also require no drop by the NP during the window.
    pub zero_drop: bool,
    /// Simulations at most.
    pub max_runs: u32,
    /// First inter-arrival time tried, cycles.
    pub start_cycles: f64,
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
    mut run: impl FnMut(f64) -> Result<SimReport, String>,
    cfg: &MaxRateConfig,
) -> Result<MaxRate, String> {
    if !(cfg.start_cycles.is_finite() && cfg.start_cycles > 0.0) {
        return Err("start_cycles must be positive".into());
    }
    if !(cfg.precision > 0.0 && cfg.tolerance >= 0.0) {
        return Err("precision must be positive and tolerance non-negative".into());
    }
    let mut probes = Vec::new();
    let mut runs = 0u32;
    let mut probe = |ia: f64, probes: &mut Vec<Probe>| -> Result<(bool, SimReport), String> {
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
    let (ok, r) = probe(x, &mut probes)?;
    let (mut lo, mut hi, mut best);
    if ok {
        best = r;
        hi = x;
        loop {
            x /= 2.0;
            if x < 1e-3 {
                return Err("the NP keeps up at any rate (the workload takes no time)".into());
            }
            let (ok, r) = probe(x, &mut probes)?;
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
            let (ok, r) = probe(x, &mut probes)?;
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
        let (ok, r) = probe(mid, &mut probes)?;
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
