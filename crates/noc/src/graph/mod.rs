//! Stream graph model (StreamIt style): filters, pipelines, splitjoins, feedback loops.
//!
//! The file format is the hierarchical one of `data/streamit/README.md` (Appendix B), in JSON or
//! in TOML (same keys). `flatten` turns the hierarchy into actors and edges; `solve_balance`
//! computes the steady-state repetition vector from reps(src) x push = reps(dst) x pop and names
//! the first edge whose rates are inconsistent; feedback loops are checked for deadlock by running
//! one steady state with the loop's initial (delay) items.
pub mod from_app;

use crate::error::{NocError, Result};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// A node of the stream hierarchy.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum StreamNode {
    Filter(FilterSpec),
    Pipeline {
        name: String,
        children: Vec<StreamNode>,
    },
    Splitjoin {
        name: String,
        split: SplitSpec,
        join: SplitSpec,
        branches: Vec<StreamNode>,
    },
    Feedbackloop {
        name: String,
        /// Joiner: weights[0] from the outside input, weights[1] from the loop path.
        join: SplitSpec,
        body: Box<StreamNode>,
        #[serde(rename = "loop")]
        loop_path: Box<StreamNode>,
        /// Splitter: weights[0] to the outside output, weights[1] into the loop path.
        split: SplitSpec,
        /// Items initially queued on the loop path -> joiner edge.
        #[serde(default)]
        delay: u64,
    },
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct FilterSpec {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desc: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin: Option<String>,
    #[serde(default)]
    pub pop: u64,
    #[serde(default)]
    pub push: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peek: Option<u64>,
    #[serde(default)]
    pub stateful: bool,
    /// Work per firing, cycles (StreamIt estimate).
    #[serde(default)]
    pub work: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub work_corrected: Option<f64>,
    /// Repetitions given by the file (checked against the solved balance equations).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reps: Option<u64>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SplitSpec {
    /// "duplicate", "roundrobin" or "null".
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default)]
    pub weights: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reps: Option<u64>,
}

/// A whole program: a name and its top-level stream.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct StreamProgram {
    #[serde(default, alias = "benchmark")]
    pub name: String,
    pub graph: StreamNode,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum NodeKind {
    Filter,
    Splitter,
    Joiner,
}

/// One actor of the flat graph.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlatNode {
    pub name: String,
    /// Position in the hierarchy, e.g. `FMRadio[2]/EQ/split`.
    pub path: String,
    pub kind: NodeKind,
    pub work_per_firing: f64,
    pub stateful: bool,
    pub peek_extra: u64,
    pub file_reps: Option<u64>,
    /// Null splitters/joiners never fire.
    pub null: bool,
}

/// One stream (channel) of the flat graph.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlatEdge {
    pub src: usize,
    pub dst: usize,
    /// Items produced on this edge per firing of `src`.
    pub push: u64,
    /// Items consumed from this edge per firing of `dst`.
    pub pop: u64,
    /// Items initially on the edge (feedback-loop delay).
    pub delay: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct FlatGraph {
    pub name: String,
    pub nodes: Vec<FlatNode>,
    pub edges: Vec<FlatEdge>,
}

/// Steady-state solution.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Balanced {
    pub graph: FlatGraph,
    /// Firings of each node per steady state.
    pub reps: Vec<u64>,
}

impl FlatGraph {
    pub fn edge_name(&self, e: &FlatEdge) -> String {
        format!(
            "`{}` -> `{}` (push {}, pop {})",
            self.nodes[e.src].path, self.nodes[e.dst].path, e.push, e.pop
        )
    }
}

impl Balanced {
    /// Steady-state work of node `i`, cycles.
    pub fn node_work(&self, i: usize) -> f64 {
        self.reps[i] as f64 * self.graph.nodes[i].work_per_firing
    }
    /// Items crossing edge `e` per steady state.
    pub fn edge_items(&self, e: usize) -> u64 {
        let ed = &self.graph.edges[e];
        self.reps[ed.src] * ed.push
    }
    pub fn total_work(&self) -> f64 {
        (0..self.graph.nodes.len()).map(|i| self.node_work(i)).sum()
    }
}

