//! JSON entry points for the command line and Python (`pktflow protoproc model|sim|table2`).
//!
//! Every field of a request is optional: a request type's `Default` holds every default (times
//! in microseconds), and each result carries a `settings` block with every value it resolved, so
//! the same settings give the same result. Numbers may be sent as `"NaN"` or `"Infinity"`
//! strings so that validation, not the JSON parser, names the bad setting.
use crate::error::{check_range, ProtoError};
use crate::model::{self, Model};
use crate::policy::{table2, CostSet, Notify, Policy, PolicyCosts};
use crate::sim::{simulate, simulate_with_progress, SimConfig, SimResult};
use crate::workload::{App, Bench, Em3d, Gauss, Microbench, Spread, Synthetic, Tomcatv};
use serde::{Deserialize, Deserializer};
use serde_json::{json, Value};

/// Largest request, bytes.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;
/// Most points of a model curve and most curves.
pub const MAX_POINTS: u32 = 100_001;
pub const MAX_RATIOS: usize = 64;

fn lenient<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum N {
        F(f64),
        S(String),
    }
    match N::deserialize(d)? {
        N::F(x) => Ok(x),
        N::S(s) => match s.as_str() {
            "NaN" | "nan" => Ok(f64::NAN),
            "Infinity" | "inf" => Ok(f64::INFINITY),
            "-Infinity" | "-inf" => Ok(f64::NEG_INFINITY),
            _ => s
                .parse::<f64>()
                .map_err(|_| serde::de::Error::custom(format!("expected a number, got {s:?}"))),
        },
    }
}

fn lenient_opt<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    struct W(#[serde(deserialize_with = "lenient")] f64);
    Ok(Option::<W>::deserialize(d)?.map(|w| w.0))
}

fn lenient_vec<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<f64>, D::Error> {
    #[derive(Deserialize)]
    struct W(#[serde(deserialize_with = "lenient")] f64);
    Ok(Vec::<W>::deserialize(d)?.into_iter().map(|w| w.0).collect())
}

/// Parse `request` as `T`, naming the key a bad value sits under.
fn parse<T: for<'de> Deserialize<'de>>(what: &str, request: &str) -> Result<T, ProtoError> {
    let bad = |m: String| ProtoError::Request(format!("bad {what} request: {m}"));
    if request.len() > MAX_REQUEST_BYTES {
        return Err(bad(format!(
            "{} bytes, at most {MAX_REQUEST_BYTES}",
            request.len()
        )));
    }
    let v: Value = serde_json::from_str(request).map_err(|e| bad(e.to_string()))?;
    if !v.is_object() {
        return Err(bad("expected a JSON object".into()));
    }
    T::deserialize(&v).map_err(|e| {
        if let Some(o) = v.as_object() {
            for (k, x) in o {
                let mut one = serde_json::Map::new();
                one.insert(k.clone(), x.clone());
                if let Err(e1) = T::deserialize(&Value::Object(one)) {
                    if !e1.to_string().starts_with("missing field") {
                        return bad(format!("{k}: {e1}"));
                    }
                }
            }
        }
        bad(e.to_string())
    })
}

// -------------------------------------------------------------------------------------------
// model

/// `pktflow protoproc model`: the analytic model's curves and break-even points.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelRequest {
    /// Lremote: round trip with a dedicated protocol processor (Table 2, Fixed: 113 us).
    #[serde(deserialize_with = "lenient")]
    pub l_remote_us: f64,
    /// Opp: overhead a dedicated processor saves (Table 2: 168 - 113 = 55 us).
    #[serde(deserialize_with = "lenient")]
    pub o_pp_us: f64,
    /// Oreply: home node overhead (Table 2, Fixed: 27 us).
    #[serde(deserialize_with = "lenient")]
    pub o_reply_us: f64,
    /// M: remote requests per processor (1: the times are per request).
    #[serde(deserialize_with = "lenient")]
    pub requests: f64,
    /// One C to report on its own (`point`), besides the curve.
    #[serde(deserialize_with = "lenient_opt")]
    pub c_us: Option<f64>,
    /// Range of C for the curves (default Lremote / 16 to 16 Lremote, geometric).
    #[serde(deserialize_with = "lenient_opt")]
    pub c_min_us: Option<f64>,
    #[serde(deserialize_with = "lenient_opt")]
    pub c_max_us: Option<f64>,
    pub points: u32,
    /// Overhead ratios (2 Opp + Oreply) / Lremote of Figure 3's curves.
    #[serde(deserialize_with = "lenient_vec")]
    pub ratios: Vec<f64>,
    /// Tcs and Orequest for the multithreading limits.
    #[serde(deserialize_with = "lenient")]
    pub tcs_us: f64,
    #[serde(deserialize_with = "lenient")]
    pub o_request_us: f64,
}

