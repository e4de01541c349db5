//! `negotiated`: negotiated-congestion routing (`routing::negotiated`, at most 60 iterations);
//! circuits when it reaches link-disjoint paths, else XY packet routing.
use super::{circuits_or_dor, Routed, StreamInput, StreamRouting};
use crate::routing::negotiated;

/// Rip-up-and-reroute iterations before giving up.
const MAX_ITERATIONS: usize = 60;

pub struct Negotiated;

impl StreamRouting for Negotiated {
    fn name(&self) -> &'static str {
        "negotiated"
    }
    fn describe(&self) -> &'static str {
        "circuits found by negotiated congestion (rip-up and re-route); falls back to dor"
    }
    fn relayout_on_fallback(&self) -> bool {
        true
    }
    fn route(&self, input: &StreamInput) -> Routed {
        let (p, ok, iters) = negotiated(input.mesh, input.streams, MAX_ITERATIONS);
        let detail = format!("negotiated congestion, {iters} iterations");
        circuits_or_dor(ok.then_some(p), None, iters, detail, None)
    }
}
