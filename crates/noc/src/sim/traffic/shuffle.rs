//! `shuffle` (perfect shuffle, as BookSim defines it): the node number (y x cols + x, b bits)
//! rotated left by one bit; the node count must be a power of two.
use super::{log2_nodes, single, TrafficParams, TrafficPattern};
use crate::error::Result;
use crate::routing::Mesh;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

#[derive(Debug)]
pub struct Shuffle {
    bits: u32,
}

pub fn build(mesh: &Mesh, _p: &TrafficParams) -> Result<Arc<dyn TrafficPattern>> {
    Ok(Arc::new(Shuffle {
        bits: log2_nodes(mesh, "shuffle")?,
    }))
}

impl Shuffle {
    fn target(&self, mesh: &Mesh, src: usize) -> usize {
        if self.bits == 0 {
            return src;
        }
        ((src << 1) & (mesh.nodes() - 1)) | (src >> (self.bits - 1) & 1)
    }
}

impl TrafficPattern for Shuffle {
    fn name(&self) -> &'static str {
        "shuffle"
    }
    fn describe(&self) -> String {
        "node number s (y*cols + x) sends to s rotated left by one bit (the node count must be a power of two)".into()
    }
    fn check(&self, mesh: &Mesh) -> Result<()> {
        log2_nodes(mesh, "shuffle").map(|_| ())
    }
    fn dest(&self, mesh: &Mesh, src: usize, _rng: &mut ChaCha8Rng) -> usize {
        self.target(mesh, src)
    }
    fn distribution(&self, mesh: &Mesh, src: usize) -> Vec<(usize, f64)> {
        single(self.target(mesh, src))
    }
}