/// Parse a program from text; `origin` names the file for error messages. JSON when the text
/// starts with `{`, TOML otherwise.
pub fn parse_program(text: &str, origin: &str) -> Result<StreamProgram> {
    let trimmed = text.trim_start();
    let prog: StreamProgram = if trimmed.starts_with('{') {
        serde_json::from_str(text).map_err(|e| NocError::Parse {
            origin: origin.to_string(),
            msg: e.to_string(),
        })?
    } else {
        toml::from_str(text).map_err(|e| NocError::Parse {
            origin: origin.to_string(),
            msg: e.to_string(),
        })?
    };
    Ok(prog)
}

/// Load a program from a `.json` or `.toml` file.
pub fn load_program(path: &str) -> Result<StreamProgram> {
    if let Ok(md) = std::fs::metadata(path) {
        if md.len() > MAX_GRAPH_FILE_BYTES {
            return Err(NocError::Parse {
                origin: path.to_string(),
                msg: format!(
                    "file of {} bytes is larger than the {MAX_GRAPH_FILE_BYTES} accepted",
                    md.len()
                ),
            });
        }
    }
    let text = std::fs::read_to_string(path).map_err(|e| NocError::Io {
        path: path.to_string(),
        source: e,
    })?;
    let mut p = parse_program(&text, path)?;
    if p.name.is_empty() {
        p.name = std::path::Path::new(path)
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .unwrap_or_else(|| "graph".into());
    }
    Ok(p)
}

/// Port of a flattened construct: (node, rate per firing).
type Port = Option<(usize, u64)>;

/// Most actors (filters, splitters, joiners) a flattened graph may have.
pub const MAX_GRAPH_NODES: usize = 1_000_000;
/// Largest stream graph file read, bytes.
pub const MAX_GRAPH_FILE_BYTES: u64 = 256 << 20;

struct Flattener<'a> {
    graph: &'a str,
    too_big: bool,
    nodes: Vec<FlatNode>,
    edges: Vec<FlatEdge>,
    use_corrected: bool,
}

