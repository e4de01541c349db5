//! What the threads run: the paper's three applications as communication patterns (Table 1 and
//! section 6 of the protocol-processing paper), a synthetic request/reply workload with exactly
//! the analytic model's parameters, and the Table 2 microbenchmark.
//!
//! A program is a lazy sequence of [`Op`]s, generated one phase at a time so memory stays small
//! for any input size. Every random choice comes from a ChaCha8 generator seeded from the run's
//! seed, the node and the thread, so a run is deterministic.
use crate::error::{check_range, ProtoError};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;

/// One step of a thread's program.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Op {
    /// Compute for this many microseconds (at full speed; a saturated bus slows it down).
    Compute(f64),
    /// A blocking remote miss served by node `home` (request/reply).
    Miss { home: u32 },
    /// Global barrier over every thread of every node (arrival messages to node 0, release
    /// messages from it, all through the protocol handlers).
    Barrier,
    /// Barrier over the threads of this node only (local shared memory, no messages).
    NodeBarrier,
    /// Send a message tagged `tag` to `partner` and wait for the partner's message with the same
    /// tag (one step of gauss's recursive-halving reduction).
    Exchange { partner: u32, tag: u64 },
}

/// em3d (Table 1: "8160 nodes, degree 5, 5% remote, distance span 2, 10 iterations").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Em3d {
    pub graph_nodes: u32,
    pub degree: u32,
    pub remote_fraction: f64,
    pub iterations: u32,
    /// "a thread spends only 1.7 microseconds per edge".
    pub edge_us: f64,
}

impl Default for Em3d {
    fn default() -> Self {
        Em3d {
            graph_nodes: 8160,
            degree: 5,
            remote_fraction: 0.05,
            iterations: 10,
            edge_us: 1.7,
        }
    }
}

/// gauss (Table 1: "672 x 672 matrix").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Gauss {
    pub n: u32,
    /// Time to update one matrix element (a multiply-add on local, cached rows). The paper does
    /// not give it; 0.1 us is about 7 cycles of the 66 MHz HyperSPARC of the paper's nodes.
    pub element_us: f64,
    /// Bytes per matrix element (double precision).
    pub element_bytes: u32,
    /// Coherence block (the paper's protocol uses 64-byte blocks).
    pub block_bytes: u32,
}

impl Default for Gauss {
    fn default() -> Self {
        Gauss {
            n: 672,
            element_us: 0.1,
            element_bytes: 8,
            block_bytes: 64,
        }
    }
}

/// tomcatv (Table 1: "768 x 768 matrices, 10 iterations").
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Tomcatv {
    pub n: u32,
    pub iterations: u32,
    /// Computation per matrix element and iteration (all three passes); default derived from
    /// the paper's "Single spends up to 85% of the time computing" (see [`tomcatv_element_us`]).
    pub element_us: f64,
    /// Shared matrices whose border rows neighbours read (the paper's "pair of matrices").
    pub shared_matrices: u32,
    pub element_bytes: u32,
    pub block_bytes: u32,
}

/// The compute share the paper quotes for tomcatv under Single ("up to 85%").
pub const TOMCATV_SINGLE_COMPUTE_SHARE: f64 = 0.85;

/// tomcatv's per-element computation from the quoted 85% compute share: on the 4-node system
/// under Single, a node at the edge of the matrix (one neighbour; "up to" = the node that
/// computes most) spends per iteration `b` blocking misses of Table 2's Single round trip and
/// serves `b` requests at Single's home overhead, where `b` = 2 border passes x the blocks of a
/// border row of the shared matrices; its computation (192 x 768 elements) is 85 / 15 of that.
pub fn tomcatv_element_us() -> f64 {
    use crate::policy::table2::{SINGLE_HOME, SINGLE_ROUND_TRIP};
    let (n, nodes) = (768.0, 4.0);
    let blocks = border_blocks(768, 2, 8, 64) as f64;
    let misses = 2.0 * blocks;
    let comm = misses * SINGLE_ROUND_TRIP + misses * SINGLE_HOME;
    let share = TOMCATV_SINGLE_COMPUTE_SHARE;
    comm * share / (1.0 - share) / (n / nodes * n)
}

