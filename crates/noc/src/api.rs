//! JSON-in / JSON-out entry points used by the Python binding and the CLI
//! (`pktflow noc`, `pktflow stream`).
use crate::balance::{partition, Partition};
use crate::bench;
use crate::config::mesh_with;
use crate::error::{NocError, Result};
use crate::graph::{
    flatten, load_program, parse_program, solve_balance, Balanced, NodeKind, StreamProgram,
};
use crate::layout::{anneal, Layout};
use crate::report::{contention, link_table, router_heatmap};
use crate::req::Fields;
use crate::routing::stream::{self, Routed, StreamInput, StreamRouter};
use crate::routing::{
    check_disjoint, exact, link_loads_paths, negotiated, tentacle, tentacle_order, tentacle_retry,
    ExactOutcome, Mesh, StreamReq, TentacleResult,
};
use crate::sim::setup::setup_times;
use crate::sim::stream::{
    run_stream_with, Comm, FabricKind, MappedGraph, StreamRunConfig, StreamRunResult,
};
use crate::sim::synthetic::{zero_load_latency_with, BookSimRun, Pattern, SynthConfig};
use crate::sim::traffic::TrafficParams;
use crate::sim::NetOptions;
use crate::sim::PacketRouting;
use pktflow_arch::mesh::MeshArch;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::time::Instant;

fn arch_for(
    mesh: &str,
    overrides: &Value,
    vcs: Option<usize>,
    buffer: Option<usize>,
) -> Result<MeshArch> {
    let m = Mesh::parse(mesh)?;
    let mut o = overrides.as_object().cloned().unwrap_or_default();
    o.insert("cols".into(), json!(m.cols));
    o.insert("rows".into(), json!(m.rows));
    if let Some(v) = vcs {
        o.insert("virtual_channels".into(), json!(v));
    }
    if let Some(b) = buffer {
        o.insert("buffer_depth_flits".into(), json!(b));
    }
    mesh_with(&Value::Object(o))
}

fn packet_routing(name: &str) -> Result<PacketRouting> {
    let key = name.trim().to_ascii_lowercase().replace('-', "_");
    PacketRouting::by_name(&key).ok_or_else(|| {
        NocError::Param(format!(
            "synthetic traffic runs on a packet routing function ({}), not `{}`",
            crate::sim::packet_routing::names().join(", "),
            name.trim()
        ))
    })
}

/// Longest warm-up, measurement or drain accepted, cycles.
pub const MAX_CYCLES: u64 = 1_000_000_000;
/// Offered loads of a sweep whose request lists none, flits/node/cycle.
pub const DEFAULT_RATES: [f64; 3] = [0.1, 0.2, 0.3];
/// Most load points in one sweep.
pub const MAX_RATES: usize = 1000;
/// Longest packet accepted, flits.
pub const MAX_PACKET_FLITS: u64 = 1024;

const SWEEP_FIELDS: &[&str] = &[
    "mesh",
    "traffic",
    "routing",
    "vcs",
    "buffer",
    "packet_flits",
    "rates",
    "warmup",
    "measure",
    "drain",
    "seed",
    "hotspot_fraction",
    "arch",
    "compat",
    "config",
    "ni_flits",
    "sample_period",
    "warmup_periods",
    "max_samples",
    "latency_thres",
    "warmup_thres",
    "acc_warmup_thres",
    "stopping_thres",
    "acc_stopping_thres",
];

/// Conventions a sweep can follow (`compat`).
pub const COMPAT_NAMES: [&str; 2] = ["pktflow", "booksim"];

/// Conventions of the synthetic traffic, reported with every sweep.
fn conventions(booksim: bool, pattern: &Pattern, mesh: &Mesh, params: &TrafficParams) -> Value {
    let mut c = json!({
        "compat": if booksim { "booksim" } else { "pktflow" },
        "rates": "offered loads are flits per node per cycle averaged over all nodes, including nodes that send nothing",
        "traffic": pattern.0.describe(),
        "self_addressed": if booksim {
            "a node whose destination is itself sends the packet through its own router (BookSim)"
        } else {
            "a node whose destination would be itself sends nothing"
        },
        "injection": "Bernoulli: each node creates a packet in a cycle with probability rate / packet_flits",
        "latency": "creation to tail delivery, including source queueing, of packets created in the measurement window; a lower bound when some of them were not delivered",
        "source_queue_cap": crate::sim::synthetic::SOURCE_QUEUE_CAP,
        "source_queue": "a packet created while its source queue holds source_queue_cap packets is not injected and counts as not delivered",
        "saturation": format!(
            "a point is saturated when any measured packet was not delivered, or accepted throughput is more than {:.0}% below offered, or the mean latency exceeds {}x the pattern's zero-load latency, or (XY routing) the requested rate exceeds the pattern's capacity bound, or the source queues grew by more than one packet per node over the measurement window",
            crate::sim::synthetic::SATURATION_THROUGHPUT_TOLERANCE * 100.0,
            crate::sim::synthetic::SATURATION_LATENCY_FACTOR
        ),
        "saturation_offered": "the largest offered load among the unsaturated points below the lowest saturated requested rate (null when the first point is saturated)",
    });
    let o = c.as_object_mut().expect("object");
    // every registered pattern as defined on this mesh (those it is defined on)
    for name in crate::sim::traffic::names() {
        if let Ok(p) = Pattern::build(name, mesh, params) {
            o.insert(name.into(), json!(p.0.describe()));
        }
    }
    if booksim {
        o.insert("measurement".into(), json!("BookSim's sim_type = latency rule: sample periods of sample_period cycles; warm-up for warmup_periods periods (or, with 0, until latency and accepted throughput change by less than warmup_thres / acc_warmup_thres); then packets created are measured and each period compares the mean latency of measured packets delivered so far and the accepted throughput since warm-up with the previous period; three periods in a row with both changes below stopping_thres / acc_stopping_thres end the measurement (or max_samples periods in all); the run then drains until every measured packet arrived (at most `drain` cycles); a mean latency above latency_thres abandons the run as unstable"));
        o.insert("network".into(), json!("network interfaces move one flit per cycle each way (unless ni_flits or arch set them); the injection path takes one more cycle than pktflow's; VC allocation takes the first free output VC in round-robin order (no preference for the emptiest buffer); adaptive routing runs as BookSim's min_adapt does on a mesh: its output set keeps one element per priority, so the adaptive VCs 1..V-1 are offered only on the first productive dimension (the XY port), before that port's escape VC 0, a packet in an escape VC stays on escape VCs, and a VC is taken whenever it is free (no room rule, no injection reserve)"));
    } else {
        o.insert("drain".into(), json!("after the measurement window the simulation runs up to `drain` more cycles (default: the measurement length), still injecting unmeasured traffic, until every measured packet has arrived"));
    }
    c
}

