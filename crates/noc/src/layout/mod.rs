//! Layout of actors on tiles by simulated annealing (paper `seeds/002_8aeb0170294135a1.txt`
//! section 2.1: StreamIt's Raw back-end "uses a cost-function that penalizes distance (number of
//! hops) and switch interference (number of streams that pass through a switch)"; section 3:
//! "We modify the cost function used in simulated annealing to remove the synchronization cost").
//!
//! Cost = sum over streams of w_s x hops_s (XY paths) + sum over routers of
//! max(0, streams through the router - 1) x mean(w), with w_s = items of stream s per steady state
//! divided by the mean items per stream, plus `DEGREE_PENALTY` per stream beyond the number of
//! links of a tile (so tiles with many streams are not put on the border). Moves swap the tiles of two actors (or move an actor to a
//! free tile); geometric cooling; seeded (ChaCha8) and reproducible.
use crate::balance::Partition;
use crate::error::{NocError, Result};
use crate::routing::{tentacle_failures, Mesh, StreamReq};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct Layout {
    /// Tile of each actor.
    pub tile_of: Vec<usize>,
    pub cost: f64,
    pub initial_cost: f64,
    pub moves: usize,
    pub seed: u64,
}

/// Layout cost (hops + switch interference) of a placement.
pub fn cost(mesh: &Mesh, p: &Partition, tile_of: &[usize], scratch: &mut Vec<u32>) -> f64 {
    scratch.clear();
    scratch.resize(mesh.nodes(), 0);
    let mean = p.streams.iter().map(|s| s.items).sum::<f64>() / p.streams.len().max(1) as f64;
    let mut c = 0.0;
    for s in &p.streams {
        let (a, b) = (tile_of[s.src], tile_of[s.dst]);
        let w = if mean > 0.0 { s.items / mean } else { 1.0 };
        c += w * mesh.hops(a, b) as f64;
        // routers on the XY path, both ends included
        let (ax, ay) = mesh.xy(a);
        let (bx, by) = mesh.xy(b);
        let mut x = ax;
        while x != bx {
            scratch[mesh.node(x, ay)] += 1;
            x = if x < bx { x + 1 } else { x - 1 };
        }
        let mut y = ay;
        while y != by {
            scratch[mesh.node(bx, y)] += 1;
            y = if y < by { y + 1 } else { y - 1 };
        }
        scratch[b] += 1;
    }
    let mut c = c + scratch
        .iter()
        .map(|&n| n.saturating_sub(1) as f64)
        .sum::<f64>();
    // A tile with fewer mesh links than streams leaving (entering) it can never route them on
    // disjoint paths: penalize the excess heavily (corner tiles have 2 links, edge tiles 3).
    scratch.iter_mut().for_each(|x| *x = 0);
    let mut inn = vec![0u32; mesh.nodes()];
    for s in &p.streams {
        scratch[tile_of[s.src]] += 1;
        inn[tile_of[s.dst]] += 1;
    }
    for t in 0..mesh.nodes() {
        let links = (0..4).filter(|&d| mesh.neighbor(t, d).is_some()).count() as u32;
        c += DEGREE_PENALTY
            * (scratch[t].saturating_sub(links) + inn[t].saturating_sub(links)) as f64;
    }
    c
}

/// Cost of one stream more than a tile has links.
pub const DEGREE_PENALTY: f64 = 20.0;

/// Simulated annealing placement of the partition's actors on the mesh.
pub fn anneal(mesh: &Mesh, p: &Partition, seed: u64, moves: usize) -> Result<Layout> {
    anneal_with(mesh, p, seed, moves, 0.0)
}

/// Cost of one stream that tentacle routing cannot route (routing-aware re-layout).
pub const ROUTE_PENALTY: f64 = 50.0;

/// Re-layout for disjoint routing (the paper's "retrying the routing problem after modifying the
/// layout"): the same annealing with `ROUTE_PENALTY` per stream that tentacle routing fails to
/// route on the candidate layout.
pub fn anneal_routable(mesh: &Mesh, p: &Partition, seed: u64, moves: usize) -> Result<Layout> {
    anneal_with(mesh, p, seed, moves, ROUTE_PENALTY)
}

fn full_cost(
    mesh: &Mesh,
    p: &Partition,
    tile_of: &[usize],
    scratch: &mut Vec<u32>,
    route_penalty: f64,
) -> f64 {
    let mut c = cost(mesh, p, tile_of, scratch);
    if route_penalty > 0.0 {
        let reqs: Vec<StreamReq> = p
            .streams
            .iter()
            .map(|s| StreamReq {
                src: tile_of[s.src],
                dst: tile_of[s.dst],
                weight: s.items,
            })
            .collect();
        c += route_penalty * tentacle_failures(mesh, &reqs) as f64;
    }
    c
}