fn border_blocks(n: u32, matrices: u32, element_bytes: u32, block_bytes: u32) -> u64 {
    let per_row = (n as u64 * element_bytes as u64).div_ceil(block_bytes.max(1) as u64);
    per_row * matrices as u64
}

impl Default for Tomcatv {
    fn default() -> Self {
        Tomcatv {
            n: 768,
            iterations: 10,
            element_us: tomcatv_element_us(),
            shared_matrices: 2,
            element_bytes: 8,
            block_bytes: 64,
        }
    }
}

/// How the synthetic workload draws the computation between two requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Spread {
    /// Exponential with mean C (requests at random phases, as the model assumes).
    Exponential,
    /// Exactly C every time.
    Fixed,
}

/// Synthetic request/reply workload: per node, `requests` (the model's M) remote requests, each
/// after a computation of mean `c_us` (the model's C), to a uniformly chosen other node; the
/// node's requests are split evenly over its threads.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Synthetic {
    pub requests: u64,
    pub c_us: f64,
    pub spread: Spread,
}

impl Default for Synthetic {
    fn default() -> Self {
        Synthetic {
            requests: 2000,
            c_us: 113.0,
            spread: Spread::Exponential,
        }
    }
}

/// Which of Table 2's microbenchmarks (the paper: "The latency numbers were computed by counting
/// the time for one processor to perform 10,000 remote misses in a tight miss loop with the home
/// node spinning in a tight compute loop. Overhead numbers were computed by saturating the
/// requester (responder) and calculating the time required to process each request (response)").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bench {
    /// One thread of node 0 misses `misses` times to node 1, which spins computing.
    Latency,
    /// Every thread of node 0 misses to node 1 (`misses` in all): node 0 is saturated.
    Requester,
    /// Every thread of every node but 0 misses to node 0 (`misses` per node), which spins.
    Home,
}

/// Table 2's microbenchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Microbench {
    pub misses: u64,
    pub bench: Bench,
}

impl Default for Microbench {
    fn default() -> Self {
        Microbench {
            misses: 10_000,
            bench: Bench::Latency,
        }
    }
}

impl Microbench {
    fn issues(&self, at: &Place) -> bool {
        match self.bench {
            Bench::Latency => at.node == 0 && at.thread == 0,
            Bench::Requester => at.node == 0,
            Bench::Home => at.node != 0,
        }
    }

    fn home(&self) -> u32 {
        if self.bench == Bench::Home {
            0
        } else {
            1
        }
    }
}

/// A workload with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(tag = "app", rename_all = "lowercase")]
pub enum App {
    Em3d(Em3d),
    Gauss(Gauss),
    Tomcatv(Tomcatv),
    Synthetic(Synthetic),
    Microbench(Microbench),
}

/// Largest number of remote operations a run may generate (a bound on run time).
pub const MAX_OPS: f64 = 5e7;