/// Synthetic-traffic sweep: `{"mesh":"8x8","traffic":"uniform","routing":"dor","rates":[...]}`.
pub fn noc_sweep(req_json: &str) -> Result<String> {
    noc_sweep_with(req_json, &mut |_, _, _| {})
}

/// The sweep with a progress callback `progress(cycles done, cycles at most, label)`. On Ctrl-C
/// it returns the points already finished with `"interrupted": true`.
pub fn noc_sweep_with(req_json: &str, progress: &mut dyn FnMut(u64, u64, &str)) -> Result<String> {
    use crate::sim::synthetic::{max_cycles, run_point_with, Stop};
    let f = Fields::parse(req_json, "noc_sweep request", SWEEP_FIELDS)?;
    // a BookSim-style configuration file gives defaults; the request's own fields win
    let f = if f.has("config") {
        let path = f.string("config", "")?;
        let mut merged = crate::booksim::load(&path)?;
        let own: Value = serde_json::from_str(req_json).map_err(|e| NocError::Request {
            what: "noc_sweep request".into(),
            msg: e.to_string(),
        })?;
        for (k, v) in own.as_object().into_iter().flatten() {
            if k == "arch" {
                if let (Some(Value::Object(a)), Value::Object(b)) = (merged.get_mut("arch"), v) {
                    for (ak, av) in b {
                        a.insert(ak.clone(), av.clone());
                    }
                    continue;
                }
            }
            if !v.is_null() && k != "config" {
                merged.insert(k.clone(), v.clone());
            }
        }
        Fields::parse(
            &Value::Object(merged).to_string(),
            "noc_sweep request",
            SWEEP_FIELDS,
        )?
    } else {
        f
    };
    let compat = f.string("compat", "pktflow")?;
    let booksim = match compat.as_str() {
        "pktflow" => false,
        "booksim" => true,
        other => {
            return Err(NocError::Field {
                field: "compat".into(),
                msg: format!("must be one of {}, got `{other}`", COMPAT_NAMES.join(", ")),
            })
        }
    };
    let mesh_s = f.string("mesh", "8x8")?;
    let traffic = f.string("traffic", "uniform")?;
    let routing_s = f.string("routing", "dor")?;
    let vcs = f.int_opt("vcs", 1, 11, "")?.map(|v| v as usize);
    let buffer = f.int_opt("buffer", 1, 1024, " flits")?.map(|v| v as usize);
    let packet_flits = f.int("packet_flits", 1, 1, MAX_PACKET_FLITS, " flits")? as u32;
    let rates = f.num_list("rates", 0.0, 1.0, MAX_RATES, " flits/node/cycle")?;
    let warmup = f.int("warmup", 10_000, 0, MAX_CYCLES, " cycles")?;
    let measure = f.int("measure", 100_000, 1, MAX_CYCLES, " cycles")?;
    let drain = f.int_opt("drain", 0, MAX_CYCLES, " cycles")?;
    let seed = f.int("seed", 1, 0, u64::MAX, "")?;
    let hotspot_fraction = f.num_opt("hotspot_fraction", 0.0, 1.0, "")?;
    let ni_flits = f.int_opt("ni_flits", 1, 4, " flits/cycle")?;
    let d = BookSimRun::default();
    let bs = BookSimRun {
        sample_period: f.int("sample_period", d.sample_period, 1, MAX_CYCLES, " cycles")?,
        warmup_periods: f.int("warmup_periods", d.warmup_periods, 0, 1_000_000, "")?,
        max_samples: f.int("max_samples", d.max_samples, 1, 1_000_000, "")?,
        latency_thres: f
            .num_opt("latency_thres", 0.0, 1e12, " cycles")?
            .unwrap_or(d.latency_thres),
        warmup_thres: f
            .num_opt("warmup_thres", 0.0, 1e6, "")?
            .unwrap_or(d.warmup_thres),
        acc_warmup_thres: f
            .num_opt("acc_warmup_thres", 0.0, 1e6, "")?
            .unwrap_or(d.acc_warmup_thres),
        stopping_thres: f
            .num_opt("stopping_thres", 0.0, 1e6, "")?
            .unwrap_or(d.stopping_thres),
        acc_stopping_thres: f
            .num_opt("acc_stopping_thres", 0.0, 1e6, "")?
            .unwrap_or(d.acc_stopping_thres),
    };
    if bs.sample_period.saturating_mul(bs.max_samples) > MAX_CYCLES {
        return Err(NocError::Field {
            field: "max_samples".into(),
            msg: format!(
                "x sample_period must be at most {MAX_CYCLES} cycles, got {} x {}",
                bs.max_samples, bs.sample_period
            ),
        });
    }
    let mut arch_over = f.object("arch")?;
    // network interfaces: one flit per cycle each way under BookSim's conventions (unless the
    // request sets them), `ni_flits` sets both
    if let Some(o) = arch_over.as_object_mut() {
        let ni = ni_flits.or(if booksim { Some(1) } else { None });
        if let Some(ni) = ni {
            for key in [
                "node_injection_flits_per_cycle",
                "node_ejection_flits_per_cycle",
            ] {
                if ni_flits.is_some() || !o.contains_key(key) {
                    o.insert(key.into(), json!(ni));
                }
            }
        }
    } else if let Some(ni) = ni_flits.or(if booksim { Some(1) } else { None }) {
        arch_over =
            json!({"node_injection_flits_per_cycle": ni, "node_ejection_flits_per_cycle": ni});
    }
    let rates = if f.has("rates") {
        if rates.is_empty() {
            return Err(NocError::Field {
                field: "rates".into(),
                msg: "must list at least one offered load".into(),
            });
        }
        rates
    } else {
        DEFAULT_RATES.to_vec()
    };
    let arch = arch_for(&mesh_s, &arch_over, vcs, buffer)?;
    let mesh = Mesh::new(arch.cols, arch.rows)?;
    let routing = packet_routing(&routing_s)?;
    let params = TrafficParams {
        hotspot_fraction,
        uniform_includes_source: booksim,
    };
    let pattern = Pattern::build(&traffic, &mesh, &params)?;
    let drain_default = if booksim {
        bs.sample_period.saturating_mul(bs.max_samples)
    } else {
        measure
    };
    let cfgs: Vec<SynthConfig> = rates
        .iter()
        .map(|&rate| SynthConfig {
            pattern: pattern.clone(),
            rate,
            packet_flits,
            warmup_cycles: warmup,
            measure_cycles: measure,
            drain_cycles: drain.unwrap_or(drain_default),
            seed,
            booksim: booksim.then_some(bs),
        })
        .collect();
    let total: u64 = cfgs.iter().map(max_cycles).fold(0, u64::saturating_add);
    let mut done = 0u64;
    let mut points = Vec::new();
    let mut interrupted = false;
    for (i, cfg) in cfgs.iter().enumerate() {
        let label = format!("rate {} ({}/{})", cfg.rate, i + 1, cfgs.len());
        let base = done;
        match run_point_with(&arch, routing, cfg, &mut |c| {
            progress(base + c, total, &label)
        }) {
            Ok(p) => points.push(p),
            Err(Stop::Interrupted) => {
                interrupted = true;
                break;
            }
            Err(Stop::Error(e)) => return Err(e),
        }
        done += max_cycles(cfg);
    }
    // the knee: unsaturated points below the lowest saturated requested rate
    let first_sat = points
        .iter()
        .filter(|p| p.saturated)
        .map(|p| p.requested_rate)
        .fold(f64::INFINITY, f64::min);
    let sat = points
        .iter()
        .filter(|p| !p.saturated && p.requested_rate < first_sat)
        .map(|p| p.offered)
        .fold(f64::NAN, f64::max);
    let hops = pattern.mean_hops(&mesh, booksim);
    let dor = routing == PacketRouting::Dor;
    let opts = if booksim {
        NetOptions::booksim()
    } else {
        NetOptions::default()
    };
    let bound = if dor {
        pattern.dor_bound(&mesh, arch.node_ejection_flits_per_cycle, booksim)
    } else {
        None
    };
    Ok(json!({
        "mesh": mesh_s, "cols": mesh.cols, "rows": mesh.rows, "traffic": traffic, "routing": routing_s,
        "virtual_channels": arch.virtual_channels, "buffer_depth_flits": arch.buffer_depth_flits,
        "packet_flits": packet_flits,
        "warmup_cycles": if booksim { Value::Null } else { json!(warmup) },
        "measure_cycles": if booksim { Value::Null } else { json!(measure) },
        "drain_cycles": drain.unwrap_or(drain_default), "seed": seed,
        "compat": compat,
        "booksim_run": if booksim { json!(bs) } else { Value::Null },
        "hotspot_fraction": if pattern.name() == "hotspot" { json!(hotspot_fraction.unwrap_or(crate::sim::traffic::hotspot::DEFAULT_FRACTION)) } else { Value::Null },
        "sending_nodes": pattern.senders(&mesh, booksim), "nodes": mesh.nodes(),
        "points": points,
        "interrupted": interrupted,
        "saturation_offered": if sat.is_nan() { Value::Null } else { json!(sat) },
        "conventions": conventions(booksim, &pattern, &mesh, &params),
        "theory": {
            "pattern": pattern.name(),
            "mean_hops": hops,
            "zero_load_latency": hops.map(|h| zero_load_latency_with(&arch, h, packet_flits, opts)),
            "requested_rate_bound": bound,
            "requested_rate_bound_note": if dor {
                "largest requested rate (flits per cycle of each sending node) that loads no link or ejection port beyond capacity under XY routing"
            } else {
                "no closed-form bound is given for adaptive routing"
            },
        },
        "routing_description": routing.0.describe(),
        "arch": arch,
    })
    .to_string())
}