impl Default for ModelRequest {
    fn default() -> Self {
        ModelRequest {
            l_remote_us: table2::FIXED_ROUND_TRIP,
            o_pp_us: table2::SINGLE_ROUND_TRIP - table2::FIXED_ROUND_TRIP,
            o_reply_us: table2::FIXED_HOME,
            requests: 1.0,
            c_us: None,
            c_min_us: None,
            c_max_us: None,
            points: 41,
            ratios: vec![0.5, 1.0, 2.0, 4.0, 8.0, 16.0],
            tcs_us: crate::policy::ASSUMED_CONTEXT_SWITCH_US,
            o_request_us: table2::FIXED_REQUESTER,
        }
    }
}

fn interval_json(i: Option<model::Interval>) -> Value {
    match i {
        None => Value::Null,
        Some(i) => {
            json!({"u_low": i.u_low, "u_high": i.u_high, "c_low_us": i.c_low_us, "c_high_us": i.c_high_us})
        }
    }
}

fn point_json(md: &Model, c: f64, r: &ModelRequest) -> Value {
    let mt = model::multithreading(c, r.tcs_us, r.o_request_us, md.o_reply_us);
    json!({
        "c_us": c,
        "utilization": md.utilization(c),
        "t_fixed": md.t_fixed(c),
        "t_single": md.t_single(c),
        "t_floating": md.t_floating(c),
        "normalized": md.normalized(c),
        "best": if md.t_fixed(c) < md.t_floating(c) { "fixed" } else { "floating" },
        "utilization_limit_multithreaded": mt.utilization_limit,
        "protocol_load_multithreaded": mt.protocol_load,
        "protocol_saturated_multithreaded": mt.protocol_saturated,
    })
}

