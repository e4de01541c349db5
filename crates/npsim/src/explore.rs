//! Design-space exploration (issue 3 section 6, seed 000 Figure 7): for every PE count and
//! replication scope, the mapping the chosen mapper finds, its maximum sustainable rate, the
//! speedup over 4 PEs with no replication (Figure 7's normalization) and a cheap bottleneck
//! ranking (S, B and M idealized alone).
//!
//! Step 1 of the mapper (the infinite-PE measurement) does not depend on the PE count or the
//! scope, so it is made once and shared by every point.
use crate::app::{AppSpec, Prepared};
use crate::bottleneck::resource_name;
use crate::config::{Ideal, Replication, SimConfig};
use crate::maxrate::MaxRateConfig;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExploreConfig {
    /// PE counts.
    pub pes: Vec<u32>,
    pub replications: Vec<Replication>,
    /// Run the cheap bottleneck ranking (S, B, M alone) at every point.
    pub bottleneck: bool,
    /// A gain below this factor does not count as a limit.
    #[serde(deserialize_with = "crate::config::lenient_f64")]
    pub threshold: f64,
    /// PE count of the normalization point (with no replication).
    pub baseline_pes: u32,
    /// Worker threads over the points (0, the default: every core). It does not change the
    /// result, so it is not echoed in the result's settings.
    #[serde(skip_serializing)]
    pub workers: usize,
}

/// Most points of one exploration (PE counts times scopes).
pub const MAX_POINTS: usize = 4096;

/// Most worker threads of one exploration.
pub const MAX_WORKERS: usize = 256;

impl ExploreConfig {
    /// Every field in its range; messages name the field as `explore.FIELD` and the option.
    pub fn validate(&self) -> Result<(), String> {
        let max = pktflow_arch::np::MAX_PES;
        if let Some(&n) = self.pes.iter().find(|&&n| n == 0 || n > max) {
            return Err(format!(
                "explore.pes (--pes): PE count {n} is outside 1 to {max}"
            ));
        }
        if self.pes.len().saturating_mul(self.replications.len()) > MAX_POINTS {
            return Err(format!(
                "explore: {} PE counts times {} scopes is more than {MAX_POINTS} points",
                self.pes.len(),
                self.replications.len()
            ));
        }
        if self.workers > MAX_WORKERS {
            return Err(format!(
                "explore.workers (--workers) must be 0 (every core) to {MAX_WORKERS}, got {}",
                self.workers
            ));
        }
        if self.baseline_pes == 0 || self.baseline_pes > max {
            return Err(format!(
                "explore.baseline_pes must be 1 to {max}, got {}",
                self.baseline_pes
            ));
        }
        if !(self.threshold.is_finite() && (1.0..=1e6).contains(&self.threshold)) {
            return Err(format!(
                "explore.threshold (--threshold) must be a factor from 1 to 1e6, got {}",
                self.threshold
            ));
        }
        Ok(())
    }
}

impl Default for ExploreConfig {
    fn default() -> Self {
        ExploreConfig {
            pes: (1..=8).map(|k| 4 * k).collect(),
            replications: vec![
                Replication::None,
                Replication::Pe,
                Replication::Subset,
                Replication::Global,
            ],
            bottleneck: true,
            threshold: 1.05,
            baseline_pes: 4,
            workers: 0,
        }
    }
}