/// Load a graph by benchmark name, file path (.json/.toml) or inline JSON program.
pub fn load_graph(spec: &str) -> Result<StreamProgram> {
    let s = spec.trim();
    if s.starts_with('{') {
        return parse_program(s, "inline graph");
    }
    if bench::json(s).is_some() {
        return bench::program(s);
    }
    if std::path::Path::new(s).exists() {
        return load_program(s);
    }
    Err(NocError::Param(format!(
        "`{s}` is neither a built-in benchmark ({}) nor an existing .json/.toml file",
        bench::names().join(", ")
    )))
}

fn balanced(spec: &str, corrected: bool) -> Result<Balanced> {
    let p = load_graph(spec)?;
    solve_balance(flatten(&p, corrected)?)
}

/// Load and balance a graph; returns its actors, edges and repetition vector.
pub fn stream_graph_load(spec: &str) -> Result<String> {
    let b = balanced(spec, false)?;
    let g = &b.graph;
    let nodes: Vec<Value> = g
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            json!({"name": n.name, "path": n.path, "kind": n.kind, "work_per_firing": n.work_per_firing,
                   "stateful": n.stateful, "reps": b.reps[i], "work_per_steady_state": b.node_work(i)})
        })
        .collect();
    let edges: Vec<Value> = g
        .edges
        .iter()
        .enumerate()
        .map(|(k, e)| json!({"src": e.src, "dst": e.dst, "push": e.push, "pop": e.pop, "delay": e.delay, "items_per_steady_state": b.edge_items(k)}))
        .collect();
    let count = |k: NodeKind| g.nodes.iter().filter(|n| n.kind == k).count();
    Ok(json!({
        "name": g.name, "filters": count(NodeKind::Filter), "splitters": count(NodeKind::Splitter),
        "joiners": count(NodeKind::Joiner), "nodes": nodes, "edges": edges,
        "total_work_per_steady_state": b.total_work(),
        "file_reps_mismatches": crate::graph::check_file_reps(&b),
    })
    .to_string())
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
pub struct StreamReqJson {
    pub graph: String,
    #[serde(default = "d_mesh4")]
    pub mesh: String,
    #[serde(default = "d_tentacle")]
    pub routing: String,
    #[serde(default = "d_push")]
    pub comm: String,
    /// Computation scaling factors (cycles per work unit); empty = automatic sweep.
    #[serde(default)]
    pub scales: Vec<f64>,
    #[serde(default = "d_warm")]
    pub warmup: u64,
    #[serde(default = "d_meas")]
    pub measure: u64,
    #[serde(default = "d_seed")]
    pub seed: u64,
    #[serde(default = "d_moves")]
    pub anneal_moves: usize,
    /// Tentacle retries with other stream orders, then other layouts.
    #[serde(default)]
    pub retries: usize,
    #[serde(default = "d_buf_it")]
    pub buffer_iterations: u64,
    #[serde(default = "d_buf_items")]
    pub buffer_items: u64,
    #[serde(default)]
    pub corrected_work: bool,
    #[serde(default)]
    pub no_sim: bool,
    #[serde(default = "d_budget")]
    pub exact_budget: u64,
    pub vcs: Option<usize>,
    pub buffer: Option<usize>,
    #[serde(default)]
    pub arch: Value,
}
fn d_mesh4() -> String {
    "4x4".into()
}
fn d_warm() -> u64 {
    10_000
}
fn d_meas() -> u64 {
    100_000
}
fn d_seed() -> u64 {
    1
}
/// Most computation scales in one run.
pub const MAX_SCALES: usize = 1000;
/// Largest computation scaling factor, cycles per unit of work.
pub const MAX_SCALE: f64 = 1e9;
/// Most annealing moves of the layout.
pub const MAX_ANNEAL_MOVES: u64 = 100_000_000;
/// Most routing / layout retries.
pub const MAX_RETRIES: u64 = 10_000;

