//! Click applications (built-in or a Click file) on the mesh: the functional profile turns an
//! application into a stream graph that is partitioned, laid out, routed and simulated like
//! the StreamIt graphs (`pktflow stream APP --mesh 4x4 --rate PPS`; docs/noc.md, "Click and PPF
//! applications on the mesh").
//!
//! Conversion (every number per packet entering the application, over all its input
//! interfaces, as measured by a functional run):
//! * one steady-state iteration of the stream graph is one packet entering the application;
//! * every Click element is one actor; its work per iteration is the instructions it executed
//!   per entering packet (mean instructions per visit x visits per packet); a core runs
//!   `cycles_per_instruction` cycles per instruction (the stream flow's computation scaling
//!   factor) at `clock_hz`, which is also the network's clock;
//! * every pair of connected elements that some packet crossed is one stream; its items per
//!   iteration are (packets crossing per entering packet) x (bytes per crossing) / (bytes per
//!   item, `item_bits` of the mesh preset); the bytes per crossing are the packet's length on
//!   the wire when it entered (`edge_bytes = packet`) or a fixed descriptor of
//!   `descriptor_bytes` (`edge_bytes = descriptor`: the packet stays in memory and a descriptor
//!   travels); connections no packet crossed carry nothing and are left out;
//! * a packet crossed the connection u -> v when v's visit follows a visit of u and u is
//!   connected to the input port of that visit (the latest such visit of the packet); a later
//!   visit of a storage element (a Queue) that the packet already entered is its pull side and
//!   crosses nothing;
//! * cycles (the IP router's ICMP errors go back to the route lookup) are cut at their back
//!   edges (depth-first from the input elements): a back edge starts with one iteration of items,
//!   i.e. an error packet is handled by the lookup one packet later, so the loop is pipelined
//!   across tiles instead of deadlocking;
//! * elements that write persistent state (dynamic state, or static state they write) and the
//!   interface elements are stateful: the partitioner never replicates them.
//!
//! Fractional items: the partitioner sees items in thousandths (so rare paths keep their
//! weight in fusion and layout decisions); the streams' exact items are then recomputed from
//! the fraction of each element in each actor, and the simulator rounds each stream's items
//! per iteration up to a whole 32-bit item (a rare path is simulated with at least one item
//! per packet; the link loads at the given rate use the exact values).
use crate::api::{circuit_setup, pull_checked, route, simulate_with, Mapped, StreamReqJson};
use crate::balance::{partition, Partition};
use crate::config::mesh_with;
use crate::error::{NocError, Result};
use crate::graph::{Balanced, FlatEdge, FlatGraph, FlatNode, NodeKind};
use crate::layout::anneal;
use crate::report::{contention, link_table, router_heatmap};
use crate::req::Fields;
use crate::routing::{link_loads_adaptive, link_loads_paths, Mesh, StreamReq, DIR_NAMES};
use crate::sim::stream::{Comm, FabricKind};
use crate::sim::PacketRouting;
use pktflow_elements::element::Role;
use pktflow_model::{AccessKind, MemType};
use pktflow_profile::run::{Run, Source};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One element of a profiled application.
#[derive(Debug, Clone, Serialize)]
pub struct AppElement {
    pub name: String,
    pub class: String,
    /// Visits over the whole functional run.
    pub visits: u64,
    /// Instructions over the whole functional run.
    pub instructions: u64,
    /// Never replicated: writes persistent state, or is an interface (source or sink).
    pub stateful: bool,
    /// Receives the application's packets (FromDevice, PollDevice, or a generator).
    pub input: bool,
}

/// Traffic between two connected elements over the whole functional run.
#[derive(Debug, Clone, Serialize)]
pub struct AppConnection {
    pub from: usize,
    pub to: usize,
    /// Packets that crossed from `from` to `to`.
    pub crossings: u64,
    /// Sum over those crossings of the crossing packet's wire length when it entered, bytes.
    pub wire_bytes: u64,
}

/// What the functional run measured: the input of the conversion.
#[derive(Debug, Clone, Serialize)]
pub struct AppProfile {
    pub name: String,
    /// Packets that entered the application (the run's traces).
    pub packets: u64,
    /// Their total wire length, bytes.
    pub wire_bytes: u64,
    pub elements: Vec<AppElement>,
    /// Connected element pairs that some packet crossed, in (from, to) order.
    pub connections: Vec<AppConnection>,
    /// Where the packets came from.
    pub source: String,
    /// Every connection of the configuration as (from, to), crossed or not (to place the
    /// elements no packet reached beside a neighbour).
    pub links: Vec<(usize, usize)>,
}

/// What one stream edge carries per crossing.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum EdgeBytes {
    /// The whole packet (its wire length when it entered the application).
    Packet,
    /// A descriptor of this many bytes.
    Descriptor(u32),
}

impl EdgeBytes {
    pub fn name(&self) -> &'static str {
        match self {
            EdgeBytes::Packet => "packet",
            EdgeBytes::Descriptor(_) => "descriptor",
        }
    }
}

/// Items the partitioner sees per item (it needs whole numbers).
pub const PARTITION_ITEM_SCALE: f64 = 1000.0;

/// The stream graph of an application.
#[derive(Debug, Clone)]
pub struct AppGraph {
    /// One node per element, one edge per crossed connection, every repetition 1; edge push/pop
    /// are in thousandths of an item (`PARTITION_ITEM_SCALE`).
    pub balanced: Balanced,
    /// Exact items per iteration (per entering packet) of each edge of `balanced.graph`.
    pub edge_items: Vec<f64>,
    /// Bytes per entering packet of each edge.
    pub edge_bytes: Vec<f64>,
    /// Packets crossing per entering packet of each edge.
    pub edge_packets: Vec<f64>,
    /// The edge closes a cycle (it starts with one iteration of items).
    pub back: Vec<bool>,
    /// Every connection of the configuration as (from, to).
    pub links: Vec<(usize, usize)>,
}

fn app_err(app: &str, msg: String) -> NocError {
    if pktflow_model::cancel::is_cancel_message(&msg) {
        return NocError::Interrupted;
    }
    NocError::Field {
        field: format!("application `{app}`:"),
        msg: msg.replace('\n', "; "),
    }
}

/// Run `app` functionally on `source` and measure each element's visits and instructions and
/// each connection's crossings. `out_dir` receives the files a `ToDump` would write.
pub fn profile_app(app: &str, source: &Source, out_dir: &Path) -> Result<AppProfile> {
    profile_app_with(app, source, out_dir, &mut |_| {})
}