impl App {
    pub fn name(&self) -> &'static str {
        match self {
            App::Em3d(_) => "em3d",
            App::Gauss(_) => "gauss",
            App::Tomcatv(_) => "tomcatv",
            App::Synthetic(_) => "synthetic",
            App::Microbench(_) => "microbench",
        }
    }

    /// About how much computation the run holds over all nodes, microseconds (to bound the
    /// number of compute slices before a run starts).
    pub fn total_compute_us(&self, nodes: u32) -> f64 {
        let n = nodes as f64;
        match self {
            App::Em3d(e) => {
                e.graph_nodes as f64 * e.degree as f64 * e.iterations as f64 * e.edge_us
            }
            App::Gauss(g) => {
                let k = g.n as f64;
                (k * k * k / 3.0 + 2.0 * k * k) * g.element_us
            }
            App::Tomcatv(t) => t.n as f64 * t.n as f64 * t.iterations as f64 * t.element_us,
            App::Synthetic(s) => s.requests as f64 * s.c_us * n,
            // The spinning home computes for the whole run (about 200 us per miss).
            App::Microbench(m) => m.misses as f64 * 200.0 * n,
        }
    }

    /// About how many remote misses the run makes over all nodes (for progress reports).
    pub fn expected_misses(&self, nodes: u32) -> f64 {
        let n = nodes as f64;
        match self {
            App::Em3d(e) => {
                e.graph_nodes as f64 * e.degree as f64 * e.iterations as f64 * e.remote_fraction
            }
            App::Gauss(g) => {
                let k = g.n as f64;
                // Every node but the pivot row's owner reads the row's blocks, for each column.
                k * k / 2.0 * g.element_bytes as f64 / g.block_bytes as f64 * (n - 1.0)
            }
            App::Tomcatv(t) => {
                4.0 * border_blocks(t.n, t.shared_matrices, t.element_bytes, t.block_bytes) as f64
                    * t.iterations as f64
                    * (n - 1.0)
            }
            App::Synthetic(s) => s.requests as f64 * n,
            App::Microbench(m) if m.bench == Bench::Home => m.misses as f64 * (n - 1.0),
            App::Microbench(m) => m.misses as f64,
        }
    }

    /// Check the parameters and bound the size of the run, for `nodes` nodes.
    pub fn validate(&self, nodes: u32) -> Result<(), ProtoError> {
        let too_big = |what: &str, n: f64| {
            Err(ProtoError::Request(format!(
                "{what}: about {n:.3e} remote operations, at most {MAX_OPS:.0e} per run"
            )))
        };
        match self {
            App::Em3d(e) => {
                check_range("graph_nodes", e.graph_nodes as f64, 2.0, 1e8)?;
                check_range("degree", e.degree as f64, 1.0, 1000.0)?;
                check_range("remote_fraction", e.remote_fraction, 0.0, 1.0)?;
                check_range("iterations", e.iterations as f64, 1.0, 1e6)?;
                check_range("edge_us", e.edge_us, 1e-6, 1e6)?;
                let ops = e.graph_nodes as f64
                    * e.degree as f64
                    * e.iterations as f64
                    * e.remote_fraction;
                if ops > MAX_OPS {
                    return too_big("em3d", ops);
                }
            }
            App::Gauss(g) => {
                check_range("n", g.n as f64, 2.0, 100_000.0)?;
                check_range("element_us", g.element_us, 1e-6, 1e6)?;
                check_range("element_bytes", g.element_bytes as f64, 1.0, 1e6)?;
                check_range("block_bytes", g.block_bytes as f64, 1.0, 1e6)?;
                let n = g.n as f64;
                let ops =
                    n * n / 2.0 * g.element_bytes as f64 / g.block_bytes as f64 * nodes as f64;
                if ops > MAX_OPS {
                    return too_big("gauss", ops);
                }
            }
            App::Tomcatv(t) => {
                check_range("n", t.n as f64, 2.0, 1e6)?;
                check_range("iterations", t.iterations as f64, 1.0, 1e6)?;
                check_range("element_us", t.element_us, 1e-6, 1e6)?;
                check_range("shared_matrices", t.shared_matrices as f64, 0.0, 1000.0)?;
                check_range("element_bytes", t.element_bytes as f64, 1.0, 1e6)?;
                check_range("block_bytes", t.block_bytes as f64, 1.0, 1e6)?;
                let ops = 4.0
                    * border_blocks(t.n, t.shared_matrices, t.element_bytes, t.block_bytes) as f64
                    * t.iterations as f64
                    * nodes as f64;
                if ops > MAX_OPS {
                    return too_big("tomcatv", ops);
                }
                if (t.n / nodes.max(1)) < 1 {
                    return Err(ProtoError::Request(format!(
                        "tomcatv: {} rows cannot be split over {nodes} nodes",
                        t.n
                    )));
                }
            }
            App::Synthetic(s) => {
                check_range("requests", s.requests as f64, 1.0, MAX_OPS)?;
                check_range("c_us", s.c_us, 0.0, 1e9)?;
                if s.requests as f64 * nodes as f64 > MAX_OPS {
                    return too_big("synthetic", s.requests as f64 * nodes as f64);
                }
            }
            App::Microbench(m) => {
                check_range("misses", m.misses as f64, 1.0, MAX_OPS)?;
                if nodes < 2 {
                    return Err(ProtoError::Request("microbench needs 2 nodes".into()));
                }
            }
        }
        if matches!(self, App::Microbench(_)) || nodes >= 2 {
            Ok(())
        } else {
            Err(ProtoError::Request(format!(
                "nodes must be at least 2 for remote misses, got {nodes}"
            )))
        }
    }
}