const STREAM_FIELDS: &[&str] = &[
    "graph",
    "mesh",
    "routing",
    "comm",
    "scales",
    "warmup",
    "measure",
    "seed",
    "anneal_moves",
    "retries",
    "buffer_iterations",
    "buffer_items",
    "corrected_work",
    "no_sim",
    "exact_budget",
    "vcs",
    "buffer",
    "arch",
];

impl StreamReqJson {
    /// Read and check a `stream_run` request; errors name the field.
    pub fn parse(text: &str, what: &str) -> Result<StreamReqJson> {
        let f = Fields::parse(text, what, STREAM_FIELDS)?;
        let graph = match f.string("graph", "")? {
            g if g.trim().is_empty() => {
                return Err(NocError::Field {
                    field: "graph".into(),
                    msg: "must name a benchmark, a .json/.toml file or an inline JSON graph".into(),
                })
            }
            g => g,
        };
        Ok(StreamReqJson {
            graph,
            mesh: f.string("mesh", "4x4")?,
            routing: f.string("routing", "tentacle")?,
            comm: f.string("comm", "push")?,
            scales: f.num_list(
                "scales",
                0.0,
                MAX_SCALE,
                MAX_SCALES,
                " cycles per unit of work",
            )?,
            warmup: f.int("warmup", d_warm(), 0, MAX_CYCLES, " cycles")?,
            measure: f.int("measure", d_meas(), 1, MAX_CYCLES, " cycles")?,
            seed: f.int("seed", 1, 0, u64::MAX, "")?,
            anneal_moves: f.int(
                "anneal_moves",
                d_moves() as u64,
                0,
                MAX_ANNEAL_MOVES,
                " moves",
            )? as usize,
            retries: f.int("retries", 0, 0, MAX_RETRIES, "")? as usize,
            buffer_iterations: f.int(
                "buffer_iterations",
                d_buf_it(),
                1,
                1_000_000,
                " iterations",
            )?,
            buffer_items: f.int("buffer_items", d_buf_items(), 0, 1 << 30, " items")?,
            corrected_work: f.boolean("corrected_work")?,
            no_sim: f.boolean("no_sim")?,
            exact_budget: f.int("exact_budget", d_budget(), 1, 1 << 40, " expansions")?,
            vcs: f.int_opt("vcs", 1, 11, "")?.map(|v| v as usize),
            buffer: f.int_opt("buffer", 1, 1024, " flits")?.map(|v| v as usize),
            arch: f.object("arch")?,
        })
    }
}

fn d_tentacle() -> String {
    "tentacle".into()
}
fn d_push() -> String {
    "push".into()
}
fn d_moves() -> usize {
    20_000
}
fn d_buf_it() -> u64 {
    4
}
fn d_buf_items() -> u64 {
    512
}
fn d_budget() -> u64 {
    2_000_000
}

/// Everything before simulation: partition, layout, streams.
pub struct Mapped {
    pub arch: MeshArch,
    pub mesh: Mesh,
    pub part: Partition,
    pub layout: Layout,
    pub reqs: Vec<StreamReq>,
    pub t_partition: f64,
    pub t_layout: f64,
}

pub fn map_graph(r: &StreamReqJson) -> Result<Mapped> {
    let arch = arch_for(&r.mesh, &r.arch, r.vcs, r.buffer)?;
    let mesh = Mesh::new(arch.cols, arch.rows)?;
    let b = balanced(&r.graph, r.corrected_work)?;
    let t0 = Instant::now();
    let part = partition(&b, mesh.nodes())?;
    let t_partition = t0.elapsed().as_secs_f64();
    let t1 = Instant::now();
    let layout = anneal(&mesh, &part, r.seed, r.anneal_moves)?;
    let t_layout = t1.elapsed().as_secs_f64();
    let reqs = part
        .streams
        .iter()
        .map(|s| StreamReq {
            src: layout.tile_of[s.src],
            dst: layout.tile_of[s.dst],
            weight: s.items,
        })
        .collect();
    Ok(Mapped {
        arch,
        mesh,
        part,
        layout,
        reqs,
        t_partition,
        t_layout,
    })
}

/// Outcome of routing the streams of a mapped graph.
#[derive(Serialize)]
pub struct RouteOutcome {
    pub routing: String,
    /// What actually carries the streams: the requested routing, or `dor` after a fallback.
    pub used: String,
    /// Disjoint circuits in use (tentacle/negotiated/exact success).
    pub circuits: bool,
    /// A disjoint-path router failed and every stream fell back to packet DOR.
    pub fallback: bool,
    pub failed_stream: Option<usize>,
    pub attempts: usize,
    pub detail: String,
    #[serde(skip)]
    pub fabric: FabricKind,
    pub paths: Option<Vec<Vec<u8>>>,
    /// Wall-clock routing time (reported under `timing`).
    #[serde(skip)]
    pub seconds: f64,
    /// The control-flit search that set the circuits up, when the routing models it.
    #[serde(skip)]
    pub setup_trace: Option<TentacleResult>,
}

