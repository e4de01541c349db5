//! The functional run: instantiate a validated application graph and process packets through
//! it single-threaded, recording one [`PacketTrace`] per injected packet.
//!
//! Order of processing follows Click: a pushed packet is carried depth-first through push
//! connections until it is stored (Queue), leaves (sink), or is dropped. After each injected
//! packet the runtime drains every pull sink (ToDevice/ToDump/Discard on a pull path) by pulling
//! through agnostic elements back to the storage element that feeds it: the output interfaces are
//! assumed to keep up, so what a packet causes is attributed to it.
//!
//! Conservation is checked after every packet: every packet object created (injected, cloned,
//! or built by an element such as ICMPError) is output, dropped with a reason, or still held.
//!
//! Compiled with `--cfg pktflow_fast` (the crate `pktflow-elements-fast`, used by `pktflow
//! run`), no trace is recorded (the returned [`PacketTrace`] stays empty), and conservation is
//! counted over the whole run instead of checked after every packet ([`Router::counts`]).
use crate::conf::InitEnv;
use crate::cx::Cx;
use crate::element::{Element, Processing, Role};
use crate::registry;
use petgraph::graph::DiGraph;
#[cfg(not(pktflow_fast))]
use pktflow_model::Visit;
use pktflow_model::{AppGraph, Diagnostic, Fate, PacketTrace, Span};
use pktflow_traffic::packet::PacketType;
use pktflow_traffic::{packets_created, Packet};
use std::path::PathBuf;

/// Most input or output ports an element may need (connections number ports in 16 bits).
pub const MAX_PORTS: usize = u16::MAX as usize;

/// Most element visits one injected packet may cause before it is declared looping.
pub const MAX_VISITS_PER_PACKET: usize = 10_000;

/// Element `e`'s entry of a per-element table, on the hot path of the delivery loop.
///
/// Every element index the router handles comes from its own graph (the edge tables, the
/// sources, the sinks), built and checked against the number of elements by [`Router::new`],
/// and every per-element table has one entry per element; so the index is always in range,
/// and the bounds check (one compare and branch per table per visit, about a tenth of the
/// loop's instructions) is left out. Debug builds still check.
#[inline(always)]
fn at<T>(table: &[T], e: u32) -> &T {
    debug_assert!((e as usize) < table.len(), "element {e} out of range");
    // SAFETY: `e` is an element index of this router (see above), and `table` has an entry
    // for every element.
    unsafe { table.get_unchecked(e as usize) }
}

/// An edge's far end, `(element, input port)`, packed in one word for [`Router::out0`].
#[inline(always)]
fn pack_edge(to: u32, port: u16) -> u64 {
    (u64::from(to) << 16) | u64::from(port)
}

/// [`Router::out0`] of an element whose output 0 is not connected (or that has none).
const NO_EDGE: u64 = u64::MAX;

/// [`at`], mutable.
#[inline(always)]
fn at_mut<T>(table: &mut [T], e: u32) -> &mut T {
    debug_assert!((e as usize) < table.len(), "element {e} out of range");
    // SAFETY: as for `at`.
    unsafe { table.get_unchecked_mut(e as usize) }
}

/// Options for instantiating a graph.
#[derive(Clone, Debug, Default)]
pub struct RouterOptions {
    /// Folder that relative input files in configurations resolve against.
    pub base_dir: PathBuf,
    /// Folder that relative output files (ToDump) are written to.
    pub out_dir: PathBuf,
}

/// An element that takes packets out of its pull input on its own (a ToDevice behind a Queue),
/// with what feeds that input, found once when the router is built.
#[derive(Clone, Copy, Debug)]
struct PullSink {
    sink: u32,
    /// The element and output port its input 0 pulls from, if connected.
    up: Option<(u32, u16)>,
    /// Whether that element is a storage element (a Queue): the fast build then drains it
    /// directly ([`Router::drain_queue_into`]).
    from_storage: bool,
}

/// A configured, validated application ready to run.
pub struct Router {
    pub graph: AppGraph,
    /// The files the elements read and write ([`Router::files`]).
    files: Vec<crate::conf::FileUse>,
    elems: Vec<Box<dyn Element>>,
    /// out_edge[e][port] = (destination element, input port)
    out_edge: Vec<Vec<Option<(u32, u16)>>>,
    /// out0[e] = where output 0 of `e` leads, packed ([`pack_edge`]), or [`NO_EDGE`]: the
    /// delivery loop's common case (one packet emitted, on output 0) in one load.
    out0: Vec<u64>,
    /// in_edge[e][port] = (source element, output port), for pull inputs
    in_edge: Vec<Vec<Option<(u32, u16)>>>,
    sources: Vec<u32>,
    generators: Vec<u32>,
    /// State of [`Router::generate_next`]: exhausted generators, the next to ask, packets so far.
    gen_done: Vec<bool>,
    gen_next: usize,
    gen_count: u64,
    pull_sinks: Vec<PullSink>,
    cx: Cx,
    stack: Vec<(u32, u16, Packet)>,
    #[cfg_attr(pktflow_fast, allow(dead_code))]
    held_total: usize,
    /// Fast build: packets created by elements while processing (clones, ICMP errors).
    #[cfg(pktflow_fast)]
    created_inside: u64,
    /// For each element, the storage element downstream of its output 0 (only for elements
    /// that read its length).
    downstream_queue: Vec<Option<u32>>,
    /// Whether any element reads a downstream queue's length (asked once per run of the
    /// delivery loop instead of at every visit).
    any_downstream_queue: bool,
    /// Per element, [`Element::is_storage`] (asked once, not at every pull).
    storage: Vec<bool>,
    /// Script/DriverManager elements.
    scripts: Vec<u32>,
    /// A stop was requested (script `stop`, `COUNT_CALL ... stop`).
    stopped: bool,
    /// The first failed handler call of `COUNT_CALL`, reported by [`Router::finish`].
    call_errors: Option<String>,
    /// Totals over the run.
    pub injected: u64,
    pub conservation_errors: u64,
    /// Fast build, element groups on threads (`pktflow run --model pipeline|hybrid`): which
    /// elements this router runs (empty: all). A packet for an element it does not run is set
    /// aside in `exported` instead of visited.
    #[cfg(pktflow_fast)]
    local: Vec<bool>,
    #[cfg(pktflow_fast)]
    exported: Vec<(u32, u16, Packet)>,
    /// Fast build: for elements not run here but replicated here too, whether this router
    /// visits a given packet itself (the caller's choice of replica, e.g. by flow).
    #[cfg(pktflow_fast)]
    replica_here: Option<ReplicaChoice>,
    /// Fast build: packets set aside for other routers, and packets received from them.
    #[cfg(pktflow_fast)]
    n_exported: u64,
    #[cfg(pktflow_fast)]
    n_received: u64,
    /// Timed build: host ticks and visits per element (crate::timing).
    #[cfg(pktflow_timed)]
    pub(crate) visit_clock: crate::timing::VisitClock,
}

fn push_err(errs: &mut Vec<Diagnostic>, span: &Span, msg: String) {
    errs.push(Diagnostic::error(span.clone(), msg));
}