/// Run a model request (JSON in, JSON out).
pub fn model_json(request: &str) -> Result<String, ProtoError> {
    let r: ModelRequest = parse("model", request)?;
    let md = Model::new(r.l_remote_us, r.o_pp_us, r.o_reply_us, r.requests)?;
    let l = r.l_remote_us;
    let c_min = check_range("c_min_us", r.c_min_us.unwrap_or(l / 16.0), 1e-9, 1e12)?;
    let c_max = check_range("c_max_us", r.c_max_us.unwrap_or(16.0 * l), 1e-9, 1e12)?;
    if c_max <= c_min {
        return Err(ProtoError::Request(format!(
            "c_max_us ({c_max}) must be larger than c_min_us ({c_min})"
        )));
    }
    if r.points < 2 || r.points > MAX_POINTS {
        return Err(ProtoError::Request(format!(
            "points must be between 2 and {MAX_POINTS}, got {}",
            r.points
        )));
    }
    check_range("tcs_us", r.tcs_us, 0.0, 1e12)?;
    check_range("o_request_us", r.o_request_us, 0.0, 1e12)?;
    if r.ratios.len() > MAX_RATIOS {
        return Err(ProtoError::Request(format!(
            "ratios: at most {MAX_RATIOS} curves, got {}",
            r.ratios.len()
        )));
    }
    for &x in &r.ratios {
        check_range("ratios", x, 0.0, 1e6)?;
    }
    if let Some(c) = r.c_us {
        check_range("c_us", c, 0.0, 1e12)?;
    }
    let n = r.points as usize;
    let cs: Vec<f64> = (0..n)
        .map(|i| c_min * (c_max / c_min).powf(i as f64 / (n - 1) as f64))
        .collect();
    pktflow_model::cancel::check()?;
    let points: Vec<Value> = cs.iter().map(|&c| point_json(&md, c, &r)).collect();
    let mut curves = Vec::new();
    for &ratio in &r.ratios {
        let m2 = Model::new(l, ratio * l / 2.0, 0.0, 1.0)?;
        curves.push(json!({
            "ratio": ratio,
            "overhead_us": ratio * l,
            "r_max": m2.r_max(),
            "fixed_beats_floating": interval_json(m2.interval(model::FIXED_BEATS_FLOATING)),
            "cost_effective": interval_json(m2.interval(model::COST_EFFECTIVE)),
            "points": cs.iter().map(|&c| json!({"c_us": c, "utilization": m2.utilization(c), "normalized": m2.normalized(c)})).collect::<Vec<_>>(),
        }));
    }
    let needed: Vec<Value> = [0.1, 0.2, 0.23, 0.3, 0.5, 0.7, 0.8, 0.85, 0.9]
        .iter()
        .map(|&u| {
            let f = md
                .break_even_overhead(u, model::FIXED_BEATS_FLOATING)
                .unwrap_or(f64::NAN);
            let g = md
                .break_even_overhead(u, model::COST_EFFECTIVE)
                .unwrap_or(f64::NAN);
            json!({"utilization": u, "c_us": md.c_of_u(u),
                   "overhead_fixed_beats_floating_us": f, "ratio_fixed_beats_floating": f / l,
                   "overhead_cost_effective_us": g, "ratio_cost_effective": g / l})
        })
        .collect();
    let out = json!({
        "settings": {
            "l_remote_us": l, "o_pp_us": r.o_pp_us, "o_reply_us": r.o_reply_us, "requests": r.requests,
            "c_min_us": c_min, "c_max_us": c_max, "points": r.points, "ratios": r.ratios,
            "tcs_us": r.tcs_us, "o_request_us": r.o_request_us, "c_us": r.c_us,
        },
        "conventions": {
            "times": "microseconds; t_* are for M = requests remote requests per processor",
            "normalized": "Tsingle / Tfixed",
            "utilization": "C / (C + Lremote), the compute utilization under Fixed",
            "fixed_beats_floating": "u interval where Tsingle / Tfixed > 2 (Tfixed < Tfloating = Tsingle / 2); also where Fixed is 100% better than Single",
            "cost_effective": "u interval where Fixed is at least 33% faster than Single (a second processor costing one third more)",
            "multithreading": "under Fixed with enough threads, utilization up to C / (C + Tcs); the protocol processor saturates when Orequest + Oreply > C + Tcs",
        },
        "points": points,
        "break_even": {
            "overhead_us": md.overhead(),
            "overhead_ratio": md.overhead() / l,
            "r_max": md.r_max(),
            "c_at_r_max_us": l,
            "fixed_beats_floating": interval_json(md.interval(model::FIXED_BEATS_FLOATING)),
            "cost_effective": interval_json(md.interval(model::COST_EFFECTIVE)),
            "overhead_needed": needed,
        },
        "multithreading": {
            "tcs_us": r.tcs_us,
            "o_request_us": r.o_request_us,
            "saturation_below_c_us": (r.o_request_us + r.o_reply_us - r.tcs_us).max(0.0),
        },
        "curves": curves,
        "point": r.c_us.map(|c| point_json(&md, c, &r)),
    });
    Ok(out.to_string())
}

// -------------------------------------------------------------------------------------------
// sim

