//! `pktflow compare`: every execution model an architecture supports, measured on the same
//! application, side by side (docs/rtc.md, "Comparing execution models").
//!
//! Which models a preset supports follows from its kind (the rule, [`supported`]):
//! * a multithreaded soft multiprocessor (`netthreads`): on the run-to-completion engine,
//!   `rtc-locks` (every thread runs whole packets, critical sections under locks), `rtc-tm` (the
//!   same with every lock transactional; the best contention manager of cm1, cm2, cm1/2, cm4, or
//!   the one given) and `pipeline` (the engine's pipeline mode: the program cut into one stage
//!   per thread). No hybrid: the engine has no mapping of stages onto thread groups.
//! * a network processor (`npire`, `ixp2400`): on the NP simulator, `pipeline` (the NPIRE
//!   paper's mapping, `greedy+replicate`, at the preset's PE count with each replication scope:
//!   explore's best point), `rtc-locks` (run to completion by replicating the whole application:
//!   every processing task on every processing PE, the `round-robin` mapper with `global`
//!   replication, locks as the simulator models them) and `hybrid` (the TDPM paper's plan,
//!   `tdpm-refine`: elements grouped into tasks, each task duplicated over several engines, the
//!   tasks pipelined). No transactions: the simulator has no transactional memory.
//! * a 2D mesh: none (it carries stream graphs, `pktflow stream`).
//!
//! Every measurement is the harness's maximum-rate search on an engine of the registry
//! ([`crate::engines::engines`]); the pipeline on the NP simulator is npsim's `explore` (which
//! runs the same search) restricted to one PE count.
use crate::engine::Scheduler;
use crate::tm::ContentionManager;
use pktflow_harness::{engine_max_rate, Criterion, Evaluation, Finding, MaxRate, SearchConfig};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// An execution model.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Model {
    Pipeline,
    RtcLocks,
    RtcTm,
    Hybrid,
}

impl Model {
    pub fn words(self) -> &'static str {
        match self {
            Model::Pipeline => "pipeline",
            Model::RtcLocks => "run-to-completion with locks",
            Model::RtcTm => "run-to-completion with transactions",
            Model::Hybrid => "hybrid (TDPM plan)",
        }
    }
}

/// What `pktflow compare` measures. Every field is optional in JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CompareRequest {
    /// A built-in application or a Click file.
    pub app: String,
    /// Architecture preset or TOML file.
    pub arch: String,
    pub arch_set: Vec<String>,
    /// Packets traced from the functional run for every model (synthetic traffic).
    pub packets: u32,
    pub traffic_seed: u64,
    /// Only these models (default: every model the architecture supports).
    pub models: Option<Vec<Model>>,
    /// NP simulator: processing PEs (default: the preset's).
    pub pes: Option<u32>,
    /// Run-to-completion engine: cores and threads per core (default: the preset's).
    pub cores: Option<u32>,
    pub threads: Option<u32>,
    /// Run-to-completion engine: thread scheduler of every model (default: the preset's).
    pub scheduler: Option<Scheduler>,
    /// `rtc-tm` with this contention manager only (default: the best of the four).
    pub cm: Option<ContentionManager>,
    /// Run-to-completion engine: simulated seconds per run (zero-drop criterion).
    pub window_seconds: f64,
    /// Every search stops when its bracket is narrower than this fraction of its top.
    pub precision: f64,
    /// Seed of the run-to-completion engine's hazard draws.
    pub seed: u64,
}

impl Default for CompareRequest {
    fn default() -> Self {
        CompareRequest {
            app: "router".into(),
            arch: "netthreads".into(),
            arch_set: Vec::new(),
            packets: 2000,
            traffic_seed: 1,
            models: None,
            pes: None,
            cores: None,
            threads: None,
            scheduler: None,
            cm: None,
            // Up to seven searches run: a 20 ms window (2.5 M cycles at 125 MHz) keeps each to
            // seconds; the thesis's 5 s gives the same rate on nat (docs/rtc.md).
            window_seconds: 0.02,
            precision: 0.02,
            seed: 1,
        }
    }
}

