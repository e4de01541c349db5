//! `pktflow run`: the JSON request (what the user set; Rust owns every default) and the result.
//!
//! Request keys: `app` (required), `trace` (pcap/pcapng) or `synthetic` + `seed`, `input_port`,
//! `out_dir`, `threads` (default 1), `model` (`rtc`, `pipeline` or `hybrid`; default `rtc`),
//! `mapping` (a mapping file, required by and only for `hybrid`), `io` (`dedicated` or
//! `shared`; default `dedicated`), `pin` (default true), `ring_slots` (default 256),
//! `batch` (default 32), `reply_every`, `profile_packets` (packets of the quick profile that
//! balances the pipeline cut; default 2,000), `warmup` (pipeline and hybrid: trace packets fed
//! one at a time first; default 0).
use crate::driver::{device_file_name, Driver};
use crate::engine::{Balance, Engine, Fast};
use crate::ring;
use pktflow_elements_fast::conf::Shared;
use pktflow_profile::app::{format_diagnostics, load_app};
use pktflow_profile::run::{packet_source, packets, InputPort, Source};
use pktflow_traffic::TracePacket;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

/// Most threads `pktflow run` starts.
pub const MAX_THREADS: u64 = 256;
/// Most slots of a ring between threads.
pub const MAX_RING_SLOTS: u64 = 65_536;
/// Most packets handed over in one batch.
pub const MAX_BATCH: u64 = 4096;
/// Most warm-up packets (`--warmup`).
pub const MAX_WARMUP: u64 = 100_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    Rtc,
    Pipeline,
    Hybrid,
}

impl Model {
    pub fn name(self) -> &'static str {
        match self {
            Model::Rtc => "rtc",
            Model::Pipeline => "pipeline",
            Model::Hybrid => "hybrid",
        }
    }
}

/// Packets of the quick profile that balances the pipeline cut.
pub const DEFAULT_PROFILE_PACKETS: u64 = 2_000;
/// Most packets of the quick profile.
pub const MAX_PROFILE_PACKETS: u64 = 1_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Io {
    Dedicated,
    Shared,
    /// Run-to-completion only: no I/O thread; every worker reads the whole source itself and
    /// keeps the packets whose flow hashes to it.
    Each,
}

/// A parsed request with every default resolved.
#[derive(Clone, Debug)]
pub struct Request {
    pub app: String,
    pub source: Source,
    pub out_dir: Option<PathBuf>,
    pub threads: usize,
    pub model: Model,
    pub io: Io,
    pub pin: bool,
    pub ring_slots: usize,
    pub batch: usize,
    pub reply_every: Option<u64>,
    pub mapping: Option<String>,
    pub profile_packets: u64,
    /// Element groups on threads: the first `warmup` trace packets are handed over one at a
    /// time, each finished with everything it causes (the neighbours' answers included) before
    /// the next is read.
    pub warmup: u64,
}

/// A whole number in `min..=max`; errors name the command-line option (`--ring-slots`).
fn get_u64(v: &Value, key: &str, min: u64, max: u64) -> Result<Option<u64>, String> {
    let opt = format!("--{}", key.replace('_', "-"));
    let key = opt.as_str();
    match v.get(key.trim_start_matches('-').replace('-', "_").as_str()) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => {
            let n = x.as_u64().ok_or_else(|| {
                format!("{key}: expected a whole number in {min}..={max}, got {x}")
            })?;
            if n < min || n > max {
                return Err(format!("{key} must be in {min}..={max}, got {n}"));
            }
            Ok(Some(n))
        }
    }
}

fn get_str<'a>(v: &'a Value, key: &str) -> Result<Option<&'a str>, String> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(x) => Err(format!("{key}: expected a string, got {x}")),
    }
}