/// `pktflow protoproc sim`: one simulation.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct SimRequest {
    /// em3d, gauss, tomcatv, synthetic or microbench.
    pub app: String,
    pub policy: String,
    pub nodes: u32,
    /// Processors per node (default: 1 for single, 2 for fixed and floating).
    pub cpus: Option<u32>,
    /// Threads per compute processor.
    pub threads: u32,
    pub seed: u64,
    /// Cost set: "table2" (default for the applications) or "model" (default for synthetic).
    pub costs: Option<String>,
    /// Bus share of one computing processor (default: 0.3 for tomcatv, 0 otherwise).
    #[serde(deserialize_with = "lenient_opt")]
    pub bus_share: Option<f64>,
    /// "poll" or "interrupt" (default: poll with table2 costs, interrupt with model costs).
    pub notify: Option<String>,
    #[serde(deserialize_with = "lenient_opt")]
    pub interrupt_us: Option<f64>,
    #[serde(deserialize_with = "lenient_opt")]
    pub role_switch_us: Option<f64>,
    #[serde(deserialize_with = "lenient_opt")]
    pub poll_interval_us: Option<f64>,
    #[serde(deserialize_with = "lenient_opt")]
    pub network_us: Option<f64>,
    /// Synthetic workload and model-derived costs.
    #[serde(deserialize_with = "lenient")]
    pub l_remote_us: f64,
    #[serde(deserialize_with = "lenient")]
    pub o_pp_us: f64,
    #[serde(deserialize_with = "lenient")]
    pub o_reply_us: f64,
    #[serde(deserialize_with = "lenient")]
    pub c_us: f64,
    pub requests: u64,
    pub spread: String,
    /// Application size overrides (em3d/tomcatv iterations, gauss/tomcatv matrix size,
    /// microbenchmark misses).
    pub iterations: Option<u32>,
    pub n: Option<u32>,
    pub misses: Option<u64>,
}

impl Default for SimRequest {
    fn default() -> Self {
        let s = Synthetic::default();
        let m = ModelRequest::default();
        SimRequest {
            app: "synthetic".into(),
            policy: "fixed".into(),
            nodes: 4,
            cpus: None,
            threads: 1,
            seed: 1,
            costs: None,
            bus_share: None,
            notify: None,
            interrupt_us: None,
            role_switch_us: None,
            poll_interval_us: None,
            network_us: None,
            l_remote_us: m.l_remote_us,
            o_pp_us: m.o_pp_us,
            o_reply_us: m.o_reply_us,
            c_us: s.c_us,
            requests: s.requests,
            spread: "exponential".into(),
            iterations: None,
            n: None,
            misses: None,
        }
    }
}

/// A bus share of 0.3 per computing processor for tomcatv: its data set (seven 768 x 768 double
/// matrices, 33 MB) far exceeds the 256 KB caches, so computation streams through the bus; the
/// paper gives no bus figure, 0.3 is an assumption (the bus saturates above 3.3 processors).
pub const TOMCATV_BUS_SHARE: f64 = 0.3;