/// Requests generated at a time by the synthetic and microbenchmark programs.
const CHUNK: u64 = 1024;

/// Where a thread sits in the system.
#[derive(Debug, Clone, Copy)]
pub struct Place {
    pub node: u32,
    pub nodes: u32,
    /// Index of the thread in its node, and the number of threads of the node.
    pub thread: u32,
    pub threads: u32,
    pub seed: u64,
}

/// splitmix64: a hash for per-column choices that every node must agree on.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A thread's program, generated a phase at a time.
pub struct Program {
    app: App,
    at: Place,
    rng: ChaCha8Rng,
    phase: u64,
    buf: VecDeque<Op>,
    /// True for a thread that never ends (the microbenchmark's spinning home node): the run ends
    /// when every other thread has finished.
    pub background: bool,
    done: bool,
}

/// An even share of `total` for member `i` of `k`.
fn share(total: u64, i: u32, k: u32) -> u64 {
    let (k, i) = (k.max(1) as u64, i as u64);
    total / k + u64::from(i < total % k)
}

impl Program {
    pub fn new(app: App, at: Place) -> Program {
        let seed = mix(at.seed ^ mix(((at.node as u64) << 32) | at.thread as u64));
        // Microbenchmarks: only the issuing threads count; the home's spinning thread (and
        // idle others) run in the background.
        let background = match app {
            App::Microbench(m) => !m.issues(&at),
            _ => false,
        };
        Program {
            app,
            at,
            rng: ChaCha8Rng::seed_from_u64(seed),
            phase: 0,
            buf: VecDeque::new(),
            background,
            done: false,
        }
    }

    /// The next operation, or None when the program has finished.
    pub fn next_op(&mut self) -> Option<Op> {
        loop {
            if let Some(op) = self.buf.pop_front() {
                return Some(op);
            }
            if self.done {
                return None;
            }
            self.done = !self.fill();
        }
    }

    fn other_node(&mut self) -> u32 {
        let n = self.at.nodes;
        let r = self.rng.gen_range(0..n - 1);
        if r >= self.at.node {
            r + 1
        } else {
            r
        }
    }

