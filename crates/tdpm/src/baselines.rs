//! The configurations of seed 001 (`001_50c9ec885c831f52.txt`) section 5, and the registry of
//! mappers by name (`tdpm|tdpm-s|comm|res|base|optimal`).
//!
//! * Base: "the worst-case scenario when all of the tasks are mapped to the XScale core" (one
//!   task per PPF).
//! * RES: "considers the control store limitation, hardware resources, and other costs except
//!   for communication cost. In this configuration, we never group any pair of critical tasks
//!   to reduce communication cost, but we can duplicate tasks and map them to MEs." One task
//!   per PPF; critical tasks get MEs in descending order of their cost without communication;
//!   then each remaining ME goes to the task with the largest such cost per ME (section 4.3:
//!   "Each processor is assigned to the slowest task"); non-critical and left-over tasks run
//!   on the XScale.
//! * COMM: "uses a greedy algorithm to reduce communication cost and performs simple resource
//!   management, e.g. duplicating all tasks equally. It also handles the control store
//!   limitation, but it does not consider other costs." Greedy grouping of all PPFs by the
//!   communication removed (control store and cycle checks, no throughput check); then
//!   ⌊n/p⌋ copies of every task; when p > n the first n tasks in pipeline order get an ME and
//!   the rest run on the XScale ("critical tasks are mapped to the XScale core when the
//!   number of available MEs is smaller than what is needed").
//! * TDPM-S: the heuristic without "differentiating between non-critical and critical paths".
//! * TDPM-all (`tdpm`): the full heuristic.
use crate::cost::{Mapping, Model, Task};
use crate::error::TdpmError;
use crate::heuristic::{self, critical_ppfs, Options, Plan, Steps};

/// The TDPM model's mappers by name, with one help line each (`tdpm-all` is an alias of
/// `tdpm`).
pub fn registry() -> pktflow_harness::Registry<()> {
    let mut r = pktflow_harness::Registry::new("mapper");
    r.register(
        "tdpm",
        "the full heuristic, critical and non-critical paths apart",
        (),
    )
    .register(
        "tdpm-refine",
        "the full heuristic, then local refinement of its plan",
        (),
    )
    .register(
        "tdpm-s",
        "the heuristic without telling critical from non-critical paths",
        (),
    )
    .register(
        "comm",
        "greedy grouping to cut communication, every task duplicated equally",
        (),
    )
    .register(
        "res",
        "resources and costs but never grouping critical tasks",
        (),
    )
    .register("base", "every task on the XScale core (the worst case)", ())
    .register("optimal", "exhaustive search for small models", ());
    r
}

/// Every mapper of pktflow, the TDPM model's and the NP simulator's, with the command that runs
/// it: (name, help, family).
pub fn all_mappers() -> Vec<(&'static str, &'static str, &'static str)> {
    let mut v: Vec<_> = registry()
        .entries()
        .iter()
        .map(|e| (e.name, e.help, "tdpm (pktflow map)"))
        .collect();
    v.extend(pktflow_npsim::mapper::registry().entries().iter().map(|e| {
        (
            e.name,
            e.help,
            "npsim (pktflow np maxrate/explore --mapper)",
        )
    }));
    v
}

/// The unknown-name message of the TDPM registry, with a pointer when `name` is a mapper of the
/// NP simulator.
fn unknown(name: &str) -> String {
    let mut m = match registry().get(name) {
        Err(e) => e.to_string(),
        Ok(_) => return String::new(),
    };
    if pktflow_npsim::mapper::registry().get(name).is_ok() {
        m.push_str(&format!(
            "; '{name}' is a mapper of the NP simulator (pktflow np maxrate/explore --mapper)"
        ));
    }
    m
}

pub const MAPPERS: &[&str] = &[
    "tdpm",
    "tdpm-refine",
    "tdpm-s",
    "comm",
    "res",
    "base",
    "optimal",
];

/// Run the mapper called `name`.
pub fn map(model: &Model, name: &str, opts: &Options) -> Result<Plan, TdpmError> {
    let plan = map_uninterrupted(model, name, opts)?;
    pktflow_model::cancel::check().map_err(|c| TdpmError::Request(c.to_string()))?;
    Ok(plan)
}

fn map_uninterrupted(model: &Model, name: &str, opts: &Options) -> Result<Plan, TdpmError> {
    match name {
        "tdpm" | "tdpm-all" => heuristic::tdpm(
            model,
            &Options {
                differentiate_critical: true,
                ..opts.clone()
            },
        ),
        "tdpm-refine" => heuristic::tdpm_refine(
            model,
            &Options {
                differentiate_critical: true,
                ..opts.clone()
            },
            &crate::refine::RefineOptions::default(),
        ),
        "tdpm-s" => heuristic::tdpm(
            model,
            &Options {
                differentiate_critical: false,
                ..opts.clone()
            },
        ),
        "comm" => comm(model),
        "res" => res(model, opts),
        "base" => base(model),
        "optimal" => crate::optimal::optimal(model, &crate::optimal::Limits::default()),
        _ => Err(TdpmError::Request(unknown(name))),
    }
}

fn plan(
    model: &Model,
    name: &str,
    mapping: Mapping,
    critical: Vec<bool>,
    steps: Steps,
) -> Result<Plan, TdpmError> {
    let eval = model.evaluate(&mapping)?;
    Ok(Plan {
        mapper: name.into(),
        mapping,
        eval,
        critical,
        steps,
    })
}

