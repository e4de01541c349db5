//! Fit a balanced stream graph to T tiles as StreamIt's compiler does (paper
//! `seeds/002_8aeb0170294135a1.txt` section 2.1: "the compiler automatically fuses/fisses actors
//! to achieve a transformed, load-balanced, stream computation graph in which (a) the number of
//! actors are comparable in terms of workload and (b) the number of actors does not exceed the
//! number of processors").
//!
//! Greedy algorithm:
//! 1. drop null splitters/joiners (0 firings);
//! 2. fusion: while more than T actors remain, fuse the adjacent pair with the smallest combined
//!    work whose fusion keeps the graph acyclic (no other path between them);
//! 3. fission and re-fusion: while the heaviest actor is stateless (all its members are) and
//!    splitting it in two data-parallel replicas lowers the maximum, split it; when no tile is
//!    free, first fuse the lightest admissible pair, provided its combined work stays below half
//!    of the heaviest actor's work (otherwise stop). A replica receives 1/k of every input and output stream of the
//!    original (the round-robin split/join is folded into the neighbours).
//!
//! The balance reported is max work / mean work over the actors.
use crate::error::{NocError, Result};
use crate::graph::{Balanced, NodeKind};
use pktflow_model::cancel;
use serde::Serialize;
use std::collections::BTreeMap;

/// Above this many actors (or 2 x tiles, whichever is larger), `partition` first coarsens the
/// graph in linear time to `COARSEN_TARGET` actors (or 2 x tiles) before the greedy fusion.
/// Every built-in benchmark is below it.
pub const GREEDY_MAX_ACTORS: usize = 512;
/// Actors left by the linear-time coarsening of a large graph (at least 2 x tiles).
pub const COARSEN_TARGET: usize = 128;