/// Refuse, at the output element, an output file (ToDump) that is the same file as an input
/// (FromDump, a routing table) or as an earlier output, compared by identity (device and inode,
/// through symbolic links; by folder and name for files not yet created), and an output the
/// writer would refuse (a folder, a link to a missing file). Nothing is written by this check.
fn check_files(graph: &AppGraph, files: &[crate::conf::FileUse], errs: &mut Vec<Diagnostic>) {
    use pktflow_traffic::outfile::FileId;
    let ids: Vec<FileId> = files.iter().map(|f| FileId::of(&f.path)).collect();
    let label = |k: usize| {
        let d = graph.elements.get(files[k].element as usize);
        d.map(|d| format!("'{}' ({})", d.name, d.class))
            .unwrap_or_else(|| "an element".into())
    };
    for (k, f) in files.iter().enumerate() {
        if !f.output {
            continue;
        }
        let Some(d) = graph.elements.get(f.element as usize) else {
            continue;
        };
        if let Err(m) = pktflow_traffic::Output::plan(&f.path) {
            push_err(errs, &d.span, format!("{}: {m}", label(k)));
            continue;
        }
        let clash = (0..files.len()).find(|&j| {
            j != k
                && files[j].element != f.element
                && ids[j] == ids[k]
                && (!files[j].output || j < k)
        });
        if let Some(j) = clash {
            let m = if files[j].output {
                format!(
                    "{} writes {}, as {} does: two outputs to one file (give each its own file)",
                    label(k),
                    f.name,
                    label(j)
                )
            } else {
                format!(
                    "{} would write {}, which {} reads: refusing to replace an input (write to another file)",
                    label(k),
                    f.name,
                    label(j)
                )
            };
            push_err(errs, &d.span, m);
        }
    }
}

/// Union-find over ports for push/pull resolution.
struct Dsu {
    parent: Vec<usize>,
    value: Vec<Option<Processing>>,
}

impl Dsu {
    fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }
    /// Merge; returns the conflicting pair if one set is push and the other pull.
    fn union(&mut self, a: usize, b: usize) -> Result<(), (Processing, Processing)> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return Ok(());
        }
        match (self.value[ra], self.value[rb]) {
            (Some(x), Some(y)) if x != y => return Err((x, y)),
            (None, v) => self.value[ra] = v,
            _ => {}
        }
        self.parent[rb] = ra;
        Ok(())
    }
}

impl Router {
    /// Instantiate and validate `graph`. All problems are returned together, each naming
    /// `file:line:col` of the declaration or connection at fault.
    pub fn new(graph: AppGraph, opts: &RouterOptions) -> Result<Router, Vec<Diagnostic>> {
        Router::new_shared(graph, opts, Default::default())
    }

    /// As [`Router::new`], with the state Click keeps per process (the rewriters' mapping
    /// tables, ARP tables, the ICMP error id) in `shared`: several routers given the same
    /// `shared` (run-to-completion copies of one graph on several threads) use one NAT table,
    /// each element holding its lock for the visit of a packet.
    pub fn new_shared(
        graph: AppGraph,
        opts: &RouterOptions,
        shared: std::sync::Arc<crate::conf::Shared>,
    ) -> Result<Router, Vec<Diagnostic>> {
        let mut r = Router::build(graph, opts, shared)?;
        // Script instructions before their first wait run now, before any packet.
        if let Err((i, m)) = r.run_scripts(false) {
            let span = r.graph.elements[i as usize].span.clone();
            return Err(vec![Diagnostic::error(span, m)]);
        }
        Ok(r)
    }

    /// As [`Router::new_shared`], without running the scripts' first phase (the instructions
    /// before their first wait). For several routers of one graph whose scripts run once,
    /// against the elements of all of them ([`run_scripts_across`]); a router built this way
    /// runs no script itself, so [`Router::finish`] runs none either.
    pub fn new_deferred(
        graph: AppGraph,
        opts: &RouterOptions,
        shared: std::sync::Arc<crate::conf::Shared>,
    ) -> Result<Router, Vec<Diagnostic>> {
        let mut r = Router::build(graph, opts, shared)?;
        r.scripts.clear();
        Ok(r)
    }

