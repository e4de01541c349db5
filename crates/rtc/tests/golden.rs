//! Golden figures of short engine runs: the engine is deterministic for a seed, so every
//! report of these runs (and of a few maximum-rate searches) must stay bit-identical when the
//! engine's hot loop is made faster. The figures are in `tests/golden/engine_runs.json`, each
//! case's report as its compact JSON text (compared as text: exact to the last digit);
//! `PKTFLOW_RTC_BLESS=1 cargo test -p pktflow-rtc --test golden` rewrites them, which is only
//! right when a change is meant to change simulated results (say why in the commit).
use pktflow_rtc::api::{
    resolve, rtc, Criterion, EngineOverrides, RtcRequest, SearchSpec, WorkloadSpec,
};
use pktflow_rtc::engine::{Drive, Engine, EngineOptions, ExecMode, Scheduler, SyncMode};
use pktflow_rtc::tm::{ContentionManager, SignatureKind};
use pktflow_rtc::workload::Workload;
use serde_json::{json, Map, Value};
use std::collections::HashMap;

const GOLDEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/golden/engine_runs.json");

fn spec(app: &str) -> WorkloadSpec {
    WorkloadSpec {
        app: app.into(),
        // udhcp's traces take long to compile (its critical sections), so fewer packets.
        packets: if app == "udhcp" { 40 } else { 200 },
        ..Default::default()
    }
}

fn base() -> EngineOptions {
    resolve(&RtcRequest::default()).unwrap()
}

/// Mean instructions per packet of `w` (to pace arrivals near each machine's capacity).
fn per_packet(w: &Workload) -> f64 {
    w.packets.iter().map(|p| p.instructions as f64).sum::<f64>() / w.packets.len() as f64
}

fn run(o: &EngineOptions, w: &Workload, d: Drive, values: bool) -> Value {
    let mut e = Engine::new(o, w, None).unwrap();
    if values {
        e.track_values();
    }
    match e.run(d) {
        Ok(r) => Value::String(serde_json::to_string(&r).unwrap()),
        Err(m) => Value::String(json!({ "error": m }).to_string()),
    }
}

fn drives(w: &Workload, cores: u32) -> Vec<(&'static str, Drive)> {
    // One core issues at most one instruction per cycle; 4 threads with the default hazards
    // reach about IPC 1, so this interval overloads the machine a little (drops, the MAC buffer
    // in use) and twice it leaves idle stretches (the fast-forward).
    let ia = per_packet(w) / cores as f64 * 0.9;
    vec![
        (
            "saturated",
            Drive {
                interarrival_cycles: None,
                cycles: 60_000,
                stop_on_drop: false,
                max_arrivals: None,
            },
        ),
        (
            "overloaded",
            Drive {
                interarrival_cycles: Some(ia),
                cycles: 80_000,
                stop_on_drop: false,
                max_arrivals: None,
            },
        ),
        (
            "light-drained",
            Drive {
                interarrival_cycles: Some(ia * 2.3),
                cycles: 120_000,
                stop_on_drop: true,
                max_arrivals: Some(150),
            },
        ),
    ]
}

const APPS: [&str; 5] = ["nat", "classifier", "udhcp", "echo", "parametric"];

/// The workloads, loaded once.
fn loaded() -> HashMap<&'static str, Workload> {
    APPS.iter()
        .map(|&a| (a, spec(a).load(0).unwrap().workload))
        .collect()
}

fn engine_cases(apps: &HashMap<&'static str, Workload>, out: &mut Map<String, Value>) {
    for app in APPS {
        let w = &apps[app];
        for sync in [SyncMode::Locks, SyncMode::Tm] {
            for sched in [Scheduler::RoundRobin, Scheduler::LockAware] {
                for cores in [1, 2] {
                    let mut o = base();
                    o.cores = cores;
                    o.scheduler = sched;
                    o.sync = sync;
                    for (dn, d) in drives(w, cores) {
                        let key = format!("{app}/{sync:?}/{sched:?}/{cores}c/{dn}");
                        out.insert(key, run(&o, w, d, false));
                    }
                }
            }
        }
    }
}

