//! The maximum sustainable rate, by bisection over the packet inter-arrival time.
//!
//! The NPIRE paper: "we derive this rate by finding, through a bisection search, the smallest
//! effective packet inter-arrival time where the packet inter-departure time is equivalent
//! (i.e., the NP can keep up)" ([`Criterion::KeepUp`]). The NetThreads thesis, chapters 6-7:
//! "the smallest fixed packet inter-arrival time where the system does not drop any packet when
//! monitored for five seconds" ([`Criterion::ZeroDrop`]); from chapter 8: "the packet rate with
//! 90% confidence of not dropping any packet over a five-second run" ([`Criterion::Confidence90`]:
//! each probe runs `confidence_runs` times with different seeds and passes when at least 90% of
//! them keep up with no drop; the thesis interpolates the 90% crossing with a smoothing filter,
//! the bisection finds the same crossing to the search's precision).
//!
//! The search assumes that a system keeping up at some inter-arrival time keeps up at every
//! longer one. It starts at `start_cycles`, doubles or halves until the answer changes (the
//! bracket), then halves the bracket until its relative width is below `precision`.
use serde::{Deserialize, Serialize};

use crate::window::Measured;

/// When a run counts as sustainable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Criterion {
    /// Departures keep up with arrivals within the tolerance (drops allowed).
    #[default]
    KeepUp,
    /// Keeps up and drops no packet in the window.
    ZeroDrop,
    /// At least 90% of `confidence_runs` runs with different seeds keep up with no drop.
    Confidence90,
}

impl Criterion {
    pub const NAMES: [&'static str; 3] = ["keep-up", "zero-drop", "confidence90"];

    pub fn parse(s: &str) -> Result<Criterion, String> {
        match s {
            "keep-up" => Ok(Criterion::KeepUp),
            "zero-drop" => Ok(Criterion::ZeroDrop),
            "confidence90" => Ok(Criterion::Confidence90),
            _ => Err(format!(
                "unknown criterion '{s}' (known: {})",
                Criterion::NAMES.join(", ")
            )),
        }
    }

    /// Share of runs that must pass.
    pub fn level(self) -> f64 {
        match self {
            Criterion::Confidence90 => 0.9,
            _ => 1.0,
        }
    }
}

/// Upper bound on the inter-arrival time the search tries, cycles (a system that cannot keep
/// up with one packet per 10^12 cycles is stuck, not slow).
pub const MAX_INTER_ARRIVAL_CYCLES: f64 = 1e12;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SearchConfig {
    /// Relative tolerance of the keep-up test.
    pub tolerance: f64,
    /// Stop when (hi - lo) / hi is below this.
    pub precision: f64,
    pub criterion: Criterion,
    /// Runs per probe under [`Criterion::Confidence90`] (seeds 0..runs).
    pub confidence_runs: u32,
    /// Probes at most.
    pub max_probes: u32,
    /// First inter-arrival time tried, cycles.
    pub start_cycles: f64,
}

impl Default for SearchConfig {
    fn default() -> Self {
        SearchConfig {
            tolerance: 0.02,
            precision: 0.01,
            criterion: Criterion::KeepUp,
            confidence_runs: 10,
            max_probes: 40,
            start_cycles: 1000.0,
        }
    }
}

impl SearchConfig {
    /// Every field in its range; messages name the field as `search.FIELD`.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.tolerance.is_finite() && (0.0..1.0).contains(&self.tolerance)) {
            return Err(format!(
                "search.tolerance must be a number from 0 to below 1 (a relative tolerance), got {}",
                self.tolerance
            ));
        }
        if !(self.precision.is_finite() && self.precision > 0.0 && self.precision < 1.0) {
            return Err(format!(
                "search.precision must be a number between 0 and 1 (a relative bracket width), got {}",
                self.precision
            ));
        }
        if self.max_probes == 0 || self.max_probes > 1000 {
            return Err(format!(
                "search.max_probes must be 1 to 1000, got {}",
                self.max_probes
            ));
        }
        if self.criterion == Criterion::Confidence90 && !(1..=1000).contains(&self.confidence_runs)
        {
            return Err(format!(
                "search.confidence_runs must be 1 to 1000, got {}",
                self.confidence_runs
            ));
        }
        if !(self.start_cycles.is_finite()
            && self.start_cycles > 0.0
            && self.start_cycles <= MAX_INTER_ARRIVAL_CYCLES)
        {
            return Err(format!(
                "search.start_cycles must be a number above 0 and at most {MAX_INTER_ARRIVAL_CYCLES:e}, got {}",
                self.start_cycles
            ));
        }
        Ok(())
    }

    /// Runs per probe.
    pub fn runs_per_probe(&self) -> u32 {
        if self.criterion == Criterion::Confidence90 {
            self.confidence_runs
        } else {
            1
        }
    }
}