/// The resolved configuration of a sim request.
pub fn resolve(r: &SimRequest) -> Result<(SimConfig, App), ProtoError> {
    let policy = Policy::parse(&r.policy)?;
    let cpus = r
        .cpus
        .unwrap_or(if policy == Policy::Single { 1 } else { 2 });
    let bad_size = |k: &str, v: u64, lo: u64, hi: u64| -> Result<(), ProtoError> {
        if v < lo || v > hi {
            return Err(ProtoError::Request(format!(
                "{k} must be between {lo} and {hi}, got {v}"
            )));
        }
        Ok(())
    };
    if let Some(i) = r.iterations {
        bad_size("iterations", i as u64, 1, 1_000_000)?;
    }
    if let Some(n) = r.n {
        bad_size("n", n as u64, 2, 100_000)?;
    }
    let app = match r.app.trim().to_ascii_lowercase().as_str() {
        "em3d" => {
            let mut e = Em3d::default();
            if let Some(i) = r.iterations {
                e.iterations = i;
            }
            App::Em3d(e)
        }
        "gauss" => {
            let mut g = Gauss::default();
            if let Some(n) = r.n {
                g.n = n;
            }
            App::Gauss(g)
        }
        "tomcatv" => {
            let mut t = Tomcatv::default();
            if let Some(i) = r.iterations {
                t.iterations = i;
            }
            if let Some(n) = r.n {
                t.n = n;
            }
            App::Tomcatv(t)
        }
        "synthetic" => {
            let spread = match r.spread.as_str() {
                "exponential" => Spread::Exponential,
                "fixed" => Spread::Fixed,
                s => {
                    return Err(ProtoError::Request(format!(
                        "spread must be exponential or fixed, got {s:?}"
                    )))
                }
            };
            check_range("c_us", r.c_us, 0.0, 1e9)?;
            App::Synthetic(Synthetic {
                requests: r.requests,
                c_us: r.c_us,
                spread,
            })
        }
        "microbench" => App::Microbench(Microbench {
            misses: r.misses.unwrap_or(Microbench::default().misses),
            bench: Bench::Latency,
        }),
        other => {
            return Err(ProtoError::Request(format!(
                "app must be em3d, gauss, tomcatv, synthetic or microbench, got {other:?}"
            )))
        }
    };
    let set = match r.costs.as_deref() {
        None => {
            if matches!(app, App::Synthetic(_)) {
                CostSet::Model
            } else {
                CostSet::Table2
            }
        }
        Some("table2") => CostSet::Table2,
        Some("model") => CostSet::Model,
        Some(s) => {
            return Err(ProtoError::Request(format!(
                "costs must be table2 or model, got {s:?}"
            )))
        }
    };
    let mut costs = match set {
        CostSet::Table2 => PolicyCosts::table2(),
        CostSet::Model => PolicyCosts::from_model(r.l_remote_us, r.o_pp_us, r.o_reply_us)?,
    };
    if let Some(n) = r.notify.as_deref() {
        costs.notify = match n {
            "poll" => Notify::Poll,
            "interrupt" => Notify::Interrupt,
            s => {
                return Err(ProtoError::Request(format!(
                    "notify must be poll or interrupt, got {s:?}"
                )))
            }
        };
        if costs.notify == Notify::Poll && set == CostSet::Model && r.poll_interval_us.is_none() {
            return Err(ProtoError::Request(
                "poll_interval_us is needed for notify = poll with the model's costs (the model has no polling)".into(),
            ));
        }
    }
    if let Some(x) = r.interrupt_us {
        costs.interrupt_us = check_range("interrupt_us", x, 0.0, 1e9)?;
    }
    if let Some(x) = r.role_switch_us {
        costs.role_switch_us = check_range("role_switch_us", x, 0.0, 1e9)?;
    }
    if let Some(x) = r.poll_interval_us {
        costs.poll_interval_us = check_range("poll_interval_us", x, 0.01, 1e9)?;
    }
    if let Some(x) = r.network_us {
        costs.network_us = check_range("network_us", x, 0.0, 1e9)?;
    }
    let bus_share = match r.bus_share {
        Some(b) => check_range("bus_share", b, 0.0, 100.0)?,
        None if matches!(app, App::Tomcatv(_)) => TOMCATV_BUS_SHARE,
        None => 0.0,
    };
    let cfg = SimConfig {
        policy,
        nodes: r.nodes,
        cpus,
        threads: r.threads,
        costs,
        bus_share,
        seed: r.seed,
    };
    cfg.validate(&app)?;
    Ok((cfg, app))
}

fn sim_value(cfg: &SimConfig, app: &App, res: &SimResult) -> Value {
    let mut out = serde_json::to_value(res).expect("result serializes");
    let o = out.as_object_mut().expect("object");
    o.insert("app".into(), json!(app.name()));
    o.insert("policy".into(), json!(cfg.policy.name()));
    o.insert(
        "settings".into(),
        json!({
            "system": cfg,
            "workload": app,
            "compute_cpus_per_node": cfg.policy.compute_cpus(cfg.cpus),
            "threads_per_node": cfg.policy.compute_cpus(cfg.cpus) * cfg.threads,
        }),
    );
    o.insert(
        "conventions".into(),
        json!({
            "times": "microseconds of simulated time",
            "execution_time_us": "when the last application thread finished",
            "mean_node_finish_us": "mean over nodes of when their last thread finished",
            "breakdown": "per processor: compute (including bus stalls), protocol (handlers, fault detection, interrupts), polling (poll stubs), switch (context and role switches), idle; they add up to the execution time",
            "mean_miss_latency_us": "from the faulting access to the thread being runnable again",
        }),
    );
    out
}

/// Run a sim request (JSON in, JSON out). For the synthetic workload the result also holds the
/// analytic model's prediction for the same parameters (`model`) and the relative difference.
pub fn sim_json(request: &str) -> Result<String, ProtoError> {
    sim_json_with(request, &mut |_, _| {})
}