impl Flattener<'_> {
    fn err<T>(&self, msg: String) -> Result<T> {
        Err(NocError::Graph {
            graph: self.graph.to_string(),
            msg,
        })
    }

    fn connect(&mut self, from: Port, to: Port, delay: u64, what: &str) -> Result<()> {
        match (from, to) {
            (Some((s, push)), Some((d, pop))) => {
                if push == 0 && pop == 0 && delay == 0 {
                    return Ok(());
                }
                self.edges.push(FlatEdge {
                    src: s,
                    dst: d,
                    push,
                    pop,
                    delay,
                });
                Ok(())
            }
            (Some((s, push)), None) if push > 0 => self.err(format!(
                "{what}: `{}` pushes {push} items per firing but nothing downstream consumes them",
                self.nodes[s].path
            )),
            (None, Some((d, pop))) if pop > 0 => self.err(format!(
                "{what}: `{}` pops {pop} items per firing but nothing upstream produces them",
                self.nodes[d].path
            )),
            _ => Ok(()),
        }
    }

    fn add(&mut self, n: FlatNode) -> usize {
        if self.nodes.len() >= MAX_GRAPH_NODES {
            self.too_big = true;
        }
        self.nodes.push(n);
        self.nodes.len() - 1
    }

    fn split_node(&mut self, s: &SplitSpec, path: String, kind: NodeKind) -> Result<usize> {
        match s.kind.as_str() {
            "duplicate" | "roundrobin" | "null" => {}
            other => {
                return self.err(format!(
                    "`{path}`: unknown {kind:?} type `{other}` (expected duplicate, roundrobin or null)"
                ))
            }
        }
        if kind == NodeKind::Joiner && s.kind == "duplicate" {
            return self.err(format!("`{path}`: a joiner cannot be `duplicate`"));
        }
        Ok(self.add(FlatNode {
            name: format!("{kind:?}"),
            path,
            kind,
            work_per_firing: 0.0,
            stateful: false,
            peek_extra: 0,
            file_reps: s.reps,
            null: s.kind == "null",
        }))
    }

    /// Flatten `n`; returns its (input port, output port).
    fn walk(&mut self, n: &StreamNode, path: &str) -> Result<(Port, Port)> {
        match n {
            StreamNode::Filter(f) => {
                let peek = f.peek.unwrap_or(f.pop);
                if peek < f.pop {
                    return self.err(format!(
                        "filter `{path}/{}`: peek {} is smaller than pop {}",
                        f.name, peek, f.pop
                    ));
                }
                let work = if self.use_corrected {
                    f.work_corrected.unwrap_or(f.work)
                } else {
                    f.work
                };
                if !work.is_finite() || work < 0.0 {
                    return self.err(format!(
                        "filter `{path}/{}`: work {} must be a finite number >= 0",
                        f.name, work
                    ));
                }
                let i = self.add(FlatNode {
                    name: f.name.clone(),
                    path: format!("{path}/{}", f.name),
                    kind: NodeKind::Filter,
                    work_per_firing: work,
                    stateful: f.stateful,
                    peek_extra: peek - f.pop,
                    file_reps: f.reps,
                    null: false,
                });
                Ok((Some((i, f.pop)), Some((i, f.push))))
            }
            StreamNode::Pipeline { name, children } => {
                if children.is_empty() {
                    return self.err(format!("pipeline `{path}/{name}` has no children"));
                }
                let mut first: Port = None;
                let mut prev: Port = None;
                for (k, c) in children.iter().enumerate() {
                    let (i, o) = self.walk(c, &format!("{path}/{name}[{k}]"))?;
                    if k == 0 {
                        first = i;
                    } else {
                        self.connect(prev, i, 0, &format!("pipeline `{path}/{name}` child {k}"))?;
                    }
                    prev = o;
                }
                Ok((first, prev))
            }
            StreamNode::Splitjoin {
                name,
                split,
                join,
                branches,
            } => {
                let p = format!("{path}/{name}");
                if branches.is_empty() {
                    return self.err(format!("splitjoin `{p}` has no branches"));
                }
                let sw =
                    weights(split, branches.len(), &p, "split").map_err(|m| NocError::Graph {
                        graph: self.graph.into(),
                        msg: m,
                    })?;
                let jw =
                    weights(join, branches.len(), &p, "join").map_err(|m| NocError::Graph {
                        graph: self.graph.into(),
                        msg: m,
                    })?;
                let s = self.split_node(split, format!("{p}/split"), NodeKind::Splitter)?;
                let j = self.split_node(join, format!("{p}/join"), NodeKind::Joiner)?;
                for (k, b) in branches.iter().enumerate() {
                    let (bi, bo) = self.walk(b, &format!("{p}[{k}]"))?;
                    let out = if split.kind == "null" || sw[k] == 0 {
                        None
                    } else {
                        Some((s, sw[k]))
                    };
                    let inp = if join.kind == "null" || jw[k] == 0 {
                        None
                    } else {
                        Some((j, jw[k]))
                    };
                    self.connect(out, bi, 0, &format!("splitjoin `{p}` branch {k} input"))?;
                    self.connect(bo, inp, 0, &format!("splitjoin `{p}` branch {k} output"))?;
                }
                let s_in = match split.kind.as_str() {
                    "duplicate" => 1,
                    "null" => 0,
                    _ => sw.iter().sum(),
                };
                let j_out = if join.kind == "null" {
                    0
                } else {
                    jw.iter().sum()
                };
                Ok((Some((s, s_in)), Some((j, j_out))))
            }
            StreamNode::Feedbackloop {
                name,
                join,
                body,
                loop_path,
                split,
                delay,
            } => {
                let p = format!("{path}/{name}");
                let jw = weights(join, 2, &p, "join").map_err(|m| NocError::Graph {
                    graph: self.graph.into(),
                    msg: m,
                })?;
                let sw = weights(split, 2, &p, "split").map_err(|m| NocError::Graph {
                    graph: self.graph.into(),
                    msg: m,
                })?;
                let j = self.split_node(join, format!("{p}/join"), NodeKind::Joiner)?;
                let (bi, bo) = self.walk(body, &format!("{p}/body"))?;
                let s = self.split_node(split, format!("{p}/split"), NodeKind::Splitter)?;
                let (li, lo) = self.walk(loop_path, &format!("{p}/loop"))?;
                let j_out: u64 = jw.iter().sum();
                self.connect(
                    Some((j, j_out)),
                    bi,
                    0,
                    &format!("feedbackloop `{p}` body input"),
                )?;
                let s_in = if split.kind == "duplicate" {
                    1
                } else {
                    sw.iter().sum()
                };
                self.connect(
                    bo,
                    Some((s, s_in)),
                    0,
                    &format!("feedbackloop `{p}` body output"),
                )?;
                self.connect(
                    Some((s, sw[1])),
                    li,
                    0,
                    &format!("feedbackloop `{p}` loop input"),
                )?;
                self.connect(
                    lo,
                    Some((j, jw[1])),
                    *delay,
                    &format!("feedbackloop `{p}` loop output"),
                )?;
                Ok((Some((j, jw[0])), Some((s, sw[0]))))
            }
        }
    }
}