impl Request {
    pub fn from_json(text: &str) -> Result<Request, String> {
        let v: Value =
            serde_json::from_str(text).map_err(|e| format!("run request: bad JSON: {e}"))?;
        if !v.is_object() {
            return Err("run request: expected a JSON object".into());
        }
        const KEYS: &[&str] = &[
            "app",
            "trace",
            "synthetic",
            "seed",
            "input_port",
            "out_dir",
            "threads",
            "model",
            "io",
            "pin",
            "ring_slots",
            "batch",
            "reply_every",
            "mapping",
            "profile_packets",
            "warmup",
        ];
        if let Some(k) = v
            .as_object()
            .and_then(|o| o.keys().find(|k| !KEYS.contains(&k.as_str())))
        {
            return Err(format!("run request: unknown key '{k}'"));
        }
        let app = get_str(&v, "app")?
            .ok_or("run request: 'app' is required")?
            .to_string();
        let synthetic = get_u64(
            &v,
            "synthetic",
            1,
            pktflow_profile::run::MAX_SYNTHETIC_PACKETS,
        )?;
        let seed = get_u64(&v, "seed", 0, u64::MAX)?.unwrap_or(1);
        let input_port = match get_str(&v, "input_port")? {
            Some(s) => InputPort::parse(s)?,
            None => InputPort::Auto,
        };
        let source = Source::from_args_with(get_str(&v, "trace")?, synthetic, seed, input_port);
        let model = match get_str(&v, "model")?.unwrap_or("rtc") {
            "rtc" => Model::Rtc,
            "pipeline" => Model::Pipeline,
            "hybrid" => Model::Hybrid,
            m => return Err(format!("--model {m}: expected rtc, pipeline or hybrid")),
        };
        let mapping = get_str(&v, "mapping")?.map(str::to_string);
        match (model, &mapping) {
            (Model::Hybrid, None) => {
                return Err("--model hybrid needs --mapping FILE (the JSON of pktflow explore, maxrate or map, or a hand-written {\"threads\": [[...], ...]})".into())
            }
            (Model::Rtc | Model::Pipeline, Some(_)) => {
                return Err(format!(
                    "--mapping applies to --model hybrid, not {}",
                    model.name()
                ))
            }
            _ => {}
        }
        let profile_packets = get_u64(&v, "profile_packets", 1, MAX_PROFILE_PACKETS)?;
        if profile_packets.is_some() && model != Model::Pipeline {
            return Err("--profile-packets applies to --model pipeline".into());
        }
        let warmup = get_u64(&v, "warmup", 0, MAX_WARMUP)?.unwrap_or(0);
        if warmup > 0 && model == Model::Rtc {
            return Err("--warmup applies to --model pipeline and hybrid, whose threads hand packets to each other; with --model rtc every packet is finished on one thread".into());
        }
        let io = match get_str(&v, "io")?.unwrap_or("dedicated") {
            "dedicated" => Io::Dedicated,
            "shared" => Io::Shared,
            "each" => Io::Each,
            m => return Err(format!("--io {m}: expected dedicated, shared or each")),
        };
        if io == Io::Each && model != Model::Rtc {
            return Err(format!(
                "--io each applies to --model rtc: with --model {} the I/O thread feeds the threads that hold the source elements",
                model.name()
            ));
        }
        let pin = match v.get("pin") {
            None | Some(Value::Null) => true,
            Some(Value::Bool(b)) => *b,
            Some(x) => return Err(format!("pin: expected true or false, got {x}")),
        };
        Ok(Request {
            app,
            source,
            out_dir: get_str(&v, "out_dir")?.map(PathBuf::from),
            threads: get_u64(&v, "threads", 1, MAX_THREADS)?.unwrap_or(1) as usize,
            model,
            io,
            pin,
            ring_slots: get_u64(&v, "ring_slots", 2, MAX_RING_SLOTS)?.unwrap_or(256) as usize,
            batch: get_u64(&v, "batch", 1, MAX_BATCH)?.unwrap_or(32) as usize,
            reply_every: get_u64(&v, "reply_every", 0, u64::MAX)?,
            mapping,
            profile_packets: profile_packets.unwrap_or(DEFAULT_PROFILE_PACKETS),
            warmup,
        })
    }
}

/// Pin the calling thread to `core` (modulo the cores this process may use). Returns the core,
/// or `None` when pinning is not possible here.
pub fn pin_to(core: usize) -> Option<usize> {
    #[cfg(target_os = "linux")]
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut allowed) != 0 {
            return None;
        }
        let cores: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &allowed))
            .collect();
        if cores.is_empty() {
            return None;
        }
        let c = cores[core % cores.len()];
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(c, &mut set);
        if libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0 {
            return Some(c);
        }
        None
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = core;
        None
    }
}

/// Busy time of the calling thread (CPU time), seconds.
pub(crate) fn thread_cpu_seconds() -> f64 {
    #[cfg(target_os = "linux")]
    unsafe {
        let mut ts: libc::timespec = std::mem::zeroed();
        if libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
        0.0
    }
    #[cfg(not(target_os = "linux"))]
    0.0
}