pub fn route(m: &Mapped, name: &str, r: &StreamReqJson, tile_of: &[usize]) -> Result<RouteOutcome> {
    let router = stream::lookup(name)?;
    let reqs: Vec<StreamReq> = m
        .part
        .streams
        .iter()
        .map(|s| StreamReq {
            src: tile_of[s.src],
            dst: tile_of[s.dst],
            weight: s.items,
        })
        .collect();
    let t0 = Instant::now();
    let routed = router.route(&StreamInput {
        mesh: &m.mesh,
        streams: &reqs,
        retries: r.retries,
        seed: r.seed,
        exact_budget: r.exact_budget,
    });
    let mut out = RouteOutcome {
        routing: name.into(),
        used: name.into(),
        circuits: false,
        fallback: false,
        failed_stream: None,
        attempts: 1,
        detail: String::new(),
        fabric: FabricKind::Ideal,
        paths: None,
        seconds: 0.0,
        setup_trace: None,
    };
    match routed {
        Routed::Packets {
            routing,
            paths,
            detail,
        } => {
            out.fabric = FabricKind::Packet(routing);
            out.paths = paths;
            out.detail = detail;
        }
        Routed::Ideal { detail } => out.detail = detail,
        Routed::Circuits {
            paths,
            attempts,
            detail,
            setup,
        } => {
            out.circuits = true;
            out.attempts = attempts;
            out.detail = detail;
            out.fabric = FabricKind::Circuit(paths.clone());
            out.paths = Some(paths);
            out.setup_trace = setup;
        }
        Routed::Fallback {
            to,
            failed_stream,
            attempts,
            detail,
        } => {
            out.used = to.name().into();
            out.fallback = true;
            out.failed_stream = failed_stream;
            out.attempts = attempts;
            out.detail = detail;
            out.fabric = FabricKind::Packet(to);
            // on a fallback to XY routing every stream takes its XY path
            out.paths = (to == PacketRouting::Dor).then(|| stream::xy_paths(&m.mesh, &reqs));
        }
    }
    if let Some(p) = out.paths.as_ref().filter(|_| out.circuits) {
        check_disjoint(&m.mesh, &reqs, p).map_err(|e| NocError::Routing {
            routing: name.into(),
            msg: e,
        })?;
    }
    out.seconds = t0.elapsed().as_secs_f64();
    Ok(out)
}

/// Scales for the automatic sweep: multiples of the scale at which the heaviest actor's compute
/// time equals the busiest node's flits per iteration (the ideal network's bound), down to 0.
pub fn auto_scales(m: &Mapped) -> Vec<f64> {
    let ipp = m.arch.items_per_packet() as f64;
    let flits_per_item = m.arch.data_packet_flits as f64 / ipp;
    let mut out_f = vec![0.0; m.mesh.nodes()];
    let mut in_f = vec![0.0; m.mesh.nodes()];
    for q in &m.reqs {
        out_f[q.src] += q.weight.ceil() * flits_per_item;
        in_f[q.dst] += q.weight.ceil() * flits_per_item;
    }
    let pnet = out_f.iter().chain(&in_f).copied().fold(0.0, f64::max);
    let wmax = m.part.actors.iter().map(|a| a.work).fold(0.0, f64::max);
    let sref = if wmax > 0.0 { pnet / wmax } else { 0.0 };
    [2.0, 1.0, 0.5, 0.25, 0.0]
        .iter()
        .map(|k| k * sref)
        .collect()
}

pub fn mapped_graph(m: &Mapped, tile_of: &[usize]) -> MappedGraph {
    MappedGraph {
        tile_of: tile_of.to_vec(),
        work: m.part.actors.iter().map(|a| a.work).collect(),
        streams: m
            .part
            .streams
            .iter()
            .map(|s| (s.src, s.dst, s.items.ceil() as u64))
            .collect(),
        delays: m
            .part
            .streams
            .iter()
            .map(|s| s.delay.floor() as u64)
            .collect(),
    }
}

/// Simulate at each scale; returns the points, the saturation (maximum) throughput (NaN when
/// there is no point) and whether Ctrl-C stopped the sweep (the points finished are returned).
pub fn simulate(
    m: &Mapped,
    ro: &RouteOutcome,
    comm: Comm,
    scales: &[f64],
    r: &StreamReqJson,
    tile_of: &[usize],
) -> Result<(Vec<StreamRunResult>, f64)> {
    let (p, s, _) = simulate_with(m, ro, comm, scales, r, tile_of, &mut |_, _, _| {})?;
    Ok((p, s))
}

/// `simulate` with `progress(cycles done, cycles in all, label)`.
pub fn simulate_with(
    m: &Mapped,
    ro: &RouteOutcome,
    comm: Comm,
    scales: &[f64],
    r: &StreamReqJson,
    tile_of: &[usize],
    progress: &mut dyn FnMut(u64, u64, &str),
) -> Result<(Vec<StreamRunResult>, f64, bool)> {
    let g = mapped_graph(m, tile_of);
    let mut pts = Vec::new();
    let per = r.warmup + r.measure;
    let total = per.saturating_mul(scales.len() as u64);
    let mut interrupted = false;
    for (i, &s) in scales.iter().enumerate() {
        let cfg = StreamRunConfig {
            comm,
            scale: s,
            warmup_cycles: r.warmup,
            measure_cycles: r.measure,
            buffer_iterations: r.buffer_iterations,
            buffer_items: r.buffer_items,
        };
        let label = format!("scale {s:.4} ({}/{})", i + 1, scales.len());
        let base = per * i as u64;
        match run_stream_with(&m.arch, &g, &ro.fabric, &cfg, &mut |c| {
            progress(base + c, total, &label)
        }) {
            Ok(p) => pts.push(p),
            Err(NocError::Interrupted) => {
                interrupted = true;
                break;
            }
            Err(e) => return Err(e),
        }
    }
    let sat = pts.iter().map(|p| p.throughput).fold(f64::NAN, f64::max);
    Ok((pts, sat, interrupted))
}

/// The stream routing function `name`, refused when pull streams are asked for and it does not
/// carry them.
pub fn pull_checked(name: &str, comm: Comm) -> Result<StreamRouter> {
    let router = stream::lookup(name)?;
    if comm == Comm::Pull && !router.carries_pull() {
        return Err(NocError::Param(format!(
            "pull streams run on packet routing ({}), not `{}`",
            stream::pull_names().join(", "),
            router.name()
        )));
    }
    Ok(router)
}

/// Set-up times of the circuits of `ro`, when they are in use and their routing modelled the
/// control-flit search that found them.
pub fn circuit_setup(
    arch: &MeshArch,
    ro: &RouteOutcome,
) -> Result<Option<crate::sim::setup::SetupReport>> {
    match &ro.setup_trace {
        Some(t) if ro.circuits && t.paths.is_some() => Ok(Some(setup_times(arch, t)?)),
        _ => Ok(None),
    }
}

/// Map, route and simulate a stream graph. See `StreamReqJson` for the request fields.
pub fn stream_run(req_json: &str) -> Result<String> {
    stream_run_with(req_json, &mut |_, _, _| {})
}