fn variant_cases(apps: &HashMap<&'static str, Workload>, out: &mut Map<String, Value>) {
    let (nat, par, udhcp) = (&apps["nat"], &apps["parametric"], &apps["udhcp"]);
    let classifier = &apps["classifier"];
    let sat = |cycles| Drive {
        interarrival_cycles: None,
        cycles,
        stop_on_drop: false,
        max_arrivals: None,
    };
    let mut variants: Vec<(&str, &Workload, EngineOptions, bool)> = Vec::new();
    let mut o = base();
    o.mode = ExecMode::Pipeline;
    variants.push(("nat/pipeline", nat, o.clone(), false));
    o.scheduler = Scheduler::LockAware;
    variants.push(("nat/pipeline-lock-aware", nat, o, false));
    for (name, policy) in [
        ("single", pktflow_protoproc::policy::Policy::Single),
        ("fixed", pktflow_protoproc::policy::Policy::Fixed),
        ("floating", pktflow_protoproc::policy::Policy::Floating),
    ] {
        let mut o = base();
        o.slow_path.policy = Some(policy);
        o.slow_path.elements = vec!["Strip".into()];
        let key: &'static str = Box::leak(format!("nat/slow-path-{name}").into_boxed_str());
        variants.push((key, nat, o, false));
    }
    let mut o = base();
    o.sync = SyncMode::Tm;
    o.undo_log_entries = 16;
    variants.push((
        "classifier/tm-undo-overflow-values",
        classifier,
        o.clone(),
        true,
    ));
    o.undo_log_entries = base().undo_log_entries;
    o.signature = SignatureKind::Perfect;
    o.cm = ContentionManager::Cm1;
    variants.push(("parametric/tm-perfect-cm1-values", par, o.clone(), true));
    o.signature = SignatureKind::Bitsel;
    o.signature_bits = 16;
    o.stack_filter = false;
    o.threads_per_core = 8;
    variants.push(("parametric/tm-bitsel16-nofilter-8t", par, o, false));
    let mut o = base();
    o.sync = SyncMode::Tm;
    o.tx_locks = Some(vec![0]);
    variants.push(("udhcp/tm-lock0-only", udhcp, o.clone(), true));
    let mut o = base();
    o.unlimited_mutexes = true;
    o.hazard_distance = [0.5, 0.0, 0.5];
    o.seed = 7;
    variants.push(("nat/unlimited-mutexes-seed7", nat, o.clone(), true));
    o.mutexes = 1;
    o.unlimited_mutexes = false;
    o.cache_bytes = 1024;
    o.memory_queue_entries = 1;
    o.scheduler = Scheduler::LockAware;
    variants.push(("nat/one-mutex-tiny-cache", nat, o, false));
    for (key, w, o, values) in variants {
        out.insert(key.into(), run(&o, w, sat(50_000), values));
    }
}

fn search_cases(out: &mut Map<String, Value>) {
    let search = |criterion| SearchSpec {
        criterion,
        window_seconds: 0.0005,
        runs: 3,
        ..Default::default()
    };
    let cases = [
        (
            "search/nat-zero-drop",
            "nat",
            EngineOverrides::default(),
            Criterion::ZeroDrop,
        ),
        (
            "search/nat-tm-trie-confidence90",
            "nat",
            EngineOverrides {
                sync: Some(SyncMode::Tm),
                signature: Some(SignatureKind::Trie),
                ..Default::default()
            },
            Criterion::Confidence90,
        ),
        (
            "search/classifier-lock-aware-saturation",
            "classifier",
            EngineOverrides {
                scheduler: Some(Scheduler::LockAware),
                cores: Some(1),
                ..Default::default()
            },
            Criterion::Saturation,
        ),
    ];
    for (key, app, engine, criterion) in cases {
        let req = RtcRequest {
            workload: spec(app),
            engine,
            search: search(criterion),
            ..Default::default()
        };
        let r = rtc(&req, &mut |_, _| {}).unwrap();
        out.insert(
            key.into(),
            Value::String(serde_json::to_string(&r).unwrap()),
        );
    }
}

#[test]
fn short_runs_match_their_golden_figures() {
    let mut got = Map::new();
    let apps = loaded();
    engine_cases(&apps, &mut got);
    variant_cases(&apps, &mut got);
    search_cases(&mut got);
    let got = Value::Object(got);
    if std::env::var_os("PKTFLOW_RTC_BLESS").is_some() {
        std::fs::create_dir_all(std::path::Path::new(GOLDEN).parent().unwrap()).unwrap();
        std::fs::write(GOLDEN, serde_json::to_string_pretty(&got).unwrap() + "\n").unwrap();
        return;
    }
    let want: Value = serde_json::from_str(
        &std::fs::read_to_string(GOLDEN).expect("golden figures (PKTFLOW_RTC_BLESS=1 writes them)"),
    )
    .unwrap();
    let (g, w) = (got.as_object().unwrap(), want.as_object().unwrap());
    let mut diffs = Vec::new();
    for (k, v) in w {
        match g.get(k) {
            None => diffs.push(format!("{k}: missing")),
            Some(x) if x != v => diffs.push(format!("{k}:\n  want {v}\n  got  {x}")),
            _ => {}
        }
    }
    for k in g.keys().filter(|k| !w.contains_key(*k)) {
        diffs.push(format!("{k}: not in the golden file"));
    }
    assert!(
        diffs.is_empty(),
        "{} of {} cases differ:\n{}",
        diffs.len(),
        w.len(),
        diffs.join("\n")
    );
    // The runs exercise what they are meant to (so the figures cover the engine's paths).
    let n = |k: &str, f: &str| {
        let v: Value = serde_json::from_str(g[k].as_str().unwrap()).unwrap();
        v[f].as_u64().unwrap_or(0)
    };
    assert!(n("nat/Locks/RoundRobin/1c/overloaded", "dropped") > 0);
    assert!(n("parametric/Tm/RoundRobin/2c/saturated", "aborts") > 0);
    assert!(n("classifier/tm-undo-overflow-values", "undo_overflows") > 0);
    assert!(n("nat/Locks/LockAware/2c/saturated", "lock_failures") > 0);
}
