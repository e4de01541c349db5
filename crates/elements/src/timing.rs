//! The host time each element's visits take, used by the timed build (`--cfg pktflow_fast
//! --cfg pktflow_timed`, the crate `pktflow-elements-timed` in crates/runtime/timed; the other
//! builds compile this module but never call it).
//!
//! [`Router::begin`](crate::runtime) reads the clock ([`now`]) and [`Router::end`](crate::runtime)
//! adds the ticks since then, and one visit, to the visited element's totals ([`VisitClock`]).
//! Visits do not nest (an element only emits into `Cx`; the router delivers afterwards), so one
//! start time is enough. The clock is the time-stamp counter on x86_64 (`rdtsc`, which ticks at
//! the machine's nominal rate, not the core clock: [`VisitClock::tick_hz`] is measured against
//! `Instant` by the caller) and `Instant` in nanoseconds elsewhere.
//!
//! What a region measures includes part of the clock reads themselves: [`calibrate`] measures
//! an empty region through the same code, so the caller can subtract it.
use std::time::Instant;

/// Name of the clock [`now`] reads.
#[cfg(target_arch = "x86_64")]
pub const CLOCK: &str = "rdtsc (x86_64 time-stamp counter)";
#[cfg(not(target_arch = "x86_64"))]
pub const CLOCK: &str = "std::time::Instant (nanoseconds)";

/// The clock: time-stamp counter ticks on x86_64, else nanoseconds since the first call.
#[inline(always)]
pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions on x86_64.
        unsafe { std::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
        EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
    }
}

/// Ticks and visits per element, accumulated by the router's `begin`/`end`.
#[derive(Clone, Debug, Default)]
pub struct VisitClock {
    start: u64,
    /// Per element: ticks inside its visits, and visits.
    pub ticks: Vec<u64>,
    pub visits: Vec<u64>,
}

impl VisitClock {
    /// A visit starts now.
    #[inline(always)]
    pub fn start(&mut self) {
        self.start = now();
    }

    /// The visit of element `e` started by [`VisitClock::start`] ends now.
    #[inline(always)]
    pub fn stop(&mut self, e: u32) {
        let t = now().wrapping_sub(self.start);
        let e = e as usize;
        if e >= self.ticks.len() {
            self.ticks.resize(e + 1, 0);
            self.visits.resize(e + 1, 0);
        }
        self.ticks[e] += t;
        self.visits[e] += 1;
    }

    /// Start anew (keeps the buffers).
    pub fn reset(&mut self) {
        self.ticks.iter_mut().for_each(|t| *t = 0);
        self.visits.iter_mut().for_each(|v| *v = 0);
    }
}

/// What timing costs, measured with `n` empty regions through [`VisitClock`] (best of 5 rounds,
/// the least disturbed by other jobs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Calibration {
    /// Mean ticks an empty region measures: subtracted from every visit.
    pub empty_region_ticks: f64,
    /// Mean ticks a start and a stop take in all (inside and outside the region), by the
    /// clock read before and after the `n` regions.
    pub ticks_per_timed_visit: f64,
}

/// Measure [`Calibration`] with `n` empty regions per round.
pub fn calibrate(n: u64) -> Calibration {
    let n = n.max(1);
    let mut best: Option<Calibration> = None;
    for _ in 0..5 {
        let mut c = VisitClock::default();
        let t0 = now();
        for _ in 0..n {
            c.start();
            c.stop(std::hint::black_box(0));
        }
        let outer = now().wrapping_sub(t0) as f64 / n as f64;
        let inner = c.ticks[0] as f64 / n as f64;
        let r = Calibration {
            empty_region_ticks: inner,
            ticks_per_timed_visit: outer,
        };
        let better = match best {
            None => true,
            Some(b) => r.ticks_per_timed_visit < b.ticks_per_timed_visit,
        };
        if better {
            best = Some(r);
        }
    }
    best.expect("five rounds")
}

/// Ticks of [`now`] per second, measured against `Instant` over at least `min` (the caller
/// also measures it over its whole run: see the runtime's `hostcost`).
pub fn tick_hz(min: std::time::Duration) -> f64 {
    let (i0, t0) = (Instant::now(), now());
    while i0.elapsed() < min {
        std::hint::spin_loop();
    }
    let (i1, t1) = (Instant::now(), now());
    t1.wrapping_sub(t0) as f64 / (i1 - i0).as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn visits_and_ticks_accumulate_per_element() {
        let mut c = VisitClock::default();
        for e in [3, 1, 3] {
            c.start();
            c.stop(e);
        }
        assert_eq!(c.visits, vec![0, 1, 0, 2]);
        assert_eq!(c.ticks[0], 0);
        c.reset();
        assert_eq!(c.visits, vec![0, 0, 0, 0]);
    }

    #[test]
    fn calibration_and_tick_rate_are_measured() {
        let k = calibrate(1000);
        assert!(k.ticks_per_timed_visit > 0.0);
        assert!(k.empty_region_ticks >= 0.0);
        assert!(tick_hz(std::time::Duration::from_millis(2)) > 0.0);
    }
}

/// Timed build: the router's per-element ticks and visits.
#[cfg(pktflow_timed)]
impl crate::runtime::Router {
    pub fn visit_clock(&self) -> &VisitClock {
        &self.visit_clock
    }
    pub fn visit_clock_mut(&mut self) -> &mut VisitClock {
        &mut self.visit_clock
    }
}
