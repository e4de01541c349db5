//! Mesh geometry and stream routing (paper `seeds/002_8aeb0170294135a1.txt`, sections 2.2-2.3).
//!
//! The path-finding algorithms: `tentacle` (sequential depth-first search with backtracking and
//! hard link reservations), `negotiated` (negotiated congestion as in VLSI global routing,
//! PathFinder-style), `exact` (complete backtracking search over all simple paths, small
//! meshes), and the link-load counts. The stream routing functions that use them, selected by
//! name, are the plug-ins of [`stream`].
use crate::error::{NocError, Result};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;
use std::collections::BinaryHeap;

pub mod stream;

/// Output port / direction indices. E = +x, W = -x, N = -y (row above), S = +y, L = local.
pub const E: usize = 0;
pub const W: usize = 1;
pub const N: usize = 2;
pub const S: usize = 3;
pub const LOCAL: usize = 4;
/// Largest mesh side accepted by `Mesh::parse` (and so by every request).
pub const MAX_MESH_SIDE: usize = 256;
/// Most nodes accepted by `Mesh::parse` (the limit of the mesh preset, 256x256).
pub const MAX_MESH_NODES: usize = 65_536;
pub const DIR_NAMES: [&str; 5] = ["E", "W", "N", "S", "L"];

/// Opposite direction: a flit leaving on port d arrives on input port opposite(d).
pub fn opposite(d: usize) -> usize {
    match d {
        E => W,
        W => E,
        N => S,
        S => N,
        _ => LOCAL,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Mesh {
    pub cols: usize,
    pub rows: usize,
}

impl Mesh {
    pub fn new(cols: usize, rows: usize) -> Result<Mesh> {
        if cols == 0 || rows == 0 {
            return Err(NocError::Param(format!(
                "mesh must be at least 1x1 (got {cols}x{rows})"
            )));
        }
        Ok(Mesh { cols, rows })
    }
    /// Parse "8x8" or "4x6" (cols x rows).
    pub fn parse(s: &str) -> Result<Mesh> {
        let (a, b) = s
            .trim()
            .split_once(['x', 'X'])
            .ok_or_else(|| NocError::Param(format!("mesh `{s}` must look like 8x8")))?;
        let c: usize = a
            .trim()
            .parse()
            .map_err(|_| NocError::Param(format!("mesh `{s}`: `{a}` is not a number")))?;
        let r: usize = b
            .trim()
            .parse()
            .map_err(|_| NocError::Param(format!("mesh `{s}`: `{b}` is not a number")))?;
        if c > MAX_MESH_SIDE || r > MAX_MESH_SIDE || c * r > MAX_MESH_NODES {
            return Err(NocError::Param(format!(
                "mesh `{s}` is too large: at most {MAX_MESH_SIDE} columns, {MAX_MESH_SIDE} rows and {MAX_MESH_NODES} nodes"
            )));
        }
        Mesh::new(c, r)
    }
    pub fn nodes(&self) -> usize {
        self.cols * self.rows
    }
    pub fn xy(&self, n: usize) -> (usize, usize) {
        (n % self.cols, n / self.cols)
    }
    pub fn node(&self, x: usize, y: usize) -> usize {
        y * self.cols + x
    }
    pub fn neighbor(&self, n: usize, d: usize) -> Option<usize> {
        let (x, y) = self.xy(n);
        match d {
            E if x + 1 < self.cols => Some(n + 1),
            W if x > 0 => Some(n - 1),
            N if y > 0 => Some(n - self.cols),
            S if y + 1 < self.rows => Some(n + self.cols),
            _ => None,
        }
    }
    pub fn hops(&self, a: usize, b: usize) -> usize {
        let (ax, ay) = self.xy(a);
        let (bx, by) = self.xy(b);
        ax.abs_diff(bx) + ay.abs_diff(by)
    }
    /// Link id of the output of node `n` in direction `d` (ids 0..4*nodes; edge ids unused).
    pub fn link(&self, n: usize, d: usize) -> usize {
        n * 4 + d
    }
    pub fn link_count_slots(&self) -> usize {
        self.nodes() * 4
    }
    /// All physical unidirectional links (48 on 4x4, as in the paper's Figure 3).
    pub fn links(&self) -> Vec<usize> {
        (0..self.nodes())
            .flat_map(|n| {
                (0..4)
                    .filter(move |&d| self.neighbor(n, d).is_some())
                    .map(move |d| n * 4 + d)
            })
            .collect()
    }
    pub fn link_name(&self, l: usize) -> String {
        let (n, d) = (l / 4, l % 4);
        let (x, y) = self.xy(n);
        format!("({x},{y})->{}", DIR_NAMES[d])
    }
    /// XY dimension-ordered direction from `cur` towards `dst` (LOCAL when there).
    pub fn dor_dir(&self, cur: usize, dst: usize) -> usize {
        let (cx, cy) = self.xy(cur);
        let (dx, dy) = self.xy(dst);
        if cx < dx {
            E
        } else if cx > dx {
            W
        } else if cy < dy {
            S
        } else if cy > dy {
            N
        } else {
            LOCAL
        }
    }
    /// Productive (minimal) directions, X first; empty when cur == dst.
    pub fn minimal_dirs(&self, cur: usize, dst: usize) -> ([usize; 2], usize) {
        let (cx, cy) = self.xy(cur);
        let (dx, dy) = self.xy(dst);
        let mut out = [LOCAL; 2];
        let mut k = 0;
        if cx < dx {
            out[k] = E;
            k += 1;
        } else if cx > dx {
            out[k] = W;
            k += 1;
        }
        if cy < dy {
            out[k] = S;
            k += 1;
        } else if cy > dy {
            out[k] = N;
            k += 1;
        }
        (out, k)
    }
    /// Nodes of a path given as output directions from `src`.
    pub fn walk(&self, src: usize, dirs: &[u8]) -> Vec<usize> {
        let mut v = vec![src];
        let mut c = src;
        for &d in dirs {
            c = self.neighbor(c, d as usize).expect("valid path");
            v.push(c);
        }
        v
    }
    pub fn dor_path(&self, src: usize, dst: usize) -> Vec<u8> {
        let mut c = src;
        let mut p = Vec::new();
        loop {
            let d = self.dor_dir(c, dst);
            if d == LOCAL {
                return p;
            }
            p.push(d as u8);
            c = self.neighbor(c, d).unwrap();
        }
    }
}

/// One stream to route: source tile, destination tile and weight (items per steady state).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct StreamReq {
    pub src: usize,
    pub dst: usize,
    pub weight: f64,
}

/// Streams per link. DOR and explicit paths count 1 per stream; adaptive counts the fraction of
/// the stream that crosses the link when every router splits evenly over its productive
/// directions (the paper's footnote 2: "we count fractional link loads when a single stream is
/// demultiplexed over several links").
pub fn link_loads_paths(mesh: &Mesh, streams: &[StreamReq], paths: &[Vec<u8>]) -> Vec<f64> {
    let mut load = vec![0.0; mesh.link_count_slots()];
    for (s, p) in streams.iter().zip(paths) {
        let mut c = s.src;
        for &d in p {
            load[mesh.link(c, d as usize)] += 1.0;
            c = mesh.neighbor(c, d as usize).unwrap();
        }
    }
    load
}

pub fn link_loads_adaptive(mesh: &Mesh, streams: &[StreamReq]) -> Vec<f64> {
    let mut load = vec![0.0; mesh.link_count_slots()];
    let mut frac = vec![0.0f64; mesh.nodes()];
    for s in streams {
        if s.src == s.dst {
            continue;
        }
        frac.iter_mut().for_each(|f| *f = 0.0);
        frac[s.src] = 1.0;
        // process nodes in order of distance from src (minimal paths only move away from src)
        let mut order: Vec<usize> = (0..mesh.nodes())
            .filter(|&n| mesh.hops(s.src, n) + mesh.hops(n, s.dst) == mesh.hops(s.src, s.dst))
            .collect();
        order.sort_by_key(|&n| mesh.hops(s.src, n));
        for n in order {
            if n == s.dst || frac[n] == 0.0 {
                continue;
            }
            let (dirs, k) = mesh.minimal_dirs(n, s.dst);
            for &d in &dirs[..k] {
                let f = frac[n] / k as f64;
                load[mesh.link(n, d)] += f;
                frac[mesh.neighbor(n, d).unwrap()] += f;
            }
        }
    }
    load
}

/// Result of tentacle routing for one stream (sequence of control-flit moves).
#[derive(Debug, Clone, Serialize)]
pub struct SetupTrace {
    pub stream: usize,
    /// Control-flit moves: +d = forward over direction d (reserving the link), or a backtrack.
    pub forward_hops: usize,
    pub backtrack_hops: usize,
    pub success: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct TentacleResult {
    /// Paths (output directions) when every stream found a disjoint path.
    pub paths: Option<Vec<Vec<u8>>>,
    /// Stream that failed first, if any.
    pub failed_stream: Option<usize>,
    /// Order in which streams were routed.
    pub order: Vec<usize>,
    pub traces: Vec<SetupTrace>,
}

/// The paper's stream order: "Each node attempts to discover routes for its own outgoing
/// streams in strict sequence ... Route discovery across nodes is also sequential." Sources in
/// node order, each node's streams in stream order.
pub fn tentacle_order(streams: &[StreamReq]) -> Vec<usize> {
    let mut o: Vec<usize> = (0..streams.len()).collect();
    o.sort_by_key(|&i| (streams[i].src, i));
    o
}

/// Tentacle routing (paper section 2.3): streams in `order`; each control flit moves greedily
/// along minimal directions first, then detours; when no free outgoing link leads on, it
/// backtracks to the previous node and tries the next port (depth-first). Links are hard
/// reservations. A node already explored by this stream's search is not entered again, which
/// keeps the search exhaustive (it fails only when no path of free links exists) and finite.
pub fn tentacle(mesh: &Mesh, streams: &[StreamReq], order: &[usize]) -> TentacleResult {
    tentacle_impl(mesh, streams, order, false).0
}

fn tentacle_impl(
    mesh: &Mesh,
    streams: &[StreamReq],
    order: &[usize],
    skip_failures: bool,
) -> (TentacleResult, usize) {
    let mut failures = 0;
    let mut first_fail = None;
    let mut reserved = vec![false; mesh.link_count_slots()];
    let mut paths: Vec<Vec<u8>> = vec![Vec::new(); streams.len()];
    let mut traces = Vec::new();
    let mut visited = vec![u32::MAX; mesh.nodes()];
    for (step, &si) in order.iter().enumerate() {
        let s = streams[si];
        let mut fwd = 0;
        let mut back = 0;
        // DFS stack: (node, next candidate index)
        let mut stack: Vec<(usize, usize)> = vec![(s.src, 0)];
        let mut dirs_taken: Vec<u8> = Vec::new();
        visited[s.src] = step as u32;
        let mut ok = s.src == s.dst;
        while !ok {
            let Some(&(n, k0)) = stack.last() else {
                break;
            };
            let top = stack.len() - 1;
            let mut kk = k0;
            let k = &mut kk;
            // candidate list: minimal directions (X first), then the detours in E, W, N, S order
            let (mins, nm) = mesh.minimal_dirs(n, s.dst);
            let mut cands = [LOCAL; 4];
            let mut nc = 0;
            for &d in &mins[..nm] {
                cands[nc] = d;
                nc += 1;
            }
            for d in 0..4 {
                if !mins[..nm].contains(&d) {
                    cands[nc] = d;
                    nc += 1;
                }
            }
            let mut moved = false;
            while *k < nc {
                let d = cands[*k];
                *k += 1;
                if let Some(m) = mesh.neighbor(n, d) {
                    let l = mesh.link(n, d);
                    if !reserved[l] && visited[m] != step as u32 {
                        reserved[l] = true;
                        visited[m] = step as u32;
                        dirs_taken.push(d as u8);
                        fwd += 1;
                        if m == s.dst {
                            ok = true;
                        } else {
                            stack.push((m, 0));
                        }
                        moved = true;
                        break;
                    }
                }
            }
            stack[top].1 = *k;
            if !moved {
                // backtrack: release the link into n and return to the previous node
                stack.pop();
                if let Some(d) = dirs_taken.pop() {
                    let prev = stack.last().unwrap().0;
                    reserved[mesh.link(prev, d as usize)] = false;
                    back += 1;
                }
            }
        }
        traces.push(SetupTrace {
            stream: si,
            forward_hops: fwd,
            backtrack_hops: back,
            success: ok,
        });
        if !ok {
            failures += 1;
            first_fail.get_or_insert(si);
            if !skip_failures {
                break;
            }
            continue;
        }
        paths[si] = dirs_taken;
    }
    (
        TentacleResult {
            paths: if failures == 0 { Some(paths) } else { None },
            failed_stream: first_fail,
            order: order.to_vec(),
            traces,
        },
        failures,
    )
}

/// Number of streams tentacle routing cannot route in its order when failed streams are skipped
/// (a failed search has already released every link it tried); used as a routability term by
/// `layout::anneal_routable`.
pub fn tentacle_failures(mesh: &Mesh, streams: &[StreamReq]) -> usize {
    tentacle_impl(mesh, streams, &tentacle_order(streams), true).1
}

/// Tentacle with retries over other stream orders (seeded shuffles). Returns the first success
/// (or the last failure) and the number of attempts used.
pub fn tentacle_retry(
    mesh: &Mesh,
    streams: &[StreamReq],
    retries: usize,
    seed: u64,
) -> (TentacleResult, usize) {
    let mut order = tentacle_order(streams);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut res = tentacle(mesh, streams, &order);
    let mut attempts = 1;
    while res.paths.is_none() && attempts <= retries {
        order.shuffle(&mut rng);
        res = tentacle(mesh, streams, &order);
        attempts += 1;
    }
    (res, attempts)
}

/// Negotiated congestion routing (PathFinder-style, as in VLSI global routing; paper section 2.2
/// names "concurrent routing" for a centralized router). Every iteration rips up and re-routes
/// every stream on a shortest path with link cost (1 + history) x (1 + pres x others_on_link);
/// history grows on over-used links. Stops at the first disjoint solution; otherwise returns the
/// least-contended routing seen (lowest maximum, then total, over-use).
pub fn negotiated(
    mesh: &Mesh,
    streams: &[StreamReq],
    max_iters: usize,
) -> (Vec<Vec<u8>>, bool, usize) {
    let nl = mesh.link_count_slots();
    let mut hist = vec![0.0f64; nl];
    let mut occ = vec![0u32; nl];
    let mut paths: Vec<Vec<u8>> = streams
        .iter()
        .map(|s| mesh.dor_path(s.src, s.dst))
        .collect();
    for (s, p) in streams.iter().zip(&paths) {
        add_path(mesh, s.src, p, &mut occ, 1);
    }
    let mut best = (paths.clone(), overuse(&occ));
    let mut pres = 0.5;
    for it in 0..max_iters {
        for i in 0..streams.len() {
            let s = streams[i];
            add_path(mesh, s.src, &paths[i], &mut occ, -1);
            let p = dijkstra(mesh, s.src, s.dst, |l| {
                (1.0 + hist[l]) * (1.0 + pres * occ[l] as f64) + 1e-3
            });
            add_path(mesh, s.src, &p, &mut occ, 1);
            paths[i] = p;
        }
        let ou = overuse(&occ);
        if ou < best.1 {
            best = (paths.clone(), ou);
        }
        if ou.0 == 0 {
            return (paths, true, it + 1);
        }
        for l in 0..nl {
            if occ[l] > 1 {
                hist[l] += (occ[l] - 1) as f64;
            }
        }
        pres *= 1.6;
    }
    (best.0, false, max_iters)
}

fn overuse(occ: &[u32]) -> (u32, u32) {
    let mx = occ.iter().map(|&o| o.saturating_sub(1)).max().unwrap_or(0);
    let tot = occ.iter().map(|&o| o.saturating_sub(1)).sum();
    (mx, tot)
}

fn add_path(mesh: &Mesh, src: usize, p: &[u8], occ: &mut [u32], delta: i32) {
    let mut c = src;
    for &d in p {
        let l = mesh.link(c, d as usize);
        occ[l] = (occ[l] as i32 + delta) as u32;
        c = mesh.neighbor(c, d as usize).unwrap();
    }
}

#[derive(PartialEq)]
struct HeapItem(f64, usize);
impl Eq for HeapItem {}
impl PartialOrd for HeapItem {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for HeapItem {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        o.0.partial_cmp(&self.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(o.1.cmp(&self.1))
    }
}

fn dijkstra(mesh: &Mesh, src: usize, dst: usize, cost: impl Fn(usize) -> f64) -> Vec<u8> {
    let n = mesh.nodes();
    let mut dist = vec![f64::INFINITY; n];
    let mut from = vec![(usize::MAX, 0u8); n];
    let mut h = BinaryHeap::new();
    dist[src] = 0.0;
    h.push(HeapItem(0.0, src));
    while let Some(HeapItem(d, u)) = h.pop() {
        if d > dist[u] {
            continue;
        }
        if u == dst {
            break;
        }
        for dir in 0..4 {
            if let Some(v) = mesh.neighbor(u, dir) {
                let nd = d + cost(mesh.link(u, dir));
                if nd < dist[v] {
                    dist[v] = nd;
                    from[v] = (u, dir as u8);
                    h.push(HeapItem(nd, v));
                }
            }
        }
    }
    let mut p = Vec::new();
    let mut c = dst;
    while c != src {
        let (u, d) = from[c];
        p.push(d);
        c = u;
    }
    p.reverse();
    p
}

/// Outcome of the exact search.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub enum ExactOutcome {
    /// Disjoint paths found.
    Feasible,
    /// Proven: no set of link-disjoint paths exists.
    Infeasible,
    /// Search budget exhausted before an answer.
    Unknown,
}

/// Exact edge-disjoint path search: backtracking over streams (longest first), enumerating every
/// simple path of free links for each, with two sound prunings (every remaining stream must
/// still reach its destination over free links; every node must keep at least as many free
/// output (input) links as remaining streams start (end) there). Complete within `budget`
/// node expansions: `Infeasible` is a proof.
pub fn exact(
    mesh: &Mesh,
    streams: &[StreamReq],
    budget: u64,
) -> (ExactOutcome, Option<Vec<Vec<u8>>>, u64) {
    let mut order: Vec<usize> = (0..streams.len())
        .filter(|&i| streams[i].src != streams[i].dst)
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(mesh.hops(streams[i].src, streams[i].dst)));
    let mut st = ExactState {
        mesh,
        streams,
        order,
        used: vec![false; mesh.link_count_slots()],
        paths: vec![Vec::new(); streams.len()],
        expansions: 0,
        budget,
        exhausted: false,
        onpath: vec![vec![false; mesh.nodes()]; streams.len() + 1],
    };
    if st.solve(0) {
        let p = st.paths.clone();
        (ExactOutcome::Feasible, Some(p), st.expansions)
    } else if st.exhausted {
        (ExactOutcome::Unknown, None, st.expansions)
    } else {
        (ExactOutcome::Infeasible, None, st.expansions)
    }
}

struct ExactState<'a> {
    mesh: &'a Mesh,
    streams: &'a [StreamReq],
    order: Vec<usize>,
    used: Vec<bool>,
    paths: Vec<Vec<u8>>,
    expansions: u64,
    budget: u64,
    exhausted: bool,
    /// nodes on the partial path of each search level (paths are simple per stream)
    onpath: Vec<Vec<bool>>,
}