/// Cheap bottleneck ranking: the maximum rate with S, B and M each idealized alone; when none
/// of them moves it by the threshold, their combinations in Figure 8's order (S, SB, SBM),
/// cumulatively, until one does.
#[derive(Clone, Debug, Serialize)]
pub struct QuickBottleneck {
    /// Figure 8's letters (one or a combination) -> maximum rate with them idealized over the
    /// point's.
    pub gains: BTreeMap<String, f64>,
    /// In words.
    pub summary: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct ExplorePoint {
    pub pes: u32,
    pub replication: Replication,
    pub packets_per_second: f64,
    pub gbps: f64,
    pub inter_arrival_cycles: f64,
    pub bracket_cycles: [f64; 2],
    /// Over the baseline (4 PEs, no replication, same mapper); none when an interrupted
    /// exploration stopped before the baseline was measured.
    pub speedup: Option<f64>,
    /// Mean busy share of the PEs at the maximum rate.
    pub mean_pe_busy: f64,
    /// Tasks replicated in the mapping found (element names).
    pub replicated: Vec<String>,
    /// Why the mapper's replication step stopped (empty for mappers without one).
    pub replication_stopped: String,
    /// The binding resource at the maximum rate, from the run's statistics.
    pub limit: crate::Diagnosis,
    /// Largest expected PE load of the mapping's home PEs, compute cycles per packet.
    pub max_pe_load: f64,
    /// Maximum-rate searches the point took (mapper and bottleneck included).
    pub searches: u32,
    pub bottleneck: Option<QuickBottleneck>,
    /// Per task: element, PEs, concurrent instances (None = unlimited).
    pub mapping: Vec<(String, Vec<u32>, Option<u32>)>,
    /// [xform hook] what the transformations did at the maximum rate, and the splitting
    /// feedback loop's log (absent without transformations).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transform: Option<crate::xform::TransformReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<crate::xform::split::SplitLog>,
    pub wall_seconds: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Explore {
    pub app: String,
    pub arch: String,
    pub mapper: String,
    pub baseline_pes: u32,
    /// None when an interrupted exploration stopped before measuring it.
    pub baseline_packets_per_second: Option<f64>,
    /// Step 1's measurement: compute cycles per packet of every task.
    pub weights: Vec<(String, f64)>,
    pub points: Vec<ExplorePoint>,
    pub wall_seconds: f64,
    /// The user interrupted the sweep: `points` are the ones finished.
    pub interrupted: bool,
}

fn letters_in_words(l: &str) -> String {
    let v: Vec<&str> = l.chars().map(resource_name).collect();
    match v.len() {
        0 => String::new(),
        1 => v[0].to_string(),
        n => format!("{} and {}", v[..n - 1].join(", "), v[n - 1]),
    }
}

fn quick_bottleneck(
    p: &Prepared,
    cfg: &SimConfig,
    m: &MaxRateConfig,
    base: f64,
    threshold: f64,
    binding: &str,
) -> Result<QuickBottleneck, String> {
    let mut gains = BTreeMap::new();
    let mut v = Vec::new();
    let run = |l: &str, gains: &mut BTreeMap<String, f64>| -> Result<f64, String> {
        let c2 = SimConfig {
            ideal: Ideal::parse(l)?,
            ..cfg.clone()
        };
        let g = p.max_rate(&c2, m)?.packets_per_second / base;
        gains.insert(l.to_string(), g);
        Ok(g)
    };
    for c in ['S', 'B', 'M'] {
        let g = run(&c.to_string(), &mut gains)?;
        v.push((c, g));
    }
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    let lim: Vec<String> = v
        .iter()
        .filter(|(_, g)| *g >= threshold)
        .map(|(c, g)| format!("{} ({c} alone {g:.2}x)", resource_name(*c)))
        .collect();
    if !lim.is_empty() {
        return Ok(QuickBottleneck {
            gains,
            summary: format!("limited by {}", lim.join(", then ")),
        });
    }
    // No single idealization moves it: combine them as Figure 8 does.
    for l in ["SB", "SBM"] {
        let g = run(l, &mut gains)?;
        if g >= threshold {
            return Ok(QuickBottleneck {
                gains,
                summary: format!(
                    "limited by {} together ({l} {g:.2}x; each alone below {threshold:.2}x)",
                    letters_in_words(l)
                ),
            });
        }
    }
    let g = gains.get("SBM").copied().unwrap_or(1.0);
    Ok(QuickBottleneck {
        gains,
        summary: format!(
            "not synchronization, buses or memories (SBM together {g:.2}x): {binding}"
        ),
    })
}

/// One point: prepare, map, search (and rank).
#[allow(clippy::too_many_arguments)]
fn point(
    spec: &AppSpec,
    pes: u32,
    rep: Replication,
    prof: &crate::mapper::Profile,
    cfg: &SimConfig,
    m: &MaxRateConfig,
    e: &ExploreConfig,
    bottleneck: bool,
) -> Result<ExplorePoint, String> {
    let t0 = Instant::now();
    let s = AppSpec {
        pes: Some(pes),
        replication: rep,
        ..spec.clone()
    };
    let mut p = Prepared::new(&s)?;
    let (log, best) = p.apply_mapper(Some(prof), cfg, m)?;
    let mut searches = log.searches;
    // [xform hook] the splitting feedback loop after the mapping
    let best = match crate::xform::plan(&mut p, cfg, m)? {
        Some(b) => {
            searches += 1 + p
                .xform
                .log
                .as_ref()
                .map_or(0, |l| l.iterations.len() as u32);
            Some(b)
        }
        None => best,
    };
    let r = match best {
        Some(r) => r,
        None => {
            searches += 1;
            p.max_rate(cfg, m)?
        }
    };
    let limit = p.diagnose(&r.report);
    let bn = if bottleneck {
        let top = limit
            .limits
            .first()
            .map(|l| {
                format!(
                    "{} {} {:.1}% of the time",
                    l.resource.describe(),
                    l.resource.verb(),
                    100.0 * l.share
                )
            })
            .unwrap_or_default();
        let q = quick_bottleneck(
            &p,
            cfg,
            &MaxRateConfig {
                start_cycles: r.inter_arrival_cycles,
                ..m.clone()
            },
            r.packets_per_second,
            e.threshold,
            &top,
        )?;
        searches += q.gains.len() as u32;
        Some(q)
    } else {
        None
    };
    let busy = r.report.pes.iter().map(|x| x.busy).sum::<f64>() / r.report.pes.len().max(1) as f64;
    let mapping = p
        .mapping
        .tasks
        .iter()
        .enumerate()
        .map(|(i, t)| {
            (
                p.names[i].clone(),
                t.pes.clone(),
                (t.max_concurrent != u32::MAX).then_some(t.max_concurrent),
            )
        })
        .collect();
    let replicated = if log.mapper == "round-robin" {
        if rep == Replication::None {
            vec![]
        } else {
            p.names.clone()
        }
    } else {
        log.replicated.clone()
    };
    Ok(ExplorePoint {
        pes,
        replication: rep,
        packets_per_second: r.packets_per_second,
        gbps: r.gbps,
        inter_arrival_cycles: r.inter_arrival_cycles,
        bracket_cycles: r.bracket.inter_arrival_cycles,
        speedup: None,
        mean_pe_busy: busy,
        replicated,
        replication_stopped: log.stopped.clone(),
        limit,
        max_pe_load: log.max_pe_load,
        searches,
        bottleneck: bn,
        mapping,
        transform: r.report.transform.clone(),
        split: p.xform.log.clone(),
        wall_seconds: t0.elapsed().as_secs_f64(),
    })
}

/// One job of the sweep: a point of the grid, or the baseline measured apart.
#[derive(Clone, Copy)]
struct Job {
    pes: u32,
    rep: Replication,
    /// The baseline measured apart (without transformations, no bottleneck ranking).
    baseline: bool,
}

/// What a worker tells the thread that called [`explore`].
enum Msg<T> {
    Started(usize),
    Finished(usize, Result<T, String>),
}

/// The number of worker threads `explore.workers` asks for: 0 (the default) means every core
/// (`std::thread::available_parallelism`), never more threads than jobs.
pub fn resolve_workers(requested: usize, jobs: usize) -> usize {
    let n = if requested == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get())
    } else {
        requested
    };
    n.clamp(1, jobs.max(1))
}