fn weights(
    s: &SplitSpec,
    n: usize,
    path: &str,
    what: &str,
) -> std::result::Result<Vec<u64>, String> {
    let w = match s.kind.as_str() {
        "duplicate" => Ok(vec![1; n]),
        "null" => Ok(vec![0; n]),
        _ => {
            if s.weights.len() == 1 && n > 1 {
                Ok(vec![s.weights[0]; n])
            } else if s.weights.len() != n {
                Err(format!(
                    "`{path}`: {what} has {} weights for {n} branches",
                    s.weights.len()
                ))
            } else {
                Ok(s.weights.clone())
            }
        }
    }?;
    // The splitter's input rate (or the joiner's output rate) is the sum of the weights, so
    // that sum must be a number too.
    if w.iter().try_fold(0u64, |a, &b| a.checked_add(b)).is_none() {
        return Err(format!(
            "`{path}`: {what} weights sum to more than {} items per firing",
            u64::MAX
        ));
    }
    Ok(w)
}

/// Flatten a program into actors and edges.
pub fn flatten(p: &StreamProgram, use_corrected_work: bool) -> Result<FlatGraph> {
    let mut f = Flattener {
        graph: &p.name,
        nodes: Vec::new(),
        edges: Vec::new(),
        use_corrected: use_corrected_work,
        too_big: false,
    };
    let walked = f.walk(&p.graph, &p.name);
    if f.too_big {
        return f.err(format!(
            "more than {MAX_GRAPH_NODES} actors (filters, splitters and joiners); the limit is {MAX_GRAPH_NODES}"
        ));
    }
    let (i, o) = walked?;
    if let Some((n, r)) = i {
        if r > 0 {
            return f.err(format!(
                "the top-level stream's first actor `{}` pops {r} items but has no producer",
                f.nodes[n].path
            ));
        }
    }
    if let Some((n, r)) = o {
        if r > 0 {
            return f.err(format!(
                "the top-level stream's last actor `{}` pushes {r} items but has no consumer",
                f.nodes[n].path
            ));
        }
    }
    Ok(FlatGraph {
        name: p.name.clone(),
        nodes: f.nodes,
        edges: f.edges,
    })
}