/// One point the search tried.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Probe {
    pub inter_arrival_cycles: f64,
    pub sustainable: bool,
    /// Runs at this point and how many passed (1 and 0/1 unless confidence90).
    pub runs: u32,
    pub passing_runs: u32,
    /// Runs actually made (runs stop once the outcome is decided).
    pub runs_done: u32,
    /// Of the first run.
    pub arrivals: u64,
    pub departures: u64,
    pub drops: u64,
    pub in_flight_growth: i64,
}

/// The bisection's final bracket.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bracket {
    /// [largest failing, smallest sustainable] inter-arrival time, cycles.
    pub inter_arrival_cycles: [f64; 2],
    /// [sustainable, failing] rates, packets per second.
    pub packets_per_second: [f64; 2],
}

#[derive(Clone, Debug, Serialize)]
pub struct MaxRate<R> {
    /// Smallest inter-arrival time found sustainable, cycles.
    pub inter_arrival_cycles: f64,
    pub packets_per_second: f64,
    /// At the mean wire size.
    pub gbps: f64,
    pub bracket: Bracket,
    pub mean_wire_bytes: f64,
    pub criterion: Criterion,
    pub probes: Vec<Probe>,
    /// The first run at the sustainable end of the bracket.
    pub report: R,
}

/// Probes a bisection still needs to shrink a bracket of relative width `width` below
/// `precision`.
fn halvings(width: f64, precision: f64) -> usize {
    if width <= precision {
        0
    } else {
        (width / precision).log2().ceil().max(0.0) as usize
    }
}

/// [`max_rate_with`] without progress.
pub fn max_rate<R: Measured>(
    run: impl FnMut(f64, u32) -> Result<R, String>,
    cfg: &SearchConfig,
) -> Result<MaxRate<R>, String> {
    max_rate_with(run, cfg, &mut |_, _, _| {})
}

/// Why a search stopped without a result, with the points it had measured (a command that
/// was interrupted reports them).
#[derive(Clone, Debug)]
pub struct Stopped {
    pub message: String,
    pub probes: Vec<Probe>,
}

/// One point of the search: `run(ia, rep)` for repetitions 0, 1, ... until the criterion's
/// outcome at inter-arrival `ia` cycles is decided (one run except under
/// [`Criterion::Confidence90`]). Returns the probe and the first run's report. Checks Ctrl-C
/// before each run. `cfg` is not validated here ([`max_rate_with`] does).
pub fn evaluate<R: Measured>(
    run: &mut impl FnMut(f64, u32) -> Result<R, String>,
    cfg: &SearchConfig,
    ia: f64,
) -> Result<(Probe, R), String> {
    let runs = cfg.runs_per_probe();
    let need = (cfg.criterion.level() * runs as f64 - 1e-9).ceil() as u32;
    let mut first: Option<R> = None;
    let mut passing = 0u32;
    let mut done = 0u32;
    for rep in 0..runs {
        pktflow_model::cancel::check().map_err(|e| e.to_string())?;
        let r = run(ia, rep)?;
        let w = r.window();
        if w.arrivals == 0 {
            return Err(
                "the measurement window is empty: simulate more packets than the warm-up".into(),
            );
        }
        if let Some(v) = r.invariant_violation() {
            return Err(format!("engine invariant violated: {v}"));
        }
        let ok = w.keeps_up(cfg.tolerance) && (cfg.criterion == Criterion::KeepUp || w.drops == 0);
        passing += ok as u32;
        done += 1;
        if first.is_none() {
            first = Some(r);
        }
        // The outcome is decided once enough runs passed or too many failed.
        if passing >= need || (rep + 1 - passing) > runs - need {
            break;
        }
    }
    let r = first.expect("at least one run");
    let w = r.window();
    let ok = passing >= need;
    let p = Probe {
        inter_arrival_cycles: ia,
        sustainable: ok,
        runs,
        passing_runs: passing,
        runs_done: done,
        arrivals: w.arrivals,
        departures: w.departures,
        drops: w.drops,
        in_flight_growth: w.in_flight_growth(),
    };
    Ok((p, r))
}

