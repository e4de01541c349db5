//! `bit_complement`: node (x, y) sends to (cols-1-x, rows-1-y) (BookSim's `bitcomp` on a
//! mesh whose sides are powers of two).
use super::{single, TrafficParams, TrafficPattern};
use crate::error::Result;
use crate::routing::Mesh;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

#[derive(Debug)]
pub struct BitComplement;

pub fn build(_mesh: &Mesh, _p: &TrafficParams) -> Result<Arc<dyn TrafficPattern>> {
    Ok(Arc::new(BitComplement))
}

impl TrafficPattern for BitComplement {
    fn name(&self) -> &'static str {
        "bit_complement"
    }
    fn describe(&self) -> String {
        "node (x,y) sends to (cols-1-x, rows-1-y); on an odd x odd mesh the centre node addresses itself".into()
    }
    fn dest(&self, mesh: &Mesh, src: usize, _rng: &mut ChaCha8Rng) -> usize {
        let (x, y) = mesh.xy(src);
        mesh.node(mesh.cols - 1 - x, mesh.rows - 1 - y)
    }
    fn distribution(&self, mesh: &Mesh, src: usize) -> Vec<(usize, f64)> {
        let (x, y) = mesh.xy(src);
        single(mesh.node(mesh.cols - 1 - x, mesh.rows - 1 - y))
    }
}