fn gcd(a: u128, b: u128) -> u128 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Solve the balance equations; every connected component gets its minimal positive integer
/// solution. Null splitters/joiners get 0 firings.
pub fn solve_balance(g: FlatGraph) -> Result<Balanced> {
    let n = g.nodes.len();
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, e) in g.edges.iter().enumerate() {
        if e.push == 0 || e.pop == 0 {
            return Err(NocError::Inconsistent {
                graph: g.name.clone(),
                edge: g.edge_name(e),
                msg: "one side moves 0 items per firing while the other moves some, so no steady state exists".into(),
            });
        }
        adj[e.src].push(k);
        adj[e.dst].push(k);
    }
    // rational reps num/den per node
    let mut num = vec![0u128; n];
    let mut den = vec![0u128; n];
    let mut reps = vec![0u64; n];
    let mut seen = vec![false; n];
    for start in 0..n {
        if seen[start] || g.nodes[start].null {
            continue;
        }
        let mut comp = vec![start];
        seen[start] = true;
        num[start] = 1;
        den[start] = 1;
        let mut q = VecDeque::from([start]);
        while let Some(u) = q.pop_front() {
            for &k in &adj[u] {
                let e = &g.edges[k];
                let (v, nv, dv) = if e.src == u {
                    // reps(dst) = reps(src) * push / pop
                    (e.dst, num[u] * e.push as u128, den[u] * e.pop as u128)
                } else {
                    (e.src, num[u] * e.pop as u128, den[u] * e.push as u128)
                };
                let gg = gcd(nv, dv);
                let (nv, dv) = (nv / gg, dv / gg);
                if nv > u64::MAX as u128 || dv > u64::MAX as u128 {
                    return Err(NocError::Inconsistent {
                        graph: g.name.clone(),
                        edge: g.edge_name(e),
                        msg: "repetition counts overflow 64 bits".into(),
                    });
                }
                if !seen[v] {
                    seen[v] = true;
                    num[v] = nv;
                    den[v] = dv;
                    comp.push(v);
                    q.push_back(v);
                } else if num[v] * dv != nv * den[v] {
                    return Err(NocError::Inconsistent {
                        graph: g.name.clone(),
                        edge: g.edge_name(e),
                        msg: format!(
                            "balance requires reps(`{}`) = {}/{} of the component's first actor along this edge, but another path gives {}/{}",
                            g.nodes[v].path, nv, dv, num[v], den[v]
                        ),
                    });
                }
            }
        }
        let mut l: u128 = 1;
        for &v in &comp {
            l = l / gcd(l, den[v]) * den[v];
            if l > u64::MAX as u128 {
                return Err(NocError::Inconsistent {
                    graph: g.name.clone(),
                    edge: format!("in the component of `{}`", g.nodes[start].path),
                    msg: "repetition counts overflow 64 bits".into(),
                });
            }
        }
        let mut vals: Vec<u128> = comp.iter().map(|&v| num[v] * (l / den[v])).collect();
        let mut gg = 0u128;
        for &x in &vals {
            gg = gcd(gg, x);
        }
        for x in vals.iter_mut() {
            *x /= gg.max(1);
        }
        for (&v, &x) in comp.iter().zip(&vals) {
            if x > u64::MAX as u128 {
                return Err(NocError::Param(format!(
                    "repetition count of `{}` overflows",
                    g.nodes[v].path
                )));
            }
            reps[v] = x as u64;
        }
    }
    for e in &g.edges {
        if reps[e.src].checked_mul(e.push).is_none() || reps[e.dst].checked_mul(e.pop).is_none() {
            return Err(NocError::Inconsistent {
                graph: g.name.clone(),
                edge: g.edge_name(e),
                msg: "items per steady state overflow 64 bits".into(),
            });
        }
    }
    let b = Balanced { graph: g, reps };
    check_deadlock(&b)?;
    Ok(b)
}

/// Most actor visits `check_deadlock` makes (passes over the actors x actors).
pub const MAX_SCHEDULE_STEPS: u64 = 50_000_000;

/// Run one steady state symbolically (any actor whose inputs hold enough items fires, up to its
/// repetition count). Only graphs with initial items (feedback loops) can deadlock; the message
/// names an edge that is short of items.
fn check_deadlock(b: &Balanced) -> Result<()> {
    let g = &b.graph;
    let n = g.nodes.len();
    if g.edges.iter().all(|e| e.delay == 0) {
        // Without initial items an SDF graph runs iff it is acyclic (Kahn's topological sort).
        let mut indeg = vec![0usize; n];
        let mut outs: Vec<Vec<usize>> = vec![Vec::new(); n];
        for e in &g.edges {
            indeg[e.dst] += 1;
            outs[e.src].push(e.dst);
        }
        let mut st: Vec<usize> = (0..n).filter(|&v| indeg[v] == 0).collect();
        let mut removed = vec![false; n];
        while let Some(u) = st.pop() {
            removed[u] = true;
            for &d in &outs[u] {
                indeg[d] -= 1;
                if indeg[d] == 0 {
                    st.push(d);
                }
            }
        }
        if let Some(e) = g.edges.iter().find(|e| !removed[e.src] && !removed[e.dst]) {
            return Err(NocError::Deadlock {
                graph: g.name.clone(),
                edge: g.edge_name(e),
                msg:
                    "lies on a cycle that holds no initial items (a feedback loop needs delay > 0)"
                        .into(),
            });
        }
        return Ok(());
    }
    let mut tokens: Vec<u128> = g.edges.iter().map(|e| e.delay as u128).collect();
    let mut fired = vec![0u64; n];
    let mut ins: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut outs: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, e) in g.edges.iter().enumerate() {
        ins[e.dst].push(k);
        outs[e.src].push(k);
    }
    let total: u128 = b.reps.iter().map(|&r| r as u128).sum();
    let mut done = 0u128;
    let mut steps = 0u64;
    loop {
        let mut progress = false;
        for v in 0..n {
            // fire v as often as its inputs and its repetition count allow, in one step
            let mut k = (b.reps[v] - fired[v]) as u128;
            for &e in &ins[v] {
                k = k.min(tokens[e] / g.edges[e].pop as u128);
            }
            if k == 0 {
                continue;
            }
            for &e in &ins[v] {
                tokens[e] -= k * g.edges[e].pop as u128;
            }
            for &e in &outs[v] {
                tokens[e] += k * g.edges[e].push as u128;
            }
            fired[v] += k as u64;
            done += k;
            progress = true;
        }
        steps += n as u64;
        if steps > MAX_SCHEDULE_STEPS {
            return Err(NocError::Graph {
                graph: g.name.clone(),
                msg: format!(
                    "checking that the feedback loops run takes more than {MAX_SCHEDULE_STEPS} actor visits (initial items far below the loop's items per steady state); increase the loop delay"
                ),
            });
        }
        if pktflow_model::cancel::requested() {
            return Err(NocError::Interrupted);
        }
        if done == total {
            return Ok(());
        }
        if !progress {
            for v in 0..n {
                if fired[v] < b.reps[v] {
                    if let Some(&k) = ins[v]
                        .iter()
                        .find(|&&k| tokens[k] < g.edges[k].pop as u128 && g.edges[k].delay > 0)
                        .or_else(|| ins[v].iter().find(|&&k| tokens[k] < g.edges[k].pop as u128))
                    {
                        return Err(NocError::Deadlock {
                            graph: g.name.clone(),
                            edge: g.edge_name(&g.edges[k]),
                            msg: format!(
                                "holds {} items but `{}` needs {} to fire (firing {} of {}); increase the loop delay",
                                tokens[k], g.nodes[v].path, g.edges[k].pop, fired[v] + 1, b.reps[v]
                            ),
                        });
                    }
                }
            }
            return Err(NocError::Deadlock {
                graph: g.name.clone(),
                edge: "(unknown)".into(),
                msg: "no actor can fire".into(),
            });
        }
    }
}