/// [`profile_app`] with `progress(packets done)` every 1,024 packets.
pub fn profile_app_with(
    app: &str,
    source: &Source,
    out_dir: &Path,
    progress: &mut dyn FnMut(u64),
) -> Result<AppProfile> {
    let mut run = Run::start(app, source, out_dir).map_err(|e| {
        app_err(
            app,
            e.replace("without --trace or --synthetic", "without --packets"),
        )
    })?;
    let graph = run.app.graph.clone();
    let n = graph.elements.len();
    let role: Vec<Role> = (0..n).map(|i| run.router.element(i).role()).collect();
    let storage: Vec<bool> = (0..n).map(|i| run.router.element(i).is_storage()).collect();
    let mut preds: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
    for c in &graph.connections {
        preds.entry((c.to, c.to_port)).or_default().push(c.from);
    }
    let mut visits = vec![0u64; n];
    let mut instr = vec![0u64; n];
    let mut writes_state = vec![false; n];
    let mut cross: BTreeMap<(usize, usize), (u64, u64)> = BTreeMap::new();
    let (mut packets, mut wire) = (0u64, 0u64);
    while let Some(t) = run.next_trace().map_err(|e| app_err(app, e))? {
        if packets & 0x3ff == 0 {
            if pktflow_model::cancel::requested() {
                return Err(NocError::Interrupted);
            }
            progress(packets);
        }
        packets += 1;
        wire += t.wire_bytes as u64;
        for (k, v) in t.visits.iter().enumerate() {
            let e = v.element as usize;
            visits[e] += 1;
            instr[e] += v.instructions as u64;
            for a in t.accesses_of(v) {
                if a.mem == MemType::DynamicState
                    || (a.mem == MemType::StaticState && a.kind == AccessKind::Write)
                {
                    writes_state[e] = true;
                }
            }
            let earlier = &t.visits[..k];
            if storage[e] && earlier.iter().any(|w| w.element == v.element) {
                continue; // the pull side of a queue the packet already entered
            }
            if let Some(ps) = preds.get(&(e, v.port as usize)) {
                if let Some(w) = earlier
                    .iter()
                    .rev()
                    .find(|w| ps.contains(&(w.element as usize)))
                {
                    let c = cross.entry((w.element as usize, e)).or_default();
                    c.0 += 1;
                    c.1 += t.wire_bytes as u64;
                }
            }
        }
    }
    if packets == 0 {
        return Err(app_err(
            app,
            "the functional run produced no packet".to_string(),
        ));
    }
    let elements = graph
        .elements
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let io = matches!(role[i], Role::Source | Role::Generator | Role::Sink);
            AppElement {
                name: d.name.clone(),
                class: d.class.clone(),
                visits: visits[i],
                instructions: instr[i],
                stateful: writes_state[i] || io,
                input: matches!(role[i], Role::Source | Role::Generator),
            }
        })
        .collect();
    Ok(AppProfile {
        name: app.to_string(),
        packets,
        wire_bytes: wire,
        elements,
        connections: cross
            .into_iter()
            .map(|((from, to), (crossings, wire_bytes))| AppConnection {
                from,
                to,
                crossings,
                wire_bytes,
            })
            .collect(),
        source: source.describe(),
        links: graph.connections.iter().map(|c| (c.from, c.to)).collect(),
    })
}

/// Edges (indices into `edges`) that close a cycle: depth-first from the input elements first
/// (then from every element not reached), an edge to an element still on the search path.
fn back_edges(n: usize, edges: &[(usize, usize)], inputs: &[bool]) -> Vec<bool> {
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); n];
    for (k, &(u, _)) in edges.iter().enumerate() {
        out[u].push(k);
    }
    // 0 unvisited, 1 on the path, 2 done
    let mut state = vec![0u8; n];
    let mut back = vec![false; edges.len()];
    let roots = (0..n).filter(|&i| inputs[i]).chain(0..n);
    for r in roots {
        if state[r] != 0 {
            continue;
        }
        state[r] = 1;
        let mut stack: Vec<(usize, usize)> = vec![(r, 0)];
        while let Some(&mut (u, ref mut i)) = stack.last_mut() {
            if *i < out[u].len() {
                let k = out[u][*i];
                *i += 1;
                let v = edges[k].1;
                match state[v] {
                    0 => {
                        state[v] = 1;
                        stack.push((v, 0));
                    }
                    1 => back[k] = true,
                    _ => {}
                }
            } else {
                state[u] = 2;
                stack.pop();
            }
        }
    }
    back
}

/// Build the stream graph of a profiled application (see the module documentation).
pub fn to_stream_graph(p: &AppProfile, eb: EdgeBytes, item_bits: u32) -> Result<AppGraph> {
    if p.packets == 0 {
        return Err(app_err(&p.name, "no packet was profiled".into()));
    }
    if item_bits == 0 || !item_bits.is_multiple_of(8) {
        return Err(NocError::Param(format!(
            "item_bits {item_bits} must be a positive multiple of 8"
        )));
    }
    let n = p.elements.len();
    let pk = p.packets as f64;
    let item_bytes = (item_bits / 8) as f64;
    let conns: Vec<&AppConnection> = p
        .connections
        .iter()
        .filter(|c| c.crossings > 0 && c.from != c.to && c.from < n && c.to < n)
        .collect();
    // an element no packet reached does no work and carries nothing: it is left out of the
    // partition (a null node) and placed beside a neighbour afterwards (`owners`)
    let mut live: Vec<bool> = p.elements.iter().map(|e| e.visits > 0).collect();
    for c in &conns {
        live[c.from] = true;
        live[c.to] = true;
    }
    let nodes: Vec<FlatNode> = p
        .elements
        .iter()
        .enumerate()
        .map(|(i, e)| FlatNode {
            name: e.name.clone(),
            path: e.name.clone(),
            kind: NodeKind::Filter,
            work_per_firing: e.instructions as f64 / pk,
            stateful: e.stateful,
            peek_extra: 0,
            file_reps: None,
            null: !live[i],
        })
        .collect();
    if !live.iter().any(|&l| l) {
        return Err(app_err(&p.name, "no element was visited".into()));
    }
    let pairs: Vec<(usize, usize)> = conns.iter().map(|c| (c.from, c.to)).collect();
    let inputs: Vec<bool> = p.elements.iter().map(|e| e.input).collect();
    let back = back_edges(n, &pairs, &inputs);
    let mut edges = Vec::with_capacity(conns.len());
    let (mut items, mut bytes, mut pkts) = (Vec::new(), Vec::new(), Vec::new());
    for (k, c) in conns.iter().enumerate() {
        let b = match eb {
            EdgeBytes::Packet => c.wire_bytes as f64,
            EdgeBytes::Descriptor(d) => c.crossings as f64 * d as f64,
        } / pk;
        let it = b / item_bytes;
        let scaled = (it * PARTITION_ITEM_SCALE).round().max(1.0);
        if scaled > 1e15 {
            return Err(app_err(
                &p.name,
                format!(
                    "connection `{}` -> `{}` carries {b} bytes per packet, too many to simulate",
                    p.elements[c.from].name, p.elements[c.to].name
                ),
            ));
        }
        let push = scaled as u64;
        edges.push(FlatEdge {
            src: c.from,
            dst: c.to,
            push,
            pop: push,
            delay: if back[k] { push } else { 0 },
        });
        items.push(it);
        bytes.push(b);
        pkts.push(c.crossings as f64 / pk);
    }
    Ok(AppGraph {
        balanced: Balanced {
            graph: FlatGraph {
                name: p.name.clone(),
                nodes,
                edges,
            },
            reps: live.iter().map(|&l| l as u64).collect(),
        },
        links: p.links.clone(),
        edge_items: items,
        edge_bytes: bytes,
        edge_packets: pkts,
        back,
    })
}