    /// Instantiate and validate `graph`; no script has run.
    fn build(
        graph: AppGraph,
        opts: &RouterOptions,
        shared: std::sync::Arc<crate::conf::Shared>,
    ) -> Result<Router, Vec<Diagnostic>> {
        let mut errs = Vec::new();
        let peers: std::sync::Arc<Vec<(String, String, String)>> = graph
            .elements
            .iter()
            .map(|e| (e.name.clone(), e.class.clone(), e.config.clone()))
            .collect::<Vec<_>>()
            .into();
        // AddressInfo names are usable by every element, wherever they are declared.
        let mut table = Vec::new();
        for d in graph.elements.iter().filter(|d| d.class == "AddressInfo") {
            match crate::elements::click::address_info::parse_entries(&d.config) {
                Ok(t) => table.extend(t),
                Err(m) => push_err(
                    &mut errs,
                    &d.span,
                    format!("bad configuration for '{}': {}", d.name, m),
                ),
            }
        }
        let seed = graph
            .elements
            .iter()
            .filter(|d| d.class == "RandomSeed")
            .filter_map(|d| crate::elements::click::info::seed_of(&d.config))
            .next_back()
            .unwrap_or(1);
        let mut elems: Vec<Option<Box<dyn Element>>> = Vec::with_capacity(graph.elements.len());
        crate::conf::with_address_info(table, || {
            for (i, d) in graph.elements.iter().enumerate() {
                let Some(info) = registry::find(&d.class) else {
                    let hint = registry::suggest(&d.class)
                        .map(|s| format!(" (did you mean '{s}'?)"))
                        .unwrap_or_default();
                    push_err(
                        &mut errs,
                        &d.span,
                        format!(
                            "unknown element class '{}' for element '{}'{}",
                            d.class, d.name, hint
                        ),
                    );
                    elems.push(None);
                    continue;
                };
                let env = InitEnv {
                    index: i as u32,
                    name: d.name.clone(),
                    base_dir: opts.base_dir.clone(),
                    out_dir: opts.out_dir.clone(),
                    peers: peers.clone(),
                    seed: seed.wrapping_add(i as u64),
                    shared: shared.clone(),
                };
                match (info.make)(&d.config, &env) {
                    Ok(e) if e.ports().inputs.0.max(e.ports().outputs.0) > MAX_PORTS => {
                        // Tee(100000000) once asked for 10^8 ports (and as many "not connected"
                        // errors, and gigabytes); connections number ports in 16 bits.
                        let p = e.ports();
                        push_err(
                            &mut errs,
                            &d.span,
                            format!(
                                "bad configuration for '{}': {} needs {} inputs and {} outputs; at most {MAX_PORTS} ports are supported",
                                d.name, d.class, p.inputs.0, p.outputs.0
                            ),
                        );
                        elems.push(None);
                    }
                    Ok(e) => elems.push(Some(e)),
                    Err(m) => {
                        push_err(
                            &mut errs,
                            &d.span,
                            format!("bad configuration for '{}': {}", d.name, m),
                        );
                        elems.push(None);
                    }
                }
            }
        });
        // Files: no output may be an input or another output (compared by identity).
        let files: Vec<crate::conf::FileUse> = shared
            .files
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        check_files(&graph, &files, &mut errs);
        let n = graph.elements.len();
        // Port usage.
        let mut out_edge: Vec<Vec<Option<(u32, u16)>>> = vec![Vec::new(); n];
        let mut in_used: Vec<Vec<Vec<(u32, u16)>>> = vec![Vec::new(); n];
        // Ports connected to an element that failed to configure, or the other end of a
        // connection rejected below: not reported again as unconnected (one error per problem,
        // not a cascade).
        let mut near_failed: std::collections::HashSet<(usize, bool, usize)> = Default::default();
        for c in &graph.connections {
            let (Some(Some(src)), Some(Some(dst))) = (elems.get(c.from), elems.get(c.to)) else {
                near_failed.insert((c.from, true, c.from_port));
                near_failed.insert((c.to, false, c.to_port));
                continue;
            };
            let (sp, dp) = (src.ports(), dst.ports());
            let (fname, tname) = (&graph.elements[c.from].name, &graph.elements[c.to].name);
            if c.from_port >= sp.outputs.1 {
                push_err(
                    &mut errs,
                    &c.span,
                    format!(
                        "'{}' ({}) has {} output port{}, but the connection uses output {}",
                        fname,
                        graph.elements[c.from].class,
                        sp.outputs.1,
                        if sp.outputs.1 == 1 { "" } else { "s" },
                        c.from_port
                    ),
                );
                // Its other end is then unconnected because of this error, not another.
                near_failed.insert((c.to, false, c.to_port));
                continue;
            }
            if c.to_port >= dp.inputs.1 {
                push_err(
                    &mut errs,
                    &c.span,
                    format!(
                        "'{}' ({}) has {} input port{}, but the connection uses input {}",
                        tname,
                        graph.elements[c.to].class,
                        dp.inputs.1,
                        if dp.inputs.1 == 1 { "" } else { "s" },
                        c.to_port
                    ),
                );
                near_failed.insert((c.from, true, c.from_port));
                continue;
            }
            let o = &mut out_edge[c.from];
            if o.len() <= c.from_port {
                o.resize(c.from_port + 1, None);
            }
            if o[c.from_port].is_some() {
                push_err(&mut errs, &c.span, format!("output {} of '{}' is connected more than once (Click allows one connection per output; use Tee to copy packets)", c.from_port, fname));
                near_failed.insert((c.to, false, c.to_port));
                continue;
            }
            o[c.from_port] = Some((c.to as u32, c.to_port as u16));
            let iu = &mut in_used[c.to];
            if iu.len() <= c.to_port {
                iu.resize(c.to_port + 1, Vec::new());
            }
            iu[c.to_port].push((c.from as u32, c.from_port as u16));
        }
        // Required ports connected.
        for (i, e) in elems.iter().enumerate() {
            let Some(e) = e else { continue };
            let p = e.ports();
            let d = &graph.elements[i];
            let used_out = out_edge[i].len().max(p.outputs.0);
            for port in 0..used_out {
                if out_edge[i].get(port).copied().flatten().is_none()
                    && !near_failed.contains(&(i, true, port))
                {
                    push_err(
                        &mut errs,
                        &d.span,
                        format!(
                            "output {} of '{}' ({}) is not connected",
                            port, d.name, d.class
                        ),
                    );
                }
            }
            let used_in = in_used[i].len().max(p.inputs.0);
            for port in 0..used_in {
                if in_used[i].get(port).is_none_or(|v| v.is_empty())
                    && !near_failed.contains(&(i, false, port))
                {
                    push_err(
                        &mut errs,
                        &d.span,
                        format!(
                            "input {} of '{}' ({}) is not connected",
                            port, d.name, d.class
                        ),
                    );
                }
            }
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        let elems: Vec<Box<dyn Element>> = elems
            .into_iter()
            .map(|e| e.expect("checked above"))
            .collect();

        // Push/pull resolution: ports are nodes (inputs first, then outputs, per element).
        let mut base = Vec::with_capacity(n);
        let mut total = 0;
        for e in &elems {
            base.push(total);
            let p = e.ports();
            total += p.inputs.1.min(64) + p.outputs.1.min(64);
        }
        let in_node = |e: usize, port: usize| base[e] + port.min(63);
        let out_node = |e: usize, port: usize, elems: &Vec<Box<dyn Element>>| {
            base[e] + elems[e].ports().inputs.1.min(64) + port.min(63)
        };
        let mut dsu = Dsu {
            parent: (0..total).collect(),
            value: vec![None; total],
        };
        for (i, e) in elems.iter().enumerate() {
            let p = e.ports();
            let nin = in_used[i].len();
            let nout = out_edge[i].len();
            for port in 0..nin {
                let x = in_node(i, port);
                dsu.value[x] =
                    (p.input_processing != Processing::Agnostic).then_some(p.input_processing);
            }
            for port in 0..nout {
                let x = out_node(i, port, &elems);
                let op = e.output_processing_of(port);
                dsu.value[x] = (op != Processing::Agnostic).then_some(op);
            }
        }
        // Agnostic elements: their agnostic ports share one processing.
        for (i, e) in elems.iter().enumerate() {
            let p = e.ports();
            let mut nodes = Vec::new();
            if p.input_processing == Processing::Agnostic {
                nodes.extend((0..in_used[i].len()).map(|port| in_node(i, port)));
            }
            nodes.extend(
                (0..out_edge[i].len())
                    .filter(|&port| e.output_processing_of(port) == Processing::Agnostic)
                    .map(|port| out_node(i, port, &elems)),
            );
            for w in nodes.windows(2) {
                let _ = dsu.union(w[0], w[1]);
            }
        }
        for c in &graph.connections {
            let a = out_node(c.from, c.from_port, &elems);
            let b = in_node(c.to, c.to_port);
            if let Err((x, y)) = dsu.union(a, b) {
                let word = |p: Processing| {
                    if p == Processing::Push {
                        "push"
                    } else {
                        "pull"
                    }
                };
                push_err(&mut errs, &c.span, format!(
                    "{} output {} of '{}' is connected to {} input {} of '{}' (put a Queue between push and pull)",
                    word(x), c.from_port, graph.elements[c.from].name, word(y), c.to_port, graph.elements[c.to].name));
            }
        }
        let mut in_proc = vec![Vec::new(); n];
        for i in 0..n {
            for port in 0..in_used[i].len() {
                let r = dsu.find(in_node(i, port));
                in_proc[i].push(dsu.value[r].unwrap_or(Processing::Push));
            }
        }
        // Pull inputs take exactly one connection.
        let mut in_edge: Vec<Vec<Option<(u32, u16)>>> = vec![Vec::new(); n];
        for i in 0..n {
            for (port, ups) in in_used[i].iter().enumerate() {
                let pull = in_proc[i][port] == Processing::Pull;
                if pull && ups.len() > 1 {
                    push_err(
                        &mut errs,
                        &graph.elements[i].span,
                        format!(
                            "pull input {} of '{}' has {} connections; a pull input takes one",
                            port,
                            graph.elements[i].name,
                            ups.len()
                        ),
                    );
                }
                in_edge[i].push(if pull { ups.first().copied() } else { None });
            }
        }
        // Push cycles: a packet could loop forever.
        let mut g = DiGraph::<(), ()>::new();
        let nodes: Vec<_> = (0..n).map(|_| g.add_node(())).collect();
        for c in &graph.connections {
            if in_proc[c.to].get(c.to_port) == Some(&Processing::Push) {
                g.add_edge(nodes[c.from], nodes[c.to], ());
            }
        }
        for scc in petgraph::algo::kosaraju_scc(&g) {
            let cyclic = scc.len() > 1 || g.contains_edge(scc[0], scc[0]);
            let broken = scc.iter().any(|x| elems[x.index()].cycle_safe());
            if cyclic && !broken {
                let mut names: Vec<&str> = scc
                    .iter()
                    .map(|x| graph.elements[x.index()].name.as_str())
                    .collect();
                names.sort();
                let more = names.len().saturating_sub(10);
                names.truncate(10);
                if more > 0 {
                    names.push("...");
                }
                let more = if more > 0 {
                    format!(" and {more} more")
                } else {
                    String::new()
                };
                let first = scc.iter().map(|x| x.index()).min().unwrap();
                push_err(&mut errs, &graph.elements[first].span, format!(
                    "push connections form a cycle through {}{more} (a packet could loop forever: no element on it, such as ICMPError, stops a packet from going round again)", names.join(", ")));
            }
        }
        if !errs.is_empty() {
            return Err(errs);
        }
        let mut sources = Vec::new();
        let mut generators = Vec::new();
        let mut pull_sinks = Vec::new();
        for (i, e) in elems.iter().enumerate() {
            match e.role() {
                Role::Source => sources.push(i as u32),
                Role::Generator => generators.push(i as u32),
                _ => {}
            }
            // Elements that take packets out of a pull input on their own: sinks (ToDevice
            // behind a Queue), devices with an input (KernelTun), Unqueue-likes.
            let pulls = matches!(e.role(), Role::Sink | Role::Source) || e.pulls_actively();
            if pulls && in_proc[i].first() == Some(&Processing::Pull) {
                pull_sinks.push(i as u32);
            }
        }
        let mut elems = elems;
        for (i, e) in elems.iter_mut().enumerate() {
            e.set_port_counts(in_used[i].len(), out_edge[i].len());
        }
        // The storage element downstream of output 0, for elements that read its length.
        let mut downstream_queue = vec![None; n];
        for (i, e) in elems.iter().enumerate() {
            if !e.wants_downstream_queue() {
                continue;
            }
            let mut at = out_edge[i].first().copied().flatten();
            for _ in 0..64 {
                let Some((j, _)) = at else { break };
                if elems[j as usize].is_storage() {
                    downstream_queue[i] = Some(j);
                    break;
                }
                at = out_edge[j as usize].first().copied().flatten();
            }
        }
        let storage: Vec<bool> = elems.iter().map(|e| e.is_storage()).collect();
        let pull_sinks = pull_sinks
            .into_iter()
            .map(|sink: u32| {
                let up = in_edge[sink as usize].first().copied().flatten();
                PullSink {
                    sink,
                    up,
                    from_storage: up.is_some_and(|(u, _)| storage[u as usize]),
                }
            })
            .collect();
        let scripts: Vec<u32> = (0..n as u32)
            .filter(|&i| {
                matches!(
                    graph.elements[i as usize].class.as_str(),
                    "Script" | "DriverManager"
                )
            })
            .collect();
        let out0 = out_edge
            .iter()
            .map(|o| match o.first().copied().flatten() {
                Some((to, port)) => pack_edge(to, port),
                None => NO_EDGE,
            })
            .collect();
        let r = Router {
            graph,
            files,
            elems,
            out_edge,
            out0,
            in_edge,
            sources,
            generators,
            gen_done: Vec::new(),
            gen_next: 0,
            gen_count: 0,
            pull_sinks,
            cx: Cx::new(),
            stack: Vec::with_capacity(64),
            held_total: 0,
            #[cfg(pktflow_fast)]
            created_inside: 0,
            injected: 0,
            conservation_errors: 0,
            scripts,
            stopped: false,
            call_errors: None,
            any_downstream_queue: downstream_queue.iter().any(Option::is_some),
            downstream_queue,
            storage,
            #[cfg(pktflow_fast)]
            local: Vec::new(),
            #[cfg(pktflow_fast)]
            exported: Vec::new(),
            #[cfg(pktflow_fast)]
            replica_here: None,
            #[cfg(pktflow_fast)]
            n_exported: 0,
            #[cfg(pktflow_fast)]
            n_received: 0,
            #[cfg(pktflow_timed)]
            visit_clock: Default::default(),
        };
        Ok(r)
    }

    /// Run only the tasks of the elements marked true (one flag per element): the
    /// configuration's own sources (generators) and the elements that pull packets on their
    /// own (a ToDevice behind a Queue, Unqueue). The others belong to other routers of the same
    /// graph (Click's tasks on other threads, `pktflow run --threads N` with thread hints).
    pub fn keep_tasks(&mut self, local: &[bool]) {
        assert_eq!(local.len(), self.elems.len(), "one flag per element");
        self.generators.retain(|&g| local[g as usize]);
        self.gen_done.clear();
        self.gen_next = 0;
        self.pull_sinks.retain(|s| local[s.sink as usize]);
    }

    /// Elements that pull packets on their own, in declaration order (Click's pull tasks: a
    /// ToDevice behind a Queue, Unqueue).
    pub fn pull_tasks(&self) -> Vec<u32> {
        self.pull_sinks.iter().map(|s| s.sink).collect()
    }

    /// The configuration's own sources (generators), in declaration order.
    pub fn generator_elements(&self) -> &[u32] {
        &self.generators
    }

    /// Trace injection points (FromDevice-like sources), in declaration order.
    pub fn source_elements(&self) -> &[u32] {
        &self.sources
    }

    /// Whether element `e` is a storage element (a Queue).
    pub fn is_storage(&self, e: u32) -> bool {
        self.storage[e as usize]
    }

    /// Run every script element up to its next wait (`past_wait` false) or to its end.
    fn run_scripts(&mut self, past_wait: bool) -> Result<(), (u32, String)> {
        for k in 0..self.scripts.len() {
            let i = self.scripts[k];
            let Some(mut s) = self.elems[i as usize].take_script() else {
                continue;
            };
            let mut h = RouterHandlers {
                names: &self.graph.elements,
                elems: &mut self.elems,
            };
            let r = s.run(&mut h, past_wait);
            self.elems[i as usize].put_script(s);
            match r {
                Ok(stop) => self.stopped |= stop,
                Err(m) => {
                    return Err((
                        i,
                        format!("{}: {}", self.graph.elements[i as usize].name, m),
                    ))
                }
            }
        }
        Ok(())
    }

    /// Call the write handlers elements asked for while processing the last packet.
    fn run_calls(&mut self) {
        let calls = std::mem::take(&mut self.cx.calls);
        for c in calls {
            let (spec, value) = c.split_once(' ').unwrap_or((c.as_str(), ""));
            if spec == "stop" || spec.ends_with(".stop") {
                self.stopped = true;
                continue;
            }
            let mut h = RouterHandlers {
                names: &self.graph.elements,
                elems: &mut self.elems,
            };
            if let Err(m) = crate::elements::click::script::Handlers::write(&mut h, spec, value) {
                self.call_errors.get_or_insert(m);
            }
        }
    }

    /// True once a script or a `COUNT_CALL` asked the router to stop: the configuration's own
    /// sources emit nothing more.
    pub fn stopped(&self) -> bool {
        self.stopped
    }

    /// The thread hints of the configuration's StaticThreadSched elements: (element name as
    /// written, thread number), in declaration order, for the mappers.
    pub fn thread_hints(&self) -> Vec<(String, i32)> {
        self.graph
            .elements
            .iter()
            .filter(|d| d.class == "StaticThreadSched")
            .filter_map(|d| {
                crate::elements::click::info::parse_pairs(
                    "StaticThreadSched",
                    &d.config,
                    |v| v.parse::<i32>().is_ok(),
                    "THREAD",
                )
                .ok()
            })
            .flatten()
            .filter_map(|(e, t)| t.parse().ok().map(|t| (e, t)))
            .collect()
    }

    /// Read handler `ELEMENT.HANDLER` (a key of the element's statistics).
    pub fn read_handler(&self, spec: &str) -> Result<String, String> {
        read_handler(&self.graph.elements, &self.elems, spec)
    }

    /// Number of trace injection points (FromDevice-like sources), in declaration order.
    pub fn n_sources(&self) -> usize {
        self.sources.len()
    }
    pub fn n_generators(&self) -> usize {
        self.generators.len()
    }
    /// Whether every generator ends by itself ([`Element::finite_source`]).
    pub fn generators_finite(&self) -> bool {
        self.generators
            .iter()
            .all(|&g| self.elems[g as usize].finite_source())
    }
    pub fn element_names(&self) -> impl Iterator<Item = &str> {
        self.graph.elements.iter().map(|e| e.name.as_str())
    }
    pub fn element(&self, i: usize) -> &dyn Element {
        self.elems[i].as_ref()
    }
    /// Name of the device of each source, in the order trace interfaces map to them.
    pub fn source_devices(&self) -> Vec<String> {
        self.sources
            .iter()
            .map(|&s| self.elems[s as usize].device().unwrap_or("").to_string())
            .collect()
    }

    #[inline]
    #[cfg(not(pktflow_fast))]
    fn begin(&mut self, e: u32) -> (u32, u32) {
        self.cx.element = e;
        self.cx.instr = 0;
        (e, self.cx.trace.accesses.len() as u32)
    }

    /// Fast build: nothing is recorded, only which element runs (drops and outputs name it).
    #[inline]
    #[cfg(pktflow_fast)]
    fn begin(&mut self, e: u32) -> (u32, u32) {
        self.cx.element = e;
        #[cfg(pktflow_timed)]
        self.visit_clock.start();
        (e, 0)
    }

    #[inline]
    #[cfg(pktflow_fast)]
    fn end(&mut self, _v: (u32, u32), _port: u16) {
        #[cfg(pktflow_timed)]
        self.visit_clock.stop(_v.0);
    }

    #[inline]
    #[cfg(not(pktflow_fast))]
    fn end(&mut self, (e, start): (u32, u32), port: u16) {
        let end = self.cx.trace.accesses.len() as u32;
        self.cx.trace.visits.push(Visit {
            element: e,
            port,
            instructions: self.cx.instr,
            access_start: start,
            access_end: end,
        });
    }

    /// Deliver what the last visit emitted (in reverse, so the stack pops them in port order).
    /// Inlined: most callers find nothing emitted (a queue's pull, a sink's push).
    #[inline]
    fn route_emitted(&mut self, from: u32) {
        if self.cx.first.is_some() {
            self.route_emitted_all(from);
        }
    }

    fn route_emitted_all(&mut self, from: u32) {
        #[cfg(pktflow_fast)]
        if self.local.is_empty() {
            // Every element runs here: nothing is set aside.
            while let Some((port, p)) = self.cx.pop_emitted() {
                match self.out_edge[from as usize].get(port).copied().flatten() {
                    Some((to, to_port)) => self.stack.push((to, to_port, p)),
                    None => {
                        self.cx.element = from;
                        self.cx.drop_packet(p, "unconnected output");
                    }
                }
            }
            return;
        }
        #[cfg(pktflow_fast)]
        let first_export = self.exported.len();
        while let Some((port, p)) = self.cx.pop_emitted() {
            match self.out_edge[from as usize].get(port).copied().flatten() {
                #[cfg(pktflow_fast)]
                Some((to, to_port))
                    if !self.local.is_empty()
                        && !self.local[to as usize]
                        && !self
                            .replica_here
                            .as_ref()
                            .is_some_and(|(rep, here)| rep[to as usize] && here(to, &p)) =>
                {
                    self.n_exported += 1;
                    self.exported.push((to, to_port, p));
                }
                Some((to, to_port)) => self.stack.push((to, to_port, p)),
                None => {
                    self.cx.element = from;
                    self.cx.drop_packet(p, "unconnected output");
                }
            }
        }
        // Packets set aside leave in the order they were emitted.
        #[cfg(pktflow_fast)]
        self.exported[first_export..].reverse();
    }

    fn run_stack(&mut self) {
        let next = self.stack.pop();
        self.run_from(next);
    }

    /// [`Router::run_stack`], starting with the visit `next` (then the stack's top).
    ///
    /// After a visit that emitted exactly one packet to a connected output (the common case),
    /// when every element runs here, that packet is visited next without going through the
    /// stack (it would be pushed and popped at once: the same depth-first order); otherwise
    /// what the visit emitted is routed ([`Router::route_emitted`]) and the stack's top comes
    /// next. The visit in hand stays in local variables.
    fn run_from(&mut self, next: Option<(u32, u16, Packet)>) {
        // Whether every element runs here (fixed for the run: asked once, not at every visit).
        #[cfg(pktflow_fast)]
        let direct = self.local.is_empty();
        #[cfg(not(pktflow_fast))]
        let direct = true;
        let Some((mut e, mut port, mut p)) = next else {
            return;
        };
        let dq = self.any_downstream_queue;
        let mut visits = 0usize;
        loop {
            visits += 1;
            if visits > MAX_VISITS_PER_PACKET {
                self.cx.element = e;
                self.cx.drop_packet(p, "visit limit exceeded");
            } else {
                if dq {
                    if let Some(q) = *at(&self.downstream_queue, e) {
                        self.cx.downstream_queue_len = at(&self.elems, q).held();
                    }
                }
                let v = self.begin(e);
                at_mut(&mut self.elems, e).push(port as usize, p, &mut self.cx);
                self.end(v, port);
                if direct && self.cx.out.is_empty() {
                    if let Some((out, q)) = self.cx.first.take() {
                        let to = *at(&self.out0, e);
                        if out == 0 && to != NO_EDGE {
                            (e, port, p) = ((to >> 16) as u32, to as u16, q);
                            continue;
                        }
                        if let Some(&Some((to, to_port))) = at(&self.out_edge, e).get(out) {
                            (e, port, p) = (to, to_port, q);
                            continue;
                        }
                        self.cx.first = Some((out, q));
                    }
                }
                self.route_emitted(e);
            }
            match self.stack.pop() {
                Some(n) => (e, port, p) = n,
                None => return,
            }
        }
    }

    /// Pull one packet out of `(e, port)`; `Err(())` when nothing is available.
    fn pull_from(&mut self, e: u32, port: u16, depth: usize) -> Result<Option<Packet>, ()> {
        if depth > 64 {
            return Err(());
        }
        if self.storage[e as usize] {
            // Fast build: an empty storage element has nothing to give; its pull would only
            // record the empty poll's cost.
            #[cfg(pktflow_fast)]
            if self.elems[e as usize].held() == 0 {
                return Err(());
            }
            let v = self.begin(e);
            let r = self.elems[e as usize].pull(port as usize, &mut self.cx);
            if r.is_none() {
                // An empty poll is the output interface idling, not work caused by a packet.
                self.cx.trace.accesses.truncate(v.1 as usize);
                return Err(());
            }
            self.end(v, port);
            self.route_emitted(e);
            return Ok(r);
        }
        if !self.elems[e as usize].pull_ready(self.cx.now_ns) {
            return Err(());
        }
        let nin = self.in_edge[e as usize].len();
        if let Some(order) = self.elems[e as usize].pull_order(nin) {
            // A scheduler: the first input (in its order) that has a packet.
            for port_in in order {
                let Some((up, up_port)) = self.in_edge[e as usize].get(port_in).copied().flatten()
                else {
                    continue;
                };
                let Ok(Some(p)) = self.pull_from(up, up_port, depth + 1) else {
                    continue;
                };
                let v = self.begin(e);
                let r = self.elems[e as usize].pulled(port_in, p, &mut self.cx);
                self.end(v, port);
                self.route_emitted(e);
                self.run_stack();
                return Ok(r);
            }
            return Err(());
        }
        let Some((up, up_port)) = self.in_edge[e as usize].first().copied().flatten() else {
            return Err(());
        };
        let Some(p) = self.pull_from(up, up_port, depth + 1)? else {
            return Ok(None);
        };
        let v = self.begin(e);
        let r = self.elems[e as usize].simple_action(p, &mut self.cx);
        self.end(v, port);
        self.route_emitted(e);
        self.run_stack();
        Ok(r)
    }

    fn drain_pull_sinks(&mut self) {
        for k in 0..self.pull_sinks.len() {
            let PullSink {
                sink: s,
                up,
                from_storage,
            } = self.pull_sinks[k];
            let Some((up, up_port)) = up else {
                continue;
            };
            // Fast build: a sink that pulls straight from an empty queue has nothing to take
            // (`pull_ready` only reads the time: asking it can be skipped).
            #[cfg(pktflow_fast)]
            if from_storage {
                self.drain_queue_into(s, up, up_port);
                continue;
            }
            #[cfg(not(pktflow_fast))]
            let _ = from_storage;
            let mut guard = 0;
            while self.elems[s as usize].pull_ready(self.cx.now_ns) {
                let Ok(r) = self.pull_from(up, up_port, 0) else {
                    break;
                };
                guard += 1;
                if let Some(p) = r {
                    let v = self.begin(s);
                    self.elems[s as usize].push(0, p, &mut self.cx);
                    self.end(v, 0);
                    self.route_emitted(s);
                    self.run_stack();
                }
                if guard > MAX_VISITS_PER_PACKET {
                    break;
                }
            }
        }
    }

    /// Fast build: sink `s` pulls straight from the storage element `up` (a Queue feeding a
    /// ToDevice, the common case): the same visits in the same order as the general loop of
    /// [`Router::drain_pull_sinks`] (the sink is ready, the queue gives its head, the sink takes
    /// it), without going through [`Router::pull_from`]'s search for the storage element.
    ///
    /// The queue's length is asked once per round, not before every pull: while the sink takes
    /// packets only pushes run (the sink's, and what they cause), so the queue cannot shrink
    /// but by these pulls; a last ask finds what those pushes added.
    #[cfg(pktflow_fast)]
    fn drain_queue_into(&mut self, s: u32, up: u32, up_port: u16) {
        let mut guard = 0;
        loop {
            let n = at(&self.elems, up).held();
            if n == 0 {
                return;
            }
            for _ in 0..n {
                if !at_mut(&mut self.elems, s).pull_ready(self.cx.now_ns) {
                    return;
                }
                let v = self.begin(up);
                let Some(p) = at_mut(&mut self.elems, up).pull(up_port as usize, &mut self.cx)
                else {
                    return;
                };
                self.end(v, up_port);
                self.route_emitted(up);
                let v = self.begin(s);
                at_mut(&mut self.elems, s).push(0, p, &mut self.cx);
                self.end(v, 0);
                self.route_emitted(s);
                if !self.stack.is_empty() {
                    self.run_stack();
                }
                guard += 1;
                if guard > MAX_VISITS_PER_PACKET {
                    return;
                }
            }
        }
    }

    fn held_now(&self) -> usize {
        self.elems.iter().map(|e| e.held()).sum()
    }

    /// Fast build: process everything one packet causes; conservation is counted for the run.
    #[cfg(pktflow_fast)]
    fn process(&mut self, start: u32, p: Packet, _created_before: u64) -> &PacketTrace {
        let before = packets_created();
        self.cx.now_ns = p.anno.timestamp_ns;
        self.cx.trace.timestamp_ns = p.anno.timestamp_ns;
        self.cx.element = start;
        // When every element runs here, the source's output 0 leads straight to the first
        // visit; otherwise (and from an unconnected source, which drops the packet) the
        // packet is routed as any visit's output is.
        match at(&self.out_edge, start).first() {
            Some(&Some((to, port))) if self.local.is_empty() => self.run_from(Some((to, port, p))),
            _ => {
                self.cx.emit(0, p);
                self.route_emitted(start);
                self.run_stack();
            }
        }
        self.drain_pull_sinks();
        if !self.cx.calls.is_empty() {
            self.run_calls();
        }
        self.injected += 1;
        self.created_inside += packets_created() - before;
        &self.cx.trace
    }

    /// Fast build: the run's packet balance so far.
    #[cfg(pktflow_fast)]
    pub fn counts(&self) -> Counts {
        Counts {
            injected: self.injected,
            created: self.created_inside,
            output: self.cx.outputs,
            dropped: self.cx.drops,
            held: self.held_now() as u64,
            received: self.n_received,
            exported: self.n_exported,
        }
    }

    /// Fast build: run only the elements marked true (one flag per element); packets for the
    /// others are set aside ([`Router::take_exported`]). Pull sinks of elements not run here
    /// are not drained by this router.
    #[cfg(pktflow_fast)]
    pub fn set_local(&mut self, local: Vec<bool>) {
        assert_eq!(local.len(), self.elems.len(), "one flag per element");
        self.pull_sinks.retain(|s| local[s.sink as usize]);
        self.local = local;
    }

    /// Fast build: elements (flag per element) this router holds a replica of among others:
    /// a packet for one is visited here when `here(element, packet)` says so, else set aside.
    #[cfg(pktflow_fast)]
    pub fn set_replica_choice(&mut self, replicated: Vec<bool>, here: ReplicaHere) {
        assert_eq!(replicated.len(), self.elems.len(), "one flag per element");
        self.replica_here = Some((replicated, here));
    }

    /// Fast build: packets set aside for elements this router does not run: (element, input
    /// port, packet), in the order they were emitted.
    #[cfg(pktflow_fast)]
    pub fn take_exported(&mut self) -> std::vec::Drain<'_, (u32, u16, Packet)> {
        self.exported.drain(..)
    }

