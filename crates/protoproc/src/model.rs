//! The analytic model of the protocol-processing paper (section 4).
//!
//! Variables (the paper's): M remote requests per processor; C the mean computation between
//! requests; Lremote the request/reply latency with a dedicated protocol processor; Oreply the
//! home node's protocol overhead; Opp the overhead a dedicated protocol processor saves (the
//! Single round trip is Lremote + Opp). Equations (quoted):
//!
//! ```text
//! Tfixed    = M (C + Lremote)
//! Tsingle   = M (C + Lremote + (2 Opp + Oreply) C / (C + Lremote))
//! Tfloating = Tsingle / 2
//! ```
//!
//! Closed forms derived here (docs/protoproc.md): with u = C / (C + Lremote) (the compute
//! utilization under Fixed) and X = 2 Opp + Oreply,
//! R = Tsingle / Tfixed = 1 + X C / (C + Lremote)^2 = 1 + (X / Lremote) u (1 - u),
//! largest at C = Lremote (u = 1/2): Rmax = 1 + X / (4 Lremote). Fixed beats Single by a factor
//! k (R > 1 + k) on the u interval (1 -+ sqrt(1 - 4 k Lremote / X)) / 2, empty when
//! 4 k Lremote >= X; Fixed beats Floating where R > 2 (k = 1), which is also where Fixed is
//! 100% better than Single; the paper's cost-effectiveness bar for a second processor costing a
//! third more is k = 1/3.
use crate::error::{check_range, ProtoError};
use serde::Serialize;

/// The model's parameters, microseconds (M is a count).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Model {
    pub l_remote_us: f64,
    pub o_pp_us: f64,
    pub o_reply_us: f64,
    /// M: remote requests per processor.
    pub requests: f64,
}

/// A u (and C) interval where Tsingle / Tfixed >= 1 + k.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Interval {
    pub u_low: f64,
    pub u_high: f64,
    /// C at the ends (C = u Lremote / (1 - u)).
    pub c_low_us: f64,
    pub c_high_us: f64,
}

impl Model {
    pub fn new(
        l_remote_us: f64,
        o_pp_us: f64,
        o_reply_us: f64,
        requests: f64,
    ) -> Result<Model, ProtoError> {
        check_range("l_remote_us", l_remote_us, 1e-6, 1e12)?;
        check_range("o_pp_us", o_pp_us, 0.0, 1e12)?;
        check_range("o_reply_us", o_reply_us, 0.0, 1e12)?;
        check_range("requests", requests, 0.0, 1e15)?;
        Ok(Model {
            l_remote_us,
            o_pp_us,
            o_reply_us,
            requests,
        })
    }

    /// X = 2 Opp + Oreply: Single's extra overhead per request.
    pub fn overhead(&self) -> f64 {
        2.0 * self.o_pp_us + self.o_reply_us
    }

    /// u = C / (C + Lremote).
    pub fn utilization(&self, c: f64) -> f64 {
        c / (c + self.l_remote_us)
    }

    /// C for a utilization u in [0, 1): u Lremote / (1 - u).
    pub fn c_of_u(&self, u: f64) -> f64 {
        u * self.l_remote_us / (1.0 - u)
    }

    pub fn t_fixed(&self, c: f64) -> f64 {
        self.requests * (c + self.l_remote_us)
    }

    pub fn t_single(&self, c: f64) -> f64 {
        self.requests * (c + self.l_remote_us + self.overhead() * c / (c + self.l_remote_us))
    }

    pub fn t_floating(&self, c: f64) -> f64 {
        self.t_single(c) / 2.0
    }

    /// Tsingle / Tfixed (independent of M).
    pub fn normalized(&self, c: f64) -> f64 {
        let l = self.l_remote_us;
        (c + l + self.overhead() * c / (c + l)) / (c + l)
    }

    /// The largest normalized time, reached at C = Lremote.
    pub fn r_max(&self) -> f64 {
        1.0 + self.overhead() / (4.0 * self.l_remote_us)
    }

    /// Where Tsingle / Tfixed exceeds 1 + k (k > 0), or None when it never does (at
    /// X = 4 k Lremote it only touches 1 + k at u = 1/2).
    pub fn interval(&self, k: f64) -> Option<Interval> {
        let d = 1.0 - 4.0 * k * self.l_remote_us / self.overhead();
        if d.is_nan() || d <= 0.0 || k <= 0.0 {
            return None;
        }
        let s = d.sqrt();
        let (lo, hi) = ((1.0 - s) / 2.0, (1.0 + s) / 2.0);
        Some(Interval {
            u_low: lo,
            u_high: hi,
            c_low_us: self.c_of_u(lo),
            c_high_us: self.c_of_u(hi),
        })
    }

    /// The overhead X = 2 Opp + Oreply at which Tsingle / Tfixed reaches 1 + k at utilization u
    /// (X = k Lremote / (u (1 - u))); None outside 0 < u < 1.
    pub fn break_even_overhead(&self, u: f64, k: f64) -> Option<f64> {
        if !(u > 0.0 && u < 1.0) {
            return None;
        }
        Some(k * self.l_remote_us / (u * (1.0 - u)))
    }
}