/// Actors holding each element, with the element's fraction in each. An element no packet
/// reached (not in the partition) goes with its nearest connected element that is placed
/// (breadth-first over the configuration's connections in both directions, the lowest index
/// first), on that element's first actor; with no such neighbour, on actor 0.
pub fn owners(part: &Partition, g: &AppGraph) -> Vec<Vec<(usize, f64)>> {
    let elements = g.balanced.graph.nodes.len();
    let mut own = vec![Vec::new(); elements];
    for (a, act) in part.actors.iter().enumerate() {
        for &(m, f) in &act.members {
            if m < elements {
                own[m].push((a, f));
            }
        }
    }
    let mut adj: Vec<Vec<usize>> = vec![Vec::new(); elements];
    for &(u, v) in &g.links {
        if u < elements && v < elements {
            adj[u].push(v);
            adj[v].push(u);
        }
    }
    for a in adj.iter_mut() {
        a.sort_unstable();
        a.dedup();
    }
    let placed: Vec<bool> = own.iter().map(|o| !o.is_empty()).collect();
    for i in 0..elements {
        if placed[i] || part.actors.is_empty() {
            continue;
        }
        let mut seen = vec![false; elements];
        seen[i] = true;
        let mut q = std::collections::VecDeque::from([i]);
        let mut found = None;
        while let Some(u) = q.pop_front() {
            if placed[u] {
                found = Some(own[u][0].0);
                break;
            }
            for &v in &adj[u] {
                if !seen[v] {
                    seen[v] = true;
                    q.push_back(v);
                }
            }
        }
        own[i] = vec![(found.unwrap_or(0), 1.0)];
    }
    own
}

/// Replace the partition's stream items (thousandths) by exact items per iteration: the items
/// of each element edge shared out by the fractions of its two ends in the actors; a stream
/// that carries a back edge starts with (at least) one iteration of items.
pub fn exact_streams(part: &mut Partition, g: &AppGraph) {
    let own = owners(part, g);
    let mut items: HashMap<(usize, usize), (f64, bool)> = HashMap::new();
    for (k, e) in g.balanced.graph.edges.iter().enumerate() {
        for &(a, fa) in &own[e.src] {
            for &(b, fb) in &own[e.dst] {
                if a != b {
                    let s = items.entry((a, b)).or_insert((0.0, false));
                    s.0 += g.edge_items[k] * fa * fb;
                    s.1 |= g.back[k];
                }
            }
        }
    }
    for s in part.streams.iter_mut() {
        let (it, back) = items.get(&(s.src, s.dst)).copied().unwrap_or((0.0, false));
        s.items = it.max(1e-9);
        s.delay = if back || s.delay > 0.0 {
            s.items.ceil()
        } else {
            0.0
        };
    }
}

/// Request fields of an application run (beside the stream fields forwarded to the stream
/// flow).
const APP_ONLY: &[&str] = &[
    "rate",
    "packets",
    "edge_bytes",
    "descriptor_bytes",
    "clock_hz",
    "cycles_per_instruction",
];
const FORWARDED: &[&str] = &[
    "graph",
    "mesh",
    "routing",
    "comm",
    "warmup",
    "measure",
    "seed",
    "anneal_moves",
    "retries",
    "buffer_iterations",
    "buffer_items",
    "no_sim",
    "exact_budget",
    "vcs",
    "buffer",
    "arch",
];
/// Stream fields that make no sense for an application (refused by name).
const REFUSED: &[&str] = &["scales", "corrected_work"];

/// Default core clock, Hz (the disjoint-path paper's "assuming a 2GHz clock", section 4).
pub const DEFAULT_CLOCK_HZ: f64 = 2e9;
/// Default cycles per instruction of a core.
pub const DEFAULT_CPI: f64 = 1.0;
/// Default descriptor size, bytes (one 64-byte header copy, as the TDPM flow's channels).
pub const DEFAULT_DESCRIPTOR_BYTES: u64 = 64;
/// Most packets of the functional run.
pub const MAX_APP_PACKETS: u64 = 10_000_000;
/// Highest rate accepted, packets per second.
pub const MAX_RATE_PPS: f64 = 1e12;
/// A paced simulation needs at least this many packet arrivals in the measured window.
pub const MIN_PACED_ARRIVALS: f64 = 10.0;
/// The paced run keeps up when it completes at least this share of the packets that arrived
/// in the window (less one for the window edge).
pub const KEEP_UP_SHARE: f64 = 0.98;

/// Is this `stream_run` request for a Click application rather than a stream graph? Yes when
/// it sets an application field (`rate`, `packets`, ...) or its graph names a built-in
/// application, a `.click` file, or an existing file that is not `.json`/`.toml`.
pub fn is_app_request(req_json: &str) -> bool {
    let Ok(Value::Object(o)) = serde_json::from_str::<Value>(req_json) else {
        return false;
    };
    if APP_ONLY.iter().any(|k| o.contains_key(*k)) {
        return true;
    }
    match o.get("graph") {
        Some(Value::String(g)) => is_app_spec(g),
        _ => false,
    }
}

/// Does `spec` name a Click application (built-in name, `.click` file, or an existing file that
/// is not a stream graph `.json`/`.toml`)?
pub fn is_app_spec(spec: &str) -> bool {
    let s = spec.trim();
    if s.starts_with('{') || crate::bench::json(s).is_some() {
        return false;
    }
    if pktflow_profile::app::builtin_names().contains(&s) {
        return true;
    }
    let lower = s.to_ascii_lowercase();
    if lower.ends_with(".click") || is_ppf_file(s) {
        return true;
    }
    let p = Path::new(s);
    p.is_file() && !(lower.ends_with(".json") || lower.ends_with(".toml"))
}

/// Largest PPF graph file read, bytes.
pub const MAX_PPF_FILE_BYTES: u64 = 16 << 20;