/// What one worker thread did.
#[derive(Debug, Default)]
struct WorkerReport {
    balance: Balance,
    from_source: u64,
    neighbor_replies: u64,
    ip_replies: u64,
    cpu_seconds: f64,
    wall_seconds: f64,
    empty_waits: u64,
    core: Option<usize>,
    stats: Value,
    devices: Vec<PathBuf>,
    /// Sum over pops of the ring's occupancy (batches), and pops.
    occupancy_sum: u64,
    pops: u64,
    /// Element groups on threads: packets taken from the thread's input rings.
    taken: Option<u64>,
}

/// Run a request; `tick(packets_done)` every 65,536 packets (one thread only).
pub fn run(req: &Request, tick: &mut dyn FnMut(u64)) -> Result<Value, String> {
    req.source.validate()?;
    let app = load_app(&req.app)?;
    if let Some(d) = &req.out_dir {
        std::fs::create_dir_all(d)
            .map_err(|e| format!("--out-dir {}: cannot create the folder: {e}", d.display()))?;
        if !d.is_dir() {
            return Err(format!("--out-dir {}: not a folder", d.display()));
        }
    }
    // No output may replace an input or another output, and ToDump files stay inside a
    // --out-dir the user named (checked once, on the graph as it writes into the final folder).
    {
        let out = out_dir_or_cwd(req);
        let router = app.instantiate(&out)?;
        let named = req.out_dir.is_some();
        pktflow_profile::run::check_outputs(&router, &req.source, &out, named, named)?;
    }
    match req.model {
        Model::Rtc if req.threads == 1 => run_one(req, &app, tick),
        _ => run_rtc(req, &app),
    }
}

fn out_dir_or_cwd(req: &Request) -> PathBuf {
    req.out_dir.clone().unwrap_or_else(|| PathBuf::from("."))
}

fn new_fast(
    app: &pktflow_profile::app::App,
    out_dir: &Path,
    shared: Arc<Shared>,
) -> Result<Fast, String> {
    Fast::new(&app.graph, &app.base_dir, out_dir, shared).map_err(|d| format_diagnostics(&d))
}

fn source_iter(
    app: &pktflow_profile::app::App,
    req: &Request,
) -> Result<Box<dyn Iterator<Item = Result<TracePacket, String>>>, String> {
    packets(app, &req.source)
}

/// Refuse a request whose packets cannot come from where it says: a configuration with its own
/// sources (`generators`, by name) given --trace or --synthetic, or one with no source at all.
fn check_packet_source(
    req: &Request,
    app: &pktflow_profile::app::App,
    generators: &[String],
    n_sources: usize,
) -> Result<(), String> {
    if !generators.is_empty() && !matches!(req.source, Source::Auto { .. }) {
        return Err(format!(
            "{}: the configuration reads its own packets ({}); run it without --trace or --synthetic",
            app.graph.file,
            generators.join(", ")
        ));
    }
    if generators.is_empty() && n_sources == 0 {
        return Err(format!(
            "{}: the application has no packet source: no FromDevice/PollDevice to receive trace packets and no FromDump/InfiniteSource of its own",
            app.graph.file
        ));
    }
    Ok(())
}

fn run_one(
    req: &Request,
    app: &pktflow_profile::app::App,
    tick: &mut dyn FnMut(u64),
) -> Result<Value, String> {
    let engine = new_fast(app, &out_dir_or_cwd(req), Arc::new(Shared::default()))?;
    let generators = engine.n_generators() > 0;
    let generator_names = engine.generator_names();
    check_packet_source(req, app, &generator_names, engine.n_sources())?;
    let mut it = if generators {
        None
    } else {
        Some(packet_source(app, &req.source)?)
    };
    let mut d = Driver::new(engine, &app.graph, req.out_dir.as_deref(), req.reply_every)?;
    let cpu0 = thread_cpu_seconds();
    let t0 = Instant::now();
    match it.as_mut() {
        Some(it) => d.run_source(it.as_mut(), &mut *tick)?,
        None => d.run_generators()?,
    }
    let secs = t0.elapsed().as_secs_f64();
    let cpu = thread_cpu_seconds() - cpu0;
    let devices = d.finish()?;
    let w = WorkerReport {
        balance: d.engine.balance(),
        from_source: d.from_source_count,
        neighbor_replies: d.neighbor_replies,
        ip_replies: d.ip_replies,
        cpu_seconds: cpu,
        wall_seconds: secs,
        empty_waits: 0,
        core: None,
        stats: d.engine.stats(),
        devices,
        occupancy_sum: 0,
        pops: 0,
        taken: None,
    };
    let outputs = list_outputs(req, &w.devices, app);
    let mut doc = report(req, app, vec![w], secs, outputs, json!([]), Value::Null);
    if generators {
        doc["source"] = own_sources(&generator_names).into();
    }
    Ok(doc)
}