impl ExactState<'_> {
    fn feasible_rest(&self, k: usize) -> bool {
        let m = self.mesh;
        let mut out_need = vec![0usize; m.nodes()];
        let mut in_need = vec![0usize; m.nodes()];
        for &i in &self.order[k..] {
            out_need[self.streams[i].src] += 1;
            in_need[self.streams[i].dst] += 1;
        }
        for n in 0..m.nodes() {
            let free_out = (0..4)
                .filter(|&d| m.neighbor(n, d).is_some() && !self.used[m.link(n, d)])
                .count();
            let free_in = (0..4)
                .filter(|&d| {
                    m.neighbor(n, d)
                        .map(|v| !self.used[m.link(v, opposite(d))])
                        .unwrap_or(false)
                })
                .count();
            if out_need[n] > free_out || in_need[n] > free_in {
                return false;
            }
        }
        for &i in &self.order[k..] {
            if !self.reachable(self.streams[i].src, self.streams[i].dst) {
                return false;
            }
        }
        true
    }

    fn reachable(&self, a: usize, b: usize) -> bool {
        let m = self.mesh;
        let mut seen = vec![false; m.nodes()];
        let mut st = vec![a];
        seen[a] = true;
        while let Some(u) = st.pop() {
            if u == b {
                return true;
            }
            for d in 0..4 {
                if let Some(v) = m.neighbor(u, d) {
                    if !seen[v] && !self.used[m.link(u, d)] {
                        seen[v] = true;
                        st.push(v);
                    }
                }
            }
        }
        false
    }

    fn solve(&mut self, k: usize) -> bool {
        if k == self.order.len() {
            return true;
        }
        if !self.feasible_rest(k) {
            return false;
        }
        let i = self.order[k];
        let (src, dst) = (self.streams[i].src, self.streams[i].dst);
        let mut path = Vec::new();
        self.onpath[k][src] = true;
        let r = self.dfs(k, src, dst, &mut path);
        self.onpath[k][src] = false;
        r
    }

    fn dfs(&mut self, k: usize, u: usize, dst: usize, path: &mut Vec<u8>) -> bool {
        if self.exhausted {
            return false;
        }
        self.expansions += 1;
        if self.expansions > self.budget
            || (self.expansions & 4095 == 0 && pktflow_model::cancel::requested())
        {
            self.exhausted = true;
            return false;
        }
        let m = self.mesh;
        let (mins, nm) = m.minimal_dirs(u, dst);
        let mut cands: Vec<usize> = mins[..nm].to_vec();
        cands.extend((0..4).filter(|d| !mins[..nm].contains(d)));
        for d in cands {
            let Some(v) = m.neighbor(u, d) else { continue };
            let l = m.link(u, d);
            if self.used[l] || self.onpath[k][v] {
                continue;
            }
            self.used[l] = true;
            path.push(d as u8);
            if v == dst {
                let i = self.order[k];
                self.paths[i] = path.clone();
                if self.solve(k + 1) {
                    return true;
                }
            } else {
                self.onpath[k][v] = true;
                let r = self.dfs(k, v, dst, path);
                self.onpath[k][v] = false;
                if r {
                    return true;
                }
            }
            path.pop();
            self.used[l] = false;
            if self.exhausted {
                return false;
            }
        }
        false
    }
}