    /// Fast build: process a packet handed over by another router, arriving at input `port`
    /// of element `to`, and everything it causes here (as [`Router::inject`] does for a
    /// trace packet). It counts as received, not injected.
    #[cfg(pktflow_fast)]
    pub fn deliver(&mut self, to: u32, port: u16, p: Packet) {
        let before = packets_created();
        self.cx.now_ns = p.anno.timestamp_ns;
        self.cx.trace.timestamp_ns = p.anno.timestamp_ns;
        self.stack.push((to, port, p));
        self.run_stack();
        self.drain_pull_sinks();
        if !self.cx.calls.is_empty() {
            self.run_calls();
        }
        self.n_received += 1;
        self.created_inside += packets_created() - before;
    }

    /// The source element trace interface `iface` enters (as [`Router::inject`] chooses it).
    pub fn source_element(&self, iface: usize) -> Option<u32> {
        (!self.sources.is_empty()).then(|| self.sources[iface % self.sources.len()])
    }

    /// Pull connections: (upstream element, element that pulls from it).
    pub fn pull_connections(&self) -> Vec<(u32, u32)> {
        let mut v = Vec::new();
        for (e, ins) in self.in_edge.iter().enumerate() {
            for (up, _) in ins.iter().flatten() {
                v.push((*up, e as u32));
            }
        }
        v
    }