/// Is `spec` a PPF graph file (`pktflow map`'s `.toml`/`.json` format: top-level `ppf` or
/// `channel` tables and no stream `graph`)?
pub fn is_ppf_file(spec: &str) -> bool {
    let lower = spec.to_ascii_lowercase();
    if !(lower.ends_with(".toml") || lower.ends_with(".json")) {
        return false;
    }
    let p = Path::new(spec);
    match std::fs::metadata(p) {
        Ok(m) if m.is_file() && m.len() <= MAX_PPF_FILE_BYTES => {}
        _ => return false,
    }
    let Ok(text) = std::fs::read_to_string(p) else {
        return false;
    };
    let v: Option<Value> = if text.trim_start().starts_with('{') {
        serde_json::from_str(&text).ok()
    } else {
        toml::from_str::<toml::Value>(&text)
            .ok()
            .and_then(|t| serde_json::to_value(t).ok())
    };
    match v {
        Some(Value::Object(o)) => {
            (o.contains_key("ppf") || o.contains_key("channel")) && !o.contains_key("graph")
        }
        _ => false,
    }
}

/// Counts per entering packet are multiplied by this to fill the integer counts of an
/// [`AppProfile`] built from a PPF graph file (relative rounding below 1e-6).
pub const PPF_PACKETS: u64 = 1_000_000;

/// The profile a PPF graph file states: its receiver `rx` (the input), its PPFs and its
/// transmitter `tx` as elements (rx and tx do no work and are never replicated; a PPF with locks
/// is stateful), each PPF's work = rate x instructions per entering packet, each channel's
/// crossings = its rate, of `packet_bytes` each.
pub fn ppf_profile(path: &str) -> Result<AppProfile> {
    use pktflow_tdpm::graph::{End, PpfGraph};
    let g = PpfGraph::load(Path::new(path)).map_err(|e| app_err(path, e.to_string()))?;
    let n = g.ppfs.len();
    let p = PPF_PACKETS as f64;
    let idx = |e: End| match e {
        End::Rx => 0,
        End::Ppf(i) => i + 1,
        End::Tx => n + 1,
    };
    let count = |x: f64| -> Result<u64> {
        let c = (x * p).round();
        if !(c.is_finite() && (0.0..=1e18).contains(&c)) {
            return Err(app_err(
                path,
                format!("a rate or an instruction count ({x}) is out of range"),
            ));
        }
        Ok(c as u64)
    };
    let mut elements = vec![AppElement {
        name: "rx".into(),
        class: "rx".into(),
        visits: PPF_PACKETS,
        instructions: 0,
        stateful: true,
        input: true,
    }];
    for f in &g.ppfs {
        elements.push(AppElement {
            name: f.name.clone(),
            class: f.class.clone(),
            visits: count(f.rate)?,
            instructions: count(f.rate * f.instructions)?,
            stateful: !f.locks.is_empty(),
            input: false,
        });
    }
    elements.push(AppElement {
        name: "tx".into(),
        class: "tx".into(),
        visits: PPF_PACKETS,
        instructions: 0,
        stateful: true,
        input: false,
    });
    let mut cross: BTreeMap<(usize, usize), (u64, u64)> = BTreeMap::new();
    let mut links = Vec::new();
    for c in &g.channels {
        let (a, b) = (idx(c.from), idx(c.to));
        links.push((a, b));
        let k = count(c.rate)?;
        let e = cross.entry((a, b)).or_default();
        e.0 += k;
        e.1 += count(c.rate * g.packet_bytes)?;
    }
    Ok(AppProfile {
        name: if g.name.is_empty() {
            path.to_string()
        } else {
            g.name.clone()
        },
        packets: PPF_PACKETS,
        wire_bytes: count(g.packet_bytes)?,
        elements,
        connections: cross
            .into_iter()
            .map(|((from, to), (crossings, wire_bytes))| AppConnection {
                from,
                to,
                crossings,
                wire_bytes,
            })
            .collect(),
        source: format!("the rates of the PPF graph file {path}"),
        links,
    })
}

/// An application request, checked.
pub struct AppRequest {
    pub stream: StreamReqJson,
    pub rate: f64,
    pub packets: Option<u64>,
    pub edge_bytes: EdgeBytes,
    pub clock_hz: f64,
    pub cpi: f64,
}

impl AppRequest {
    pub fn parse(text: &str) -> Result<AppRequest> {
        let what = "stream_run request";
        let mut all: Vec<&str> = FORWARDED.to_vec();
        all.extend_from_slice(APP_ONLY);
        all.extend_from_slice(REFUSED);
        let f = Fields::parse(text, what, &all)?;
        for k in REFUSED {
            if f.has(k) {
                return Err(NocError::Field {
                    field: (*k).into(),
                    msg: "must not be given for a Click application: its work is in instructions and the scale is cycles_per_instruction".into(),
                });
            }
        }
        let clock_hz = f.num("clock_hz", DEFAULT_CLOCK_HZ, 1e6, 1e12, " Hz")?;
        let cpi = f.num("cycles_per_instruction", DEFAULT_CPI, 0.001, 1000.0, "")?;
        let rate = match f.num_opt("rate", 0.0, MAX_RATE_PPS, " packets per second")? {
            None => {
                return Err(NocError::Field {
                    field: "rate".into(),
                    msg: "must be given for a Click application: the packets per second entering it (e.g. 1e6)".into(),
                })
            }
            Some(r) if r <= 0.0 => {
                return Err(NocError::Field {
                    field: "rate".into(),
                    msg: format!("must be more than 0 packets per second, got {r}"),
                })
            }
            Some(r) if r > clock_hz => {
                return Err(NocError::Field {
                    field: "rate".into(),
                    msg: format!(
                        "must be at most one packet per cycle of the {clock_hz} Hz clock, got {r} packets per second"
                    ),
                })
            }
            Some(r) => r,
        };
        let packets = f.int_opt("packets", 1, MAX_APP_PACKETS, " packets")?;
        let desc = f.int(
            "descriptor_bytes",
            DEFAULT_DESCRIPTOR_BYTES,
            1,
            65_536,
            " bytes",
        )?;
        let edge_bytes = match f.string("edge_bytes", "packet")?.as_str() {
            "packet" => EdgeBytes::Packet,
            "descriptor" => EdgeBytes::Descriptor(desc as u32),
            o => {
                return Err(NocError::Field {
                    field: "edge_bytes".into(),
                    msg: format!("must be packet or descriptor, got `{o}`"),
                })
            }
        };
        let v: Value = serde_json::from_str(text).map_err(|e| NocError::Request {
            what: what.into(),
            msg: e.to_string(),
        })?;
        let mut fwd = Map::new();
        if let Value::Object(o) = v {
            for (k, x) in o {
                if FORWARDED.contains(&k.as_str()) {
                    fwd.insert(k, x);
                }
            }
        }
        let stream = StreamReqJson::parse(&Value::Object(fwd).to_string(), what)?;
        Ok(AppRequest {
            stream,
            rate,
            packets,
            edge_bytes,
            clock_hz,
            cpi,
        })
    }
}

/// Folder for the files a configuration's `ToDump` writes: `pktflow-mesh-PID` in the temporary
/// directory, created only when the application has such an element and removed afterwards
/// when empty.
struct OutDir {
    path: PathBuf,
    created: bool,
}