/// Check that paths are valid walks from src to dst and pairwise link-disjoint.
pub fn check_disjoint(
    mesh: &Mesh,
    streams: &[StreamReq],
    paths: &[Vec<u8>],
) -> std::result::Result<(), String> {
    let mut used = vec![usize::MAX; mesh.link_count_slots()];
    for (i, (s, p)) in streams.iter().zip(paths).enumerate() {
        let mut c = s.src;
        for &d in p {
            let l = mesh.link(c, d as usize);
            if used[l] != usize::MAX {
                return Err(format!(
                    "streams {} and {i} share link {}",
                    used[l],
                    mesh.link_name(l)
                ));
            }
            used[l] = i;
            c = mesh
                .neighbor(c, d as usize)
                .ok_or_else(|| format!("stream {i} leaves the mesh at {}", mesh.link_name(l)))?;
        }
        if c != s.dst {
            return Err(format!(
                "stream {i} ends at node {c}, not at its destination {}",
                s.dst
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(m: &Mesh, a: (usize, usize), b: (usize, usize)) -> StreamReq {
        StreamReq {
            src: m.node(a.0, a.1),
            dst: m.node(b.0, b.1),
            weight: 1.0,
        }
    }

    #[test]
    fn mesh_has_48_links_on_4x4() {
        let m = Mesh::new(4, 4).unwrap();
        assert_eq!(m.links().len(), 48);
        assert_eq!(Mesh::parse("6x6").unwrap().nodes(), 36);
        assert!(Mesh::parse("6by6").is_err());
    }

    #[test]
    fn tentacle_finds_disjoint_paths_where_dor_collides() {
        // two streams into the same node from the west: XY shares the last link
        let m = Mesh::new(4, 4).unwrap();
        let s = vec![
            req(&m, (0, 1), (3, 1)),
            req(&m, (1, 1), (3, 1)),
            req(&m, (0, 0), (3, 0)),
        ];
        let dor: Vec<Vec<u8>> = s.iter().map(|r| m.dor_path(r.src, r.dst)).collect();
        assert!(check_disjoint(&m, &s, &dor).is_err());
        let r = tentacle(&m, &s, &tentacle_order(&s));
        let p = r.paths.expect("tentacle must succeed");
        check_disjoint(&m, &s, &p).unwrap();
        assert!(r.traces.iter().all(|t| t.success));
    }

    #[test]
    fn tentacle_reports_infeasible_corner() {
        // corner (0,0) has only 2 output links: 3 streams out of it cannot be disjoint
        let m = Mesh::new(3, 3).unwrap();
        let s = vec![
            req(&m, (0, 0), (2, 2)),
            req(&m, (0, 0), (1, 2)),
            req(&m, (0, 0), (2, 1)),
        ];
        let r = tentacle(&m, &s, &tentacle_order(&s));
        assert!(r.paths.is_none());
        assert_eq!(r.failed_stream, Some(2));
        let (o, _, _) = exact(&m, &s, 1_000_000);
        assert_eq!(o, ExactOutcome::Infeasible);
        let (_, ok, _) = negotiated(&m, &s, 30);
        assert!(!ok);
    }

    #[test]
    fn exact_and_negotiated_solve_where_order_matters() {
        // On a 1-wide detour-poor 2x3 mesh, a greedy first stream can block the second.
        let m = Mesh::new(3, 2).unwrap();
        let s = vec![
            req(&m, (0, 0), (2, 0)),
            req(&m, (0, 1), (2, 1)),
            req(&m, (1, 1), (1, 0)),
        ];
        let (o, p, _) = exact(&m, &s, 1_000_000);
        if o == ExactOutcome::Feasible {
            check_disjoint(&m, &s, &p.unwrap()).unwrap();
        }
        let (np, ok, _) = negotiated(&m, &s, 50);
        if ok {
            check_disjoint(&m, &s, &np).unwrap();
        }
        assert_eq!(ok, o == ExactOutcome::Feasible);
    }

    #[test]
    fn adaptive_loads_split_fractionally() {
        let m = Mesh::new(3, 3).unwrap();
        let s = vec![req(&m, (0, 0), (1, 1))];
        let l = link_loads_adaptive(&m, &s);
        assert!((l[m.link(0, E)] - 0.5).abs() < 1e-9);
        assert!((l[m.link(0, S)] - 0.5).abs() < 1e-9);
        let total: f64 = l.iter().sum();
        assert!((total - 2.0).abs() < 1e-9);
    }
}