/// [`sim_json`] with `progress(misses_done, misses_expected)` called now and then.
pub fn sim_json_with(
    request: &str,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<String, ProtoError> {
    let r: SimRequest = parse("sim", request)?;
    let (cfg, app) = resolve(&r)?;
    let res = simulate_with_progress(&cfg, &app, progress)?;
    let mut out = sim_value(&cfg, &app, &res);
    if let App::Synthetic(s) = app {
        if cfg.costs.source == CostSet::Model {
            let md = Model::new(r.l_remote_us, r.o_pp_us, r.o_reply_us, s.requests as f64)?;
            let (t, which) = match cfg.policy {
                Policy::Fixed => (md.t_fixed(s.c_us), "t_fixed"),
                Policy::Single => (md.t_single(s.c_us), "t_single"),
                Policy::Floating => (md.t_floating(s.c_us), "t_floating"),
            };
            let applies = match cfg.policy {
                Policy::Fixed => cfg.cpus == 2,
                Policy::Single => true,
                Policy::Floating => cfg.cpus == 2,
            } && cfg.threads == 1;
            out["model"] = json!({
                "equation": which,
                "time_us": t,
                "difference_pct": 100.0 * (res.mean_node_finish_us - t) / t,
                "compared": "mean_node_finish_us",
                "applies": applies,
                "note": "the model describes one compute thread per node (Single, Fixed with 2 processors) or two (Floating with 2); elsewhere the figure is for orientation only",
            });
        }
    }
    Ok(out.to_string())
}

// -------------------------------------------------------------------------------------------
// table 2

/// Threads per processor that saturate a requester (or the requesters of a home).
pub const SATURATING_THREADS: u32 = 8;
/// Most misses of the Table 2 microbenchmark.
pub const MAX_TABLE2_MISSES: u64 = 1_000_000;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Table2Request {
    pub misses: u64,
    pub seed: u64,
}

impl Default for Table2Request {
    fn default() -> Self {
        Table2Request {
            misses: Microbench::default().misses,
            seed: 1,
        }
    }
}

/// Table 2's microbenchmarks on the simulator, as the paper ran them: the round trip from a
/// latency run (one thread in a tight miss loop, the home computing), the requester and home
/// overheads from runs that saturate the requester and the home ("other" = the rest), per
/// policy, beside the paper's figures.
pub fn table2_json(request: &str) -> Result<String, ProtoError> {
    let r: Table2Request = parse("table2", request)?;
    if r.misses == 0 || r.misses > MAX_TABLE2_MISSES {
        return Err(ProtoError::Request(format!(
            "misses must be between 1 and {MAX_TABLE2_MISSES}, got {}",
            r.misses
        )));
    }
    let mut rows = Vec::new();
    for (policy, cpus, paper) in [
        (
            Policy::Fixed,
            2,
            Some((
                table2::FIXED_ROUND_TRIP,
                table2::FIXED_REQUESTER,
                table2::FIXED_HOME,
                table2::FIXED_OTHER,
            )),
        ),
        (
            Policy::Single,
            1,
            Some((
                table2::SINGLE_ROUND_TRIP,
                table2::SINGLE_REQUESTER,
                table2::SINGLE_HOME,
                table2::SINGLE_OTHER,
            )),
        ),
        (Policy::Floating, 2, None),
    ] {
        let run = |bench: Bench, nodes: u32, threads: u32| {
            let cfg = SimConfig {
                policy,
                nodes,
                cpus,
                threads,
                costs: PolicyCosts::table2(),
                bus_share: 0.0,
                seed: r.seed,
            };
            simulate(
                &cfg,
                &App::Microbench(Microbench {
                    misses: r.misses,
                    bench,
                }),
            )
        };
        let m = r.misses as f64;
        let latency = run(Bench::Latency, 2, 1)?;
        let rt = latency.execution_time_us / m;
        let requester = run(Bench::Requester, 2, SATURATING_THREADS)?;
        let req = requester.handler_us_per_node[0] / m;
        let home_run = run(Bench::Home, 4, SATURATING_THREADS)?;
        let home = home_run.handler_us_per_node[0] / (3.0 * m);
        rows.push(json!({
            "policy": policy.name(),
            "cpus": cpus,
            "round_trip_us": rt,
            "requester_us": req,
            "home_us": home,
            "other_us": rt - req - home,
            "requester_saturated_us_per_miss": requester.execution_time_us / m,
            "home_saturated_us_per_request": home_run.execution_time_us / (3.0 * m),
            "paper": paper.map(|p| json!({"round_trip_us": p.0, "requester_us": p.1, "home_us": p.2, "other_us": p.3})),
            "round_trip_error_pct": paper.map(|p| 100.0 * (rt - p.0) / p.0),
        }));
    }
    Ok(json!({
        "settings": {"misses": r.misses, "seed": r.seed, "saturating_threads": SATURATING_THREADS, "costs": PolicyCosts::table2()},
        "conventions": {
            "round_trip_us": "latency run: one thread of node 0 performs the misses back to back to node 1, which spins in a compute loop; total time / misses",
            "requester_us": "requester saturation run: every thread of node 0 (8 per processor) misses to node 1; protocol handler time on node 0 per miss (request dispatch + reply)",
            "home_us": "home saturation run: every thread of nodes 1-3 (8 per processor) misses to node 0, which spins computing; protocol handler time on node 0 per request",
            "other_us": "the rest: network, fault detection, context switch, waiting for a poll",
        },
        "rows": rows,
    })
    .to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_values_name_their_key() {
        let e = model_json(r#"{"l_remote_us": "NaN"}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("l_remote_us"), "{e}");
        let e = sim_json(r#"{"nodes": 0}"#).unwrap_err().to_string();
        assert!(e.contains("nodes"), "{e}");
        let e = sim_json(r#"{"bogus": 1}"#).unwrap_err().to_string();
        assert!(e.contains("bogus"), "{e}");
        let e = sim_json(r#"{"policy": "single", "cpus": 2}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("cpus"), "{e}");
        let e = sim_json(r#"{"threads": "x"}"#).unwrap_err().to_string();
        assert!(e.starts_with("bad sim request: threads"), "{e}");
        assert!(model_json("[]").is_err());
    }

    #[test]
    fn model_points_span_l_remote_and_hold_the_closed_forms() {
        let v: Value = serde_json::from_str(&model_json("{}").unwrap()).unwrap();
        let pts = v["points"].as_array().unwrap();
        assert_eq!(pts.len(), 41);
        let c0 = pts[0]["c_us"].as_f64().unwrap();
        let cn = pts[40]["c_us"].as_f64().unwrap();
        assert!(c0 < 113.0 && cn > 113.0);
        assert!((pts[20]["c_us"].as_f64().unwrap() - 113.0).abs() < 1e-9);
        for p in pts {
            let c = p["c_us"].as_f64().unwrap();
            let want = c + 113.0 + 137.0 * c / (c + 113.0);
            assert!((p["t_single"].as_f64().unwrap() - want).abs() < 1e-9);
            assert!((p["t_floating"].as_f64().unwrap() - want / 2.0).abs() < 1e-9);
        }
        assert!(v["break_even"]["fixed_beats_floating"].is_null());
        assert_eq!(v["curves"].as_array().unwrap().len(), 6);
    }

    #[test]
    fn table2_is_reproduced_by_the_microbenchmark() {
        let v: Value = serde_json::from_str(&table2_json(r#"{"misses": 10000}"#).unwrap()).unwrap();
        for row in v["rows"].as_array().unwrap() {
            if let Some(p) = row["paper"].as_object() {
                // The round trip within 1.5%; its parts (the overheads come from the saturation
                // runs, "other" is the rest) within 5%.
                for (k, tol) in [
                    ("round_trip_us", 0.015),
                    ("requester_us", 0.05),
                    ("home_us", 0.05),
                    ("other_us", 0.05),
                ] {
                    let (got, want) = (row[k].as_f64().unwrap(), p[k].as_f64().unwrap());
                    assert!(
                        (got - want).abs() / want < tol,
                        "{} {k}: {got} vs {want}",
                        row["policy"]
                    );
                }
            }
        }
    }
}
