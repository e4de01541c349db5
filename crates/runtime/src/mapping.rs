//! Where each element runs when element groups are on threads (`--model pipeline` and
//! `--model hybrid`): a [`Placement`] gives every element the threads that hold an instance of
//! it (one: the element runs on that thread only; several: replicas, packets spread among them
//! by flow).
//!
//! - [`pipeline`]: contiguous groups of a topological order, balanced by profiled instructions.
//! - [`from_file`]: the mapping that `pktflow simulate|maxrate|bottleneck --json` (`mapping.tasks`),
//!   `pktflow explore --json` (`points[].mapping`, the point of highest rate) or `pktflow map
//!   --json` (`tasks[].ppfs`) wrote, or a hand-written file (`{"threads": [[names...], ...]}`),
//!   processing element p on thread p mod N.
//!
//! Either way, elements joined by pull connections (a Queue and the ToDevice pulling from it)
//! are placed together, where the first of them in topological order is: a pull runs inside one
//! thread.
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// The graph as placement sees it.
pub struct GraphInfo {
    pub names: Vec<String>,
    pub classes: Vec<String>,
    /// Push connections: (from element, to element).
    pub push: Vec<(u32, u32)>,
    /// Pull connections: (upstream element, element pulling).
    pub pull: Vec<(u32, u32)>,
}

/// The threads holding each element, and how that was decided.
#[derive(Clone, Debug)]
pub struct Placement {
    pub threads: usize,
    /// Per element: the threads holding an instance, sorted, never empty.
    pub of: Vec<Vec<usize>>,
    /// What the placement came from, for the JSON (`"pipeline cut"`, the file and its format).
    pub origin: Value,
    /// Elements the mapping did not name, placed with their first placed upstream element.
    pub unmapped: Vec<String>,
    /// Elements the mapping replicated that run as one instance (see [`SINGLE_INSTANCE`]).
    pub not_replicated: Vec<String>,
    /// Per element: it pulls from another member of its pull-joined group (not its first).
    pub pull_follower: Vec<bool>,
}

/// Classes that keep one instance even when a mapping replicates them: an ARPQuerier holds the
/// packets waiting for an address, and the neighbour's reply (a non-IP frame, not tied to any
/// flow) must reach the instance that holds them; with replicas it may reach another one and
/// the packets would wait for ever.
pub const SINGLE_INSTANCE: &[&str] = &["ARPQuerier"];

impl Placement {
    /// The elements thread `t`'s router visits itself: those only it holds, and the pulling
    /// members of a pull-joined group it holds a replica of (they take packets only from their
    /// group's first element, on the same thread). A packet for a replicated element is set
    /// aside and its replica chosen by flow hash, which may be this thread.
    pub fn local_mask(&self, t: usize) -> Vec<bool> {
        self.of
            .iter()
            .enumerate()
            .map(|(e, ts)| ts == &[t] || (self.pull_follower[e] && ts.contains(&t)))
            .collect()
    }

    /// Elements held by more than one thread.
    pub fn replicated(&self, g: &GraphInfo) -> Vec<String> {
        (0..self.of.len())
            .filter(|&e| self.of[e].len() > 1)
            .map(|e| g.names[e].clone())
            .collect()
    }

    /// The resolved placement as JSON: per thread its elements, replicated elements, origin.
    pub fn to_json(&self, g: &GraphInfo, costs: Option<&[u64]>) -> Value {
        let stages: Vec<Value> = (0..self.threads)
            .map(|t| {
                let els: Vec<&str> = (0..self.of.len())
                    .filter(|&e| self.of[e].contains(&t))
                    .map(|e| g.names[e].as_str())
                    .collect();
                let mut v = json!({"thread": t, "elements": els});
                if let Some(c) = costs {
                    v["profiled_instructions"] = (0..self.of.len())
                        .filter(|&e| self.of[e].contains(&t))
                        .map(|e| c[e] / self.of[e].len() as u64)
                        .sum::<u64>()
                        .into();
                }
                v
            })
            .collect();
        json!({
            "origin": self.origin,
            "stages": stages,
            "replicated": self.replicated(g),
            "unmapped": self.unmapped,
            "not_replicated": self.not_replicated,
        })
    }
}