    /// Push connections: (element, output port, element, input port).
    pub fn push_connections(&self) -> Vec<(u32, u16, u32, u16)> {
        let mut v = Vec::new();
        for (e, outs) in self.out_edge.iter().enumerate() {
            for (port, to) in outs.iter().enumerate() {
                if let Some((t, tp)) = to {
                    v.push((e as u32, port as u16, *t, *tp));
                }
            }
        }
        v
    }

    /// Fast build: a packet buffer to reuse (one that was dropped or left), if any.
    #[cfg(pktflow_fast)]
    #[inline]
    pub fn take_free(&mut self) -> Option<Packet> {
        self.cx.free.pop()
    }

    /// Fast build: give back a packet taken with [`Router::take_departed`] for reuse.
    #[cfg(pktflow_fast)]
    #[inline]
    pub fn recycle(&mut self, p: Packet) {
        self.cx.recycle(p);
    }

    /// Process everything one packet causes, starting with `first` (element, and whether it is
    /// a source visit), and check conservation.
    #[cfg(not(pktflow_fast))]
    fn process(&mut self, start: u32, p: Packet, created_before: u64) -> &PacketTrace {
        self.cx.now_ns = p.anno.timestamp_ns;
        self.cx.trace.clear();
        self.cx.trace.packet = p.id;
        self.cx.trace.timestamp_ns = p.anno.timestamp_ns;
        // A packet of a truncated capture counts its length on the wire, not the bytes kept.
        self.cx.trace.wire_bytes = (p.len() as u32).max(p.anno.wire_len);
        // The source visit: the element emits the packet on output 0.
        let v = self.begin(start);
        self.cx.instr(4);
        self.cx.write_meta(16);
        self.end(v, 0);
        self.cx.emit(0, p);
        self.route_emitted(start);
        self.run_stack();
        self.drain_pull_sinks();
        if !self.cx.calls.is_empty() {
            self.run_calls();
        }
        self.injected += 1;
        let created = packets_created() - created_before;
        let held = self.held_now();
        let accounted = self.cx.trace.fates.len() as i64 + held as i64 - self.held_total as i64;
        if accounted != created as i64 {
            self.conservation_errors += 1;
            debug_assert_eq!(
                accounted, created as i64,
                "packet conservation violated while processing packet {}",
                self.cx.trace.packet
            );
        }
        self.held_total = held;
        &self.cx.trace
    }