/// The JSON's `source` of a run on the configuration's own sources.
fn own_sources(names: &[String]) -> String {
    format!("the configuration's own sources ({})", names.join(", "))
}

/// ToDump outputs and device pcaps in the output folder after a run.
fn list_outputs(
    req: &Request,
    devices: &[PathBuf],
    app: &pktflow_profile::app::App,
) -> Vec<String> {
    let mut v: Vec<String> = devices.iter().map(|p| p.display().to_string()).collect();
    for f in todump_files(app) {
        let p = out_dir_or_cwd(req).join(&f);
        if p.exists() && !v.contains(&p.display().to_string()) {
            v.push(p.display().to_string());
        }
    }
    v.sort();
    v
}

/// File names the configuration's ToDump elements write (their first argument).
fn todump_files(app: &pktflow_profile::app::App) -> Vec<String> {
    app.graph
        .elements
        .iter()
        .filter(|e| e.class == "ToDump")
        .filter_map(|e| {
            let first = e.config.split(',').next()?.trim();
            let first = first
                .strip_prefix("FILENAME")
                .map(str::trim)
                .unwrap_or(first);
            let f = first.trim_matches('"').to_string();
            (!f.is_empty() && !f.contains(' ')).then_some(f)
        })
        .collect()
}

fn report(
    req: &Request,
    app: &pktflow_profile::app::App,
    workers: Vec<WorkerReport>,
    secs: f64,
    outputs: Vec<String>,
    rings: Value,
    placement: Value,
) -> Value {
    let mut total = Balance::default();
    let (mut src, mut nr, mut ipr) = (0, 0, 0);
    for w in &workers {
        total.add(&w.balance);
        src += w.from_source;
        nr += w.neighbor_replies;
        ipr += w.ip_replies;
    }
    let per_thread: Vec<Value> = workers
        .iter()
        .enumerate()
        .map(|(k, w)| {
            json!({
                "thread": k,
                "core": w.core,
                "packets_from_source": w.from_source,
                "packets_processed": w.balance.injected,
                "cpu_seconds": w.cpu_seconds,
                "utilization": if w.wall_seconds > 0.0 { (w.cpu_seconds / w.wall_seconds).min(1.0) } else { 0.0 },
                "waits_for_input": w.empty_waits,
                "mean_ring_occupancy_batches": if w.pops > 0 { w.occupancy_sum as f64 / w.pops as f64 } else { 0.0 },
                "packets_taken_from_rings": w.taken,
                // A configuration's own tasks on their threads: the tasks thread k runs.
                "tasks": placement["stages"][k].get("tasks"),
            })
        })
        .collect();
    let own_tasks = placement["stages"][0].get("tasks").is_some();
    let per_thread_packets: Vec<u64> = workers.iter().map(|w| w.from_source).collect();
    let mut stats = serde_json::Map::new();
    if workers.len() == 1 {
        stats = workers[0].stats.as_object().cloned().unwrap_or_default();
    } else if req.model != Model::Rtc || !placement.is_null() {
        // Element groups: each element's handlers from the thread that runs it; replicated
        // elements only per thread (element_stats_per_thread).
        let mut seen: std::collections::BTreeMap<&String, usize> = Default::default();
        for w in &workers {
            for k in w.stats.as_object().into_iter().flat_map(|o| o.keys()) {
                *seen.entry(k).or_default() += 1;
            }
        }
        for w in &workers {
            for (k, v) in w.stats.as_object().into_iter().flatten() {
                if seen[k] == 1 {
                    stats.insert(k.clone(), v.clone());
                }
            }
        }
    }
    let per_thread_stats: Vec<Value> = workers.iter().map(|w| w.stats.clone()).collect();
    let mut doc = json!({
        "app": app.name,
        "file": app.graph.file,
        "source": req.source.describe(),
        "settings": {
            "threads": req.threads,
            "model": req.model.name(),
            "mapping": req.mapping,
            "io": match req.io { Io::Dedicated => "dedicated", Io::Shared => "shared", Io::Each => "each" },
            "pin": req.pin,
            "ring_slots": req.ring_slots,
            "batch": req.batch,
            "reply_every": req.reply_every,
            "state": "shared",
            "dispatch": if own_tasks {
                "the configuration's tasks (its sources and pulling elements) on the threads its StaticThreadSched gives them, as click -j N (others on thread 0)"
            } else {
                "symmetric IPv4 5-tuple hash (non-IPv4 frames: thread of hash 0)"
            },
            "profile_packets": (req.model == Model::Pipeline).then_some(req.profile_packets),
            "warmup": req.warmup,
        },
        "placement": placement,
        "packets": {
            "from_source": src,
            "neighbor_arp_replies": nr,
            "far_end_ip_replies": ipr,
            "processed": total.injected,
            "per_thread_from_source": per_thread_packets,
        },
        "balance": {
            "injected": total.injected,
            "created": total.created,
            "output": total.output,
            "dropped": total.dropped,
            "held": total.held,
            "handed_between_threads": total.exported,
            "received_from_threads": total.received,
            "conserved": total.conserved(),
        },
        "outputs": outputs,
        "element_stats": Value::Object(stats),
        "timing": {
            "seconds": secs,
            "packets_per_second": if secs > 0.0 { src as f64 / secs } else { 0.0 },
            "threads": per_thread,
            "rings": rings,
        },
    });
    if workers.len() > 1 {
        doc["element_stats_per_thread"] = Value::Array(per_thread_stats);
    }
    doc
}