/// The search. `run(ia, rep)` measures at inter-arrival `ia` cycles with repetition `rep`
/// (0 except under [`Criterion::Confidence90`], where the engine must vary its seed with it).
/// `progress(done, estimated_total, ia)` is called before each probe (the total is an
/// estimate: the bisection's length depends on where it lands). Checks Ctrl-C between runs.
pub fn max_rate_with<R: Measured>(
    run: impl FnMut(f64, u32) -> Result<R, String>,
    cfg: &SearchConfig,
    progress: &mut dyn FnMut(usize, usize, f64),
) -> Result<MaxRate<R>, String> {
    max_rate_partial(run, cfg, progress).map_err(|s| s.message)
}

/// [`max_rate_with`] keeping the probes measured before an error or Ctrl-C.
pub fn max_rate_partial<R: Measured>(
    run: impl FnMut(f64, u32) -> Result<R, String>,
    cfg: &SearchConfig,
    progress: &mut dyn FnMut(usize, usize, f64),
) -> Result<MaxRate<R>, Stopped> {
    let mut probes: Vec<Probe> = Vec::new();
    match search(run, cfg, progress, &mut probes) {
        Ok(mut m) => {
            m.probes = probes;
            Ok(m)
        }
        Err(message) => Err(Stopped { message, probes }),
    }
}