    /// Inject a trace packet arriving on interface `iface` (mapped to the sources in
    /// declaration order, `iface % n_sources`). Returns the packet's trace.
    pub fn inject(&mut self, iface: usize, p: Packet) -> Result<&PacketTrace, String> {
        if self.sources.is_empty() {
            return Err("the configuration has no input device (FromDevice/PollDevice) to inject trace packets into".into());
        }
        let before = packets_created() - 1; // `p` itself was created by the caller
        let n = self.sources.len();
        let src = self.sources[if iface < n { iface } else { iface % n }];
        let mut p = p;
        // A receiving device classifies the frame by its Ethernet destination (Click's
        // FromDevice sets the packet-type annotation that DropBroadcasts and ICMPError read).
        if let Some(dst) = p.data().get(0..6) {
            p.anno.packet_type = if dst == [0xff; 6] {
                PacketType::Broadcast
            } else if dst[0] & 1 == 1 {
                PacketType::Multicast
            } else {
                PacketType::Host
            };
        }
        Ok(self.process(src, p, before))
    }

    /// Run the generators (InfiniteSource, FromDump, ...) round-robin; `f` sees each trace.
    /// Stops when all are exhausted or after `limit` packets.
    pub fn run_generators(&mut self, limit: u64, mut f: impl FnMut(&PacketTrace)) -> u64 {
        let mut done = vec![false; self.generators.len()];
        let mut count = 0;
        while count < limit && done.iter().any(|d| !d) {
            for (k, is_done) in done.iter_mut().enumerate() {
                if *is_done || count >= limit {
                    continue;
                }
                let g = self.generators[k];
                let before = packets_created();
                self.cx.element = g;
                let next = self.elems[g as usize].generate(&mut self.cx);
                match next {
                    Some(mut p) => {
                        p.id = count;
                        let t = self.process(g, p, before);
                        f(t);
                        count += 1;
                    }
                    None => *is_done = true,
                }
            }
        }
        count
    }