/// Largest request accepted, bytes.
const MAX_REQUEST_BYTES: usize = 1 << 20;

/// Kinds of architecture, and the models each supports (the rule above).
pub fn supported(body: &pktflow_arch::Body) -> Result<Vec<Model>, String> {
    match body {
        pktflow_arch::Body::NetThreads(_) => {
            Ok(vec![Model::Pipeline, Model::RtcLocks, Model::RtcTm])
        }
        pktflow_arch::Body::Np(_) => Ok(vec![Model::Pipeline, Model::RtcLocks, Model::Hybrid]),
        pktflow_arch::Body::Mesh(_) => Err(
            "a 2D mesh runs stream graphs, not packet-processing applications: it supports no model of `compare` (try `pktflow stream`)"
                .into(),
        ),
    }
}

/// One model's measurement.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    pub model: Model,
    /// The model in words with its chosen configuration.
    pub label: String,
    /// The registry's engine that measured it.
    pub engine: &'static str,
    /// Maximum sustainable rate (the highest rate that passed); none when it failed.
    pub packets_per_second: Option<f64>,
    pub gbps: Option<f64>,
    /// [sustainable, failing] rates of the final bracket.
    pub bracket_pps: Option<[f64; 2]>,
    /// The binding resource at that rate (the harness's vocabulary).
    pub binding: Option<Finding>,
    /// Choices made for the model (replication scope, contention manager) and the
    /// alternatives measured to make them.
    pub detail: Value,
    /// The engine request measured (everything but the rate), to reproduce the row alone.
    pub request: Value,
    /// Why there is no rate.
    pub error: Option<String>,
}

#[derive(Clone, Debug, Serialize)]
pub struct CompareResult {
    pub app: String,
    pub arch: String,
    /// Models the architecture supports, and the rule.
    pub supported: Vec<Model>,
    pub rule: String,
    pub rows: Vec<Row>,
    /// The fastest model.
    pub best: Option<Model>,
    /// One line: the fastest model, its speed-up over the pipeline (or over the next model when
    /// the pipeline is fastest), and its binding resource.
    pub recommendation: String,
    pub settings: Value,
    pub interrupted: bool,
}

/// Parse a JSON request; a bad field is named.
pub fn parse(request: &str) -> Result<CompareRequest, String> {
    if request.len() > MAX_REQUEST_BYTES {
        return Err(format!(
            "bad compare request: {} bytes, at most {MAX_REQUEST_BYTES}",
            request.len()
        ));
    }
    let r: CompareRequest =
        serde_json::from_str(request).map_err(|e| format!("bad compare request: {e}"))?;
    r.validate()?;
    Ok(r)
}

impl CompareRequest {
    pub fn validate(&self) -> Result<(), String> {
        if self.app.trim().is_empty() {
            return Err("compare: no application given".into());
        }
        let w = self.window_seconds;
        if !(w.is_finite() && w > 0.0 && w <= crate::api::MAX_WINDOW_SECONDS) {
            return Err(format!(
                "--window-seconds must be above 0 and at most {}, got {w}",
                crate::api::MAX_WINDOW_SECONDS
            ));
        }
        let p = self.precision;
        if !(p.is_finite() && (1e-4..=0.5).contains(&p)) {
            return Err(format!("--precision must be from 0.0001 to 0.5, got {p}"));
        }
        if self.packets == 0 || self.packets > 1_000_000 {
            return Err(format!(
                "--packets must be 1 to 1000000, got {}",
                self.packets
            ));
        }
        if matches!(&self.models, Some(m) if m.is_empty()) {
            return Err("--models: no model given".into());
        }
        Ok(())
    }
}

/// Progress: (done, estimated total, what runs now).
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize, &str);