fn search<R: Measured>(
    mut run: impl FnMut(f64, u32) -> Result<R, String>,
    cfg: &SearchConfig,
    progress: &mut dyn FnMut(usize, usize, f64),
    probes: &mut Vec<Probe>,
) -> Result<MaxRate<R>, String> {
    cfg.validate()?;
    let mut probe = |ia: f64, left: usize, probes: &mut Vec<Probe>| -> Result<(bool, R), String> {
        progress(probes.len(), probes.len() + left, ia);
        if probes.len() as u32 >= cfg.max_probes {
            return Err(format!(
                "no bracket within {} probes (last tried {ia:.3} cycles between packets)",
                cfg.max_probes
            ));
        }
        let (p, r) = evaluate(&mut run, cfg, ia)?;
        let ok = p.sustainable;
        probes.push(p);
        Ok((ok, r))
    };
    let mut x = cfg.start_cycles;
    // Before a bracket: this probe, one more to bracket, then the halvings of a factor-2 bracket.
    let unbracketed = 2 + halvings(0.5, cfg.precision);
    let (ok, r) = probe(x, unbracketed, probes)?;
    let (mut lo, mut hi, mut best);
    if ok {
        best = r;
        hi = x;
        loop {
            x /= 2.0;
            if x < 1e-3 {
                return Err("the system keeps up at any rate (the workload takes no time)".into());
            }
            let (ok, r) = probe(x, unbracketed - 1, probes)?;
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
            if x > MAX_INTER_ARRIVAL_CYCLES {
                return Err(format!(
                    "the system keeps up at no rate: it falls behind even with {:e} cycles between packets",
                    x / 2.0
                ));
            }
            let (ok, r) = probe(x, unbracketed - 1, probes)?;
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
        let (ok, r) = probe(mid, halvings((hi - lo) / hi, cfg.precision), probes)?;
        if ok {
            hi = mid;
            best = r;
        } else {
            lo = mid;
        }
    }
    let hz = best.clock_hz();
    let pps = hz / hi;
    let bytes = best.mean_wire_bytes();
    Ok(MaxRate {
        inter_arrival_cycles: hi,
        packets_per_second: pps,
        gbps: pps * bytes * 8.0 / 1e9,
        bracket: Bracket {
            inter_arrival_cycles: [lo, hi],
            packets_per_second: [pps, hz / lo],
        },
        mean_wire_bytes: bytes,
        criterion: cfg.criterion,
        probes: Vec::new(),
        report: best,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::window::Window;

    /// A single server with a fixed service time and `slots` places: the closed form of its
    /// maximum rate is one packet per service time.
    #[derive(Debug)]
    struct Server {
        window: Window,
    }
    impl Measured for Server {
        fn window(&self) -> Window {
            self.window
        }
        fn clock_hz(&self) -> f64 {
            1e9
        }
        fn mean_wire_bytes(&self) -> f64 {
            84.0
        }
    }

    fn server(service: f64, ia: f64, n: u64) -> Server {
        // Deterministic arrivals every `ia` and service `service`: the queue grows by
        // (service - ia) / service per packet when service > ia; with 4 slots, drops follow.
        let backlog_growth = if service > ia {
            ((service - ia) / service * n as f64) as u64
        } else {
            0
        };
        let drops = backlog_growth.saturating_sub(4);
        Server {
            window: Window {
                arrivals: n,
                departures: n - backlog_growth.min(n),
                drops,
                in_flight_at_start: 1,
                in_flight_at_end: 1 + backlog_growth.min(4),
            },
        }
    }

    #[test]
    fn finds_the_service_time_within_precision() {
        for service in [7.0, 100.0, 3333.0, 1.0e6] {
            let cfg = SearchConfig {
                criterion: Criterion::ZeroDrop,
                ..SearchConfig::default()
            };
            let m = max_rate(|ia, _| Ok(server(service, ia, 10_000)), &cfg).unwrap();
            let [lo, hi] = m.bracket.inter_arrival_cycles;
            assert!(lo < hi && (hi - lo) / hi <= cfg.precision);
            assert!(
                hi >= service * 0.999 && lo <= service * 1.001,
                "{service}: {lo}..{hi}"
            );
            assert!((m.packets_per_second - 1e9 / hi).abs() < 1e-6);
            assert!((m.gbps - m.packets_per_second * 84.0 * 8.0 / 1e9).abs() < 1e-9);
        }
    }

    #[test]
    fn confidence_counts_passing_seeds() {
        // Seed 9 is unlucky (sustainable only from ia = 200), every other seed from ia = 100:
        // from 100 on, 9 of 10 seeds pass, which is 90%, so the search finds 100.
        let run = |ia: f64, rep: u32| {
            let limit = if rep == 9 { 200.0 } else { 100.0 };
            Ok(server(limit, ia, 10_000))
        };
        let cfg = SearchConfig {
            criterion: Criterion::Confidence90,
            ..SearchConfig::default()
        };
        let m = max_rate(run, &cfg).unwrap();
        assert!(
            (m.inter_arrival_cycles - 100.0).abs() / 100.0 <= 0.011,
            "{}",
            m.inter_arrival_cycles
        );
        let cfg10 = SearchConfig {
            criterion: Criterion::Confidence90,
            confidence_runs: 20,
            ..SearchConfig::default()
        };
        // With 20 seeds, 19 of 20 pass from 100 on.
        let m = max_rate(run, &cfg10).unwrap();
        assert!(m.inter_arrival_cycles < 101.5);
        let p = m.probes.last().unwrap();
        assert_eq!(p.runs, 20);
    }

    #[test]
    fn keep_up_ignores_drops_zero_drop_does_not() {
        // Keeps up always, but drops below ia = 50.
        let run = |ia: f64, _| {
            Ok(Server {
                window: Window {
                    arrivals: 100,
                    departures: 100,
                    drops: if ia < 50.0 { 3 } else { 0 },
                    in_flight_at_start: 0,
                    in_flight_at_end: 0,
                },
            })
        };
        let zd = SearchConfig {
            criterion: Criterion::ZeroDrop,
            ..SearchConfig::default()
        };
        let m = max_rate(run, &zd).unwrap();
        assert!((m.inter_arrival_cycles - 50.0).abs() / 50.0 <= 0.011);
        let e = max_rate(run, &SearchConfig::default()).unwrap_err();
        assert!(e.contains("keeps up at any rate"), "{e}");
    }

    #[test]
    fn bad_settings_are_named() {
        for (cfg, key) in [
            (
                SearchConfig {
                    tolerance: f64::NAN,
                    ..Default::default()
                },
                "search.tolerance",
            ),
            (
                SearchConfig {
                    precision: 0.0,
                    ..Default::default()
                },
                "search.precision",
            ),
            (
                SearchConfig {
                    max_probes: 0,
                    ..Default::default()
                },
                "search.max_probes",
            ),
            (
                SearchConfig {
                    start_cycles: -1.0,
                    ..Default::default()
                },
                "search.start_cycles",
            ),
            (
                SearchConfig {
                    criterion: Criterion::Confidence90,
                    confidence_runs: 0,
                    ..Default::default()
                },
                "search.confidence_runs",
            ),
        ] {
            let e = max_rate(|ia, _| Ok(server(10.0, ia, 100)), &cfg).unwrap_err();
            assert!(e.starts_with(key), "{e}");
        }
        assert_eq!(Criterion::parse("zero-drop"), Ok(Criterion::ZeroDrop));
        assert!(Criterion::parse("always")
            .unwrap_err()
            .contains("confidence90"));
    }

    #[test]
    fn a_stopped_search_keeps_its_probes() {
        let mut n = 0;
        let run = |ia: f64, _| {
            n += 1;
            if n == 3 {
                return Err("interrupted".to_string());
            }
            Ok(server(100.0, ia, 1000))
        };
        let e = max_rate_partial(run, &SearchConfig::default(), &mut |_, _, _| {}).unwrap_err();
        assert_eq!(e.message, "interrupted");
        assert_eq!(e.probes.len(), 2);
        assert!(e.probes.iter().all(|p| p.runs_done == 1));
    }

    #[test]
    fn a_stuck_system_is_an_error_not_a_hang() {
        let run = |_: f64, _| {
            Ok(Server {
                window: Window {
                    arrivals: 10,
                    departures: 0,
                    drops: 0,
                    in_flight_at_start: 0,
                    in_flight_at_end: 10,
                },
            })
        };
        let cfg = SearchConfig {
            max_probes: 1000,
            ..Default::default()
        };
        let e = max_rate(run, &cfg).unwrap_err();
        assert!(e.contains("keeps up at no rate"), "{e}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// For any monotone system the bracket holds the true limit and is narrow enough.
        #[test]
        fn bracket_holds_the_limit(limit in 0.01f64..1e9, start in 0.01f64..1e9, precision in 0.001f64..0.3) {
            let cfg = SearchConfig { precision, start_cycles: start, max_probes: 1000, criterion: Criterion::ZeroDrop, ..Default::default() };
            let run = |ia: f64, _| Ok(Server { window: Window { arrivals: 100, departures: 100, drops: (ia < limit) as u64, in_flight_at_start: 0, in_flight_at_end: 0 } });
            let m = max_rate(run, &cfg).unwrap();
            let [lo, hi] = m.bracket.inter_arrival_cycles;
            proptest::prop_assert!(lo < limit && limit <= hi);
            proptest::prop_assert!((hi - lo) / hi <= precision);
        }
    }
}