/// `stream_run` with `progress(cycles done, cycles in all, label)` during the simulation. On
/// Ctrl-C during the simulation it returns the points finished with `"interrupted": true`.
pub fn stream_run_with(req_json: &str, progress: &mut dyn FnMut(u64, u64, &str)) -> Result<String> {
    // a Click application (built-in name, Click file, or a request with `rate`, `packets`, ...)
    if crate::graph::from_app::is_app_request(req_json) {
        return crate::graph::from_app::app_stream_run_with(req_json, progress);
    }
    let r = StreamReqJson::parse(req_json, "stream_run request")?;
    let comm = match r.comm.to_ascii_lowercase().as_str() {
        "push" => Comm::Push,
        "pull" => Comm::Pull,
        o => return Err(NocError::Param(format!("comm `{o}` must be push or pull"))),
    };
    let router = pull_checked(&r.routing, comm)?;
    let m = map_graph(&r)?;
    let mut tile_of = m.layout.tile_of.clone();
    let mut ro = route(&m, &r.routing, &r, &tile_of)?;
    let mut layout_retries = 0;
    // retries with other layouts (re-anneal with other seeds) when a disjoint router failed
    while ro.fallback && router.relayout_on_fallback() && layout_retries < r.retries {
        layout_retries += 1;
        let l = crate::layout::anneal_routable(
            &m.mesh,
            &m.part,
            r.seed.wrapping_add(1000 + layout_retries as u64),
            r.anneal_moves,
        )?;
        let ro2 = route(&m, &r.routing, &r, &l.tile_of)?;
        if ro2.circuits {
            tile_of = l.tile_of;
            ro = ro2;
        }
    }
    let reqs: Vec<StreamReq> = m
        .part
        .streams
        .iter()
        .map(|s| StreamReq {
            src: tile_of[s.src],
            dst: tile_of[s.dst],
            weight: s.items,
        })
        .collect();
    let loads = router.link_loads(&m.mesh, &reqs, ro.paths.as_deref());
    let dor_loads = link_loads_paths(
        &m.mesh,
        &reqs,
        &reqs
            .iter()
            .map(|q| m.mesh.dor_path(q.src, q.dst))
            .collect::<Vec<_>>(),
    );
    let setup = circuit_setup(&m.arch, &ro)?;
    let scales = if r.scales.is_empty() {
        auto_scales(&m)
    } else {
        r.scales.clone()
    };
    let t_sim = Instant::now();
    let (points, sat, interrupted) = if r.no_sim {
        (Vec::new(), f64::NAN, false)
    } else {
        simulate_with(&m, &ro, comm, &scales, &r, &tile_of, progress)?
    };
    let (mx, over) = contention(&loads);
    let (dmx, dover) = contention(&dor_loads);
    let actors: Vec<Value> = m
        .part
        .actors
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let (x, y) = m.mesh.xy(tile_of[i]);
            json!({"name": a.name, "tile": tile_of[i], "x": x, "y": y, "work": a.work, "stateful": a.stateful, "members": a.members.len()})
        })
        .collect();
    let routes: Vec<Value> = m
        .part
        .streams
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let p = ro.paths.as_ref().map(|p| p[k].iter().map(|&d| crate::routing::DIR_NAMES[d as usize]).collect::<Vec<_>>().join(""));
            json!({"stream": k, "src_actor": s.src, "dst_actor": s.dst, "src_tile": reqs[k].src, "dst_tile": reqs[k].dst,
                   "items": s.items, "min_hops": m.mesh.hops(reqs[k].src, reqs[k].dst),
                   "path": p, "hops": ro.paths.as_ref().map(|p| p[k].len())})
        })
        .collect();
    Ok(json!({
        "graph": m.part.graph, "mesh": r.mesh, "routing": r.routing, "comm": r.comm,
        "tiles": m.mesh.nodes(), "actors": actors, "balance": m.part.balance,
        "fusions": m.part.fusions, "fissions": m.part.fissions,
        "layout": {"cost": m.layout.cost, "initial_cost": m.layout.initial_cost, "moves": m.layout.moves, "seed": m.layout.seed, "layout_retries": layout_retries},
        "route": ro, "routes": routes,
        "link_loads": link_table(&m.mesh, &loads), "heatmap": router_heatmap(&m.mesh, &loads),
        "max_link_load": mx, "contended_links": over,
        "dor_max_link_load": dmx, "dor_contended_links": dover,
        "setup": setup,
        "points": points, "interrupted": interrupted,
        "saturation_throughput": if sat.is_nan() { Value::Null } else { json!(sat) },
        "throughput_unit": "steady-state iterations per 1000 cycles",
        "routing_requested": r.routing, "routing_used": ro.used,
        "timing": {"partition_s": m.t_partition, "layout_s": m.t_layout, "routing_s": ro.seconds, "simulation_s": t_sim.elapsed().as_secs_f64()},
        "arch": m.arch,
    })
    .to_string())
}

/// Routing success on perturbed layouts: for `trials` perturbations of `swaps` random swaps of
/// the annealed layout, which routers find disjoint paths.
pub fn perturbed_routing(req_json: &str, trials: usize, swaps: usize) -> Result<String> {
    let r = StreamReqJson::parse(req_json, "perturbed_routing request")?;
    if trials == 0 || trials > 100_000 {
        return Err(NocError::Field {
            field: "trials".into(),
            msg: format!("must be an integer from 1 to 100000, got {trials}"),
        });
    }
    if swaps > 1_000_000 {
        return Err(NocError::Field {
            field: "swaps".into(),
            msg: format!("must be an integer from 0 to 1000000, got {swaps}"),
        });
    }
    let m = map_graph(&r)?;
    let names = ["tentacle", "tentacle_retry", "negotiated", "exact"];
    let mut ok = [0usize; 4];
    let mut proven_infeasible = 0;
    for t in 0..trials {
        if pktflow_model::cancel::requested() {
            return Err(NocError::Interrupted);
        }
        let tile_of = crate::layout::perturb(
            &m.mesh,
            &m.layout,
            swaps,
            r.seed.wrapping_add(t as u64 * 7919),
        );
        let reqs: Vec<StreamReq> = m
            .part
            .streams
            .iter()
            .map(|s| StreamReq {
                src: tile_of[s.src],
                dst: tile_of[s.dst],
                weight: s.items,
            })
            .collect();
        let a = tentacle(&m.mesh, &reqs, &tentacle_order(&reqs))
            .paths
            .is_some();
        let b = tentacle_retry(&m.mesh, &reqs, 20, r.seed + t as u64)
            .0
            .paths
            .is_some();
        let c = negotiated(&m.mesh, &reqs, 60).1;
        let (eo, _, _) = exact(&m.mesh, &reqs, r.exact_budget);
        for (k, v) in [a, b, c, eo == ExactOutcome::Feasible].iter().enumerate() {
            ok[k] += *v as usize;
        }
        proven_infeasible += (eo == ExactOutcome::Infeasible) as usize;
    }
    let res: Vec<Value> = names
        .iter()
        .zip(ok)
        .map(|(n, k)| json!({"router": n, "success": k, "trials": trials}))
        .collect();
    Ok(json!({"graph": m.part.graph, "mesh": r.mesh, "swaps": swaps, "results": res, "exact_proven_infeasible": proven_infeasible}).to_string())
}