/// A topological order of the push and pull connections; on a cycle, the remaining element
/// declared first goes next.
pub fn topo_order(g: &GraphInfo) -> Vec<usize> {
    let n = g.names.len();
    let mut indeg = vec![0usize; n];
    let mut succ = vec![Vec::new(); n];
    for &(a, b) in g.push.iter().chain(&g.pull) {
        if a != b {
            indeg[b as usize] += 1;
            succ[a as usize].push(b as usize);
        }
    }
    let mut done = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut ready: BTreeSet<usize> = (0..n).filter(|&e| indeg[e] == 0).collect();
    while order.len() < n {
        let e = match ready.pop_first() {
            Some(e) => e,
            // A cycle: break it at the first element declared.
            None => (0..n).find(|&e| !done[e]).expect("elements left"),
        };
        if done[e] {
            continue;
        }
        done[e] = true;
        order.push(e);
        for &s in &succ[e] {
            indeg[s] = indeg[s].saturating_sub(1);
            if indeg[s] == 0 && !done[s] {
                ready.insert(s);
            }
        }
    }
    order
}

/// Groups of elements joined by pull connections, each named by its member first in `order`.
fn pull_leader(g: &GraphInfo, order: &[usize]) -> Vec<usize> {
    let n = g.names.len();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for &(a, b) in &g.pull {
        let (ra, rb) = (find(&mut parent, a as usize), find(&mut parent, b as usize));
        parent[rb] = ra;
    }
    let mut pos = vec![0; n];
    for (i, &e) in order.iter().enumerate() {
        pos[e] = i;
    }
    let mut leader: BTreeMap<usize, usize> = BTreeMap::new();
    for e in 0..n {
        let r = find(&mut parent, e);
        let l = leader.entry(r).or_insert(e);
        if pos[e] < pos[*l] {
            *l = e;
        }
    }
    (0..n).map(|e| leader[&find(&mut parent, e)]).collect()
}

/// The pipeline cut: units (an element, or elements joined by pull connections) in topological
/// order, split into at most `threads` contiguous groups so that the largest group's profiled
/// instructions are as small as they can be; thread k runs group k. With fewer units than
/// threads, some threads run nothing.
pub fn pipeline(g: &GraphInfo, costs: &[u64], threads: usize, sources: &[u32]) -> Placement {
    // The source elements first: every trace packet enters at the first thread, so all of
    // them move forward through the same chain of rings (their order is kept).
    let topo = topo_order(g);
    let order: Vec<usize> = topo
        .iter()
        .copied()
        .filter(|e| sources.contains(&(*e as u32)))
        .chain(
            topo.iter()
                .copied()
                .filter(|e| !sources.contains(&(*e as u32))),
        )
        .collect();
    let leader = pull_leader(g, &order);
    // Units in order of their leader.
    let mut units: Vec<(usize, Vec<usize>, u64)> = Vec::new();
    let mut unit_of: BTreeMap<usize, usize> = BTreeMap::new();
    for &e in &order {
        let l = leader[e];
        let u = *unit_of.entry(l).or_insert_with(|| {
            units.push((l, Vec::new(), 0));
            units.len() - 1
        });
        units[u].1.push(e);
        // Every visit costs something even when its element reports no instructions.
        units[u].2 += costs[e].max(1);
    }
    let w: Vec<u64> = units.iter().map(|u| u.2).collect();
    let groups = balanced_cuts(&w, threads);
    let mut of = vec![Vec::new(); g.names.len()];
    for (t, range) in groups.iter().enumerate() {
        for u in range.clone() {
            for &e in &units[u].1 {
                of[e] = vec![t];
            }
        }
    }
    Placement {
        threads,
        of,
        origin: json!({"kind": "pipeline cut", "balanced_by": "instructions profiled on the first packets of the source"}),
        unmapped: Vec::new(),
        not_replicated: Vec::new(),
        pull_follower: (0..leader.len()).map(|e| leader[e] != e).collect(),
    }
}