/// Outcome of one search: the rate, or the reason there is none; `None` when interrupted.
type Searched = Option<Result<MaxRate<Evaluation>, String>>;

fn search(engine: &str, request: &Value, cfg: &SearchConfig) -> Searched {
    let reg = crate::engines::engines();
    let factory = match reg.get(engine) {
        Ok(f) => f,
        Err(e) => return Some(Err(e.to_string())),
    };
    let mut e = match factory(&request.to_string()) {
        Ok(e) => e,
        Err(x) => return Some(Err(x)),
    };
    match engine_max_rate(e.as_mut(), cfg, &mut |_, _, _| {}) {
        Ok(m) => Some(Ok(m)),
        Err(_) if pktflow_model::cancel::requested() => None,
        Err(s) => Some(Err(s.message)),
    }
}

fn row(model: Model, label: String, engine: &'static str, request: Value) -> Row {
    Row {
        model,
        label,
        engine,
        packets_per_second: None,
        gbps: None,
        bracket_pps: None,
        binding: None,
        detail: json!({}),
        request,
        error: None,
    }
}

fn fill(r: &mut Row, m: &MaxRate<Evaluation>) {
    r.packets_per_second = Some(m.packets_per_second);
    r.gbps = Some(m.gbps);
    r.bracket_pps = Some(m.bracket.packets_per_second);
    r.binding = m.report.findings.first().cloned();
}

struct Ctx<'a> {
    req: &'a CompareRequest,
    done: usize,
    total: usize,
}

impl Ctx<'_> {
    fn rtc_request(&self, sync: &str, mode: &str, cm: Option<ContentionManager>) -> Value {
        let r = self.req;
        let mut engine = json!({"sync": sync, "mode": mode});
        for (k, v) in [
            ("cores", r.cores.map(|x| json!(x))),
            ("threads", r.threads.map(|x| json!(x))),
            ("scheduler", r.scheduler.map(|x| json!(x))),
            ("cm", cm.map(|x| json!(x))),
        ] {
            if let Some(v) = v {
                engine[k] = v;
            }
        }
        json!({
            "workload": {"app": r.app, "packets": r.packets, "traffic_seed": r.traffic_seed},
            "arch": r.arch,
            "arch_set": r.arch_set,
            "engine": engine,
            "search": {"criterion": "zero-drop", "window_seconds": r.window_seconds,
                       "tolerance": r.precision, "seed": r.seed},
        })
    }

    fn rtc_search(&self) -> SearchConfig {
        SearchConfig {
            criterion: Criterion::ZeroDrop,
            precision: self.req.precision,
            ..SearchConfig::default()
        }
    }

    fn npsim_spec(&self) -> Value {
        let r = self.req;
        let mut s = json!({
            "app": r.app, "packets": r.packets, "traffic_seed": r.traffic_seed,
            "arch": r.arch, "arch_set": r.arch_set,
        });
        if let Some(p) = r.pes {
            s["pes"] = json!(p);
        }
        s
    }

    fn step(&mut self, progress: Progress, what: &str) {
        progress(self.done, self.total, what);
        self.done += 1;
    }
}