/// One line per stream routing function: name -> description.
fn stream_routing_help() -> Value {
    Value::Object(
        stream::REGISTRY
            .iter()
            .map(|r| (r.name().to_string(), json!(r.describe())))
            .collect(),
    )
}

/// Names of the built-in benchmarks and routers.
pub fn catalog() -> String {
    json!({"benchmarks": bench::names(), "routings": stream::names(), "routing_help": stream_routing_help(), "traffic": crate::sim::traffic::names(), "packet_routings": crate::sim::packet_routing::names(), "compat": COMPAT_NAMES, "default_mesh": crate::config::default_mesh()}).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_json_has_points() {
        let out =
            noc_sweep(r#"{"mesh":"4x4","rates":[0.05,0.1],"warmup":500,"measure":2000}"#).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        let pts = v["points"].as_array().unwrap();
        assert_eq!(pts.len(), 2);
        for p in pts {
            assert!(p["offered"].as_f64().unwrap() > 0.0);
            assert!(p["accepted"].as_f64().unwrap() > 0.0);
            assert!(p["latency"].as_f64().unwrap() > 10.0);
        }
    }

    #[test]
    fn bad_requests_are_clear_errors() {
        assert!(noc_sweep(r#"{"mesh":"0x4","rates":[0.1]}"#)
            .unwrap_err()
            .to_string()
            .contains("at least"));
        assert!(noc_sweep(r#"{"rates":[0.1],"routing":"tentacle"}"#)
            .unwrap_err()
            .to_string()
            .contains("packet routing"));
        assert!(noc_sweep(r#"{"rates":[0.1],"vcs":0}"#)
            .unwrap_err()
            .to_string()
            .starts_with("vcs must be"));
        assert!(stream_run(r#"{"graph":"Nope"}"#)
            .unwrap_err()
            .to_string()
            .contains("neither a built-in"));
        assert!(
            stream_run(r#"{"graph":"FMRadio","routing":"tentacle","comm":"pull"}"#)
                .unwrap_err()
                .to_string()
                .contains("pull")
        );
    }

    /// Every numeric field of both requests, given a value out of its range (zero where at
    /// least 1 is needed, negative, fractional, non-numeric, huge), is refused with one line
    /// that starts with the field's name; nothing is simulated.
    /// `compat: booksim` follows BookSim's measurement rule: whole sample periods, warm-up of
    /// `warmup_periods`, convergence, a drain; one-flit interfaces; self-addressed packets; and
    /// an overloaded point is abandoned as unstable.
    #[test]
    fn booksim_compat_measures_by_its_rule() {
        let out =
            noc_sweep(r#"{"mesh":"4x4","rates":[0.1,1.0],"compat":"booksim","sample_period":300}"#)
                .unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["compat"], json!("booksim"));
        assert_eq!(v["arch"]["node_injection_flits_per_cycle"], json!(1));
        assert_eq!(v["sending_nodes"], json!(16));
        let low = &v["points"][0];
        let c = &low["convergence"];
        assert_eq!(c["warmup_cycles"], json!(900), "{c}");
        assert!(c["converged"].as_bool().unwrap(), "{c}");
        assert_eq!(c["measured_cycles"].as_u64().unwrap() % 300, 0);
        assert!(low["packets_not_delivered"] == json!(0) && !low["saturated"].as_bool().unwrap());
        // uniform with the source included: mean hops (k^2-1)... below pktflow's convention
        let h: f64 = v["theory"]["mean_hops"].as_f64().unwrap();
        let own = crate::sim::synthetic::mean_hops_uniform(&Mesh::new(4, 4).unwrap());
        assert!((h - own * 15.0 / 16.0).abs() < 1e-9, "{h} vs {own}");
        let high = &v["points"][1];
        assert!(high["convergence"]["unstable"].as_bool().unwrap(), "{high}");
        assert!(high["saturated"].as_bool().unwrap());
        // warmup_periods = 0: warm-up ends when latency and throughput settle (whole periods)
        let w: Value = serde_json::from_str(
            &noc_sweep(r#"{"mesh":"4x4","rates":[0.1],"compat":"booksim","sample_period":200,"warmup_periods":0}"#)
                .unwrap(),
        )
        .unwrap();
        let wc = &w["points"][0]["convergence"];
        let wu = wc["warmup_cycles"].as_u64().unwrap();
        assert!(
            wu >= 400 && wu.is_multiple_of(200) && wc["converged"].as_bool().unwrap(),
            "{wc}"
        );
        // pktflow's own conventions are unchanged by default
        let d: Value = serde_json::from_str(
            &noc_sweep(r#"{"mesh":"4x4","rates":[0.1],"warmup":100,"measure":500}"#).unwrap(),
        )
        .unwrap();
        assert_eq!(d["compat"], json!("pktflow"));
        assert!(d["points"][0].get("convergence").is_none());
        assert_eq!(d["arch"]["node_injection_flits_per_cycle"], json!(4));
    }

    /// A configuration file sets the sweep; request fields override it; a bad line is named.
    #[test]
    fn config_file_sets_and_request_overrides() {
        let dir = std::env::temp_dir().join(format!("pktflow-noc-cfg-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.cfg");
        std::fs::write(
            &p,
            "topology = mesh; k = 4; n = 2;\nrouting_function = min_adapt;\nnum_vcs = 2;\n\
             traffic = tornado; packet_size = 2; injection_rate = 0.05;\nsample_period = 200;\n",
        )
        .unwrap();
        let req = json!({"config": p.to_string_lossy(), "vcs": 3});
        let v: Value = serde_json::from_str(&noc_sweep(&req.to_string()).unwrap()).unwrap();
        assert_eq!(v["routing"], json!("adaptive"));
        assert_eq!(v["traffic"], json!("tornado"));
        assert_eq!(v["virtual_channels"], json!(3));
        assert_eq!(v["packet_flits"], json!(2));
        assert_eq!(v["compat"], json!("booksim"));
        // 0.05 packets of 2 flits
        assert!((v["points"][0]["requested_rate"].as_f64().unwrap() - 0.1).abs() < 1e-12);
        std::fs::write(&p, "k = 4;\nnum_vcs = 0;\n").unwrap();
        let e = noc_sweep(&req.to_string()).unwrap_err().to_string();
        assert!(e.contains("line 2: key `num_vcs`"), "{e}");
        // `compat: pktflow` keeps pktflow's conventions with a configuration file
        std::fs::write(&p, "k = 4;\ninjection_rate = 0.05;\n").unwrap();
        let req = json!({"config": p.to_string_lossy(), "compat": "pktflow", "warmup": 100, "measure": 400});
        let v: Value = serde_json::from_str(&noc_sweep(&req.to_string()).unwrap()).unwrap();
        assert_eq!(v["compat"], json!("pktflow"));
        assert!(v["points"][0].get("convergence").is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn every_numeric_field_is_checked_by_name() {
        let bad = [
            "-1",
            "-5",
            "1.5",
            "\"NaN\"",
            "1e300",
            "true",
            "18446744073709551616",
        ];
        let sweep_fields = [
            ("vcs", true),
            ("buffer", true),
            ("packet_flits", true),
            ("warmup", false),
            ("measure", true),
            ("drain", false),
            ("seed", false),
            ("ni_flits", true),
            ("sample_period", true),
            ("max_samples", true),
            ("warmup_periods", false),
        ];
        for (field, min1) in sweep_fields {
            let mut vals: Vec<&str> = bad.to_vec();
            if min1 {
                vals.push("0");
            }
            for v in vals {
                if field == "seed" && v == "1e300" {
                    continue; // not integral-in-range either way; covered by "1.5"
                }
                let req = format!(r#"{{"mesh":"2x2","rates":[0.1],"{field}":{v}}}"#);
                let e = noc_sweep(&req).unwrap_err().to_string();
                assert!(e.starts_with(&format!("{field} must be")), "{req}: {e}");
                assert!(!e.contains('\n'));
            }
        }
        for v in ["-0.1", "1.5", "\"NaN\"", "\"inf\"", "1e400"] {
            let req = format!(r#"{{"mesh":"2x2","rates":[0.1,{v}]}}"#);
            let e = noc_sweep(&req).unwrap_err().to_string();
            assert!(
                e.starts_with("rates[1] must be") || e.starts_with("malformed noc_sweep"),
                "{req}: {e}"
            );
        }
        assert!(
            noc_sweep(r#"{"mesh":"2x2","rates":[0.1],"hotspot_fraction":2}"#)
                .unwrap_err()
                .to_string()
                .starts_with("hotspot_fraction must be")
        );
        for (field, min1) in [
            ("warmup", false),
            ("measure", true),
            ("seed", false),
            ("anneal_moves", false),
            ("retries", false),
            ("buffer_iterations", true),
            ("buffer_items", false),
            ("exact_budget", true),
            ("vcs", true),
            ("buffer", true),
        ] {
            let mut vals: Vec<&str> = bad.to_vec();
            if min1 {
                vals.push("0");
            }
            for v in vals {
                if field == "seed" && v == "1e300" {
                    continue;
                }
                let req = format!(r#"{{"graph":"FMRadio","{field}":{v}}}"#);
                let e = stream_run(&req).unwrap_err().to_string();
                assert!(e.starts_with(&format!("{field} must be")), "{req}: {e}");
            }
        }
        for v in ["-1", "\"NaN\"", "1e300"] {
            let req = format!(r#"{{"graph":"FMRadio","scales":[{v}]}}"#);
            let e = stream_run(&req).unwrap_err().to_string();
            assert!(e.starts_with("scales[0] must be"), "{req}: {e}");
        }
        let e = noc_sweep(r#"{"mesh":"256x256","vcs":11,"buffer":1024,"rates":[0.1]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("buffer slots"), "{e}");
        for m in ["1000x1000", "256x512", "99999999999999999999x2", "0x4"] {
            let e = noc_sweep(&format!(r#"{{"mesh":"{m}","rates":[0.1]}}"#))
                .unwrap_err()
                .to_string();
            assert!(e.contains(m), "{m}: {e}");
        }
    }

    #[test]
    fn stream_run_tentacle_small() {
        let out = stream_run(r#"{"graph":"FMRadio","mesh":"4x4","routing":"tentacle","scales":[0.0],"warmup":2000,"measure":10000,"anneal_moves":3000}"#).unwrap();
        let v: Value = serde_json::from_str(&out).unwrap();
        assert!(v["saturation_throughput"].as_f64().unwrap() > 0.0);
        assert!(v["actors"].as_array().unwrap().len() <= 16);
        if v["route"]["circuits"].as_bool().unwrap() {
            assert!(v["max_link_load"].as_f64().unwrap() <= 1.0);
            assert!(v["setup"]["min"].as_u64().unwrap() >= 5);
        } else {
            assert!(v["route"]["fallback"].as_bool().unwrap());
        }
    }
}

#[cfg(test)]
mod benchmark_routing_tests {
    use super::*;

    /// On every benchmark layout (4x4): tentacle either yields link-disjoint circuits (max link
    /// load 1) or falls back, with every stream on its XY path, exactly when its search failed.
    #[test]
    fn tentacle_on_benchmark_layouts_succeeds_or_falls_back() {
        let mut successes = 0;
        for name in bench::names() {
            let out = stream_run(&format!(r#"{{"graph":"{name}","mesh":"4x4","routing":"tentacle","no_sim":true,"anneal_moves":4000}}"#)).unwrap();
            let v: Value = serde_json::from_str(&out).unwrap();
            let circuits = v["route"]["circuits"].as_bool().unwrap();
            assert_eq!(
                circuits,
                !v["route"]["fallback"].as_bool().unwrap(),
                "{name}"
            );
            if circuits {
                successes += 1;
                assert!(v["max_link_load"].as_f64().unwrap() <= 1.0, "{name}");
                assert!(v["setup"]["min"].as_u64().unwrap() >= 5, "{name}");
            } else {
                assert!(v["route"]["failed_stream"].as_u64().is_some(), "{name}");
                assert_eq!(
                    v["max_link_load"], v["dor_max_link_load"],
                    "{name}: fallback uses DOR"
                );
            }
        }
        assert!(
            successes >= 4,
            "tentacle routed only {successes} of 9 benchmark layouts"
        );
    }
}
