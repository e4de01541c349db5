//! Link-contention reports: streams per link (paper `seeds/002_8aeb0170294135a1.txt` Figure 3,
//! "we plot the links on the X-axis ... and the number of streams that use that link on the
//! Y-axis") as a table, and a per-router heat map of the mesh.
use crate::routing::{Mesh, DIR_NAMES};
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct LinkLoad {
    /// Link index in the order of `Mesh::links` (0..48 on 4x4).
    pub index: usize,
    pub from: [usize; 2],
    pub to: [usize; 2],
    pub dir: &'static str,
    /// Streams using the link (fractional for adaptive routing).
    pub streams: f64,
}

/// Per-link table over all physical links.
pub fn link_table(mesh: &Mesh, loads: &[f64]) -> Vec<LinkLoad> {
    mesh.links()
        .into_iter()
        .enumerate()
        .map(|(index, l)| {
            let (n, d) = (l / 4, l % 4);
            let m = mesh.neighbor(n, d).unwrap();
            let (x, y) = mesh.xy(n);
            let (mx, my) = mesh.xy(m);
            LinkLoad {
                index,
                from: [x, y],
                to: [mx, my],
                dir: DIR_NAMES[d],
                streams: loads[l],
            }
        })
        .collect()
}

/// Heat map rows[y][x]: the largest stream count over the links leaving router (x, y).
pub fn router_heatmap(mesh: &Mesh, loads: &[f64]) -> Vec<Vec<f64>> {
    (0..mesh.rows)
        .map(|y| {
            (0..mesh.cols)
                .map(|x| {
                    let n = mesh.node(x, y);
                    (0..4)
                        .filter(|&d| mesh.neighbor(n, d).is_some())
                        .map(|d| loads[mesh.link(n, d)])
                        .fold(0.0, f64::max)
                })
                .collect()
        })
        .collect()
}

/// Summary: (max streams on a link, links with more than one stream).
pub fn contention(loads: &[f64]) -> (f64, usize) {
    (
        loads.iter().copied().fold(0.0, f64::max),
        loads.iter().filter(|&&l| l > 1.0 + 1e-9).count(),
    )
}