/// Repetitions given in the file that disagree with the solution, up to a per-component scale.
/// Returns (node path, file reps, solved reps) for each disagreement.
pub fn check_file_reps(b: &Balanced) -> Vec<(String, u64, u64)> {
    // Compare ratios within each connected component through the first node that has file reps.
    let g = &b.graph;
    let n = g.nodes.len();
    let mut comp = vec![usize::MAX; n];
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); n];
    for e in &g.edges {
        adj[e.src].push(e.dst);
        adj[e.dst].push(e.src);
    }
    let mut c = 0;
    for s in 0..n {
        if comp[s] != usize::MAX {
            continue;
        }
        let mut st = vec![s];
        comp[s] = c;
        while let Some(u) = st.pop() {
            for &v in &adj[u] {
                if comp[v] == usize::MAX {
                    comp[v] = c;
                    st.push(v);
                }
            }
        }
        c += 1;
    }
    let mut anchor: Vec<Option<(u64, u64)>> = vec![None; c];
    let mut bad = Vec::new();
    for v in 0..n {
        let Some(fr) = g.nodes[v].file_reps else {
            continue;
        };
        if g.nodes[v].null {
            continue;
        }
        match anchor[comp[v]] {
            None => anchor[comp[v]] = Some((fr, b.reps[v])),
            Some((af, asv)) => {
                if fr as u128 * asv as u128 != b.reps[v] as u128 * af as u128 {
                    bad.push((g.nodes[v].path.clone(), fr, b.reps[v]));
                }
            }
        }
    }
    bad
}

#[cfg(test)]
mod tests {
    use super::*;

    fn filt(name: &str, pop: u64, push: u64, work: f64) -> StreamNode {
        StreamNode::Filter(FilterSpec {
            name: name.into(),
            desc: None,
            builtin: None,
            pop,
            push,
            peek: None,
            stateful: false,
            work,
            work_corrected: None,
            reps: None,
        })
    }

    #[test]
    fn pipeline_reps() {
        let p = StreamProgram {
            name: "t".into(),
            graph: StreamNode::Pipeline {
                name: "top".into(),
                children: vec![
                    filt("src", 0, 3, 1.0),
                    filt("mid", 2, 1, 1.0),
                    filt("snk", 3, 0, 1.0),
                ],
            },
        };
        let b = solve_balance(flatten(&p, false).unwrap()).unwrap();
        assert_eq!(b.reps, vec![2, 3, 1]);
        for e in &b.graph.edges {
            assert_eq!(b.reps[e.src] * e.push, b.reps[e.dst] * e.pop);
        }
    }

