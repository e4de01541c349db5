//! The measurement window and the keep-up test.
//!
//! Conventions (every engine follows them, so their rates compare):
//! - the window starts after the warm-up and ends with the last arrival of the run;
//! - `arrivals` counts packets offered to the system in the window, whether it accepted them;
//! - `departures` counts packets that left the system in the window for any reason (sent,
//!   dropped by the application, consumed by it), so a packet is counted once;
//! - `drops` counts packets the modelled machine refused for lack of room (input slots, queues):
//!   a drop of the machine, never of the application's logic;
//! - `in_flight_*` counts packets accepted and not yet departed, at the window's ends.
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    pub arrivals: u64,
    pub departures: u64,
    pub drops: u64,
    pub in_flight_at_start: u64,
    pub in_flight_at_end: u64,
}

impl Window {
    /// The system keeps up (the NPIRE paper's "the packet inter-departure time is equivalent"):
    /// departures are at least `1 - tolerance` of the arrivals and the packets in flight did not
    /// grow by more than `tolerance` of the arrivals. An empty window never keeps up.
    pub fn keeps_up(&self, tolerance: f64) -> bool {
        if self.arrivals == 0 {
            return false;
        }
        let a = self.arrivals as f64;
        let growth = self.in_flight_at_end as f64 - self.in_flight_at_start as f64;
        self.departures as f64 >= a * (1.0 - tolerance) && growth <= a * tolerance
    }

    /// Growth of the packets in flight over the window.
    pub fn in_flight_growth(&self) -> i64 {
        self.in_flight_at_end as i64 - self.in_flight_at_start as i64
    }
}

/// What the search needs of an engine's run report.
pub trait Measured {
    fn window(&self) -> Window;
    /// Clock of the cycles the inter-arrival time is counted in, Hz.
    fn clock_hz(&self) -> f64;
    /// Mean frame size on the wire, bytes (for Gb/s).
    fn mean_wire_bytes(&self) -> f64;
    /// The first broken invariant of the run (a packet neither delivered, dropped with a
    /// reason nor in flight, two threads in one lock...), if any.
    fn invariant_violation(&self) -> Option<String> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(arrivals: u64, departures: u64, start: u64, end: u64) -> Window {
        Window {
            arrivals,
            departures,
            drops: 0,
            in_flight_at_start: start,
            in_flight_at_end: end,
        }
    }

    #[test]
    fn keep_up_needs_departures_and_no_growth() {
        assert!(w(100, 100, 3, 3).keeps_up(0.02));
        assert!(w(100, 98, 3, 5).keeps_up(0.02));
        assert!(!w(100, 97, 3, 3).keeps_up(0.02));
        assert!(!w(100, 100, 3, 6).keeps_up(0.02));
        assert!(!w(0, 0, 0, 0).keeps_up(0.5));
    }
}