fn anneal_with(
    mesh: &Mesh,
    p: &Partition,
    seed: u64,
    moves: usize,
    route_penalty: f64,
) -> Result<Layout> {
    let na = p.actors.len();
    let nt = mesh.nodes();
    if na > nt {
        return Err(NocError::Param(format!(
            "{na} actors do not fit on a {}x{} mesh ({nt} tiles); partition first",
            mesh.cols, mesh.rows
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // initial: actors in order on tiles in row-major order
    let mut tile_of: Vec<usize> = (0..na).collect();
    let mut actor_at: Vec<usize> = vec![usize::MAX; nt];
    for (a, &t) in tile_of.iter().enumerate() {
        actor_at[t] = a;
    }
    let mut scratch = Vec::with_capacity(nt);
    let mut cur = full_cost(mesh, p, &tile_of, &mut scratch, route_penalty);
    let initial = cur;
    let mut best = (cur, tile_of.clone());
    if na < 2 {
        return Ok(Layout {
            tile_of,
            cost: cur,
            initial_cost: initial,
            moves: 0,
            seed,
        });
    }
    let mut temp = (cur / na as f64).max(1.0);
    let cool = (0.001f64).powf(1.0 / moves.max(1) as f64);
    for mv in 0..moves {
        if mv & 4095 == 0 && pktflow_model::cancel::requested() {
            return Err(crate::error::NocError::Interrupted);
        }
        let a = rng.gen_range(0..na);
        let t2 = rng.gen_range(0..nt);
        let t1 = tile_of[a];
        if t1 == t2 {
            continue;
        }
        let b = actor_at[t2];
        tile_of[a] = t2;
        if b != usize::MAX {
            tile_of[b] = t1;
        }
        let c = full_cost(mesh, p, &tile_of, &mut scratch, route_penalty);
        let accept = c <= cur || rng.gen::<f64>() < ((cur - c) / temp).exp();
        if accept {
            actor_at[t2] = a;
            actor_at[t1] = b;
            cur = c;
            if c < best.0 {
                best = (c, tile_of.clone());
            }
        } else {
            tile_of[a] = t1;
            if b != usize::MAX {
                tile_of[b] = t2;
            }
        }
        temp *= cool;
    }
    Ok(Layout {
        tile_of: best.1,
        cost: best.0,
        initial_cost: initial,
        moves,
        seed,
    })
}

/// Perturb a layout by `swaps` random swaps (used to measure routing success on perturbed
/// layouts, which the paper did not study).
pub fn perturb(mesh: &Mesh, l: &Layout, swaps: usize, seed: u64) -> Vec<usize> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut tile_of = l.tile_of.clone();
    let na = tile_of.len();
    let mut actor_at = vec![usize::MAX; mesh.nodes()];
    for (a, &t) in tile_of.iter().enumerate() {
        actor_at[t] = a;
    }
    for _ in 0..swaps {
        let a = rng.gen_range(0..na);
        let t2 = rng.gen_range(0..mesh.nodes());
        let t1 = tile_of[a];
        let b = actor_at[t2];
        tile_of[a] = t2;
        actor_at[t2] = a;
        actor_at[t1] = b;
        if b != usize::MAX {
            tile_of[b] = t1;
        }
    }
    tile_of
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::balance::partition;
    use crate::bench;
    use crate::graph::{flatten, solve_balance};

    #[test]
    fn annealing_improves_and_is_reproducible() {
        let b =
            solve_balance(flatten(&bench::program("FMRadio").unwrap(), false).unwrap()).unwrap();
        let p = partition(&b, 16).unwrap();
        let m = Mesh::new(4, 4).unwrap();
        let l1 = anneal(&m, &p, 7, 4000).unwrap();
        let l2 = anneal(&m, &p, 7, 4000).unwrap();
        assert_eq!(l1.tile_of, l2.tile_of);
        assert!(l1.cost <= l1.initial_cost);
        let mut seen = [false; 16];
        for &t in &l1.tile_of {
            assert!(!seen[t], "two actors on tile {t}");
            seen[t] = true;
        }
        let mut s = Vec::new();
        assert!((cost(&m, &p, &l1.tile_of, &mut s) - l1.cost).abs() < 1e-9);
    }
}
