//! `neighbor` (as BookSim defines it): (x, y) sends to ((x + 1) mod cols, (y + 1) mod rows).
use super::{single, TrafficParams, TrafficPattern};
use crate::error::Result;
use crate::routing::Mesh;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

#[derive(Debug)]
pub struct Neighbor;

pub fn build(_mesh: &Mesh, _p: &TrafficParams) -> Result<Arc<dyn TrafficPattern>> {
    Ok(Arc::new(Neighbor))
}

fn target(mesh: &Mesh, src: usize) -> usize {
    let (x, y) = mesh.xy(src);
    mesh.node((x + 1) % mesh.cols, (y + 1) % mesh.rows)
}

impl TrafficPattern for Neighbor {
    fn name(&self) -> &'static str {
        "neighbor"
    }
    fn describe(&self) -> String {
        "node (x,y) sends to ((x+1) mod cols, (y+1) mod rows)".into()
    }
    fn dest(&self, mesh: &Mesh, src: usize, _rng: &mut ChaCha8Rng) -> usize {
        target(mesh, src)
    }
    fn distribution(&self, mesh: &Mesh, src: usize) -> Vec<(usize, f64)> {
        single(target(mesh, src))
    }
}
