//! `ideal`: no network; every stream takes one cycle (the paper's ideal configuration).
use super::{Routed, StreamInput, StreamRouting};
use crate::routing::{Mesh, StreamReq};

pub struct Ideal;

impl StreamRouting for Ideal {
    fn name(&self) -> &'static str {
        "ideal"
    }
    fn describe(&self) -> &'static str {
        "no network: 1-cycle streams limited only by each tile's injection and ejection bandwidth"
    }
    fn route(&self, _input: &StreamInput) -> Routed {
        Routed::Ideal {
            detail: "ideal network: 1-cycle latency, per-node injection/ejection bandwidth".into(),
        }
    }
    /// No links are used.
    fn link_loads(
        &self,
        mesh: &Mesh,
        _streams: &[StreamReq],
        _paths: Option<&[Vec<u8>]>,
    ) -> Vec<f64> {
        vec![0.0; mesh.link_count_slots()]
    }
}