/// Run `jobs` on `workers` threads (or inline with one), taking them in order from a shared
/// counter. Results come back indexed like `jobs`, so the outcome does not depend on the number
/// of workers. `started(i)` is called on the calling thread when job `i` starts. After an error
/// or Ctrl-C no further job starts; jobs already running finish (they stop promptly on Ctrl-C
/// themselves). A job that never ran is `None`.
fn run_jobs<T: Send>(
    jobs: usize,
    workers: usize,
    work: impl Fn(usize) -> Result<T, String> + Sync,
    mut started: impl FnMut(usize, usize),
) -> Vec<Option<Result<T, String>>> {
    let mut out: Vec<Option<Result<T, String>>> = (0..jobs).map(|_| None).collect();
    let stop = || pktflow_model::cancel::requested();
    if workers <= 1 {
        // In order: job i starts when i jobs are done.
        for (i, slot) in out.iter_mut().enumerate() {
            if stop() {
                break;
            }
            started(i, i);
            let r = work(i);
            let failed = r.is_err();
            *slot = Some(r);
            if failed {
                break;
            }
        }
        return out;
    }
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::channel::<Msg<T>>();
        for _ in 0..workers {
            let tx = tx.clone();
            let (next, failed, work) = (&next, &failed, &work);
            s.spawn(move || loop {
                if failed.load(Ordering::Relaxed) || pktflow_model::cancel::requested() {
                    break;
                }
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs {
                    break;
                }
                if tx.send(Msg::Started(i)).is_err() {
                    break;
                }
                let r = work(i);
                if r.is_err() {
                    failed.store(true, Ordering::Relaxed);
                }
                if tx.send(Msg::Finished(i, r)).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut done = 0;
        for msg in rx {
            match msg {
                Msg::Started(i) => started(i, done),
                Msg::Finished(i, r) => {
                    done += 1;
                    out[i] = Some(r);
                }
            }
        }
    });
    out
}

/// Run the sweep. `progress(done, total, label)` is called on the calling thread before each
/// point starts (`done` counts the finished steps, step 1 included; `label` names the point
/// starting) and once at the end (done = total).
///
/// The points are independent: after step 1 they run on `e.workers` threads (0: every core),
/// and the result is the same, point for point and in the same order, for any number of
/// workers. On Ctrl-C the finished points are returned (in grid order) with `interrupted`.
pub fn explore(
    spec: &AppSpec,
    cfg: &SimConfig,
    m: &MaxRateConfig,
    e: &ExploreConfig,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<Explore, String> {
    let t0 = Instant::now();
    if e.pes.is_empty() {
        return Err("explore: no PE count given".into());
    }
    if e.replications.is_empty() {
        return Err("explore: no replication scope given".into());
    }
    if let Some(&z) = e.pes.iter().find(|&&n| n == 0) {
        return Err(format!("explore: PE count {z} (must be at least 1)"));
    }
    // [xform hook] with transformations, the baseline is measured without them (the NPIRE
    // paper's "relative to the application with no transformation running on 4 PEs").
    let base_in_sweep = !cfg.transform.any()
        && e.pes.contains(&e.baseline_pes)
        && e.replications.contains(&Replication::None);
    let base_cfg = SimConfig {
        transform: Default::default(),
        ..cfg.clone()
    };
    let total = e.pes.len() * e.replications.len() + 1 + usize::from(!base_in_sweep);
    progress(0, total, "step 1: one task per PE, unlimited PEs");
    let p0 = Prepared::new(spec)?;
    let prof = p0.measure(cfg, m.start_cycles)?;
    let mut jobs = Vec::with_capacity(total - 1);
    if !base_in_sweep {
        jobs.push(Job {
            pes: e.baseline_pes,
            rep: Replication::None,
            baseline: true,
        });
    }
    for &n in &e.pes {
        for &rep in &e.replications {
            jobs.push(Job {
                pes: n,
                rep,
                baseline: false,
            });
        }
    }
    let workers = resolve_workers(e.workers, jobs.len());
    let results = run_jobs(
        jobs.len(),
        workers,
        |i| {
            let j = jobs[i];
            if j.baseline {
                point(spec, j.pes, j.rep, &prof, &base_cfg, m, e, false)
            } else {
                point(spec, j.pes, j.rep, &prof, cfg, m, e, e.bottleneck)
            }
        },
        |i, done| {
            let j = jobs[i];
            let label = if j.baseline {
                format!("baseline: {} PEs, none", j.pes)
            } else {
                format!("{} PEs, {}", j.pes, rep_name(j.rep))
            };
            progress(1 + done, total, &label);
        },
    );
    let cancelled = pktflow_model::cancel::requested();
    // The first error in grid order decides, unless Ctrl-C caused it.
    let mut interrupted = false;
    let mut points = Vec::new();
    let mut base = None;
    for (j, r) in jobs.iter().zip(results) {
        match r {
            None => interrupted = true,
            Some(Err(_)) if cancelled => interrupted = true,
            Some(Err(x)) => return Err(x),
            Some(Ok(pt)) => {
                // The sweep's own point is the baseline only without transformations (with them it
                // is the transformed application; the baseline job measured it apart).
                if j.baseline
                    || (base_in_sweep && j.pes == e.baseline_pes && j.rep == Replication::None)
                {
                    base = Some(pt.packets_per_second);
                }
                if !j.baseline {
                    points.push(pt);
                }
            }
        }
    }
    if !interrupted {
        progress(total, total, "done");
    }
    for pt in &mut points {
        pt.speedup = base.map(|b| pt.packets_per_second / b);
    }
    Ok(Explore {
        app: spec.app.clone(),
        arch: spec.arch.clone(),
        mapper: spec.mapper.clone(),
        baseline_pes: e.baseline_pes,
        baseline_packets_per_second: base,
        weights: p0
            .names
            .iter()
            .cloned()
            .zip(prof.weights.iter().copied())
            .collect(),
        points,
        wall_seconds: t0.elapsed().as_secs_f64(),
        interrupted,
    })
}

pub fn rep_name(r: Replication) -> &'static str {
    match r {
        Replication::None => "none",
        Replication::Pe => "pe",
        Replication::Subset => "subset",
        Replication::Global => "global",
    }
}
