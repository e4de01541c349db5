//! `transpose`: node (x, y) sends to (y, x); needs a square mesh.
use super::{single, TrafficParams, TrafficPattern};
use crate::error::{param, Result};
use crate::routing::Mesh;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

#[derive(Debug)]
pub struct Transpose;

pub fn build(_mesh: &Mesh, _p: &TrafficParams) -> Result<Arc<dyn TrafficPattern>> {
    Ok(Arc::new(Transpose))
}

impl TrafficPattern for Transpose {
    fn name(&self) -> &'static str {
        "transpose"
    }
    fn describe(&self) -> String {
        "node (x,y) sends to (y,x); the diagonal nodes (x = y) address themselves".into()
    }
    fn check(&self, mesh: &Mesh) -> Result<()> {
        if mesh.cols != mesh.rows {
            return param(format!(
                "transpose traffic needs a square mesh (got {}x{})",
                mesh.cols, mesh.rows
            ));
        }
        Ok(())
    }
    fn dest(&self, mesh: &Mesh, src: usize, _rng: &mut ChaCha8Rng) -> usize {
        let (x, y) = mesh.xy(src);
        mesh.node(y, x)
    }
    fn distribution(&self, mesh: &Mesh, src: usize) -> Vec<(usize, f64)> {
        let (x, y) = mesh.xy(src);
        single(mesh.node(y, x))
    }
}