    /// `src -> splitjoin(split; a (pop 1, push 1), b (pop 1, push b_push); join) -> snk`.
    fn two_branches(name: &str, split: SplitSpec, join: SplitSpec, b_push: u64) -> StreamProgram {
        StreamProgram {
            name: name.into(),
            graph: StreamNode::Pipeline {
                name: "top".into(),
                children: vec![
                    filt("src", 0, 1, 1.0),
                    StreamNode::Splitjoin {
                        name: "sj".into(),
                        split,
                        join,
                        branches: vec![filt("a", 1, 1, 1.0), filt("b", 1, b_push, 1.0)],
                    },
                    filt("snk", 1, 0, 1.0),
                ],
            },
        }
    }

    #[test]
    fn weights_whose_sum_overflows_are_an_error_not_a_panic() {
        // The fuzzer's case: a roundrobin weight of 2^64-1 beside others; the splitter's
        // input rate (their sum) does not fit in 64 bits.
        let rr = |w: Vec<u64>| SplitSpec {
            kind: "roundrobin".into(),
            weights: w,
            reps: None,
        };
        for (split, join) in [
            (rr(vec![u64::MAX, 1]), rr(vec![1, 1])),
            (rr(vec![1, 1]), rr(vec![1, u64::MAX])),
        ] {
            let p = two_branches("big", split, join, 1);
            let e = flatten(&p, false).unwrap_err().to_string();
            assert!(e.contains("weights sum to more than"), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn inconsistent_names_edge() {
        // duplicate splitter to two branches with different rates joined roundrobin(1,1)
        let p = two_branches(
            "bad",
            SplitSpec {
                kind: "duplicate".into(),
                weights: vec![],
                reps: None,
            },
            SplitSpec {
                kind: "roundrobin".into(),
                weights: vec![1, 1],
                reps: None,
            },
            2,
        );
        let err = solve_balance(flatten(&p, false).unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("inconsistent rates on edge"), "{err}");
        assert!(err.contains("->"), "{err}");
    }

    #[test]
    fn feedback_deadlock_and_ok() {
        let mk = |delay| StreamProgram {
            name: "fb".into(),
            graph: StreamNode::Pipeline {
                name: "top".into(),
                children: vec![
                    filt("src", 0, 1, 1.0),
                    StreamNode::Feedbackloop {
                        name: "loop".into(),
                        join: SplitSpec {
                            kind: "roundrobin".into(),
                            weights: vec![1, 1],
                            reps: None,
                        },
                        body: Box::new(filt("body", 2, 2, 1.0)),
                        loop_path: Box::new(filt("back", 1, 1, 1.0)),
                        split: SplitSpec {
                            kind: "roundrobin".into(),
                            weights: vec![1, 1],
                            reps: None,
                        },
                        delay,
                    },
                    filt("snk", 1, 0, 1.0),
                ],
            },
        };
        let e = solve_balance(flatten(&mk(0), false).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("deadlocks") && e.contains("loop"), "{e}");
        let b = solve_balance(flatten(&mk(1), false).unwrap()).unwrap();
        assert!(b.reps.iter().all(|&r| r > 0));
    }

    #[test]
    fn peek_less_than_pop_is_error() {
        let mut f = filt("x", 2, 1, 1.0);
        if let StreamNode::Filter(ref mut s) = f {
            s.peek = Some(1);
        }
        let p = StreamProgram {
            name: "p".into(),
            graph: StreamNode::Pipeline {
                name: "top".into(),
                children: vec![filt("s", 0, 2, 0.0), f, filt("k", 1, 0, 0.0)],
            },
        };
        let e = flatten(&p, false).unwrap_err().to_string();
        assert!(e.contains("peek 1 is smaller than pop 2"), "{e}");
    }

    #[test]
    fn toml_format_parses() {
        let t = r#"
name = "tiny"
[graph]
type = "pipeline"
name = "top"
[[graph.children]]
type = "filter"
name = "src"
push = 2
work = 5
[[graph.children]]
type = "filter"
name = "snk"
pop = 1
work = 3
"#;
        let p = parse_program(t, "tiny.toml").unwrap();
        let b = solve_balance(flatten(&p, false).unwrap()).unwrap();
        assert_eq!(b.reps, vec![1, 2]);
        let bad = parse_program("name = 3", "bad.toml")
            .unwrap_err()
            .to_string();
        assert!(bad.contains("bad.toml"), "{bad}");
    }
}
