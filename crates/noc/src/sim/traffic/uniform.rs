//! `uniform`: every packet goes to a node drawn uniformly at random.
use super::{TrafficParams, TrafficPattern};
use crate::error::Result;
use crate::routing::Mesh;
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use std::sync::Arc;

#[derive(Debug)]
pub struct Uniform {
    /// Draw among all n nodes (BookSim) instead of the n-1 others (pktflow's default).
    pub includes_source: bool,
}

pub fn build(_mesh: &Mesh, p: &TrafficParams) -> Result<Arc<dyn TrafficPattern>> {
    Ok(Arc::new(Uniform {
        includes_source: p.uniform_includes_source,
    }))
}

impl TrafficPattern for Uniform {
    fn name(&self) -> &'static str {
        "uniform"
    }
    fn describe(&self) -> String {
        if self.includes_source {
            "each packet goes to one of the n nodes with equal probability, its source included (BookSim)".into()
        } else {
            "each packet goes to one of the other n-1 nodes with equal probability (never to its source)".into()
        }
    }
    #[inline]
    fn dest(&self, mesh: &Mesh, src: usize, rng: &mut ChaCha8Rng) -> usize {
        let n = mesh.nodes();
        if self.includes_source {
            return rng.gen_range(0..n);
        }
        let d = rng.gen_range(0..n - 1);
        if d >= src {
            d + 1
        } else {
            d
        }
    }
    fn distribution(&self, mesh: &Mesh, src: usize) -> Vec<(usize, f64)> {
        let n = mesh.nodes();
        if self.includes_source {
            (0..n).map(|d| (d, 1.0 / n as f64)).collect()
        } else if n < 2 {
            vec![(src, 1.0)]
        } else {
            (0..n)
                .filter(|&d| d != src)
                .map(|d| (d, 1.0 / (n - 1) as f64))
                .collect()
        }
    }
}