pub fn base(model: &Model) -> Result<Plan, TdpmError> {
    let tasks = (0..model.g.len())
        .map(|i| Task {
            ppfs: vec![i],
            dup: 0,
        })
        .collect();
    let n = model.g.len();
    plan(
        model,
        "base",
        Mapping { tasks, copies: 1 },
        vec![false; n],
        Steps::default(),
    )
}

pub fn res(model: &Model, opts: &Options) -> Result<Plan, TdpmError> {
    let crit = critical_ppfs(model, opts);
    let g = model.g;
    let n = model.m.engines;
    let task_of: Vec<usize> = (0..g.len()).collect();
    // Cost without communication: computation + memory (+ synchronization, recomputed as
    // MEs are added).
    let no_comm: Vec<f64> = (0..g.len())
        .map(|i| {
            let s = model.task_static(&[i], &task_of, true);
            s.comp + s.mem
        })
        .collect();
    let mut order: Vec<usize> = (0..g.len())
        .filter(|&i| crit[i] && g.ppfs[i].code_size as u64 <= model.m.control_store as u64)
        .collect();
    order.sort_by(|&a, &b| no_comm[b].total_cmp(&no_comm[a]).then(a.cmp(&b)));
    let mut dup = vec![0u32; g.len()];
    for &i in order.iter().take(n as usize) {
        dup[i] = 1;
    }
    let mut used = order.len().min(n as usize) as u32;
    let mut steps = Steps::default();
    while used < n {
        let tasks: Vec<Task> = (0..g.len())
            .map(|i| Task {
                ppfs: vec![i],
                dup: dup[i],
            })
            .collect();
        let sync = model.sync_costs(&tasks, &dup);
        let slowest = (0..g.len()).filter(|&i| dup[i] > 0).max_by(|&a, &b| {
            ((no_comm[a] + sync[a]) / dup[a] as f64)
                .total_cmp(&((no_comm[b] + sync[b]) / dup[b] as f64))
                .then(b.cmp(&a))
        });
        let Some(t) = slowest else { break };
        dup[t] += 1;
        used += 1;
        steps.duplications += 1;
    }
    let tasks = (0..g.len())
        .map(|i| Task {
            ppfs: vec![i],
            dup: dup[i],
        })
        .collect();
    plan(model, "res", Mapping { tasks, copies: 1 }, crit, steps)
}

pub fn comm(model: &Model) -> Result<Plan, TdpmError> {
    let g = model.g;
    let crit = vec![true; g.len()];
    let (s, steps) = heuristic::run(model, crit.clone(), false);
    // Pipeline order: position of each task's first PPF in a topological order.
    let topo = g.topo_order();
    let mut pos = vec![0usize; g.len()];
    for (k, &i) in topo.iter().enumerate() {
        pos[i] = k;
    }
    let mut groups: Vec<Vec<usize>> = (0..s.alive.len())
        .filter(|&t| s.alive[t])
        .map(|t| {
            let mut v = s.members[t].clone();
            v.sort_unstable();
            v
        })
        .collect();
    groups.sort_by_key(|v| v.iter().map(|&i| pos[i]).min());
    let n = model.m.engines as usize;
    let mut used = 0usize;
    let mut tasks = Vec::with_capacity(groups.len());
    for v in groups {
        let code: u64 = v.iter().map(|&i| g.ppfs[i].code_size as u64).sum();
        let dup = if used < n && code <= model.m.control_store as u64 {
            used += 1;
            1
        } else {
            0
        };
        tasks.push(Task { ppfs: v, dup });
    }
    let copies = n.checked_div(used).map_or(1, |c| c as u32);
    plan(model, "comm", Mapping { tasks, copies }, crit, steps)
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_registry_names_every_mapper_and_points_across_engines() {
        assert_eq!(super::registry().names(), super::MAPPERS.to_vec());
        let all = super::all_mappers();
        assert!(all.iter().any(|m| m.0 == "tdpm-refine"));
        assert!(all
            .iter()
            .any(|m| m.0 == "greedy+replicate" && m.2.starts_with("npsim")));
        assert!(all.iter().all(|m| !m.1.is_empty()));
        let e = super::unknown("anneal");
        assert!(
            e.starts_with("unknown mapper 'anneal' (known: tdpm, ") && e.contains("NP simulator"),
            "{e}"
        );
        assert!(!super::unknown("nope").contains("NP simulator"));
    }

    use super::*;
    use crate::cost::Machine;
    use crate::gen;

    #[test]
    fn every_mapper_gives_a_valid_mapping_and_base_is_worst() {
        for seed in 0..20 {
            let g = gen::generate(&gen::GenParams::small(6, seed));
            for n in [1, 3, 6] {
                let model = Model::new(&g, Machine::ixp2400(n).unwrap()).unwrap();
                let b = map(&model, "base", &Options::default()).unwrap();
                for name in ["tdpm", "tdpm-s", "comm", "res"] {
                    let p = map(&model, name, &Options::default()).unwrap();
                    assert!(p.eval.engines_used <= n);
                    if name.starts_with("tdpm") {
                        assert!(
                            p.eval.packets_per_second >= b.eval.packets_per_second * (1.0 - 1e-9),
                            "{name} below base: seed {seed} n {n}"
                        );
                    }
                }
            }
        }
        let g = gen::generate(&gen::GenParams::small(4, 1));
        let model = Model::new(&g, Machine::ixp2400(2).unwrap()).unwrap();
        assert!(map(&model, "nope", &Options::default())
            .unwrap_err()
            .to_string()
            .contains("unknown mapper 'nope'"));
    }
}