impl OutDir {
    fn for_app(app: &str) -> Result<OutDir> {
        let path = std::env::temp_dir().join(format!("pktflow-mesh-{}", std::process::id()));
        let writes = pktflow_profile::app::load_app(app)
            .map(|a| a.graph.elements.iter().any(|e| e.class == "ToDump"))
            .map_err(|e| app_err(app, e))?;
        if writes {
            std::fs::create_dir_all(&path).map_err(|e| NocError::Io {
                path: path.display().to_string(),
                source: e,
            })?;
        }
        Ok(OutDir {
            path,
            created: writes,
        })
    }
}

impl Drop for OutDir {
    fn drop(&mut self) {
        if self.created {
            let _ = std::fs::remove_dir(&self.path);
        }
    }
}

/// Flits per cycle on each link slot of the mesh when each stream k carries `flits[k]` flits
/// per cycle on its route (`paths`, or minimal adaptive splitting; `None` for the ideal
/// network, which uses no mesh link).
fn rate_loads(
    mesh: &Mesh,
    reqs: &[StreamReq],
    flits: &[f64],
    paths: Option<&[Vec<u8>]>,
    adaptive: bool,
) -> Vec<f64> {
    let mut load = vec![0.0; mesh.link_count_slots()];
    for (k, q) in reqs.iter().enumerate() {
        let one = [StreamReq {
            src: q.src,
            dst: q.dst,
            weight: 1.0,
        }];
        let l = if adaptive {
            link_loads_adaptive(mesh, &one)
        } else if let Some(p) = paths {
            link_loads_paths(mesh, &one, &p[k..k + 1])
        } else {
            continue;
        };
        for (x, y) in load.iter_mut().zip(l) {
            *x += y * flits[k];
        }
    }
    load
}