/// A batch of trace packets handed from the I/O thread to a worker.
type Batch = crate::batch::TraceBatch;

/// Bytes of packet data a new batch makes room for per packet (a full-size Ethernet frame is
/// 1,514; a batch grows past it once and is then reused).
const BATCH_BYTES_EACH: usize = 256;

fn run_rtc(req: &Request, app: &pktflow_profile::app::App) -> Result<Value, String> {
    let n = req.threads;
    let out = out_dir_or_cwd(req);
    // Each thread writes its outputs in a folder of its own; merged afterwards.
    let part_dirs: Vec<PathBuf> = (0..n)
        .map(|k| out.join(format!(".pktflow-run-{}-thread-{k}", std::process::id())))
        .collect();
    for d in &part_dirs {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let cleanup = |dirs: &[PathBuf]| {
        for d in dirs {
            let _ = std::fs::remove_dir_all(d);
        }
    };
    let probe = Fast::new_deferred(
        &app.graph,
        &app.base_dir,
        &part_dirs[0],
        Arc::new(Shared::default()),
    )
    .map_err(|d| format_diagnostics(&d))?;
    let own_tasks = req.model == Model::Rtc && runs_own_tasks(app, &probe);
    let generators = probe.generator_names();
    drop(probe);
    let result = match req.model {
        Model::Rtc if own_tasks => run_tasks_inner(req, app, &part_dirs),
        Model::Rtc => run_rtc_inner(req, app, &part_dirs).map(|(w, s, r)| (w, s, r, Value::Null)),
        Model::Pipeline | Model::Hybrid => run_staged_inner(req, app, &part_dirs),
    };
    let result = result.and_then(|(workers, secs, rings, placement)| {
        // Merge each output: device pcaps and ToDump files.
        let mut names: Vec<String> = todump_files(app);
        for w in &workers {
            for p in &w.devices {
                if let Some(f) = p.file_name().and_then(|f| f.to_str()) {
                    names.push(f.to_string());
                }
            }
        }
        names.sort();
        names.dedup();
        let mut outputs = Vec::new();
        for name in names {
            let parts: Vec<PathBuf> = part_dirs.iter().map(|d| d.join(&name)).collect();
            let dest = out.join(&name);
            if crate::merge::merge_pcaps(&parts, &dest)? {
                outputs.push(dest.display().to_string());
            }
        }
        let mut doc = report(req, app, workers, secs, outputs, rings, placement);
        if own_tasks && !generators.is_empty() {
            doc["source"] = own_sources(&generators).into();
        }
        Ok(doc)
    });
    cleanup(&part_dirs);
    result
}

fn run_rtc_inner(
    req: &Request,
    app: &pktflow_profile::app::App,
    part_dirs: &[PathBuf],
) -> Result<(Vec<WorkerReport>, f64, Value), String> {
    let n = req.threads;
    let shared = Arc::new(Shared::default());
    // Check the graph and its source once on this thread, before starting anything.
    let probe = new_fast(app, &part_dirs[0], shared.clone())?;
    if probe.n_sources() == 0 {
        return Err(format!(
            "{}: the application has no packet source (FromDevice/PollDevice)",
            app.graph.file
        ));
    }
    drop(probe);
    // The source is opened here once (a bad trace is reported before any thread starts); with
    // `--io each` every worker opens its own.
    let mut it = packet_source(app, &req.source)?;
    let each = req.io == Io::Each;
    let mut producers = Vec::new();
    let mut consumers = Vec::new();
    let mut returns_p = Vec::new();
    let mut returns_c = Vec::new();
    for _ in 0..n {
        let (p, c) = ring::ring::<Batch>(req.ring_slots);
        producers.push(p);
        consumers.push(c);
        let (rp, rc) = ring::ring::<Batch>(req.ring_slots + 2);
        returns_p.push(rp);
        returns_c.push(rc);
    }
    let graph = &app.graph;
    let t0 = Instant::now();
    let (workers, io) = std::thread::scope(|s| {
        let mut handles = Vec::new();
        for (k, (mut cons, mut ret)) in consumers.into_iter().zip(returns_p).enumerate() {
            let shared = shared.clone();
            let dir = part_dirs[k].clone();
            let pin = req.pin;
            let reply_every = req.reply_every;
            let write_devices = req.out_dir.is_some();
            handles.push(s.spawn(move || -> Result<WorkerReport, String> {
                let core = if pin { pin_to(k) } else { None };
                let engine = Fast::new(graph, &app.base_dir, &dir, shared)
                    .map_err(|d| format_diagnostics(&d))?;
                let mut d = Driver::new(
                    engine,
                    graph,
                    write_devices.then_some(dir.as_path()),
                    reply_every,
                )?;
                let cpu0 = thread_cpu_seconds();
                let t = Instant::now();
                let mut rep = WorkerReport {
                    core,
                    ..Default::default()
                };
                let mut waits = 0;
                let mut failed = None;
                if each {
                    failed = read_own_flows(app, req, k, n, &mut d).err();
                }
                while let Some(mut batch) = cons.pop(&mut waits) {
                    rep.occupancy_sum += cons.len() as u64 + 1;
                    rep.pops += 1;
                    if failed.is_none() {
                        for tp in batch.iter() {
                            if let Err(e) = d.process(&tp, true).and_then(|_| d.process_pending()) {
                                failed = Some(e);
                                break;
                            }
                        }
                    }
                    batch.clear();
                    let _ = ret.try_push(batch);
                }
                rep.wall_seconds = t.elapsed().as_secs_f64();
                rep.cpu_seconds = thread_cpu_seconds() - cpu0;
                if let Some(e) = failed {
                    return Err(e);
                }
                rep.devices = d
                    .finish()?
                    .into_iter()
                    .filter_map(|p| p.file_name().map(PathBuf::from))
                    .collect();
                rep.balance = d.engine.balance();
                rep.from_source = d.from_source_count;
                rep.neighbor_replies = d.neighbor_replies;
                rep.ip_replies = d.ip_replies;
                rep.empty_waits = waits;
                rep.stats = d.engine.stats();
                Ok(rep)
            }));
        }
        // The I/O thread: this one. Dedicated: pinned to a core after the workers'; shared:
        // not pinned, so it runs on whichever core is idle; each: none (the workers read).
        if req.pin && req.io == Io::Dedicated {
            pin_to(n);
        }
        let io = (|| -> Result<(u64, Vec<u64>), String> {
            if each {
                return Ok((0, vec![0; n]));
            }
            let new_batch = || Batch::with_capacity(req.batch, BATCH_BYTES_EACH);
            let mut batches: Vec<Batch> = (0..n).map(|_| new_batch()).collect();
            let mut full_waits = vec![0u64; n];
            let mut count = 0u64;
            // A batch comes back from its worker through the return ring and is refilled, so
            // in steady state reading and handing packets over allocates nothing.
            let flush = |k: usize,
                         batches: &mut Vec<Batch>,
                         producers: &mut Vec<ring::Producer<Batch>>,
                         returns_c: &mut Vec<ring::Consumer<Batch>>,
                         full_waits: &mut Vec<u64>| {
                let fresh = returns_c[k].try_pop().unwrap_or_else(new_batch);
                let b = std::mem::replace(&mut batches[k], fresh);
                full_waits[k] += producers[k].push(b);
            };
            let mut scratch = TracePacket::default();
            while let Some(tp) = it.next_ref(&mut scratch)? {
                count += 1;
                if count.is_multiple_of(1024) {
                    pktflow_model::cancel::check().map_err(|c| c.to_string())?;
                }
                let k = crate::flow::thread_of(tp.data, n);
                batches[k].push(&tp);
                if batches[k].len() >= req.batch {
                    flush(
                        k,
                        &mut batches,
                        &mut producers,
                        &mut returns_c,
                        &mut full_waits,
                    );
                }
            }
            for k in 0..n {
                if !batches[k].is_empty() {
                    flush(
                        k,
                        &mut batches,
                        &mut producers,
                        &mut returns_c,
                        &mut full_waits,
                    );
                }
            }
            Ok((count, full_waits))
        })();
        // Closing the rings ends the workers.
        drop(producers);
        let workers: Vec<Result<WorkerReport, String>> = handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("a worker thread panicked".to_string()))
            })
            .collect();
        (workers, io)
    });
    let secs = t0.elapsed().as_secs_f64();
    let (_count, full_waits) = io?;
    let workers: Vec<WorkerReport> = workers.into_iter().collect::<Result<_, _>>()?;
    let rings = json!(full_waits
        .iter()
        .enumerate()
        .map(|(k, w)| json!({"to_thread": k, "slots": req.ring_slots.next_power_of_two(), "batch": req.batch, "full_waits": w}))
        .collect::<Vec<_>>());
    Ok((workers, secs, rings))
}

