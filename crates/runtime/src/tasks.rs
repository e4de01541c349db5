//! `pktflow run CONFIG --threads N` on a configuration's own tasks, as `click -j N` runs them.
//!
//! Click runs a configuration on N threads by giving each *task* a home thread: the elements
//! that move packets on their own (its sources, FromDump, InfiniteSource, FromDevice; and the
//! elements that pull, a ToDevice behind a Queue, Unqueue). `StaticThreadSched(ELEMENT THREAD,
//! ...)` names a task's thread; a task it does not name runs on thread 0 (Click's
//! `ThreadSched::initial_home_thread_id`, `lib/router.cc`, `elements/threads/
//! staticthreadsched.cc`, read as documentation). A push path runs on the thread of the task
//! that pushes into it, up to a Queue; a Queue's pull side runs on the thread of the task that
//! pulls from it. Two threads pushing into one Queue is Click's ThreadSafeQueue hand-over.
//!
//! Here every element gets one thread ([`plan`]): the thread of the tasks that reach it (a
//! storage element and what pulls from it: the pulling task's). An element reached from tasks
//! on several threads (two sources on two threads pushing into one Queue, or into one Counter)
//! runs once, on the lowest of them, and the other threads hand their packets to it through the
//! runtime's rings (`crate::staged`): Click would run such an element on both threads, with a
//! ThreadSafeQueue where it is a queue. A configuration whose pipelines do not meet (one source
//! per thread, the usual Click multithreaded replay) needs no ring: each thread runs its own
//! connected component, sharing nothing.
//!
//! Hints are checked with `--threads` more than 1 (on one thread everything runs on it): a
//! thread number of `--threads` or more, and a name that is no element (nor the prefix of a
//! compound's elements, `name/...`), are refused in one line. Thread -1 (Click's
//! `THREAD_QUIESCENT`) is a task that does not run. `ScheduleInfo` (tickets) assigns no thread
//! and is accepted as it is.
use crate::mapping::Placement;
use pktflow_model::{AppGraph, Diagnostic};
use serde_json::{json, Value};
use std::collections::BTreeSet;

/// Each element's thread, and which tasks run on each thread.
#[derive(Clone, Debug)]
pub struct Plan {
    pub placement: Placement,
    /// Per thread, per element: the element is a task that thread runs.
    pub tasks: Vec<Vec<bool>>,
}

impl Plan {
    /// Per thread: the names of the tasks it runs.
    pub fn task_names(&self, graph: &AppGraph) -> Vec<Vec<String>> {
        self.tasks
            .iter()
            .map(|m| {
                (0..m.len())
                    .filter(|&e| m[e])
                    .map(|e| graph.elements[e].name.clone())
                    .collect()
            })
            .collect()
    }

    /// The placement's JSON with each stage's tasks.
    pub fn to_json(&self, g: &crate::mapping::GraphInfo, graph: &AppGraph) -> Value {
        let mut v = self.placement.to_json(g, None);
        let names = self.task_names(graph);
        if let Some(stages) = v["stages"].as_array_mut() {
            for (k, s) in stages.iter_mut().enumerate() {
                s["tasks"] = json!(names[k]);
            }
        }
        v
    }
}

/// The graph as the plan sees it.
pub struct TaskGraph<'a> {
    pub graph: &'a AppGraph,
    /// Push connections (from, to), pull ones excluded.
    pub push: Vec<(u32, u32)>,
    /// Pull connections (upstream, element pulling).
    pub pull: Vec<(u32, u32)>,
    /// Elements that push packets of their own making: sources and generators.
    pub push_tasks: Vec<u32>,
    /// Elements that pull on their own (pull sinks, Unqueue).
    pub pull_tasks: Vec<u32>,
    /// Per element: a storage element (Queue).
    pub storage: Vec<bool>,
}

impl<'a> TaskGraph<'a> {
    pub fn of(graph: &'a AppGraph, r: &pktflow_elements_fast::Router) -> Self {
        let pull = r.pull_connections();
        let pulls: BTreeSet<(u32, u32)> = pull.iter().copied().collect();
        let push = r
            .push_connections()
            .into_iter()
            .map(|(a, _, b, _)| (a, b))
            .filter(|c| !pulls.contains(c))
            .collect();
        let mut push_tasks: Vec<u32> = r.source_elements().to_vec();
        push_tasks.extend_from_slice(r.generator_elements());
        push_tasks.sort_unstable();
        TaskGraph {
            graph,
            push,
            pull,
            push_tasks,
            pull_tasks: r.pull_tasks(),
            storage: (0..graph.elements.len() as u32)
                .map(|e| r.is_storage(e))
                .collect(),
        }
    }
}

/// Whether the configuration names threads (a StaticThreadSched element).
pub fn has_hints(graph: &AppGraph) -> bool {
    graph
        .elements
        .iter()
        .any(|d| d.class == "StaticThreadSched")
}