/// Fixed beats Floating where Tsingle / Tfixed > 2.
pub const FIXED_BEATS_FLOATING: f64 = 1.0;
/// A second processor costing one third more must bring 33% (the paper's example).
pub const COST_EFFECTIVE: f64 = 1.0 / 3.0;

/// Multithreading under Fixed (section 4): the compute utilization can grow to C / (C + Tcs);
/// the protocol processor saturates when Orequest + Oreply > C + Tcs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Multithreading {
    pub utilization_limit: f64,
    /// (Orequest + Oreply) / (C + Tcs): above 1 the protocol processor is the bottleneck.
    pub protocol_load: f64,
    pub protocol_saturated: bool,
}

pub fn multithreading(c: f64, tcs: f64, o_request: f64, o_reply: f64) -> Multithreading {
    let load = (o_request + o_reply) / (c + tcs);
    Multithreading {
        utilization_limit: c / (c + tcs),
        protocol_load: load,
        protocol_saturated: o_request + o_reply > c + tcs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(x_over_l: f64) -> Model {
        // Oreply = 0, Opp = X / 2.
        Model::new(100.0, x_over_l * 100.0 / 2.0, 0.0, 10.0).unwrap()
    }

    #[test]
    fn equations_as_published() {
        let md = Model::new(113.0, 55.0, 27.0, 1000.0).unwrap();
        let c = 34.0;
        assert_eq!(md.t_fixed(c), 1000.0 * (34.0 + 113.0));
        let ts = 1000.0 * (34.0 + 113.0 + (2.0 * 55.0 + 27.0) * 34.0 / (34.0 + 113.0));
        assert!((md.t_single(c) - ts).abs() < 1e-6);
        assert!((md.t_floating(c) - ts / 2.0).abs() < 1e-6);
        assert!((md.normalized(c) - ts / md.t_fixed(c)).abs() < 1e-12);
    }

    #[test]
    fn normalized_is_one_plus_x_over_l_u_one_minus_u() {
        let md = Model::new(113.0, 55.0, 27.0, 1.0).unwrap();
        for c in [0.0, 1.0, 10.0, 113.0, 500.0, 1e5] {
            let u = md.utilization(c);
            let want = 1.0 + md.overhead() / 113.0 * u * (1.0 - u);
            assert!((md.normalized(c) - want).abs() < 1e-12, "c={c}");
            assert!(md.normalized(c) <= md.r_max() + 1e-12);
        }
        assert!((md.normalized(113.0) - md.r_max()).abs() < 1e-12);
        assert!((md.r_max() - (1.0 + 137.0 / 452.0)).abs() < 1e-12);
    }

    #[test]
    fn fixed_beats_floating_only_with_overhead_above_four_latencies() {
        assert!(m(3.99).interval(FIXED_BEATS_FLOATING).is_none());
        assert!(m(4.0).interval(FIXED_BEATS_FLOATING).is_none());
        assert!(m(4.01).interval(FIXED_BEATS_FLOATING).is_some());
        let i = m(8.0).interval(FIXED_BEATS_FLOATING).unwrap();
        // u (1 - u) = 1/8: u = (1 -+ sqrt(1/2)) / 2.
        assert!((i.u_low - (1.0 - 0.5f64.sqrt()) / 2.0).abs() < 1e-12);
        assert!((i.u_high - (1.0 + 0.5f64.sqrt()) / 2.0).abs() < 1e-12);
        // The ends are break-even points: R = 2 there.
        let md = m(8.0);
        assert!((md.normalized(i.c_low_us) - 2.0).abs() < 1e-9);
        assert!((md.normalized(i.c_high_us) - 2.0).abs() < 1e-9);
        // The paper's "more than 20% but less than 80%" lies inside for X = 8 L.
        assert!(i.u_low < 0.2 && i.u_high > 0.8);
    }

    #[test]
    fn cost_effectiveness_and_break_even_overhead() {
        let md = Model::new(113.0, 55.0, 27.0, 1.0).unwrap();
        // This system: Rmax ~ 1.30 < 1.33, so a dedicated processor is never cost-effective.
        assert!(md.interval(COST_EFFECTIVE).is_none());
        let x = md.break_even_overhead(0.5, FIXED_BEATS_FLOATING).unwrap();
        assert!((x - 4.0 * 113.0).abs() < 1e-9);
        let x = md.break_even_overhead(0.2, COST_EFFECTIVE).unwrap();
        let md2 = Model::new(113.0, x / 2.0, 0.0, 1.0).unwrap();
        assert!((md2.normalized(md2.c_of_u(0.2)) - 4.0 / 3.0).abs() < 1e-9);
        assert!(md.break_even_overhead(1.0, 1.0).is_none());
    }

    #[test]
    fn multithreading_saturation_rule() {
        let a = multithreading(34.0, 4.0, 54.0, 27.0);
        assert!(a.protocol_saturated);
        assert!((a.utilization_limit - 34.0 / 38.0).abs() < 1e-12);
        let b = multithreading(100.0, 4.0, 54.0, 27.0);
        assert!(!b.protocol_saturated);
    }

    #[test]
    fn bad_parameters_are_refused() {
        assert!(Model::new(0.0, 1.0, 1.0, 1.0).is_err());
        assert!(Model::new(1.0, f64::INFINITY, 1.0, 1.0).is_err());
        assert!(Model::new(1.0, 1.0, -1.0, 1.0).is_err());
    }
}
