//! `hotspot`: every node other than the hotspot (the centre node (cols/2, rows/2)) sends a
//! fraction of its packets to it and the rest uniformly (to the other n-1 nodes).
use super::{TrafficParams, TrafficPattern};
use crate::error::{param, Result};
use crate::routing::Mesh;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

/// Default fraction of packets addressed to the hotspot.
pub const DEFAULT_FRACTION: f64 = 0.2;

#[derive(Debug)]
pub struct Hotspot {
    pub node: usize,
    pub fraction: f64,
}

pub fn build(mesh: &Mesh, p: &TrafficParams) -> Result<Arc<dyn TrafficPattern>> {
    let fraction = p.hotspot_fraction.unwrap_or(DEFAULT_FRACTION);
    if !(0.0..=1.0).contains(&fraction) {
        return param(format!(
            "hotspot fraction must be within 0..1, got {fraction}"
        ));
    }
    Ok(Arc::new(Hotspot {
        node: mesh.node(mesh.cols / 2, mesh.rows / 2),
        fraction,
    }))
}

impl TrafficPattern for Hotspot {
    fn name(&self) -> &'static str {
        "hotspot"
    }
    fn describe(&self) -> String {
        format!(
            "each node other than the hotspot (node {}, the centre) sends {} of its packets to the hotspot and the rest uniformly",
            self.node, self.fraction
        )
    }
    fn dest(&self, mesh: &Mesh, src: usize, rng: &mut ChaCha8Rng) -> usize {
        if src != self.node && rng.gen_bool(self.fraction) {
            return self.node;
        }
        let n = mesh.nodes();
        let d = rng.gen_range(0..n - 1);
        if d >= src {
            d + 1
        } else {
            d
        }
    }
    fn distribution(&self, mesh: &Mesh, src: usize) -> Vec<(usize, f64)> {
        let n = mesh.nodes();
        let f = if src == self.node { 0.0 } else { self.fraction };
        (0..n)
            .filter(|&d| d != src)
            .map(|d| {
                let u = (1.0 - f) / (n - 1) as f64;
                (d, if d == self.node { u + f } else { u })
            })
            .collect()
    }
}
