//! The binding resource of one run, in words, from the run's own statistics: what an engineer
//! reads to decide what to change (the NPIRE paper section 5 identifies "whether it is a
//! limitation in the application or instead a saturated resource in the underlying NP").
//!
//! At a maximum sustainable rate some resource is (nearly) saturated. Every candidate gets a
//! *share* in [0, 1], the fraction of the simulated time it was unavailable:
//! - a lock: the share of the time it was held (one holder at a time);
//! - a task that runs a bounded number of instances (1 when not replicated): its
//!   context-holding time over that bound;
//! - a PE: the larger of its computing share and the share of its contexts held by instances
//!   (each task's holding time split evenly over its PEs);
//! - a bus instance or a storage channel: its unpipelined (occupied) share.
//!
//! The candidates are ranked by share (at 1% resolution; within it a lock, then a task, a bus,
//! a channel, a PE: the cause before the contexts that wait on it); the first is the binding
//! resource, named with its evidence and what would relieve it. The ranking is deterministic.
use crate::config::Mapping;
use crate::stats::SimReport;
use pktflow_harness::{Finding, Resource};
use serde::Serialize;

/// The binding resource and the runners-up.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Diagnosis {
    /// Most saturated first (at most 5), in the harness's vocabulary (the JSON shape every
    /// engine uses: `{resource: {kind, ...}, share, evidence, advice, sentence}`).
    pub limits: Vec<Finding>,
    /// One sentence: the binding resource's, then the next one's resource and share.
    pub sentence: String,
}

fn pct(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// The element class to name beside an element (none when unknown or equal to the name).
fn class_of(name: &str, class: Option<&String>) -> String {
    match class {
        Some(c) if c != name => c.clone(),
        _ => String::new(),
    }
}

/// Rank the resources of `r`, a run of `mapping` (tasks by element index; `classes[i]` is the
/// element class of task i, may be empty). `contexts` is the hardware contexts per PE.
pub fn diagnose(r: &SimReport, mapping: &Mapping, classes: &[String], contexts: u32) -> Diagnosis {
    let total = r.cycles.max(1) as f64;
    let class = |task: usize| classes.get(task);
    let mut c: Vec<(u8, Finding)> = Vec::new();
    for l in &r.locks {
        let task = r
            .tasks
            .iter()
            .find(|t| t.element == l.element)
            .map(|t| t.task);
        let per = if l.acquisitions > 0 {
            l.held * total / l.acquisitions as f64
        } else {
            0.0
        };
        c.push((
            0,
            Finding::with_advice(
                Resource::Lock {
                    name: l.element.clone(),
                    class: class_of(&l.element, task.and_then(|t| class(t as usize))),
                },
                l.held,
                vec![format!(
                    "{} acquisitions, {per:.0} cycles each",
                    l.acquisitions
                )],
                "every instance of the task serializes on it: shorten the critical section \
                 (fewer or wider accesses inside it) or execute it speculatively"
                    .into(),
            ),
        ));
    }
    let mut pe_occ = vec![0.0f64; r.pes.len()];
    for t in &r.tasks {
        let Some(m) = mapping.tasks.get(t.task as usize) else {
            continue;
        };
        let n = m.pes.len().max(1) as f64;
        for &p in &m.pes {
            if let Some(o) = pe_occ.get_mut(p as usize) {
                *o += t.occupancy_cycles as f64 / n;
            }
        }
        if m.max_concurrent != u32::MAX {
            let k = m.max_concurrent.max(1);
            let share = t.occupancy_cycles as f64 / (total * k as f64);
            let how = if k == 1 {
                "runs one instance at a time".to_string()
            } else {
                format!("runs at most {k} instances at a time")
            };
            c.push((
                1,
                Finding::with_advice(
                    Resource::Task {
                        name: t.element.clone(),
                        class: class_of(&t.element, class(t.task as usize)),
                    },
                    share,
                    vec![format!(
                        "{how}, holding {} that share of the time; packets wait {:.0} cycles \
                         in its queue",
                        if k == 1 { "its context" } else { "them" },
                        t.mean_queue_cycles
                    )],
                    "replicate it".into(),
                ),
            ));
        }
    }
    for (i, p) in r.pes.iter().enumerate() {
        let ctx = (pe_occ[i] / (total * contexts.max(1) as f64)).min(1.0);
        let share = p.busy.max(ctx);
        let evidence = if p.busy >= ctx {
            format!("computing {}", pct(p.busy))
        } else {
            format!(
                "its {contexts} contexts held {}: computing {}, the rest waiting for memory or \
                 locks",
                pct(ctx),
                pct(p.busy)
            )
        };
        c.push((
            4,
            Finding::with_advice(
                Resource::Pe { index: p.pe },
                share,
                vec![evidence],
                "spread its tasks over more PEs (replicate them more widely)".into(),
            ),
        ));
    }
    for (kind, list, advice) in [
        (
            "bus",
            &r.buses,
            "fewer requests (wide accesses) or more bus bandwidth",
        ),
        (
            "channel",
            &r.channels,
            "fewer requests (wide accesses) or more memory channels",
        ),
    ] {
        for b in list.iter() {
            let resource = if kind == "bus" {
                Resource::Bus {
                    name: b.name.clone(),
                }
            } else {
                Resource::Memory {
                    name: b.name.clone(),
                }
            };
            c.push((
                if kind == "bus" { 2 } else { 3 },
                Finding::with_advice(
                    resource,
                    b.utilization,
                    vec![format!(
                        "requests wait {:.0} cycles for it",
                        b.mean_queue_delay_cycles
                    )],
                    advice.into(),
                ),
            ));
        }
    }
    // By share at 1% resolution; within it, the cause before its symptoms (a lock or a serial
    // task before the PE it keeps busy, a bus before the contexts waiting on it).
    let bucket = |x: f64| (x * 100.0).round() as i64;
    c.sort_by(|a, b| {
        bucket(b.1.share)
            .cmp(&bucket(a.1.share))
            .then(a.0.cmp(&b.0))
            .then(b.1.share.total_cmp(&a.1.share))
            .then(a.1.resource.describe().cmp(&b.1.resource.describe()))
    });
    let limits: Vec<Finding> = c.into_iter().take(5).map(|x| x.1).collect();
    let sentence = match limits.first() {
        None => "nothing was simulated".to_string(),
        Some(top) => {
            let mut s = top.sentence.clone();
            if let Some(n) = limits.get(1) {
                s += &format!(
                    "; next: {} {} {}",
                    n.resource.describe(),
                    n.resource.verb(),
                    pct(n.share)
                );
            }
            s
        }
    };
    Diagnosis { limits, sentence }
}