#[derive(Debug, Clone, Serialize)]
pub struct Actor {
    pub name: String,
    /// Flat-graph nodes in this actor with the fraction of each (fission splits a node).
    pub members: Vec<(usize, f64)>,
    /// Work per steady state, cycles (StreamIt estimate).
    pub work: f64,
    pub stateful: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct Stream {
    pub src: usize,
    pub dst: usize,
    /// Items per steady state.
    pub items: f64,
    /// Items on the stream before the first iteration (feedback-loop delay).
    pub delay: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Partition {
    pub graph: String,
    pub tiles: usize,
    pub actors: Vec<Actor>,
    pub streams: Vec<Stream>,
    /// max work / mean work
    pub balance: f64,
    pub fusions: usize,
    pub fissions: usize,
}

/// Links of an interior mesh router in each direction (in or out).
pub const MAX_DEGREE: usize = 4;

struct Work {
    actors: Vec<Option<Actor>>,
    /// (items per steady state, initial items) per (producer, consumer)
    edges: BTreeMap<(usize, usize), (f64, f64)>,
}

/// Can the consumer of a stream run an iteration ahead of its producer? (Its initial items
/// cover one iteration's items, as the simulator counts them.)
fn covered(items: f64, delay: f64) -> bool {
    delay.floor() >= items.ceil()
}

impl Work {
    fn alive(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.actors.len()).filter(move |&i| self.actors[i].is_some())
    }
    fn count(&self) -> usize {
        self.alive().count()
    }
    fn w(&self, i: usize) -> f64 {
        self.actors[i].as_ref().map(|a| a.work).unwrap_or(0.0)
    }
    /// Is there a path u -> ... -> v other than the direct edge?
    fn other_path(&self, u: usize, v: usize, succ: &BTreeMap<usize, Vec<usize>>) -> bool {
        let mut seen = std::collections::HashSet::new();
        let mut st: Vec<usize> = succ
            .get(&u)
            .map(|s| s.iter().copied().filter(|&x| x != v).collect())
            .unwrap_or_default();
        while let Some(x) = st.pop() {
            if x == v {
                return true;
            }
            if !seen.insert(x) {
                continue;
            }
            if let Some(s) = succ.get(&x) {
                st.extend(s.iter().copied());
            }
        }
        false
    }
    fn succ(&self) -> BTreeMap<usize, Vec<usize>> {
        let mut m: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for &(a, b) in self.edges.keys() {
            m.entry(a).or_default().push(b);
        }
        m
    }
    fn degrees(&self) -> (Vec<usize>, Vec<usize>) {
        let n = self.actors.len();
        let (mut i, mut o) = (vec![0; n], vec![0; n]);
        for &(a, b) in self.edges.keys() {
            o[a] += 1;
            i[b] += 1;
        }
        (i, o)
    }
    /// In- and out-degree of the actor that fusing a and b would make (`adj`: producers and
    /// consumers of every actor, from `adjacency`).
    fn fused_degree(
        adj: &(Vec<Vec<usize>>, Vec<Vec<usize>>),
        a: usize,
        b: usize,
    ) -> (usize, usize) {
        let count = |l: &Vec<Vec<usize>>| {
            let mut v: Vec<usize> = l[a]
                .iter()
                .chain(&l[b])
                .copied()
                .filter(|&x| x != a && x != b)
                .collect();
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        (count(&adj.0), count(&adj.1))
    }
    /// (producers, consumers) of every actor.
    fn adjacency(&self) -> (Vec<Vec<usize>>, Vec<Vec<usize>>) {
        let n = self.actors.len();
        let (mut p, mut c) = (vec![Vec::new(); n], vec![Vec::new(); n]);
        for &(x, y) in self.edges.keys() {
            p[y].push(x);
            c[x].push(y);
        }
        (p, c)
    }
    /// Best adjacent pair to fuse without creating a cycle, excluding `avoid`: the smallest
    /// combined work, scaled up by how far the fused actor's in/out degree exceeds the 4 links of
    /// a mesh router (a tile cannot send or receive more than 4 disjoint streams).
    fn best_fusion(&self, avoid: Option<usize>) -> Option<(usize, usize, f64)> {
        let succ = self.succ();
        // vertical pairs (producer, consumer) and horizontal pairs (siblings with a common
        // producer or consumer, neighbours in work order), as StreamIt's vertical and horizontal
        // fusion
        let mut pairs: Vec<(usize, usize)> = self.edges.keys().copied().collect();
        let mut preds: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        for &(a, b) in self.edges.keys() {
            preds.entry(b).or_default().push(a);
        }
        for group in succ.values().chain(preds.values()) {
            if group.len() < 2 {
                continue;
            }
            let mut g = group.clone();
            g.sort_by(|&x, &y| self.w(x).partial_cmp(&self.w(y)).unwrap().then(x.cmp(&y)));
            for k in 1..g.len() {
                pairs.push((g[k - 1].min(g[k]), g[k - 1].max(g[k])));
            }
        }
        let adj = self.adjacency();
        let mut cands: Vec<(f64, usize, usize, f64)> = pairs
            .iter()
            .filter(|&&(a, b)| a != b && Some(a) != avoid && Some(b) != avoid)
            .map(|&(a, b)| {
                let (di, dout) = Self::fused_degree(&adj, a, b);
                let excess = di.saturating_sub(MAX_DEGREE) + dout.saturating_sub(MAX_DEGREE);
                let w = self.w(a) + self.w(b);
                (w * (1.0 + excess as f64), a, b, w)
            })
            .collect();
        cands.sort_by(|x, y| x.partial_cmp(y).unwrap());
        cands.dedup_by(|x, y| x.1 == y.1 && x.2 == y.2);
        for (_, a, b, w) in cands {
            let direct = self.edges.contains_key(&(a, b));
            let rev = self.edges.contains_key(&(b, a));
            let ok = if direct {
                !self.other_path(a, b, &succ)
            } else if rev {
                !self.other_path(b, a, &succ)
            } else {
                // siblings: fusing them creates a cycle iff one reaches the other
                !self.other_path(a, b, &succ) && !self.other_path(b, a, &succ)
            };
            if ok {
                return Some((a, b, w));
            }
        }
        None
    }
    fn fuse(&mut self, a: usize, b: usize) {
        let ab = self.actors[b].take().unwrap();
        let aa = self.actors[a].as_mut().unwrap();
        aa.work += ab.work;
        aa.stateful |= ab.stateful;
        aa.members.extend(ab.members);
        if aa.name != ab.name && !aa.name.ends_with('+') {
            aa.name.push('+');
        }
        let old = std::mem::take(&mut self.edges);
        for ((x, y), (it, d)) in old {
            let x2 = if x == b { a } else { x };
            let y2 = if y == b { a } else { y };
            if x2 == y2 {
                continue; // internal to the fused actor
            }
            let e = self.edges.entry((x2, y2)).or_insert((0.0, 0.0));
            e.0 += it;
            e.1 += d;
        }
    }
    /// Fuse every strongly connected set of actors linked by streams whose initial items do
    /// not cover an iteration (iterative Tarjan); repeats until none is left. Returns fusions.
    fn fuse_uncovered_cycles(&mut self) -> usize {
        let mut fusions = 0;
        loop {
            let n = self.actors.len();
            let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
            for (&(a, b), &(it, d)) in &self.edges {
                if !covered(it, d) {
                    succ[a].push(b);
                }
            }
            let comps = sccs(&succ);
            let mut changed = false;
            for c in comps.into_iter().filter(|c| c.len() > 1) {
                let keep = *c.iter().min().unwrap();
                for &v in &c {
                    if v != keep && self.actors[v].is_some() && self.actors[keep].is_some() {
                        self.fuse(keep, v);
                        fusions += 1;
                        changed = true;
                    }
                }
            }
            if !changed {
                return fusions;
            }
        }
    }

    /// When more than max(GREEDY_MAX_ACTORS, 2 x tiles) actors are alive: condense strongly
    /// connected sets, order the rest topologically and fuse contiguous runs of that order
    /// into max(COARSEN_TARGET, 2 x tiles) groups of similar work. Returns the fusions made.
    fn coarsen(&mut self, tiles: usize) -> usize {
        if self.count() <= GREEDY_MAX_ACTORS.max(2 * tiles) {
            return 0;
        }
        let target = COARSEN_TARGET.max(2 * tiles);
        let n = self.actors.len();
        let mut fusions = 0;
        let mut succ: Vec<Vec<usize>> = vec![Vec::new(); n];
        for &(a, b) in self.edges.keys() {
            succ[a].push(b);
        }
        // Tarjan returns components in reverse topological order
        let mut comps = sccs(&succ);
        comps.retain(|c| self.actors[c[0]].is_some());
        comps.reverse();
        let mut group_of = vec![usize::MAX; n];
        let total: f64 = comps
            .iter()
            .flat_map(|c| c.iter())
            .map(|&v| self.w(v))
            .sum();
        let per = total / target as f64;
        let (mut acc, mut g, mut in_group) = (0.0, 0usize, 0usize);
        for c in comps.iter() {
            let wc: f64 = c.iter().map(|&v| self.w(v)).sum();
            if in_group > 0 && (acc + wc > per * (g + 1) as f64 || per == 0.0) {
                // start a new group unless the targets are exhausted
                if g + 1 < target {
                    g += 1;
                    in_group = 0;
                }
            }
            for &v in c.iter() {
                group_of[v] = g;
            }
            acc += wc;
            in_group += 1;
        }
        // rebuild: one actor per group (the first member keeps its slot)
        let mut head = vec![usize::MAX; target.max(g + 1)];
        let mut new_edges: BTreeMap<(usize, usize), (f64, f64)> = BTreeMap::new();
        for (v, &gv) in group_of.iter().enumerate() {
            if self.actors[v].is_none() {
                continue;
            }
            if head[gv] == usize::MAX {
                head[gv] = v;
            } else {
                let b = self.actors[v].take().unwrap();
                let a = self.actors[head[gv]].as_mut().unwrap();
                a.work += b.work;
                a.stateful |= b.stateful;
                a.members.extend(b.members);
                if !a.name.ends_with('+') {
                    a.name.push('+');
                }
                fusions += 1;
            }
        }
        for ((x, y), (it, d)) in std::mem::take(&mut self.edges) {
            let (x2, y2) = (head[group_of[x]], head[group_of[y]]);
            if x2 != y2 {
                let e = new_edges.entry((x2, y2)).or_insert((0.0, 0.0));
                e.0 += it;
                e.1 += d;
            }
        }
        self.edges = new_edges;
        fusions
    }

    fn fiss(&mut self, h: usize) -> usize {
        let a = self.actors[h].as_mut().unwrap();
        a.work /= 2.0;
        for m in a.members.iter_mut() {
            m.1 /= 2.0;
        }
        let mut b = a.clone();
        b.name = format!("{}'", b.name);
        self.actors.push(Some(b));
        let nb = self.actors.len() - 1;
        let old = std::mem::take(&mut self.edges);
        for ((x, y), (it, d)) in old {
            if x == h || y == h {
                let half = (it / 2.0, d / 2.0);
                self.edges.insert((x, y), half);
                let (x2, y2) = (if x == h { nb } else { x }, if y == h { nb } else { y });
                let e = self.edges.entry((x2, y2)).or_insert((0.0, 0.0));
                e.0 += half.0;
                e.1 += half.1;
            } else {
                let e = self.edges.entry((x, y)).or_insert((0.0, 0.0));
                e.0 += it;
                e.1 += d;
            }
        }
        nb
    }
}

/// Strongly connected components of a directed graph (iterative Tarjan), in reverse
/// topological order of the condensation.
fn sccs(succ: &[Vec<usize>]) -> Vec<Vec<usize>> {
    let n = succ.len();
    let mut index = vec![usize::MAX; n];
    let mut low = vec![0usize; n];
    let mut on = vec![false; n];
    let mut stack = Vec::new();
    let mut out = Vec::new();
    let mut next = 0usize;
    for root in 0..n {
        if index[root] != usize::MAX {
            continue;
        }
        let mut call: Vec<(usize, usize)> = vec![(root, 0)];
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on[root] = true;
        while let Some(&mut (v, ref mut i)) = call.last_mut() {
            if *i < succ[v].len() {
                let w = succ[v][*i];
                *i += 1;
                if index[w] == usize::MAX {
                    index[w] = next;
                    low[w] = next;
                    next += 1;
                    stack.push(w);
                    on[w] = true;
                    call.push((w, 0));
                } else if on[w] {
                    low[v] = low[v].min(index[w]);
                }
            } else {
                call.pop();
                if let Some(&(u, _)) = call.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut c = Vec::new();
                    loop {
                        let w = stack.pop().unwrap();
                        on[w] = false;
                        c.push(w);
                        if w == v {
                            break;
                        }
                    }
                    out.push(c);
                }
            }
        }
    }
    out
}

/// Partition a balanced graph onto at most `tiles` actors.
pub fn partition(b: &Balanced, tiles: usize) -> Result<Partition> {
    if tiles == 0 {
        return Err(NocError::Param("cannot partition onto 0 tiles".into()));
    }
    let g = &b.graph;
    let mut idx = vec![usize::MAX; g.nodes.len()];
    let mut w = Work {
        actors: Vec::new(),
        edges: BTreeMap::new(),
    };
    for (i, n) in g.nodes.iter().enumerate() {
        if n.null || b.reps[i] == 0 {
            continue;
        }
        idx[i] = w.actors.len();
        w.actors.push(Some(Actor {
            name: if n.kind == NodeKind::Filter {
                n.name.clone()
            } else {
                n.path.rsplit('/').nth(1).unwrap_or("sj").to_string() + "/" + &n.name
            },
            members: vec![(i, 1.0)],
            work: b.node_work(i),
            stateful: n.stateful,
        }));
    }
    for (k, e) in g.edges.iter().enumerate() {
        let (s, d) = (idx[e.src], idx[e.dst]);
        if s == usize::MAX || d == usize::MAX {
            continue;
        }
        let en = w.edges.entry((s, d)).or_insert((0.0, 0.0));
        en.0 += b.edge_items(k) as f64;
        en.1 += e.delay as f64;
    }
    // a cycle whose initial items do not cover one iteration cannot be pipelined across
    // actors at the granularity of steady-state iterations: it becomes one actor
    let mut fusions = w.fuse_uncovered_cycles();
    // huge graphs: cut a topological order into contiguous groups of similar work first
    // (linear time; contiguous groups of a topological order never form a cycle)
    fusions += w.coarsen(tiles);
    if cancel::requested() {
        return Err(NocError::Interrupted);
    }
    let mut fissions = 0;
    // 2. fusion down to T actors
    while w.count() > tiles {
        if cancel::requested() {
            return Err(NocError::Interrupted);
        }
        match w.best_fusion(None) {
            Some((a, c, _)) => {
                w.fuse(a, c);
                fusions += 1;
            }
            None => {
                // disconnected pieces: fuse the two lightest actors
                let mut al: Vec<usize> = w.alive().collect();
                al.sort_by(|&x, &y| w.w(x).partial_cmp(&w.w(y)).unwrap());
                w.fuse(al[0], al[1]);
                fusions += 1;
            }
        }
    }
    // 2b. degree repair: an actor with more than 4 producers (consumers) cannot receive (send)
    // its streams on disjoint paths; fuse the two lightest of those producers (consumers) while
    // that is possible without a cycle
    for _ in 0..(4 * g.nodes.len()) {
        let (din, dout) = w.degrees();
        let succ = w.succ();
        let mut fixed = false;
        let mut worst: Vec<(usize, usize, bool)> = w
            .alive()
            .filter_map(|v| {
                if din[v] > MAX_DEGREE {
                    Some((din[v], v, true))
                } else if dout[v] > MAX_DEGREE {
                    Some((dout[v], v, false))
                } else {
                    None
                }
            })
            .collect();
        worst.sort_by(|a, b| b.cmp(a));
        'outer: for &(_, v, is_in) in &worst {
            let mut group: Vec<usize> = w
                .edges
                .keys()
                .filter_map(|&(a, b)| {
                    if is_in && b == v {
                        Some(a)
                    } else if !is_in && a == v {
                        Some(b)
                    } else {
                        None
                    }
                })
                .collect();
            group.sort_by(|&x, &y| w.w(x).partial_cmp(&w.w(y)).unwrap().then(x.cmp(&y)));
            for i in 0..group.len() {
                for j in (i + 1)..group.len() {
                    let (a, b) = (group[i], group[j]);
                    if !w.other_path(a, b, &succ) && !w.other_path(b, a, &succ) {
                        w.fuse(a.min(b), a.max(b));
                        fusions += 1;
                        fixed = true;
                        break 'outer;
                    }
                }
            }
        }
        if !fixed {
            break;
        }
    }
    // 3. fission of the heaviest stateless actor, re-fusing to free a tile when needed
    for _ in 0..(4 * tiles + 16) {
        if cancel::requested() {
            return Err(NocError::Interrupted);
        }
        let h = w
            .alive()
            .max_by(|&x, &y| w.w(x).partial_cmp(&w.w(y)).unwrap().then(y.cmp(&x)))
            .unwrap();
        let hw = w.w(h);
        if hw <= 0.0 || w.actors[h].as_ref().unwrap().stateful {
            break;
        }
        // fission adds one output to every producer and one input to every consumer of h
        let (din, dout) = w.degrees();
        let grows_too_much = w.edges.keys().any(|&(x, y)| {
            (y == h && dout[x] + 1 > MAX_DEGREE) || (x == h && din[y] + 1 > MAX_DEGREE)
        });
        if grows_too_much {
            break;
        }
        if w.count() >= tiles {
            // free a tile: the fused pair must stay lighter than half the heaviest
            match w.best_fusion(Some(h)) {
                Some((a, c, cw)) if cw < hw / 2.0 => {
                    w.fuse(a, c);
                    fusions += 1;
                }
                _ => break,
            }
        }
        w.fiss(h);
        fissions += 1;
    }
    fusions += w.fuse_uncovered_cycles();
    // compact
    let mut map = vec![usize::MAX; w.actors.len()];
    let mut actors = Vec::new();
    for (i, a) in w.actors.iter().enumerate() {
        if let Some(a) = a {
            map[i] = actors.len();
            actors.push(a.clone());
        }
    }
    let streams: Vec<Stream> = w
        .edges
        .iter()
        .map(|(&(s, d), &(it, dl))| Stream {
            src: map[s],
            dst: map[d],
            items: it,
            delay: dl,
        })
        .collect();
    let mean = actors.iter().map(|a| a.work).sum::<f64>() / actors.len().max(1) as f64;
    let max = actors.iter().map(|a| a.work).fold(0.0, f64::max);
    Ok(Partition {
        graph: g.name.clone(),
        tiles,
        balance: if mean > 0.0 { max / mean } else { 1.0 },
        actors,
        streams,
        fusions,
        fissions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench;
    use crate::graph::{flatten, solve_balance};

    #[test]
    fn every_benchmark_fits_and_conserves_work() {
        for name in bench::names() {
            let b = solve_balance(flatten(&bench::program(name).unwrap(), false).unwrap()).unwrap();
            for t in [16, 36] {
                let p = partition(&b, t).unwrap();
                assert!(p.actors.len() <= t, "{name} {t}: {}", p.actors.len());
                let total: f64 = p.actors.iter().map(|a| a.work).sum();
                assert!(
                    (total - b.total_work()).abs() < 1e-6 * b.total_work().max(1.0),
                    "{name}"
                );
                // node fractions sum to 1 for every live node
                let mut frac = vec![0.0; b.graph.nodes.len()];
                for a in &p.actors {
                    for &(m, f) in &a.members {
                        frac[m] += f;
                    }
                }
                for (i, f) in frac.iter().enumerate() {
                    if b.reps[i] > 0 {
                        assert!((f - 1.0).abs() < 1e-9, "{name}: node {i} fraction {f}");
                    }
                }
                assert!(p.balance >= 1.0);
            }
        }
    }

    #[test]
    fn fission_spreads_a_heavy_stateless_filter() {
        // AudioBeam on 36 tiles: 22 nodes; the averaging filter (30%) is stateless -> replicated
        let b =
            solve_balance(flatten(&bench::program("AudioBeam").unwrap(), false).unwrap()).unwrap();
        let p = partition(&b, 36).unwrap();
        assert!(p.fissions > 0);
        let max = p.actors.iter().map(|a| a.work).fold(0.0, f64::max);
        assert!(max < 140.0, "max {max}");
    }
}