    /// Names of the configuration's own packet sources (generators), in declaration order.
    /// The files the elements read and write: (element name, output?, name as written, path).
    pub fn files(&self) -> Vec<(String, bool, String, PathBuf)> {
        self.files
            .iter()
            .map(|f| {
                let name = self
                    .graph
                    .elements
                    .get(f.element as usize)
                    .map(|d| d.name.clone())
                    .unwrap_or_default();
                (name, f.output, f.name.clone(), f.path.clone())
            })
            .collect()
    }

    pub fn generator_names(&self) -> Vec<String> {
        self.generators
            .iter()
            .map(|&g| self.graph.elements[g as usize].name.clone())
            .collect()
    }

    /// The next packet of the configuration's own sources (FromDump, InfiniteSource, ...),
    /// taken round-robin from the generators not yet exhausted, processed; `None` once every
    /// generator is exhausted. Packet ids count from 0 over all generators.
    pub fn generate_next(&mut self) -> Option<&PacketTrace> {
        if self.stopped {
            return None;
        }
        let n = self.generators.len();
        if self.gen_done.len() != n {
            self.gen_done = vec![false; n];
        }
        for _ in 0..n {
            let k = self.gen_next;
            self.gen_next = (k + 1) % n;
            if self.gen_done[k] {
                continue;
            }
            let g = self.generators[k];
            let before = packets_created();
            self.cx.element = g;
            match self.elems[g as usize].generate(&mut self.cx) {
                Some(mut p) => {
                    p.id = self.gen_count;
                    self.gen_count += 1;
                    return Some(self.process(g, p, before));
                }
                None => self.gen_done[k] = true,
            }
        }
        None
    }

    /// The trace of the last packet processed.
    pub fn last_trace(&self) -> &PacketTrace {
        &self.cx.trace
    }

    /// Keep packets that leave through sinks so [`Router::take_departed`] can return them.
    pub fn set_tap(&mut self, on: bool) {
        self.cx.tap = on;
        if !on {
            self.cx.departed.clear();
        }
    }

    /// Packets that left through sinks since the last call (with the sink's element index),
    /// when the tap is on.
    pub fn take_departed(&mut self) -> std::vec::Drain<'_, (u32, Packet)> {
        self.cx.departed.drain(..)
    }

    /// [`Router::take_departed`] by exchanging vectors: `into` (empty) takes the packets that
    /// left and the router keeps `into`'s buffer, so neither is reallocated or copied.
    #[inline]
    pub fn swap_departed(&mut self, into: &mut Vec<(u32, Packet)>) {
        debug_assert!(into.is_empty());
        std::mem::swap(&mut self.cx.departed, into);
    }

    /// Index into the sources (trace interface) whose device is `dev`.
    pub fn source_index_of_device(&self, dev: &str) -> Option<usize> {
        self.sources
            .iter()
            .position(|&s| self.elems[s as usize].device() == Some(dev))
    }

    /// Packets still held by elements (queues, ARP waits), per element name.
    pub fn held(&self) -> Vec<(String, usize)> {
        self.elems
            .iter()
            .enumerate()
            .filter(|(_, e)| e.held() > 0)
            .map(|(i, e)| (self.graph.elements[i].name.clone(), e.held()))
            .collect()
    }

    /// Flush outputs (ToDump files). Returns the first error, naming the element.
    pub fn finish(&mut self) -> Result<(), String> {
        // The packets are over: every script's wait completes and the rest of it runs.
        self.run_scripts(true).map_err(|(_, m)| m)?;
        if let Some(m) = self.call_errors.take() {
            return Err(format!("COUNT_CALL: {m}"));
        }
        for (i, e) in self.elems.iter_mut().enumerate() {
            e.finish()
                .map_err(|m| format!("{}: {}", self.graph.elements[i].name, m))?;
        }
        Ok(())
    }

    /// Per-element read handlers as JSON.
    pub fn stats(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        for (i, e) in self.elems.iter().enumerate() {
            let s = e.stats();
            if !s.is_null() {
                m.insert(self.graph.elements[i].name.clone(), s);
            }
        }
        serde_json::Value::Object(m)
    }
}