/// The thread of every element a StaticThreadSched names, later hints overriding earlier ones
/// (Click: "the one that runs later may override an earlier run"). An element is named as
/// Click finds it: in the StaticThreadSched's compound context first, then outwards; a name
/// that is no element names every element of the compound of that name (`name/...`).
pub fn hints(graph: &AppGraph, threads: usize) -> Result<Vec<Option<i32>>, String> {
    let mut of = vec![None; graph.elements.len()];
    let fail = |d: &pktflow_model::ElementDecl, m: String| {
        Diagnostic::error(d.span.clone(), format!("{}: {m}", d.name)).to_string()
    };
    for d in graph
        .elements
        .iter()
        .filter(|d| d.class == "StaticThreadSched")
    {
        let pairs = pktflow_elements_fast::elements::click::info::parse_pairs(
            "StaticThreadSched",
            &d.config,
            |v| v.parse::<i32>().is_ok(),
            "THREAD",
        )
        .map_err(|m| fail(d, m))?;
        let context = d.name.rfind('/').map_or("", |i| &d.name[..=i]);
        for (name, t) in pairs {
            let t: i32 = t.parse().expect("checked by parse_pairs");
            if t < -1 || t >= threads as i32 {
                return Err(fail(
                    d,
                    format!(
                        "thread {t} for '{name}' is out of range: --threads {threads} runs threads 0 to {} (-1: not at all)",
                        threads - 1
                    ),
                ));
            }
            let named = resolve(graph, context, &name);
            if named.is_empty() {
                return Err(fail(d, format!("'{name}' does not name an element")));
            }
            for e in named {
                of[e] = Some(t);
            }
        }
    }
    Ok(of)
}

/// The elements `name` names from compound context `context` (`a/b/`).
fn resolve(graph: &AppGraph, context: &str, name: &str) -> Vec<usize> {
    let names: Vec<&str> = graph.elements.iter().map(|d| d.name.as_str()).collect();
    let mut ctx = context;
    loop {
        let full = format!("{ctx}{name}");
        if let Some(i) = names.iter().position(|n| *n == full) {
            return vec![i];
        }
        if ctx.is_empty() {
            break;
        }
        // The enclosing context: drop the last component.
        let inner = &ctx[..ctx.len() - 1];
        ctx = inner.rfind('/').map_or("", |i| &inner[..=i]);
    }
    let prefix = format!("{context}{name}/");
    (0..names.len())
        .filter(|&i| names[i].starts_with(&prefix))
        .collect()
}

