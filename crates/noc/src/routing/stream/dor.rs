//! `dor`: every stream is packets on XY dimension-order routing (alias `xy`).
use super::{xy_paths, Routed, StreamInput, StreamRouting};
use crate::sim::PacketRouting;

pub struct Dor;

impl StreamRouting for Dor {
    fn name(&self) -> &'static str {
        "dor"
    }
    fn aliases(&self) -> &'static [&'static str] {
        &["xy"]
    }
    fn describe(&self) -> &'static str {
        "packet switching on XY dimension-order routing (X first, then Y)"
    }
    fn carries_pull(&self) -> bool {
        true
    }
    fn route(&self, input: &StreamInput) -> Routed {
        Routed::Packets {
            routing: PacketRouting::Dor,
            paths: Some(xy_paths(input.mesh, input.streams)),
            detail: String::new(),
        }
    }
}