/// Map, route and simulate a Click application on the mesh (request fields: those of
/// `stream_run` without `scales`/`corrected_work`, plus `rate`, `packets`, `edge_bytes`,
/// `descriptor_bytes`, `clock_hz`, `cycles_per_instruction`).
pub fn app_stream_run_with(
    req_json: &str,
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<String> {
    let ar = AppRequest::parse(req_json)?;
    let r = &ar.stream;
    let app = r.graph.trim().to_string();
    if !is_app_spec(&app) {
        return Err(NocError::Field {
            field: "rate".into(),
            msg: format!(
                "and the other application options apply to a Click application (a built-in name or a Click file); `{app}` is a stream graph"
            ),
        });
    }
    let comm = match r.comm.to_ascii_lowercase().as_str() {
        "push" => Comm::Push,
        "pull" => Comm::Pull,
        o => return Err(NocError::Param(format!("comm `{o}` must be push or pull"))),
    };
    let router = pull_checked(&r.routing, comm)?;
    let mut over = r.arch.as_object().cloned().unwrap_or_default();
    let m = Mesh::parse(&r.mesh)?;
    over.insert("cols".into(), json!(m.cols));
    over.insert("rows".into(), json!(m.rows));
    if let Some(v) = r.vcs {
        over.insert("virtual_channels".into(), json!(v));
    }
    if let Some(b) = r.buffer {
        over.insert("buffer_depth_flits".into(), json!(b));
    }
    let arch = mesh_with(&Value::Object(over))?;
    let mesh = Mesh::new(arch.cols, arch.rows)?;

    // functional profile -> stream graph
    let t_prof = Instant::now();
    let source = match ar.packets {
        Some(n) => Source::Synthetic {
            packets: n,
            seed: r.seed,
        },
        None => Source::Auto { seed: r.seed },
    };
    let prof = if is_ppf_file(&app) {
        if ar.packets.is_some() {
            return Err(NocError::Field {
                field: "packets".into(),
                msg: "must not be given for a PPF graph file: its rates are per entering packet already".into(),
            });
        }
        ppf_profile(&app)?
    } else {
        let out = OutDir::for_app(&app)?;
        let total = ar
            .packets
            .unwrap_or(pktflow_profile::run::DEFAULT_SYNTHETIC_PACKETS);
        let p = profile_app_with(&app, &source, &out.path, &mut |d| {
            progress(d, total, "functional run (packets)")
        })?;
        drop(out);
        p
    };
    let g = to_stream_graph(&prof, ar.edge_bytes, arch.item_bits)?;
    let t_profile = t_prof.elapsed().as_secs_f64();

    // partition, lay out
    let t0 = Instant::now();
    let mut part = partition(&g.balanced, mesh.nodes())?;
    exact_streams(&mut part, &g);
    let t_partition = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let layout = anneal(&mesh, &part, r.seed, r.anneal_moves)?;
    let t_layout = t1.elapsed().as_secs_f64();
    let reqs_of = |tile_of: &[usize], part: &Partition| -> Vec<StreamReq> {
        part.streams
            .iter()
            .map(|s| StreamReq {
                src: tile_of[s.src],
                dst: tile_of[s.dst],
                weight: s.items,
            })
            .collect()
    };
    let reqs = reqs_of(&layout.tile_of, &part);
    let mut mapped = Mapped {
        arch,
        mesh,
        part,
        layout,
        reqs,
        t_partition,
        t_layout,
    };

    // route (with re-layouts when a disjoint router fails and retries are asked for)
    let mut tile_of = mapped.layout.tile_of.clone();
    let mut ro = route(&mapped, &r.routing, r, &tile_of)?;
    let mut layout_retries = 0;
    while ro.fallback && router.relayout_on_fallback() && layout_retries < r.retries {
        layout_retries += 1;
        let l = crate::layout::anneal_routable(
            &mapped.mesh,
            &mapped.part,
            r.seed.wrapping_add(1000 + layout_retries as u64),
            r.anneal_moves,
        )?;
        let ro2 = route(&mapped, &r.routing, r, &l.tile_of)?;
        if ro2.circuits {
            tile_of = l.tile_of;
            ro = ro2;
        }
    }
    mapped.reqs = reqs_of(&tile_of, &mapped.part);
    let mesh = mapped.mesh;
    let arch = mapped.arch.clone();
    let reqs = mapped.reqs.clone();

    // streams per link (the stream flow's contention metric)
    let dor_paths: Vec<Vec<u8>> = reqs.iter().map(|q| mesh.dor_path(q.src, q.dst)).collect();
    let count_loads = router.link_loads(&mesh, &reqs, ro.paths.as_deref());
    let (mx, over_links) = contention(&count_loads);

    // flits per cycle on every link at the given rate
    let per_cycle = ar.rate / ar.clock_hz; // packets entering per cycle
    let flit_bits = arch.flit_width_bits as f64;
    let data_flits: Vec<f64> = mapped
        .part
        .streams
        .iter()
        .map(|s| s.items * arch.item_bits as f64 / flit_bits * per_cycle)
        .collect();
    // rate loads split fractionally over the productive directions on adaptive packet routing
    let adaptive = matches!(ro.fabric, FabricKind::Packet(p) if p == PacketRouting::Adaptive);
    let ideal = matches!(ro.fabric, FabricKind::Ideal);
    let path_ref: Option<&[Vec<u8>]> = if ideal {
        None
    } else {
        Some(ro.paths.as_deref().unwrap_or(&dor_paths))
    };
    let mut flit_loads = rate_loads(&mesh, &reqs, &data_flits, path_ref, adaptive);
    if comm == Comm::Pull && !ideal {
        // one request packet per data unit, from the consumer back to the producer
        let ipp = arch.items_per_packet() as f64;
        let back: Vec<StreamReq> = reqs
            .iter()
            .map(|q| StreamReq {
                src: q.dst,
                dst: q.src,
                weight: q.weight,
            })
            .collect();
        let req_flits: Vec<f64> = mapped
            .part
            .streams
            .iter()
            .map(|s| s.items / ipp * arch.request_packet_flits as f64 * per_cycle)
            .collect();
        let back_paths: Vec<Vec<u8>> = back.iter().map(|q| mesh.dor_path(q.src, q.dst)).collect();
        let l = rate_loads(&mesh, &back, &req_flits, Some(&back_paths), adaptive);
        for (x, y) in flit_loads.iter_mut().zip(l) {
            *x += y;
        }
    }
    let link_rate: Vec<Value> = mesh
        .links()
        .into_iter()
        .enumerate()
        .map(|(index, l)| {
            let (nd, d) = (l / 4, l % 4);
            let to = mesh.neighbor(nd, d).unwrap_or(nd);
            let (x, y) = mesh.xy(nd);
            let (tx, ty) = mesh.xy(to);
            let f = flit_loads[l];
            json!({"index": index, "from": [x, y], "to": [tx, ty], "dir": DIR_NAMES[d],
                   "flits_per_cycle": f, "bytes_per_second": f * flit_bits / 8.0 * ar.clock_hz,
                   "utilization": f, "saturated": f > 1.0 + 1e-12})
        })
        .collect();
    let saturated_links: Vec<Value> = link_rate
        .iter()
        .filter(|l| l["saturated"].as_bool() == Some(true))
        .cloned()
        .collect();
    let max_link_util = flit_loads.iter().copied().fold(0.0, f64::max);
    let rate_heatmap = router_heatmap(&mesh, &flit_loads);

    // core utilization at the given rate
    let core_util: Vec<f64> = mapped
        .part
        .actors
        .iter()
        .map(|a| a.work * ar.cpi * per_cycle)
        .collect();
    let max_core_util = core_util.iter().copied().fold(0.0, f64::max);
    let bottleneck_util = max_core_util.max(max_link_util);

    // setup time of tentacle circuits
    let setup = circuit_setup(&arch, &ro)?;

    // simulation: paced at the rate, then unpaced (the sustainable rate)
    let own = owners(&mapped.part, &g);
    let mut has_input = vec![false; mapped.part.actors.len()];
    for (i, e) in prof.elements.iter().enumerate() {
        if e.input {
            for &(a, _) in &own[i] {
                has_input[a] = true;
            }
        }
    }
    let period_work = ar.clock_hz / ar.rate / ar.cpi; // inter-arrival time in work units
    let expected = r.measure as f64 * per_cycle;
    let t_sim = Instant::now();
    let per = r.warmup + r.measure;
    let mut points: Vec<Value> = Vec::new();
    let mut interrupted = false;
    let mut at_rate = Value::Null;
    let mut sustainable = Value::Null;
    let mut sat_tp = Value::Null;
    let mut notes: Vec<String> = Vec::new();
    if !r.no_sim {
        let paced = expected >= MIN_PACED_ARRIVALS;
        if !paced {
            notes.push(format!(
                "at {} packets/s only {expected:.2} packets arrive in the {} measured cycles (fewer than {MIN_PACED_ARRIVALS}): the run at the given rate is not simulated; raise --measure",
                ar.rate, r.measure
            ));
        }
        let runs: Vec<bool> = if paced {
            vec![true, false]
        } else {
            vec![false]
        };
        let total = per.saturating_mul(runs.len() as u64);
        for (i, &pace) in runs.iter().enumerate() {
            let mut part2 = mapped.part.clone();
            if pace {
                for (a, act) in part2.actors.iter_mut().enumerate() {
                    if has_input[a] {
                        act.work = act.work.max(period_work);
                    }
                }
            }
            let m2 = Mapped {
                arch: arch.clone(),
                mesh,
                part: part2,
                layout: mapped.layout.clone(),
                reqs: reqs.clone(),
                t_partition,
                t_layout,
            };
            let base = per * i as u64;
            let label = if pace {
                format!("at {} packets/s", ar.rate)
            } else {
                "unpaced (sustainable rate)".to_string()
            };
            let (pts, _, intr) =
                simulate_with(&m2, &ro, comm, &[ar.cpi], r, &tile_of, &mut |d, _, _| {
                    progress(base + d, total, &label)
                })?;
            for p in pts {
                let pps = p.throughput / 1000.0 * ar.clock_hz;
                let mut v = serde_json::to_value(&p).unwrap_or(Value::Null);
                v["paced"] = json!(pace);
                v["offered_pps"] = if pace { json!(ar.rate) } else { Value::Null };
                v["delivered_pps"] = json!(pps);
                if pace {
                    let keeps = p.iterations as f64 + 1.0 >= KEEP_UP_SHARE * expected;
                    v["keeps_up"] = json!(keeps);
                    at_rate = json!({"offered_pps": ar.rate, "delivered_pps": pps,
                        "packets_expected_in_window": expected, "packets_completed_in_window": p.iterations,
                        "keeps_up": keeps});
                } else {
                    sustainable = json!(pps);
                    sat_tp = json!(p.throughput);
                }
                points.push(v);
            }
            if intr {
                interrupted = true;
                break;
            }
        }
    }

    // where the elements went
    let elements: Vec<Value> = prof
        .elements
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let places: Vec<Value> = own[i]
                .iter()
                .map(|&(a, f)| {
                    let t = tile_of[a];
                    let (x, y) = mesh.xy(t);
                    json!({"actor": a, "tile": t, "x": x, "y": y, "share": f})
                })
                .collect();
            let first = own[i].first().map(|&(a, _)| tile_of[a]);
            let pk = prof.packets as f64;
            json!({"name": e.name, "class": e.class, "visits_per_packet": e.visits as f64 / pk,
                   "instructions_per_visit": if e.visits > 0 { e.instructions as f64 / e.visits as f64 } else { 0.0 },
                   "instructions_per_packet": e.instructions as f64 / pk,
                   "stateful": e.stateful, "input": e.input,
                   "tile": first, "x": first.map(|t| mesh.xy(t).0), "y": first.map(|t| mesh.xy(t).1),
                   "placements": places})
        })
        .collect();
    let stream_of: HashMap<(usize, usize), usize> = mapped
        .part
        .streams
        .iter()
        .enumerate()
        .map(|(k, s)| ((s.src, s.dst), k))
        .collect();
    let connections: Vec<Value> = g
        .balanced
        .graph
        .edges
        .iter()
        .enumerate()
        .map(|(k, e)| {
            let streams: Vec<usize> = own[e.src]
                .iter()
                .flat_map(|&(a, _)| own[e.dst].iter().map(move |&(b, _)| (a, b)))
                .filter_map(|ab| stream_of.get(&ab).copied())
                .collect();
            json!({"from": prof.elements[e.src].name, "to": prof.elements[e.dst].name,
                   "packets_per_packet": g.edge_packets[k], "bytes_per_packet": g.edge_bytes[k],
                   "items_per_packet": g.edge_items[k], "back_edge": g.back[k], "streams": streams})
        })
        .collect();
    let actors: Vec<Value> = mapped
        .part
        .actors
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let (x, y) = mesh.xy(tile_of[i]);
            let names: Vec<&str> = a
                .members
                .iter()
                .filter_map(|&(m, _)| prof.elements.get(m).map(|e| e.name.as_str()))
                .collect();
            json!({"name": a.name, "tile": tile_of[i], "x": x, "y": y, "work": a.work, "stateful": a.stateful,
                   "members": a.members.len(), "elements": names, "utilization": core_util[i],
                   "saturated": core_util[i] > 1.0 + 1e-12, "paced_input": has_input[i]})
        })
        .collect();
    let routes: Vec<Value> = mapped
        .part
        .streams
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let p = ro.paths.as_ref().map(|p| {
                p[k].iter()
                    .map(|&d| DIR_NAMES[d as usize])
                    .collect::<Vec<_>>()
                    .join("")
            });
            json!({"stream": k, "src_actor": s.src, "dst_actor": s.dst, "src_tile": reqs[k].src, "dst_tile": reqs[k].dst,
                   "items": s.items, "items_simulated": s.items.ceil(), "initial_items": s.delay,
                   "flits_per_cycle": data_flits[k],
                   "min_hops": mesh.hops(reqs[k].src, reqs[k].dst),
                   "path": p, "hops": ro.paths.as_ref().map(|p| p[k].len())})
        })
        .collect();
    let pk = prof.packets as f64;
    let mut first = json!({
        "kind": "application",
        "graph": prof.name, "app": prof.name, "mesh": r.mesh, "routing": r.routing, "comm": r.comm,
        "tiles": mesh.nodes(),
        "rate_pps": ar.rate, "clock_hz": ar.clock_hz, "cycles_per_instruction": ar.cpi,
        "edge_bytes": ar.edge_bytes.name(),
        "descriptor_bytes": match ar.edge_bytes { EdgeBytes::Descriptor(d) => json!(d), EdgeBytes::Packet => Value::Null },
        "profile": {"source": prof.source, "packets": prof.packets, "mean_wire_bytes": prof.wire_bytes as f64 / pk,
                    "instructions_per_packet": prof.elements.iter().map(|e| e.instructions).sum::<u64>() as f64 / pk,
                    "elements": prof.elements.len(), "connections_crossed": g.balanced.graph.edges.len(),
                    "back_edges": g.back.iter().filter(|&&b| b).count()},
        "elements": elements, "connections": connections,
        "actors": actors, "balance": mapped.part.balance,
        "fusions": mapped.part.fusions, "fissions": mapped.part.fissions,
        "layout": {"cost": mapped.layout.cost, "initial_cost": mapped.layout.initial_cost, "moves": mapped.layout.moves,
                   "seed": mapped.layout.seed, "layout_retries": layout_retries},
    });
    let second = json!({
        "route": ro, "routes": routes,
        "link_loads": link_table(&mesh, &count_loads), "heatmap": router_heatmap(&mesh, &count_loads),
        "max_link_load": mx, "contended_links": over_links,
        "link_rate_loads": link_rate, "rate_heatmap": rate_heatmap,
        "saturated_links": saturated_links, "max_link_utilization": max_link_util,
        "max_core_utilization": max_core_util,
        "analytic_max_rate_pps": if bottleneck_util > 0.0 { json!(ar.rate / bottleneck_util) } else { Value::Null },
        "setup": setup,
        "points": points, "interrupted": interrupted,
        "at_rate": at_rate, "sustainable_rate_pps": sustainable,
        "saturation_throughput": sat_tp,
        "throughput_unit": "steady-state iterations per 1000 cycles (one iteration = one packet entering the application)",
        "notes": notes,
        "routing_requested": r.routing, "routing_used": ro.used,
        "conventions": conventions(),
        "timing": {"profile_s": t_profile, "partition_s": t_partition, "layout_s": t_layout, "routing_s": ro.seconds,
                   "simulation_s": t_sim.elapsed().as_secs_f64()},
        "arch": arch,
    });
    if let (Value::Object(a), Value::Object(b)) = (&mut first, second) {
        a.extend(b);
    }
    Ok(first.to_string())
}