/// Run the comparison. `progress(done, total, label)` is called before each search.
pub fn compare(req: &CompareRequest, progress: Progress) -> Result<CompareResult, String> {
    req.validate()?;
    let arch = pktflow_arch::Arch::load_with(&req.arch, &req.arch_set)?;
    let supported = supported(&arch.body)?;
    let models: Vec<Model> = match &req.models {
        None => supported.clone(),
        Some(m) => {
            if let Some(x) = m.iter().find(|x| !supported.contains(x)) {
                return Err(format!(
                    "--models: architecture '{}' does not support {} (it supports {})",
                    req.arch,
                    names(&[*x]),
                    names(&supported)
                ));
            }
            let mut m = m.clone();
            m.sort();
            m.dedup();
            m
        }
    };
    let np = matches!(arch.body, pktflow_arch::Body::Np(_));
    if np && (req.cores.is_some() || req.threads.is_some() || req.scheduler.is_some()) {
        return Err(format!(
            "--cores, --threads and --scheduler apply to a multithreaded soft multiprocessor; '{}' is a network processor (use --pes)",
            req.arch
        ));
    }
    if !np && req.pes.is_some() {
        return Err(format!(
            "--pes applies to a network processor; '{}' is a multithreaded soft multiprocessor (use --cores, --threads)",
            req.arch
        ));
    }
    if req.cm.is_some() && !models.contains(&Model::RtcTm) {
        return Err(
            "--cm applies to run-to-completion with transactions, which is not compared here"
                .into(),
        );
    }
    let cms: Vec<ContentionManager> = match req.cm {
        Some(c) => vec![c],
        None => vec![
            ContentionManager::Cm1,
            ContentionManager::Cm2,
            ContentionManager::Cm12,
            ContentionManager::Cm4,
        ],
    };
    let total = models
        .iter()
        .map(|m| if *m == Model::RtcTm { cms.len() } else { 1 })
        .sum();
    let mut cx = Ctx {
        req,
        done: 0,
        total,
    };
    let mut rows = Vec::new();
    let mut interrupted = false;
    for &m in &models {
        let r = if np {
            np_model(&mut cx, m, &arch, progress)?
        } else {
            rtc_model(&mut cx, m, &cms, progress)?
        };
        match r {
            Some(r) => rows.push(r),
            None => {
                interrupted = true;
                break;
            }
        }
    }
    if !interrupted {
        progress(total, total, "done");
    }
    let (best, recommendation) = recommend(&rows);
    Ok(CompareResult {
        app: req.app.clone(),
        arch: req.arch.clone(),
        rule: rule(&arch.body),
        supported,
        rows,
        best,
        recommendation,
        settings: json!({"request": req, "models": models}),
        interrupted,
    })
}

