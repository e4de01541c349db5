//! `exact`: complete search for link-disjoint paths within `exact_budget` node expansions
//! (`routing::exact`); circuits when found, else XY packet routing.
use super::{circuits_or_dor, Routed, StreamInput, StreamRouting};
use crate::routing::exact;

pub struct Exact;

impl StreamRouting for Exact {
    fn name(&self) -> &'static str {
        "exact"
    }
    fn describe(&self) -> &'static str {
        "circuits found by a complete search for disjoint paths (small meshes); falls back to dor"
    }
    fn relayout_on_fallback(&self) -> bool {
        true
    }
    fn route(&self, input: &StreamInput) -> Routed {
        let (o, p, exp) = exact(input.mesh, input.streams, input.exact_budget);
        let detail = format!("exact search: {o:?} after {exp} expansions");
        circuits_or_dor(p, None, 1, detail, None)
    }
}