    /// Generate the next phase into `buf`; false when there is none.
    fn fill(&mut self) -> bool {
        let p = self.phase;
        self.phase += 1;
        let at = self.at;
        match self.app {
            App::Microbench(m) => {
                let home = m.home();
                let mine = match m.bench {
                    Bench::Latency => m.misses,
                    _ => share(m.misses, at.thread, at.threads),
                };
                if m.issues(&at) {
                    let from = p * CHUNK;
                    if from >= mine {
                        return false;
                    }
                    for _ in from..(from + CHUNK).min(mine) {
                        self.buf.push_back(Op::Miss { home });
                    }
                } else if at.node == home && at.thread == 0 {
                    self.buf.push_back(Op::Compute(1e6));
                } else {
                    return false;
                }
                true
            }
            App::Synthetic(s) => {
                // Generated CHUNK requests at a time (bounded memory for any M).
                let mine = share(s.requests, at.thread, at.threads);
                let from = p * CHUNK;
                if from >= mine {
                    return false;
                }
                for _ in from..(from + CHUNK).min(mine) {
                    let c = match s.spread {
                        Spread::Fixed => s.c_us,
                        Spread::Exponential => {
                            let u: f64 = self.rng.gen::<f64>();
                            -s.c_us * (1.0 - u).ln()
                        }
                    };
                    if c > 0.0 {
                        self.buf.push_back(Op::Compute(c));
                    }
                    let home = self.other_node();
                    self.buf.push_back(Op::Miss { home });
                }
                true
            }
            App::Em3d(e) => {
                // Phases alternate E and H updates; a global barrier ends each.
                if p >= 2 * e.iterations as u64 {
                    return false;
                }
                let half =
                    (e.graph_nodes / 2) as u64 + u64::from(p % 2 == 1 && e.graph_nodes % 2 == 1);
                let node_share = share(half, at.node, at.nodes);
                let mine = share(node_share, at.thread, at.threads) * e.degree as u64;
                let mut acc = 0.0;
                for _ in 0..mine {
                    if at.nodes > 1 && self.rng.gen::<f64>() < e.remote_fraction {
                        if acc > 0.0 {
                            self.buf.push_back(Op::Compute(acc));
                        }
                        acc = 0.0;
                        let home = self.other_node();
                        self.buf.push_back(Op::Miss { home });
                    }
                    acc += e.edge_us;
                }
                if acc > 0.0 {
                    self.buf.push_back(Op::Compute(acc));
                }
                self.buf.push_back(Op::Barrier);
                true
            }
            App::Gauss(g) => {
                let n = g.n as u64;
                if p >= 2 * n {
                    return false;
                }
                let nodes = at.nodes as f64;
                let per_thread = 1.0 / (nodes * at.threads as f64);
                if p < n {
                    // Elimination step for column k: local pivot search, recursive halving for
                    // the global maximum, the pivot row fetched from its owner, elimination.
                    let k = p;
                    let rows = (n - k) as f64 * per_thread;
                    self.buf.push_back(Op::Compute(rows * g.element_us));
                    self.buf.push_back(Op::NodeBarrier);
                    if at.thread == 0 {
                        let mut r = 0;
                        while (1u32 << r) < at.nodes {
                            let partner = at.node ^ (1 << r);
                            if partner < at.nodes {
                                self.buf.push_back(Op::Exchange {
                                    partner,
                                    tag: k * 64 + r as u64,
                                });
                            }
                            r += 1;
                        }
                        let owner = (mix(at.seed ^ k.wrapping_mul(0x2545_F491_4F6C_DD1D))
                            % at.nodes as u64) as u32;
                        if owner != at.node {
                            let blocks =
                                ((n - k) * g.element_bytes as u64).div_ceil(g.block_bytes as u64);
                            for _ in 0..blocks {
                                self.buf.push_back(Op::Miss { home: owner });
                            }
                        }
                    }
                    self.buf.push_back(Op::NodeBarrier);
                    self.buf
                        .push_back(Op::Compute(rows * (n - k) as f64 * g.element_us));
                } else {
                    // Back substitution, one column at a time: a global value (barrier), then
                    // every row is updated.
                    self.buf.push_back(Op::Barrier);
                    self.buf
                        .push_back(Op::Compute(n as f64 * per_thread * g.element_us));
                }
                true
            }
            App::Tomcatv(t) => {
                if p >= t.iterations as u64 {
                    return false;
                }
                let rows = (t.n / at.nodes) as f64 / at.threads as f64;
                let row_cost = t.n as f64 * t.element_us / 3.0;
                let pass = rows * row_cost;
                let blocks = border_blocks(t.n, t.shared_matrices, t.element_bytes, t.block_bytes);
                let mut neighbours = Vec::new();
                if at.thread == 0 && at.node > 0 {
                    neighbours.push(at.node - 1);
                }
                if at.thread + 1 == at.threads && at.node + 1 < at.nodes {
                    neighbours.push(at.node + 1);
                }
                // Pass 1 (update): the border rows of the neighbours are read as the first row
                // is computed; pass 2 (local residual); global maximum (barrier); pass 3
                // (adjust): writing the own border row invalidates the neighbour's copy.
                let border_pass = |buf: &mut VecDeque<Op>, nb: &[u32]| {
                    let mut left = pass;
                    for &h in nb {
                        let slice =
                            (row_cost / blocks.max(1) as f64).min(left / blocks.max(1) as f64);
                        for _ in 0..blocks {
                            buf.push_back(Op::Miss { home: h });
                            if slice > 0.0 {
                                buf.push_back(Op::Compute(slice));
                            }
                        }
                        left -= slice * blocks as f64;
                    }
                    if left > 0.0 {
                        buf.push_back(Op::Compute(left));
                    }
                };
                border_pass(&mut self.buf, &neighbours);
                self.buf.push_back(Op::Compute(pass));
                self.buf.push_back(Op::Barrier);
                border_pass(&mut self.buf, &neighbours);
                true
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ops(app: App, at: Place) -> Vec<Op> {
        let mut p = Program::new(app, at);
        std::iter::from_fn(|| p.next_op()).collect()
    }

    fn place(node: u32, thread: u32, threads: u32) -> Place {
        Place {
            node,
            nodes: 4,
            thread,
            threads,
            seed: 7,
        }
    }

    #[test]
    fn em3d_has_the_papers_compute_per_remote_edge() {
        // Per node: 8160 / 2 / 4 = 1020 graph nodes per phase, 5 edges each, 20 phases.
        let v = ops(App::Em3d(Em3d::default()), place(1, 0, 1));
        let compute: f64 = v
            .iter()
            .map(|o| if let Op::Compute(c) = o { *c } else { 0.0 })
            .sum();
        let misses = v.iter().filter(|o| matches!(o, Op::Miss { .. })).count() as f64;
        assert!((compute - 1020.0 * 5.0 * 20.0 * 1.7).abs() < 1e-6);
        // 5% remote: 34 us per remote edge, within sampling noise (5100 expected misses).
        let per = compute / misses;
        assert!((per - 34.0).abs() < 2.5, "{per}");
        assert_eq!(v.iter().filter(|o| matches!(o, Op::Barrier)).count(), 20);
        assert!(v.iter().all(|o| !matches!(o, Op::Miss { home: 1 })));
    }

    #[test]
    fn synthetic_splits_requests_over_threads_and_never_targets_itself() {
        let s = Synthetic {
            requests: 101,
            c_us: 10.0,
            spread: Spread::Fixed,
        };
        let a = ops(App::Synthetic(s), place(2, 0, 2));
        let b = ops(App::Synthetic(s), place(2, 1, 2));
        let misses = |v: &[Op]| v.iter().filter(|o| matches!(o, Op::Miss { .. })).count();
        assert_eq!(misses(&a) + misses(&b), 101);
        assert!(a
            .iter()
            .chain(&b)
            .all(|o| !matches!(o, Op::Miss { home: 2 })));
    }

    #[test]
    fn gauss_reads_the_pivot_row_once_per_node() {
        let g = Gauss {
            n: 16,
            ..Gauss::default()
        };
        let t0 = ops(App::Gauss(g), place(0, 0, 2));
        let t1 = ops(App::Gauss(g), place(0, 1, 2));
        assert!(t1
            .iter()
            .all(|o| !matches!(o, Op::Miss { .. } | Op::Exchange { .. })));
        assert_eq!(
            t0.iter()
                .filter(|o| matches!(o, Op::Exchange { .. }))
                .count(),
            16 * 2
        );
        assert_eq!(
            t0.iter().filter(|o| matches!(o, Op::NodeBarrier)).count(),
            t1.iter().filter(|o| matches!(o, Op::NodeBarrier)).count()
        );
    }

    #[test]
    fn tomcatv_only_border_threads_communicate() {
        let t = Tomcatv {
            iterations: 1,
            ..Tomcatv::default()
        };
        let inner = ops(App::Tomcatv(t), place(1, 1, 3));
        assert!(inner.iter().all(|o| !matches!(o, Op::Miss { .. })));
        let first = ops(App::Tomcatv(t), place(1, 0, 3));
        assert_eq!(
            first
                .iter()
                .filter(|o| matches!(o, Op::Miss { home: 0 }))
                .count(),
            2 * 192
        );
        // Same computation for every thread.
        let sum = |v: &[Op]| {
            v.iter()
                .map(|o| if let Op::Compute(c) = o { *c } else { 0.0 })
                .sum::<f64>()
        };
        assert!((sum(&inner) - sum(&first)).abs() < 1e-6);
        assert!(
            (tomcatv_element_us() - (384.0 * (168.0 + 43.0)) * 0.85 / 0.15 / (192.0 * 768.0)).abs()
                < 1e-12
        );
    }

    #[test]
    fn too_large_runs_are_refused_before_they_start() {
        let e = Em3d {
            graph_nodes: 100_000_000,
            iterations: 1_000_000,
            ..Em3d::default()
        };
        assert!(App::Em3d(e)
            .validate(4)
            .unwrap_err()
            .to_string()
            .contains("at most"));
        assert!(App::Synthetic(Synthetic::default()).validate(1).is_err());
    }
}