fn names(m: &[Model]) -> String {
    m.iter()
        .map(|x| serde_json::to_value(x).unwrap_or_default())
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

fn rule(body: &pktflow_arch::Body) -> String {
    match body {
        pktflow_arch::Body::NetThreads(_) => "a multithreaded soft multiprocessor runs, on the run-to-completion engine, whole packets per thread with locks or with transactions, and its pipeline mode (one stage per thread)".into(),
        pktflow_arch::Body::Np(_) => "a network processor runs, on the NP simulator, the pipeline mapping at each replication scope, run to completion as the whole application replicated on every processing PE, and the TDPM paper's plan (tasks pipelined, each duplicated); it has no transactional memory".into(),
        pktflow_arch::Body::Mesh(_) => String::new(),
    }
}

/// A model on the run-to-completion engine; None when interrupted.
fn rtc_model(
    cx: &mut Ctx,
    m: Model,
    cms: &[ContentionManager],
    progress: Progress,
) -> Result<Option<Row>, String> {
    let cfg = cx.rtc_search();
    let (sync, mode) = match m {
        Model::Pipeline => ("locks", "pipeline"),
        Model::RtcLocks => ("locks", "run-to-completion"),
        Model::RtcTm => ("tm", "run-to-completion"),
        Model::Hybrid => unreachable!("not supported on this kind"),
    };
    if m != Model::RtcTm {
        cx.step(progress, m.words());
        let req = cx.rtc_request(sync, mode, None);
        let mut r = row(m, m.words().to_string(), "rtc", req.clone());
        match search("rtc", &req, &cfg) {
            None => return Ok(None),
            Some(Ok(x)) => fill(&mut r, &x),
            Some(Err(e)) => r.error = Some(e),
        }
        return Ok(Some(r));
    }
    // Transactions: every contention manager asked for; the fastest is the row.
    let mut alts = Vec::new();
    let mut best: Option<(ContentionManager, Value, MaxRate<Evaluation>)> = None;
    let mut last_err = None;
    for &cm in cms {
        let name = serde_json::to_value(cm).unwrap_or_default();
        cx.step(
            progress,
            &format!("{} ({})", m.words(), name.as_str().unwrap_or("")),
        );
        let req = cx.rtc_request(sync, mode, Some(cm));
        match search("rtc", &req, &cfg) {
            None => return Ok(None),
            Some(Ok(x)) => {
                alts.push(json!({"cm": name, "packets_per_second": x.packets_per_second}));
                // Strictly faster replaces: ties keep the first (the more conservative manager).
                if best
                    .as_ref()
                    .is_none_or(|b| x.packets_per_second > b.2.packets_per_second)
                {
                    best = Some((cm, req, x));
                }
            }
            Some(Err(e)) => {
                alts.push(json!({"cm": name, "error": e}));
                last_err = Some(e);
            }
        }
    }
    Ok(Some(match best {
        Some((cm, req, x)) => {
            let name = serde_json::to_value(cm).unwrap_or_default();
            let mut r = row(
                m,
                format!("{} ({})", m.words(), name.as_str().unwrap_or("")),
                "rtc",
                req,
            );
            fill(&mut r, &x);
            r.detail = json!({"contention_manager": name, "contention_managers": alts});
            r
        }
        None => {
            let mut r = row(m, m.words().into(), "rtc", cx.rtc_request(sync, mode, None));
            r.error = last_err;
            r.detail = json!({"contention_managers": alts});
            r
        }
    }))
}

/// A model on the NP simulator; None when interrupted.
fn np_model(
    cx: &mut Ctx,
    m: Model,
    arch: &pktflow_arch::Arch,
    progress: Progress,
) -> Result<Option<Row>, String> {
    let precision = cx.req.precision;
    match m {
        Model::Pipeline => {
            cx.step(
                progress,
                "pipeline: greedy+replicate at each replication scope",
            );
            let spec = cx.npsim_spec();
            let np = arch.as_np().expect("an NP body");
            let pes = cx.req.pes.unwrap_or(np.np.pe_count);
            let req = json!({
                "spec": spec,
                "search": {"precision": precision},
                "explore": {"pes": [pes], "replications": ["none", "pe", "subset", "global"],
                            "bottleneck": false, "baseline_pes": pes},
            });
            let r = pktflow_npsim::api::parse_with(
                &req.to_string(),
                &pktflow_npsim::api::explore_spec_defaults(),
            )?;
            let x = match pktflow_npsim::explore::explore(
                &r.spec,
                &r.sim,
                &r.search,
                &r.explore,
                |_, _, _| {},
            ) {
                Ok(x) => x,
                Err(e) => {
                    let mut row = row(m, m.words().into(), "npsim", req);
                    row.error = Some(e);
                    return Ok(Some(row));
                }
            };
            if x.interrupted {
                return Ok(None);
            }
            let Some(p) = x
                .points
                .iter()
                .max_by(|a, b| a.packets_per_second.total_cmp(&b.packets_per_second))
            else {
                let mut row = row(m, m.words().into(), "npsim", req);
                row.error = Some("explore measured no point".into());
                return Ok(Some(row));
            };
            let scope = pktflow_npsim::explore::rep_name(p.replication);
            let mut row = row(
                m,
                format!("pipeline ({} mapper, {scope} replication)", x.mapper),
                "npsim",
                req,
            );
            row.packets_per_second = Some(p.packets_per_second);
            row.gbps = Some(p.gbps);
            let clock = np.np.pe_frequency_mhz as f64 * 1e6;
            row.bracket_pps = Some([clock / p.bracket_cycles[1], clock / p.bracket_cycles[0]]);
            row.binding = p.limit.limits.first().cloned();
            row.detail = json!({
                "mapper": x.mapper,
                "replication": p.replication,
                "pes": p.pes,
                "replicated": p.replicated,
                "scopes": x.points.iter().map(|q| json!({
                    "replication": q.replication, "packets_per_second": q.packets_per_second,
                })).collect::<Vec<_>>(),
            });
            Ok(Some(row))
        }
        Model::RtcLocks => {
            cx.step(progress, "run to completion: whole application on every PE");
            let mut spec = cx.npsim_spec();
            spec["mapper"] = json!("round-robin");
            spec["replication"] = json!("global");
            let req = json!({"spec": spec, "search": {"precision": precision}});
            Ok(np_search(
                m,
                "run to completion (every task on every processing PE)".into(),
                req,
            ))
        }
        Model::Hybrid => {
            cx.step(progress, "hybrid: TDPM plan");
            let plan = match crate::plan::tdpm_mapping(
                &cx.req.app,
                &cx.req.arch,
                &cx.req.arch_set,
                cx.req.pes,
                "tdpm-refine",
                cx.req.packets as u64,
                cx.req.traffic_seed,
            ) {
                Ok(p) => p,
                Err(e) => {
                    if pktflow_model::cancel::requested() {
                        return Ok(None);
                    }
                    let mut r = row(m, m.words().into(), "npsim", Value::Null);
                    r.error = Some(e);
                    return Ok(Some(r));
                }
            };
            let mut spec = cx.npsim_spec();
            spec["mapper"] = json!("round-robin");
            spec["replication"] = json!("global");
            spec["mapping"] = serde_json::to_value(&plan.mapping).unwrap_or_default();
            let req = json!({"spec": spec, "search": {"precision": precision}});
            let label = format!(
                "hybrid (TDPM plan: {} task(s) on {} engine(s), {} cop{})",
                plan.tasks,
                plan.engines_used,
                plan.copies,
                if plan.copies == 1 { "y" } else { "ies" }
            );
            let mut r = np_search(m, label, req);
            if let Some(r) = r.as_mut() {
                r.detail = json!({
                    "mapper": "tdpm-refine",
                    "tasks": plan.task_elements,
                    "model_packets_per_second": plan.model_packets_per_second,
                    "model_binding": plan.model_binding,
                });
            }
            Ok(r)
        }
        Model::RtcTm => unreachable!("not supported on this kind"),
    }
}

fn np_search(m: Model, label: String, req: Value) -> Option<Row> {
    let mut r = row(m, label, "npsim", req.clone());
    let cfg = match pktflow_npsim::api::parse(&req.to_string()) {
        Ok(p) => p.search.search(),
        Err(e) => {
            r.error = Some(e);
            return Some(r);
        }
    };
    match search("npsim", &req, &cfg)? {
        Ok(x) => fill(&mut r, &x),
        Err(e) => r.error = Some(e),
    }
    Some(r)
}

/// JSON in and out (Python `pktflow.compare.run`).
pub fn compare_json(request: &str, progress: Progress) -> Result<String, String> {
    let r = parse(request)?;
    let c = compare(&r, progress)?;
    serde_json::to_string(&c).map_err(|e| e.to_string())
}

/// The highest rate; the first of equal ones.
fn first_max<'a>(v: impl Iterator<Item = (&'a Row, f64)>) -> Option<(&'a Row, f64)> {
    v.fold(None, |acc, x| match acc {
        Some(a) if a.1 >= x.1 => Some(a),
        _ => Some(x),
    })
}