/// The conventions of an application run, reported with every result.
pub fn conventions() -> Value {
    json!({
        "iteration": "one steady-state iteration is one packet entering the application (over all its input interfaces)",
        "rate": "rate_pps: packets per second entering the application",
        "work": "an element's work is its instructions per entering packet (mean instructions per visit x visits per packet) from the functional run; a core runs cycles_per_instruction cycles per instruction at clock_hz, the network's clock too",
        "streams": "one stream per pair of connected elements that some packet crossed; items per packet = crossings per entering packet x bytes per crossing / bytes per item; edge_bytes = packet: the packet's wire length when it entered; descriptor: descriptor_bytes",
        "cycles": "a connection that closes a cycle (depth-first from the input elements) starts with one iteration of items: the packets it carries are handled one packet later",
        "link_loads": "link_loads / heatmap: streams per link (the contention metric of stream graphs); link_rate_loads / rate_heatmap: flits per cycle at rate_pps (exact fractional items, data flits plus, for pull, one request flit per data packet); a link of one flit per cycle is saturated above 1",
        "utilization": "an actor's utilization is its work x cycles_per_instruction x packets per cycle; above 1 its core cannot keep up",
        "analytic_max_rate_pps": "rate_pps / the largest core or link utilization (node interfaces and router pipelines not counted)",
        "at_rate": "simulation with the input elements' tiles paced at one packet every clock_hz / rate_pps cycles; keeps_up when the packets completed in the measured window are at least 98% of those that arrived (less one)",
        "sustainable_rate_pps": "simulation with unpaced inputs: throughput (iterations per 1000 cycles) x clock_hz / 1000",
        "simulated_items": "the simulator rounds each stream's items per packet up to a whole item (items_simulated)",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn el(name: &str, visits: u64, instructions: u64, input: bool) -> AppElement {
        AppElement {
            name: name.into(),
            class: "X".into(),
            visits,
            instructions,
            stateful: input,
            input,
        }
    }

    /// src -> a -> b, 100 packets: every packet crosses src -> a (64 bytes each); half of them
    /// cross a -> b.
    fn three() -> AppProfile {
        AppProfile {
            name: "three".into(),
            packets: 100,
            wire_bytes: 6400,
            elements: vec![
                el("src", 100, 1000, true),
                el("a", 100, 5000, false),
                el("b", 50, 2000, false),
            ],
            connections: vec![
                AppConnection {
                    from: 0,
                    to: 1,
                    crossings: 100,
                    wire_bytes: 6400,
                },
                AppConnection {
                    from: 1,
                    to: 2,
                    crossings: 50,
                    wire_bytes: 3200,
                },
            ],
            source: "hand-built".into(),
            links: vec![(0, 1), (1, 2)],
        }
    }

    #[test]
    fn three_element_conversion_has_the_known_work_and_items() {
        let g = to_stream_graph(&three(), EdgeBytes::Packet, 32).unwrap();
        let n = &g.balanced.graph.nodes;
        // work = instructions per entering packet
        assert_eq!(n[0].work_per_firing, 10.0);
        assert_eq!(n[1].work_per_firing, 50.0);
        assert_eq!(n[2].work_per_firing, 20.0);
        assert_eq!(g.balanced.reps, vec![1, 1, 1]);
        // 64 bytes per packet = 16 items; half the packets = 8 items per entering packet
        assert_eq!(g.edge_items, vec![16.0, 8.0]);
        assert_eq!(g.edge_packets, vec![1.0, 0.5]);
        assert_eq!(g.balanced.graph.edges[0].push, 16_000);
        assert_eq!(g.back, vec![false, false]);
        // descriptors of 16 bytes: 4 items per crossing
        let d = to_stream_graph(&three(), EdgeBytes::Descriptor(16), 32).unwrap();
        assert_eq!(d.edge_items, vec![4.0, 2.0]);
        assert_eq!(d.edge_bytes, vec![16.0, 8.0]);
    }

    #[test]
    fn cycles_get_one_iteration_of_initial_items_and_map_without_deadlock() {
        let mut p = three();
        // b sends a tenth of the packets back to a (an error path)
        p.connections.push(AppConnection {
            from: 2,
            to: 1,
            crossings: 10,
            wire_bytes: 640,
        });
        let g = to_stream_graph(&p, EdgeBytes::Packet, 32).unwrap();
        assert_eq!(g.back, vec![false, false, true]);
        let e = &g.balanced.graph.edges[2];
        assert_eq!(e.delay, e.push);
        let mut part = partition(&g.balanced, 3).unwrap();
        exact_streams(&mut part, &g);
        assert_eq!(part.actors.len(), 3);
        let back = part
            .streams
            .iter()
            .find(|s| part.actors[s.src].name == "b")
            .unwrap();
        assert!((back.items - 1.6).abs() < 1e-9, "{}", back.items);
        assert!(back.delay >= back.items.ceil());
    }

    #[test]
    fn fused_elements_keep_their_exact_items() {
        let g = to_stream_graph(&three(), EdgeBytes::Packet, 32).unwrap();
        // two tiles: two of the three elements share one
        let mut part = partition(&g.balanced, 2).unwrap();
        exact_streams(&mut part, &g);
        assert_eq!(part.actors.len(), 2);
        assert_eq!(part.streams.len(), 1);
        let total: f64 = part.actors.iter().map(|a| a.work).sum();
        assert!((total - 80.0).abs() < 1e-9);
        let it = part.streams[0].items;
        assert!(it == 16.0 || it == 8.0, "{it}");
        // every element has exactly one owner with its whole work
        for o in owners(&part, &g) {
            assert_eq!(o.len(), 1);
            assert_eq!(o[0].1, 1.0);
        }
    }

    #[test]
    fn back_edges_found_depth_first_from_inputs() {
        // 0 -> 1 -> 2 -> 1, 2 -> 3, 3 -> 0 (two cycles)
        let e = [(0, 1), (1, 2), (2, 1), (2, 3), (3, 0)];
        let b = back_edges(4, &e, &[true, false, false, false]);
        assert_eq!(b, vec![false, false, true, false, true]);
        // without inputs, the search starts at element 0 and finds the same
        assert_eq!(back_edges(4, &e, &[false; 4]), b);
    }

    #[test]
    fn bad_requests_name_the_field() {
        for (req, needle) in [
            (r#"{"graph":"router"}"#, "rate must be given"),
            (r#"{"graph":"router","rate":0}"#, "rate must be more than 0"),
            (r#"{"graph":"router","rate":-1}"#, "rate must be a finite"),
            (
                r#"{"graph":"router","rate":"nan"}"#,
                "rate must be a finite",
            ),
            (
                r#"{"graph":"router","rate":3e9}"#,
                "rate must be at most one packet per cycle",
            ),
            (
                r#"{"graph":"router","rate":1e6,"packets":0}"#,
                "packets must be",
            ),
            (
                r#"{"graph":"router","rate":1e6,"edge_bytes":"x"}"#,
                "edge_bytes must be packet or descriptor",
            ),
            (
                r#"{"graph":"router","rate":1e6,"scales":[1]}"#,
                "scales must not be given",
            ),
            (
                r#"{"graph":"router","rate":1e6,"measure":0}"#,
                "measure must be",
            ),
            (
                r#"{"graph":"router","rate":1e6,"clock_hz":0}"#,
                "clock_hz must be",
            ),
            (
                r#"{"graph":"router","rate":1e6,"cycles_per_instruction":0}"#,
                "cycles_per_instruction must be",
            ),
            (
                r#"{"graph":"router","rate":1e6,"descriptor_bytes":0}"#,
                "descriptor_bytes must be",
            ),
        ] {
            let e = app_stream_run_with(req, &mut |_, _, _| {})
                .unwrap_err()
                .to_string();
            assert!(e.contains(needle), "{req}: {e}");
            assert!(!e.contains('\n'), "{e}");
        }
        let e = app_stream_run_with(
            r#"{"graph":"/nonexistent/x.click","rate":1e6}"#,
            &mut |_, _, _| {},
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("x.click") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn app_requests_are_recognised() {
        assert!(is_app_request(r#"{"graph":"router"}"#));
        assert!(is_app_request(r#"{"graph":"nat","rate":1}"#));
        assert!(is_app_request(r#"{"graph":"x.click"}"#));
        assert!(is_app_request(r#"{"graph":"FMRadio","rate":1}"#));
        assert!(!is_app_request(r#"{"graph":"FMRadio"}"#));
        assert!(!is_app_request(r#"{"graph":"g.json"}"#));
        assert!(!is_app_request("not json"));
    }
}