/// Contiguous ranges of `w` (at most `k`, each non-empty) minimizing the largest sum: the
/// smallest bound a greedy left-to-right fill meets with `k` ranges, found by bisection; then
/// ranges are split (longest first) until there are `k` or every range holds one item.
pub fn balanced_cuts(w: &[u64], k: usize) -> Vec<std::ops::Range<usize>> {
    if w.is_empty() || k == 0 {
        return Vec::new();
    }
    let greedy = |bound: u64| -> Vec<std::ops::Range<usize>> {
        let mut v = Vec::new();
        let (mut start, mut sum) = (0, 0u64);
        for (i, &x) in w.iter().enumerate() {
            if i > start && sum + x > bound {
                v.push(start..i);
                start = i;
                sum = 0;
            }
            sum += x;
        }
        v.push(start..w.len());
        v
    };
    let (mut lo, mut hi) = (*w.iter().max().unwrap(), w.iter().sum::<u64>());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if greedy(mid).len() <= k {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let mut v = greedy(lo);
    while v.len() < k {
        let Some((i, _)) = v
            .iter()
            .enumerate()
            .filter(|(_, r)| r.len() > 1)
            .max_by_key(|(i, r)| (r.len(), std::cmp::Reverse(*i)))
        else {
            break;
        };
        let r = v[i].clone();
        // Split where the two halves' sums are closest.
        let total: u64 = w[r.clone()].iter().sum();
        let mut best = (u64::MAX, r.start + 1);
        let mut acc = 0;
        for m in r.start + 1..r.end {
            acc += w[m - 1];
            let d = acc.abs_diff(total - acc);
            if d < best.0 {
                best = (d, m);
            }
        }
        v[i] = r.start..best.1;
        v.insert(i + 1, best.1..r.end);
    }
    v
}

/// What a mapping file assigns: element name -> processing elements.
type PeMap = BTreeMap<String, Vec<u64>>;

/// Read a mapping file (see the module documentation) for `threads` threads.
pub fn from_file(path: &str, g: &GraphInfo, threads: usize) -> Result<Placement, String> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("--mapping {path}: cannot read: {e}"))?;
    let v: Value =
        serde_json::from_str(&text).map_err(|e| format!("--mapping {path}: not JSON: {e}"))?;
    let bad = |m: String| format!("--mapping {path}: {m}");
    let (kind, pes) = parse(&v).map_err(bad)?;
    if pes.is_empty() {
        return Err(bad("the mapping places no element".into()));
    }
    let index: BTreeMap<&str, usize> = g
        .names
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let mut of: Vec<Vec<usize>> = vec![Vec::new(); g.names.len()];
    let mut unknown = Vec::new();
    for (name, ps) in &pes {
        match index.get(name.as_str()) {
            Some(&e) => {
                let mut ts: Vec<usize> =
                    ps.iter().map(|&p| (p % threads as u64) as usize).collect();
                ts.sort_unstable();
                ts.dedup();
                of[e] = ts;
            }
            None => unknown.push(name.clone()),
        }
    }
    if !unknown.is_empty() {
        unknown.truncate(5);
        return Err(bad(format!(
            "names no element of this application: {} (is it the mapping of another application?)",
            unknown.join(", ")
        )));
    }
    // Elements the mapping leaves out go with their first placed upstream element.
    let order = topo_order(g);
    let mut unmapped = Vec::new();
    for &e in &order {
        if !of[e].is_empty() {
            continue;
        }
        let up = g
            .push
            .iter()
            .chain(&g.pull)
            .filter(|(_, b)| *b as usize == e)
            .map(|(a, _)| *a as usize)
            .find(|&a| !of[a].is_empty());
        of[e] = up.map_or(vec![0], |a| of[a].clone());
        unmapped.push(g.names[e].clone());
    }
    let mut not_replicated = Vec::new();
    for (e, ts) in of.iter_mut().enumerate() {
        if ts.len() > 1 && SINGLE_INSTANCE.contains(&g.classes[e].as_str()) {
            ts.truncate(1);
            not_replicated.push(g.names[e].clone());
        }
    }
    // Pull-joined elements run where their first element runs.
    let leader = pull_leader(g, &order);
    for e in 0..of.len() {
        if leader[e] != e {
            of[e] = of[leader[e]].clone();
        }
    }
    Ok(Placement {
        threads,
        of,
        origin: json!({"kind": "mapping file", "file": path, "format": kind,
                       "rule": "processing element p runs on thread p mod threads"}),
        unmapped,
        not_replicated,
        pull_follower: (0..leader.len()).map(|e| leader[e] != e).collect(),
    })
}

fn pe_list(x: &Value, what: &str) -> Result<Vec<u64>, String> {
    let a = x
        .as_array()
        .ok_or_else(|| format!("{what}: expected a list of processing elements, got {x}"))?;
    if a.is_empty() {
        return Err(format!("{what}: no processing element"));
    }
    a.iter()
        .map(|p| {
            p.as_u64()
                .ok_or_else(|| format!("{what}: processing element {p} is not a whole number"))
        })
        .collect()
}