/// The fastest row and the one-line recommendation.
pub fn recommend(rows: &[Row]) -> (Option<Model>, String) {
    let rated: Vec<(&Row, f64)> = rows
        .iter()
        .filter_map(|r| r.packets_per_second.map(|p| (r, p)))
        .filter(|(_, p)| *p > 0.0)
        .collect();
    // The first of equal rates wins (rows are in the order of `Model`).
    let Some((best, bp)) = first_max(rated.iter().copied()) else {
        return (None, "no model reached a sustainable rate".into());
    };
    let bound = best
        .binding
        .as_ref()
        .map(|f| format!("; bound by {}", f.what))
        .unwrap_or_default();
    // Against the pipeline, or (pipeline fastest) against the next fastest.
    let other = first_max(
        rated
            .iter()
            .copied()
            .filter(|(r, _)| r.model != best.model)
            .filter(|(r, _)| best.model == Model::Pipeline || r.model == Model::Pipeline),
    );
    // A winner needs a margin larger than the searches' own spread: the best's lowest possible
    // rate (its bracket's sustainable end) above every other's highest (the failing end).
    let span = |r: &Row, p: f64| r.bracket_pps.map_or([p, p], |b| [b[0].min(p), b[1].max(p)]);
    let [best_lo, _] = span(best, bp);
    let tie = first_max(
        rated
            .iter()
            .copied()
            .filter(|(r, _)| r.model != best.model)
            .map(|(r, p)| (r, span(r, p)[1])),
    )
    .filter(|(_, hi)| *hi >= best_lo);
    if let Some((o, _)) = tie {
        let op = o.packets_per_second.unwrap_or(0.0);
        return (
            Some(best.model),
            format!(
                "no clear winner: {} {} and {} {} packets/s are within their searches' brackets of each other; a smaller --precision separates them",
                best.label,
                fmt_rate(bp),
                o.label,
                fmt_rate(op)
            ),
        );
    }
    let versus = match other {
        Some((o, op)) => format!(": {:.2}x {}", bp / op, o.model.words()),
        None => String::new(),
    };
    (Some(best.model), format!("{}{versus}{bound}", best.label))
}

