//! Ctrl-C stops a search between runs (its own test binary: the flag is process-wide).
use pktflow_harness::{max_rate, Measured, SearchConfig, Window};

#[derive(Debug)]
struct Slow;
impl Measured for Slow {
    fn window(&self) -> Window {
        Window {
            arrivals: 10,
            departures: 10,
            drops: 0,
            in_flight_at_start: 0,
            in_flight_at_end: 0,
        }
    }
    fn clock_hz(&self) -> f64 {
        1e9
    }
    fn mean_wire_bytes(&self) -> f64 {
        64.0
    }
}

#[test]
fn a_requested_stop_ends_the_search_with_interrupted() {
    let mut runs = 0;
    let e = max_rate(
        |_, _| {
            runs += 1;
            if runs == 3 {
                pktflow_model::cancel::request();
            }
            Ok(Slow)
        },
        &SearchConfig::default(),
    )
    .unwrap_err();
    assert_eq!(e, "interrupted");
    assert_eq!(runs, 3);
    pktflow_model::cancel::reset();
}