fn name_of(x: &Value, what: &str) -> Result<String, String> {
    x.as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{what}: expected an element name, got {x}"))
}

/// Recognize the format and read element -> PEs.
fn parse(v: &Value) -> Result<(&'static str, PeMap), String> {
    let mut m = PeMap::new();
    let put = |name: String, pes: Vec<u64>, m: &mut PeMap| -> Result<(), String> {
        if m.insert(name.clone(), pes).is_some() {
            return Err(format!("element '{name}' is placed twice"));
        }
        Ok(())
    };
    if !v.is_object() {
        return Err("expected a JSON object".into());
    }
    // Hand-written: {"threads": [["a", "b"], ["c"]]}; an element in several lists is replicated.
    if let Some(t) = v.get("threads") {
        let lists = t
            .as_array()
            .ok_or("\"threads\": expected a list of lists of element names")?;
        if let Some(k) = v.as_object().and_then(|o| {
            o.keys()
                .find(|k| !matches!(k.as_str(), "threads" | "comment"))
        }) {
            return Err(format!(
                "unknown key '{k}' (expected \"threads\" and an optional \"comment\")"
            ));
        }
        let mut acc: BTreeMap<String, Vec<u64>> = BTreeMap::new();
        for (p, l) in lists.iter().enumerate() {
            let names = l.as_array().ok_or_else(|| {
                format!("threads[{p}]: expected a list of element names, got {l}")
            })?;
            for n in names {
                let name = name_of(n, &format!("threads[{p}]"))?;
                let e = acc.entry(name.clone()).or_default();
                if e.contains(&(p as u64)) {
                    return Err(format!("threads[{p}] names '{name}' twice"));
                }
                e.push(p as u64);
            }
        }
        return Ok(("threads", acc));
    }
    // pktflow simulate|maxrate|bottleneck --json: mapping.tasks[] = {element, pes}.
    if let Some(tasks) = v.get("mapping").and_then(|m| m.get("tasks")) {
        let tasks = tasks.as_array().ok_or("mapping.tasks: expected a list")?;
        for (i, t) in tasks.iter().enumerate() {
            let what = format!("mapping.tasks[{i}]");
            let name = name_of(t.get("element").unwrap_or(&Value::Null), &what)?;
            let pes = pe_list(t.get("pes").unwrap_or(&Value::Null), &format!("{what}.pes"))?;
            put(name, pes, &mut m)?;
        }
        return Ok(("npsim mapping.tasks", m));
    }
    // pktflow explore --json: points[].mapping = [[element, [pes], max_concurrent]].
    if let Some(points) = v.get("points") {
        let points = points.as_array().ok_or("points: expected a list")?;
        let best = points
            .iter()
            .enumerate()
            .filter(|(_, p)| p.get("mapping").is_some_and(|m| m.is_array()))
            .max_by(|(_, a), (_, b)| {
                let r = |p: &Value| p["packets_per_second"].as_f64().unwrap_or(0.0);
                r(a).total_cmp(&r(b))
            })
            .ok_or("points: no point has a mapping")?;
        for (i, t) in best.1["mapping"].as_array().unwrap().iter().enumerate() {
            let what = format!("points[{}].mapping[{i}]", best.0);
            let a = t
                .as_array()
                .filter(|a| a.len() >= 2)
                .ok_or_else(|| format!("{what}: expected [element, [pes], ...]"))?;
            put(name_of(&a[0], &what)?, pe_list(&a[1], &what)?, &mut m)?;
        }
        return Ok(("explore points[].mapping (the point of highest rate)", m));
    }
    // pktflow map --json: tasks[] = {ppfs, engines, processor}; task k takes the next
    // `engines` engines, tasks on the XScale share one more processing element after them.
    if let Some(tasks) = v.get("tasks").and_then(|t| t.as_array()) {
        let mut next = 0u64;
        let mut xscale = Vec::new();
        for (i, t) in tasks.iter().enumerate() {
            let what = format!("tasks[{i}]");
            let ppfs = t
                .get("ppfs")
                .and_then(|p| p.as_array())
                .ok_or_else(|| format!("{what}.ppfs: expected a list of element names"))?;
            let names: Vec<String> = ppfs
                .iter()
                .map(|n| name_of(n, &format!("{what}.ppfs")))
                .collect::<Result<_, _>>()?;
            let on_xscale = t.get("processor").and_then(|p| p.as_str()) == Some("xscale");
            if on_xscale {
                xscale.extend(names);
                continue;
            }
            let engines = t
                .get("engines")
                .and_then(|e| e.as_u64())
                .filter(|&e| (1..=1024).contains(&e))
                .ok_or_else(|| format!("{what}.engines: expected a whole number in 1..=1024"))?;
            let pes: Vec<u64> = (next..next + engines).collect();
            next += engines;
            for n in names {
                put(n, pes.clone(), &mut m)?;
            }
        }
        for n in xscale {
            put(n, vec![next], &mut m)?;
        }
        return Ok(("map tasks[].ppfs", m));
    }
    Err("no mapping found: expected \"threads\" (hand-written), \"mapping.tasks\" (pktflow simulate/maxrate --json), \"points\" (pktflow explore --json) or \"tasks\" (pktflow map --json)".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_are_balanced_and_contiguous() {
        let w = [5, 1, 1, 1, 5, 1, 1, 1];
        let c = balanced_cuts(&w, 2);
        assert_eq!(c, vec![0..4, 4..8]);
        let c = balanced_cuts(&w, 3);
        assert_eq!(c.len(), 3);
        assert_eq!(c.first().unwrap().start, 0);
        assert_eq!(c.last().unwrap().end, 8);
        assert!(c.windows(2).all(|p| p[0].end == p[1].start));
        let max = c.iter().map(|r| w[r.clone()].iter().sum::<u64>()).max();
        assert_eq!(max, Some(7), "{c:?}");
        // More threads than items: one item each.
        assert_eq!(balanced_cuts(&[1, 2], 5).len(), 2);
    }

    fn chain() -> GraphInfo {
        GraphInfo {
            names: ["src", "q", "sink", "other"].map(String::from).to_vec(),
            classes: ["FromDevice", "Queue", "ToDevice", "ARPQuerier"]
                .map(String::from)
                .to_vec(),
            push: vec![(0, 1), (0, 3)],
            pull: vec![(1, 2)],
        }
    }

    #[test]
    fn pull_joined_elements_stay_together() {
        let g = chain();
        let p = pipeline(&g, &[1, 1, 100, 1], 4, &[0]);
        assert_eq!(p.of[0], vec![0]);
        assert_eq!(p.of[1], p.of[2]);
    }

    #[test]
    fn hand_written_and_errors() {
        let g = chain();
        let dir = std::env::temp_dir().join(format!("pktflow-map-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("m.json");
        let w = |s: &str| {
            std::fs::write(&f, s).unwrap();
            from_file(f.to_str().unwrap(), &g, 2)
        };
        let p = w(r#"{"threads": [["src", "q"], ["sink", "other", "src"]]}"#).unwrap();
        assert_eq!(p.of[0], vec![0, 1]);
        // The pull-joined sink follows its queue.
        assert_eq!(p.of[2], vec![0]);
        assert_eq!(p.of[3], vec![1]);
        let p = w(r#"{"threads": [["other"], ["other"]]}"#).unwrap();
        assert_eq!(p.of[3], vec![0], "an ARPQuerier keeps one instance");
        assert_eq!(p.not_replicated, vec!["other"]);
        let p = w(r#"{"threads": [["src"], [], ["other"]]}"#).unwrap();
        assert_eq!(p.of[3], vec![0], "PE 2 on thread 2 mod 2");
        assert_eq!(p.unmapped, vec!["q", "sink"]);
        for (text, want) in [
            ("[1]", "expected a JSON object"),
            ("{", "not JSON"),
            (r#"{"threads": [["nope"]]}"#, "nope"),
            (r#"{"threads": [["src", "src"]]}"#, "twice"),
            (r#"{"threads": [[3]]}"#, "element name"),
            (r#"{"threads": 1}"#, "list of lists"),
            (r#"{"x": 1}"#, "no mapping found"),
            (
                r#"{"mapping": {"tasks": [{"element": "src", "pes": []}]}}"#,
                "no processing",
            ),
            (
                r#"{"mapping": {"tasks": [{"element": "src", "pes": [-1]}]}}"#,
                "whole number",
            ),
            (r#"{"threads": []}"#, "places no element"),
        ] {
            let e = w(text).unwrap_err();
            assert!(
                e.starts_with("--mapping ") && e.contains(want),
                "{text}: {e}"
            );
            assert!(!e.contains('\n'));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}
