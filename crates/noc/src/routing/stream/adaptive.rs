//! `adaptive`: every stream is packets on minimal adaptive routing with XY escape channels.
use super::{Routed, StreamInput, StreamRouting};
use crate::routing::{link_loads_adaptive, Mesh, StreamReq};
use crate::sim::PacketRouting;

pub struct Adaptive;

impl StreamRouting for Adaptive {
    fn name(&self) -> &'static str {
        "adaptive"
    }
    fn describe(&self) -> &'static str {
        "packet switching on minimal adaptive routing with XY escape channels"
    }
    fn carries_pull(&self) -> bool {
        true
    }
    fn route(&self, _input: &StreamInput) -> Routed {
        Routed::Packets {
            routing: PacketRouting::Adaptive,
            paths: None,
            detail: String::new(),
        }
    }
    /// Fractional: every router splits a stream evenly over its productive directions.
    fn link_loads(
        &self,
        mesh: &Mesh,
        streams: &[StreamReq],
        _paths: Option<&[Vec<u8>]>,
    ) -> Vec<f64> {
        link_loads_adaptive(mesh, streams)
    }
}