/// Fast build: whether this router visits a packet for a replicated element itself.
#[cfg(pktflow_fast)]
pub type ReplicaHere = Box<dyn Fn(u32, &Packet) -> bool + Send>;

/// Fast build: elements replicated here, and the choice of visiting a packet here.
#[cfg(pktflow_fast)]
type ReplicaChoice = (Vec<bool>, ReplicaHere);

/// Fast build: the packet balance of a run. Conserved when
/// `injected + created == output + dropped + held`.
#[cfg(pktflow_fast)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Packets injected (trace packets and the configuration's own sources).
    pub injected: u64,
    /// Packets elements created while processing (copies, ICMP errors, ARP queries).
    pub created: u64,
    /// Packets that left through a sink.
    pub output: u64,
    /// Packets dropped (by the application's logic or an unconnected output).
    pub dropped: u64,
    /// Packets still held (queues, ARP waits).
    pub held: u64,
    /// Packets handed over by other routers ([`Router::deliver`]) and set aside for them
    /// ([`Router::take_exported`]); both 0 when the router runs every element.
    pub received: u64,
    pub exported: u64,
}

#[cfg(pktflow_fast)]
impl Counts {
    pub fn conserved(&self) -> bool {
        self.injected + self.received + self.created
            == self.output + self.dropped + self.held + self.exported
    }
}

/// The router's handlers as scripts see them.
struct RouterHandlers<'a> {
    names: &'a [pktflow_model::ElementDecl],
    elems: &'a mut Vec<Box<dyn Element>>,
}

fn find_handler<'n>(
    names: &'n [pktflow_model::ElementDecl],
    spec: &'n str,
) -> Result<(usize, &'n str), String> {
    let (el, h) = spec
        .rsplit_once('.')
        .ok_or_else(|| format!("'{spec}' is not a handler (expected ELEMENT.HANDLER)"))?;
    let i = names
        .iter()
        .position(|d| d.name == el)
        .ok_or_else(|| format!("no element '{el}' (handler '{spec}')"))?;
    Ok((i, h))
}

fn read_handler(
    names: &[pktflow_model::ElementDecl],
    elems: &[Box<dyn Element>],
    spec: &str,
) -> Result<String, String> {
    let (i, h) = find_handler(names, spec)?;
    match h {
        "name" => return Ok(names[i].name.clone()),
        "class" => return Ok(names[i].class.clone()),
        "config" => return Ok(names[i].config.clone()),
        _ => {}
    }
    let st = elems[i].stats();
    let v = st
        .get(h)
        .ok_or_else(|| format!("element '{}' has no read handler '{h}'", names[i].name))?;
    Ok(match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    })
}

impl crate::elements::click::script::Handlers for RouterHandlers<'_> {
    fn read(&self, spec: &str) -> Result<String, String> {
        read_handler(self.names, self.elems, spec)
    }
    fn write(&mut self, spec: &str, value: &str) -> Result<(), String> {
        let (i, h) = find_handler(self.names, spec)?;
        self.elems[i]
            .write_handler(h, value)
            .map_err(|m| format!("{}: {m}", self.names[i].name))
    }
    /// The write handlers pktflow's elements have (Script's `writable`).
    fn writable(&self, spec: &str) -> bool {
        let Ok((i, h)) = find_handler(self.names, spec) else {
            return false;
        };
        let class = self.names[i].class.as_str();
        const SOURCES: &[&str] = &[
            "InfiniteSource",
            "TimedSource",
            "RatedSource",
            "FastUDPSource",
            "FastUDPFlows",
        ];
        match h {
            "reset" => SOURCES.contains(&class) || matches!(class, "Counter" | "AverageCounter"),
            "reset_counts" => class == "Counter",
            "active" | "limit" => {
                SOURCES.contains(&class) || matches!(class, "ICMPPingSource" | "ICMPSendPings")
            }
            "insert" => class == "ARPTable",
            "switch" => class == "Switch",
            _ => false,
        }
    }
}

/// Handlers of several routers of one graph, each element's those of the router that runs it.
struct AcrossHandlers<'a, 'r> {
    names: &'a [pktflow_model::ElementDecl],
    routers: &'a mut [&'r mut Router],
    owner: &'a [usize],
}

impl crate::elements::click::script::Handlers for AcrossHandlers<'_, '_> {
    fn read(&self, spec: &str) -> Result<String, String> {
        let (i, _) = find_handler(self.names, spec)?;
        read_handler(self.names, &self.routers[self.owner[i]].elems, spec)
    }
    fn write(&mut self, spec: &str, value: &str) -> Result<(), String> {
        let (i, h) = find_handler(self.names, spec)?;
        self.routers[self.owner[i]].elems[i]
            .write_handler(h, value)
            .map_err(|m| format!("{}: {m}", self.names[i].name))
    }
}

/// Run the scripts (Script, DriverManager) of several routers of one graph once, against the
/// elements of all of them: element `i` is the one of `routers[owner[i]]` (the script element
/// itself too). Up to each script's next wait (`past_wait` false), or to its end. Returns
/// whether a script asked to stop; an error names the script element. For `pktflow run
/// --threads N` on a configuration's own tasks: every router is built with
/// [`Router::new_deferred`], and the scripts run before the threads start and after they end,
/// as one Click router's do.
pub fn run_scripts_across(
    routers: &mut [&mut Router],
    owner: &[usize],
    past_wait: bool,
) -> Result<bool, String> {
    let Some(first) = routers.first() else {
        return Ok(false);
    };
    let names = first.graph.elements.clone();
    assert_eq!(owner.len(), names.len(), "one owner per element");
    let scripts: Vec<u32> = (0..names.len() as u32)
        .filter(|&i| matches!(names[i as usize].class.as_str(), "Script" | "DriverManager"))
        .collect();
    let mut stop = false;
    for i in scripts {
        let o = owner[i as usize];
        let Some(mut s) = routers[o].elems[i as usize].take_script() else {
            continue;
        };
        let mut h = AcrossHandlers {
            names: &names,
            routers,
            owner,
        };
        let r = s.run(&mut h, past_wait);
        routers[o].elems[i as usize].put_script(s);
        stop |= r.map_err(|m| format!("{}: {}", names[i as usize].name, m))?;
    }
    Ok(stop)
}

/// A fate's element name, for reports.
pub fn fate_element(f: &Fate) -> u32 {
    match f {
        Fate::Output { element } | Fate::Drop { element, .. } | Fate::Held { element } => *element,
    }
}
