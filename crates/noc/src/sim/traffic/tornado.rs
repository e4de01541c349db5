//! `tornado` (as BookSim defines it): every coordinate moves ceil(k/2) - 1 places further,
//! around the ring: (x, y) sends to ((x + cols/2 - 1) mod cols, (y + rows/2 - 1) mod rows).
use super::{single, TrafficParams, TrafficPattern};
use crate::error::Result;
use crate::routing::Mesh;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

#[derive(Debug)]
pub struct Tornado;

pub fn build(_mesh: &Mesh, _p: &TrafficParams) -> Result<Arc<dyn TrafficPattern>> {
    Ok(Arc::new(Tornado))
}

fn target(mesh: &Mesh, src: usize) -> usize {
    let (x, y) = mesh.xy(src);
    let step = |v: usize, k: usize| (v + (k / 2).saturating_sub(1)) % k;
    mesh.node(step(x, mesh.cols), step(y, mesh.rows))
}

impl TrafficPattern for Tornado {
    fn name(&self) -> &'static str {
        "tornado"
    }
    fn describe(&self) -> String {
        "node (x,y) sends to ((x + cols/2 - 1) mod cols, (y + rows/2 - 1) mod rows)".into()
    }
    fn dest(&self, mesh: &Mesh, src: usize, _rng: &mut ChaCha8Rng) -> usize {
        target(mesh, src)
    }
    fn distribution(&self, mesh: &Mesh, src: usize) -> Vec<(usize, f64)> {
        single(target(mesh, src))
    }
}