/// `--io each`: worker `k` of `n` reads the whole source itself (its own mapping of a trace
/// file, or its own copy of the synthetic stream) and processes the packets whose flow hashes
/// to it, in the source's order, each followed by the neighbours' answers it caused: the same
/// packets, in the same order, as the I/O thread would hand it. Ctrl-C is checked every 1,024
/// packets read, taken or not.
fn read_own_flows(
    app: &pktflow_profile::app::App,
    req: &Request,
    k: usize,
    n: usize,
    d: &mut Driver<Fast>,
) -> Result<(), String> {
    let mut src = packet_source(app, &req.source)?;
    let mut scratch = TracePacket::default();
    let mut read = 0u64;
    while let Some(tp) = src.next_ref(&mut scratch)? {
        read += 1;
        if read.is_multiple_of(1024) {
            pktflow_model::cancel::check().map_err(|c| c.to_string())?;
        }
        if crate::flow::thread_of(tp.data, n) == k {
            d.process(&tp, true)?;
            d.process_pending()?;
        }
    }
    Ok(())
}

/// Instructions each element executed over the first `n` packets of the source, by the
/// functional run with cost recording (its ToDump files go to a scratch folder, removed).
pub fn quick_profile(
    req: &Request,
    app: &pktflow_profile::app::App,
    scratch: &Path,
) -> Result<Vec<u64>, String> {
    std::fs::create_dir_all(scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let result = (|| {
        let mut r = crate::engine::Recording::new(&app.graph, &app.base_dir, scratch)
            .map_err(|d| format_diagnostics(&d))?;
        let mut costs = vec![0u64; app.graph.elements.len()];
        let mut it = source_iter(app, req)?;
        for tp in it.by_ref().take(req.profile_packets as usize) {
            let tp = tp?;
            let t = r.0.inject(tp.iface as usize, tp.to_packet(0))?;
            for v in &t.visits {
                costs[v.element as usize] += v.instructions as u64;
            }
        }
        Ok(costs)
    })();
    let _ = std::fs::remove_dir_all(scratch);
    result
}

/// Element groups on threads: place the elements (pipeline cut or mapping file), then run.
fn run_staged_inner(
    req: &Request,
    app: &pktflow_profile::app::App,
    part_dirs: &[PathBuf],
) -> Result<(Vec<WorkerReport>, f64, Value, Value), String> {
    let probe = new_fast(app, &part_dirs[0], Arc::new(Shared::default()))?;
    if probe.n_generators() > 0 {
        return Err(format!(
            "{}: the configuration reads its own packets ({}); --model {} needs packets from --trace or --synthetic",
            app.graph.file,
            probe.generator_names().join(", "),
            req.model.name()
        ));
    }
    if probe.n_sources() == 0 {
        return Err(format!(
            "{}: the application has no packet source (FromDevice/PollDevice)",
            app.graph.file
        ));
    }
    let g = crate::mapping::GraphInfo {
        names: app.graph.element_names(),
        classes: app.graph.elements.iter().map(|e| e.class.clone()).collect(),
        push: probe
            .0
            .push_connections()
            .into_iter()
            .map(|(a, _, b, _)| (a, b))
            .collect(),
        pull: probe.0.pull_connections(),
    };
    let sources: Vec<u32> = (0..probe.n_sources())
        .filter_map(|i| probe.0.source_element(i))
        .collect();
    drop(probe);
    let (placement, costs) = match req.model {
        Model::Pipeline => {
            let scratch = part_dirs[0].with_extension("profile");
            let costs = quick_profile(req, app, &scratch)?;
            (
                crate::mapping::pipeline(&g, &costs, req.threads, &sources),
                Some(costs),
            )
        }
        _ => (
            crate::mapping::from_file(
                req.mapping.as_deref().expect("checked by the request"),
                &g,
                req.threads,
            )?,
            None,
        ),
    };
    let mut source = packet_source(app, &req.source)?;
    let (reports, secs, rings) = crate::staged::run_staged(
        req,
        app,
        &placement,
        part_dirs,
        Some(source.as_mut()),
        &sources,
        None,
    )?;
    Ok((
        stage_workers(reports),
        secs,
        rings,
        placement.to_json(&g, costs.as_deref()),
    ))
}

/// The workers' reports of element groups on threads.
fn stage_workers(reports: Vec<crate::staged::StageReport>) -> Vec<WorkerReport> {
    reports
        .into_iter()
        .map(|r| WorkerReport {
            balance: r.balance,
            from_source: r.from_source,
            neighbor_replies: r.neighbor_replies,
            ip_replies: r.ip_replies,
            cpu_seconds: r.cpu_seconds,
            wall_seconds: r.wall_seconds,
            empty_waits: r.empty_waits,
            core: r.core,
            stats: r.stats,
            devices: r.devices,
            occupancy_sum: r.inputs.iter().map(|i| i.1).sum(),
            pops: r.inputs.iter().map(|i| i.2).sum(),
            taken: Some(r.packets_taken),
        })
        .collect()
}

/// Whether `--threads N` (N > 1, `--model rtc`) runs the configuration's own tasks on the
/// threads its hints give them (`crate::tasks`), as `click -j N` does, instead of copies of the
/// graph fed by flow hash: when it makes its own packets (FromDump, InfiniteSource, ...) or
/// names threads (StaticThreadSched).
fn runs_own_tasks(app: &pktflow_profile::app::App, probe: &Fast) -> bool {
    probe.n_generators() > 0 || crate::tasks::has_hints(&app.graph)
}

/// `--threads N` on the configuration's own tasks (`crate::tasks`).
fn run_tasks_inner(
    req: &Request,
    app: &pktflow_profile::app::App,
    part_dirs: &[PathBuf],
) -> Result<(Vec<WorkerReport>, f64, Value, Value), String> {
    let probe = Fast::new_deferred(
        &app.graph,
        &app.base_dir,
        &part_dirs[0],
        Arc::new(Shared::default()),
    )
    .map_err(|d| format_diagnostics(&d))?;
    let generators = probe.n_generators() > 0;
    check_packet_source(req, app, &probe.generator_names(), probe.n_sources())?;
    if req.io == Io::Each {
        return Err("--io each applies to copies of the graph fed by flow hash; this configuration's tasks run on the threads its StaticThreadSched gives them".into());
    }
    let hints = crate::tasks::hints(&app.graph, req.threads)?;
    let tg = crate::tasks::TaskGraph::of(&app.graph, &probe.0);
    let plan = crate::tasks::plan(&tg, &hints, req.threads);
    let g = crate::mapping::GraphInfo {
        names: app.graph.element_names(),
        classes: app.graph.elements.iter().map(|e| e.class.clone()).collect(),
        push: tg.push.clone(),
        pull: tg.pull.clone(),
    };
    let sources: Vec<u32> = probe.0.source_elements().to_vec();
    drop(probe);
    let mut source = if generators {
        None
    } else {
        Some(packet_source(app, &req.source)?)
    };
    let (reports, secs, rings) = crate::staged::run_staged(
        req,
        app,
        &plan.placement,
        part_dirs,
        source
            .as_deref_mut()
            .map(|s| s as &mut dyn pktflow_profile::run::PacketSource),
        &sources,
        Some(&plan),
    )?;
    Ok((
        stage_workers(reports),
        secs,
        rings,
        plan.to_json(&g, &app.graph),
    ))
}

/// The JSON entry point of the binding.
pub fn run_json(request: &str, tick: &mut dyn FnMut(u64)) -> Result<String, String> {
    let req = Request::from_json(request)?;
    let v = run(&req, tick)?;
    Ok(serde_json::to_string(&v).expect("result serializes"))
}

/// Device pcap name of `dev` (for tests and docs).
pub fn device_pcap_name(dev: &str) -> String {
    device_file_name(dev)
}