/// A rate with at least 3 significant digits ("141", "626300").
fn fmt_rate(p: f64) -> String {
    if p >= 100.0 {
        format!("{p:.0}")
    } else {
        format!("{p:.3}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(model: Model, pps: Option<f64>) -> Row {
        let mut x = row(model, model.words().into(), "rtc", Value::Null);
        x.packets_per_second = pps;
        x
    }

    #[test]
    fn the_recommendation_names_the_fastest_against_the_pipeline() {
        let rows = vec![
            r(Model::Pipeline, Some(100.0)),
            r(Model::RtcLocks, Some(120.0)),
            r(Model::RtcTm, Some(160.0)),
        ];
        let (b, s) = recommend(&rows);
        assert_eq!(b, Some(Model::RtcTm));
        assert_eq!(s, "run-to-completion with transactions: 1.60x pipeline");
        // Pipeline fastest: against the next one.
        let rows = vec![
            r(Model::Pipeline, Some(300.0)),
            r(Model::RtcLocks, Some(120.0)),
            r(Model::RtcTm, None),
        ];
        let (b, s) = recommend(&rows);
        assert_eq!(b, Some(Model::Pipeline));
        assert_eq!(s, "pipeline: 2.50x run-to-completion with locks");
        assert_eq!(recommend(&[r(Model::RtcTm, None)]).0, None);
        // Equal rates: no winner.
        let rows = vec![
            r(Model::Pipeline, Some(100.0)),
            r(Model::RtcLocks, Some(100.0)),
        ];
        assert!(recommend(&rows)
            .1
            .starts_with("no clear winner: pipeline 100 and"));
    }

    #[test]
    fn a_winner_needs_a_margin_beyond_the_search_brackets() {
        // `compare --arch npire` declared winners at 1.00x-1.01x: 101 against 100 where each
        // search only knows its rate within a 2% bracket.
        let mut a = r(Model::Pipeline, Some(100.0));
        a.bracket_pps = Some([100.0, 102.0]);
        let mut b = r(Model::RtcLocks, Some(101.0));
        b.bracket_pps = Some([101.0, 103.0]);
        let (best, s) = recommend(&[a.clone(), b.clone()]);
        assert_eq!(best, Some(Model::RtcLocks));
        assert!(s.starts_with("no clear winner: "), "{s}");
        assert!(s.contains("--precision"), "{s}");
        // Brackets apart: a winner, with its factor.
        b.packets_per_second = Some(110.0);
        b.bracket_pps = Some([110.0, 112.0]);
        let (_, s) = recommend(&[a, b]);
        assert!(
            s.starts_with("run-to-completion with locks: 1.10x pipeline"),
            "{s}"
        );
    }

    #[test]
    fn the_rule_per_kind_of_architecture() {
        let a = pktflow_arch::Arch::load("netthreads").unwrap();
        assert_eq!(
            supported(&a.body).unwrap(),
            vec![Model::Pipeline, Model::RtcLocks, Model::RtcTm]
        );
        let a = pktflow_arch::Arch::load("npire").unwrap();
        assert_eq!(
            supported(&a.body).unwrap(),
            vec![Model::Pipeline, Model::RtcLocks, Model::Hybrid]
        );
        let a = pktflow_arch::Arch::load("mesh").unwrap();
        assert!(supported(&a.body).unwrap_err().contains("stream"));
    }

    #[test]
    fn bad_requests_get_one_line_naming_the_option() {
        for (req, want) in [
            (r#"{"window_seconds": 0}"#, "--window-seconds"),
            (r#"{"precision": 2}"#, "--precision"),
            (r#"{"packets": 0}"#, "--packets"),
            (r#"{"models": []}"#, "--models"),
            (r#"{"models": ["warp"]}"#, "bad compare request"),
            (r#"{"bogus": 1}"#, "bogus"),
        ] {
            let e = parse(req).unwrap_err();
            assert!(e.contains(want) && !e.contains('\n'), "{req}: {e}");
        }
        let mut p = |_: usize, _: usize, _: &str| {};
        let e = compare(&parse(r#"{"arch": "mesh"}"#).unwrap(), &mut p).unwrap_err();
        assert!(e.contains("mesh") || e.contains("stream"), "{e}");
        let e = compare(
            &parse(r#"{"arch": "npire", "models": ["rtc-tm"]}"#).unwrap(),
            &mut p,
        )
        .unwrap_err();
        assert!(e.contains("does not support rtc-tm"), "{e}");
        let e = compare(
            &parse(r#"{"arch": "netthreads", "pes": 4}"#).unwrap(),
            &mut p,
        )
        .unwrap_err();
        assert!(e.contains("--pes"), "{e}");
    }

    #[test]
    fn netthreads_models_side_by_side_on_echo() {
        // echo has no shared state: locks and transactions run the same program, so their
        // rates agree; the pipeline runs the same instructions in stages.
        let req = parse(
            r#"{"app": "echo", "packets": 50, "window_seconds": 0.001, "precision": 0.05, "cm": "cm4"}"#,
        )
        .unwrap();
        let mut seen = Vec::new();
        let c = compare(&req, &mut |d, t, w| seen.push((d, t, w.to_string()))).unwrap();
        assert_eq!(c.rows.len(), 3);
        assert!(!c.interrupted);
        assert_eq!(seen.last().unwrap().0, 3);
        let pps = |m: Model| {
            c.rows
                .iter()
                .find(|r| r.model == m)
                .unwrap()
                .packets_per_second
                .unwrap()
        };
        let (l, t) = (pps(Model::RtcLocks), pps(Model::RtcTm));
        assert!((l - t).abs() / l < 0.06, "locks {l} tm {t}");
        for r in &c.rows {
            assert!(r.binding.is_some() && r.gbps.unwrap() > 0.0, "{}", r.label);
        }
        assert!(c.best.is_some());
        // Locks and transactions tie on echo: no winner is declared between them.
        assert!(
            c.recommendation.starts_with("no clear winner: "),
            "{}",
            c.recommendation
        );
    }
}