/// Each element's thread and each thread's tasks (module documentation).
pub fn plan(g: &TaskGraph<'_>, hint: &[Option<i32>], threads: usize) -> Plan {
    let n = g.graph.elements.len();
    let home = |e: u32| hint[e as usize].unwrap_or(0);
    let mut tasks = vec![vec![false; n]; threads];
    let mut push_claim: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    let mut pull_claim: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    let mut succ = vec![Vec::new(); n];
    for &(a, b) in &g.push {
        succ[a as usize].push(b as usize);
    }
    let mut pred_pull = vec![Vec::new(); n];
    for &(up, down) in &g.pull {
        pred_pull[down as usize].push(up as usize);
    }
    let mut all_tasks: Vec<u32> = g.push_tasks.iter().chain(&g.pull_tasks).copied().collect();
    all_tasks.sort_unstable();
    all_tasks.dedup();
    for &t in &all_tasks {
        let h = home(t);
        if h < 0 {
            continue; // quiescent: the task does not run
        }
        let h = h as usize;
        tasks[h][t as usize] = true;
        // Upstream along pull connections: what this task pulls runs on its thread.
        if g.pull_tasks.contains(&t) {
            let mut stack = vec![t as usize];
            let mut seen = BTreeSet::new();
            while let Some(e) = stack.pop() {
                if !seen.insert(e) {
                    continue;
                }
                pull_claim[e].insert(h);
                stack.extend(pred_pull[e].iter().copied());
            }
        }
        // Downstream along push connections, up to a storage element.
        let mut stack = vec![t as usize];
        let mut seen = BTreeSet::new();
        while let Some(e) = stack.pop() {
            if !seen.insert(e) {
                continue;
            }
            push_claim[e].insert(h);
            if g.storage[e] && e != t as usize {
                continue;
            }
            stack.extend(succ[e].iter().copied());
        }
    }
    // Pull-joined groups run on one thread: the lowest their pulling tasks claim (else their
    // pushers').
    let mut leader: Vec<usize> = (0..n).collect();
    fn find(l: &mut [usize], mut x: usize) -> usize {
        while l[x] != x {
            l[x] = l[l[x]];
            x = l[x];
        }
        x
    }
    for &(a, b) in &g.pull {
        let (ra, rb) = (find(&mut leader, a as usize), find(&mut leader, b as usize));
        if ra != rb {
            leader[ra.max(rb)] = ra.min(rb);
        }
    }
    let mut group_pull: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    let mut group_push: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    for e in 0..n {
        let r = find(&mut leader, e);
        group_pull[r].extend(pull_claim[e].iter().copied());
        group_push[r].extend(push_claim[e].iter().copied());
    }
    let of: Vec<Vec<usize>> = (0..n)
        .map(|e| {
            let r = find(&mut leader, e);
            let t = group_pull[r]
                .first()
                .or(group_push[r].first())
                .copied()
                .unwrap_or(0);
            vec![t]
        })
        .collect();
    Plan {
        placement: Placement {
            threads,
            of,
            origin: json!("thread hints (StaticThreadSched; a task it does not name on thread 0)"),
            unmapped: Vec::new(),
            not_replicated: Vec::new(),
            pull_follower: vec![false; n],
        },
        tasks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(conf: &str) -> AppGraph {
        pktflow_click::parse_str(conf, "t.click")
            .expect("parses")
            .graph
    }

    fn plan_of(conf: &str, threads: usize) -> Result<(AppGraph, Plan), String> {
        let g = graph(conf);
        let r = pktflow_elements_fast::Router::new_deferred(
            g.clone(),
            &Default::default(),
            Default::default(),
        )
        .map_err(|d| format!("{d:?}"))?;
        let tg = TaskGraph::of(&g, &r);
        let h = hints(&g, threads)?;
        let p = plan(&tg, &h, threads);
        Ok((g, p))
    }

    fn thread_of(g: &AppGraph, p: &Plan, name: &str) -> usize {
        let i = g.elements.iter().position(|d| d.name == name).unwrap();
        p.placement.of[i][0]
    }

    #[test]
    fn two_pipelines_one_per_thread() {
        let conf = "a :: InfiniteSource(LIMIT 5) -> ca :: Counter -> Discard;
                    b :: InfiniteSource(LIMIT 5) -> cb :: Counter -> q :: Queue -> u :: Unqueue -> db :: Discard;
                    StaticThreadSched(a 0, b 1, u 1);";
        let (g, p) = plan_of(conf, 2).unwrap();
        assert_eq!(thread_of(&g, &p, "ca"), 0);
        assert_eq!(thread_of(&g, &p, "cb"), 1);
        assert_eq!(thread_of(&g, &p, "q"), 1);
        assert_eq!(thread_of(&g, &p, "db"), 1);
        assert_eq!(p.task_names(&g), vec![vec!["a"], vec!["b", "u"]]);
    }

    #[test]
    fn a_queue_runs_with_the_task_that_pulls_from_it() {
        // Both sources push into one queue, pulled on thread 1: the queue and what follows it
        // on 1, the counter both push into once, on the lowest thread of its pushers.
        let conf = "a :: InfiniteSource(LIMIT 5) -> c :: Counter -> q :: ThreadSafeQueue -> u :: Unqueue -> d :: Discard;
                    b :: InfiniteSource(LIMIT 5) -> c;
                    StaticThreadSched(a 1, b 0, u 1);";
        let (g, p) = plan_of(conf, 2).unwrap();
        assert_eq!(thread_of(&g, &p, "c"), 0);
        assert_eq!(thread_of(&g, &p, "q"), 1);
        assert_eq!(thread_of(&g, &p, "u"), 1);
        assert_eq!(thread_of(&g, &p, "d"), 1);
    }

    #[test]
    fn unnamed_tasks_on_thread_0_and_quiescent_ones_not_at_all() {
        let conf =
            "a :: InfiniteSource(LIMIT 5) -> Discard; b :: InfiniteSource(LIMIT 5) -> Discard;
                    StaticThreadSched(b -1);";
        let (g, p) = plan_of(conf, 2).unwrap();
        assert_eq!(
            p.task_names(&g),
            vec![vec!["a".to_string()], Vec::<String>::new()]
        );
    }

    #[test]
    fn bad_hints_are_one_line() {
        let conf = "a :: InfiniteSource(LIMIT 5) -> Discard; StaticThreadSched(a 2);";
        let e = plan_of(conf, 2).unwrap_err();
        assert!(
            e.contains("thread 2 for 'a' is out of range: --threads 2 runs threads 0 to 1"),
            "{e}"
        );
        assert!(!e.contains('\n'), "{e}");
        let conf = "a :: InfiniteSource(LIMIT 5) -> Discard; StaticThreadSched(nosuch 1);";
        let e = plan_of(conf, 2).unwrap_err();
        assert!(e.contains("'nosuch' does not name an element"), "{e}");
        assert!(e.contains("t.click:1"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn a_compound_name_names_its_elements() {
        let g = graph(
            "p :: {input -> c :: Counter -> output}; a :: InfiniteSource(LIMIT 1) -> p -> Discard;",
        );
        let names: Vec<&str> = g.elements.iter().map(|d| d.name.as_str()).collect();
        let c = names
            .iter()
            .position(|n| *n == "p/c")
            .expect("flattened name p/c");
        assert_eq!(resolve(&g, "", "p"), vec![c]);
        assert_eq!(resolve(&g, "", "p/c"), vec![c]);
        assert!(resolve(&g, "", "q").is_empty());
    }
}
