//! Packets per second of `pktflow run` (docs/benchmarks.md, "Real runtime"): a benchmark, not a
//! test. Prints one line per run; the figures are the best of `PKTFLOW_BENCH_REPS` runs (default
//! 5) with the spread (slowest / best).
//!
//! Inputs, written to a temporary folder (removed at the end unless `PKTFLOW_BENCH_KEEP` is set):
//! - `router300`: the built-in two-interface IP router with its lookup replaced by a
//!   RadixIPLookup of 300 routes (the router's 9, and 291 /24 routes out of eth0 and eth1), and
//!   a synthetic trace shaped for it (destinations drawn from its routes);
//! - `nat1000`: the built-in NAT with a trace of 1,000 UDP flows from inside hosts, sent round
//!   robin, so after the first 1,000 packets every packet belongs to an established flow;
//! - the TDPM applications `mpls`, `firewall`, `l3switch` on synthetic traces shaped for them.
//!
//! For each: the functional run with cost recording (what `pktflow profile` runs, one thread),
//! then `pktflow run` with 1 and 2 threads as run-to-completion copies (`rtc`; on 2 threads also
//! with `--io each`, every worker reading the trace itself), as a pipeline
//! cut (`pipeline`), and as `hybrid` with the mapping `{"threads": [ALL, ALL]}` (every element
//! replicated on both threads, packets spread by flow hash at every element; on one thread it
//! collapses to one), all reading the same pcap file and none writing the packets that leave
//! (no `--out-dir`).
//!
//! Side by side with Click (router300 and nat1000 only): the application and its trace written
//! for Click (`pktflow_runtime::clickref`: FromDump per input device, the trace's ARP answers
//! first, Discard for the devices, a DriverManager that stops at the end). `dump1` runs that
//! configuration with `pktflow run` on one thread; `click` runs it with the Click binary that
//! `PKTFLOW_CLICK` names (a userlevel `click`), timed from start to exit, less the mean time
//! of 3 runs of the same configuration on empty inputs (start-up and shut-down).
//!
//! On two threads, as Click users write a multithreaded replay
//! (`pktflow_runtime::clickref::write_click_threads`): two copies of that pipeline, each with
//! its own FromDumps of the same inputs and a Counter after each, `StaticThreadSched` putting
//! copy k's tasks on thread k, and a DriverManager printing the packets and the rate from
//! `$(now)`. `dump2` runs that file with `pktflow run --threads 2` (its rate: the JSON's
//! packets per second); `click2` with `click -j 2`, the multithread build that
//! `PKTFLOW_CLICK_MT` names (its rate: the line its DriverManager prints). Until pktflow's
//! scripts have `$(now)`, `dump2` runs a twin of the file whose DriverManager prints the
//! packets only (said so at the start).
//!
//! Run: `cargo run --release -p pktflow-runtime --bin runtime-bench`
//! (`PKTFLOW_BENCH_PACKETS`, default 1,000,000; `PKTFLOW_BENCH_APPS`, comma-separated;
//! `PKTFLOW_BENCH_KINDS`, comma-separated among `functional`, `rtc1`, `rtc2`, `rtc2each`, `pipeline1`,
//! `pipeline2`, `hybrid1`, `hybrid2`, `dump1`, `click`, `dump2`, `click2`; default all, `click`
//! only with `PKTFLOW_CLICK`, `click2` only with `PKTFLOW_CLICK_MT`).
use pktflow_profile::app::load_app;
use pktflow_profile::run::{packets, Run, Source};
use pktflow_runtime::api::{run, Request};
use pktflow_runtime::clickref::{write_click_ref, write_click_threads, ClickRef, Sinks};
use pktflow_traffic::{ip_checksum, PcapWriter, TracePacket, LINKTYPE_ETHERNET};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// The kinds of run, in the order they alternate (`PKTFLOW_BENCH_KINDS` chooses among them).
const KINDS: [&str; 12] = [
    "functional",
    "rtc1",
    "rtc2",
    "rtc2each",
    "pipeline1",
    "pipeline2",
    "hybrid1",
    "hybrid2",
    "dump1",
    "click",
    "dump2",
    "click2",
];

/// The applications whose element classes Click has (the side-by-side kinds run only these).
const CLICK_APPS: [&str; 2] = ["router300", "nat1000"];

const ROUTER: &str = include_str!("../../../apps/router.click");

fn router300(dir: &Path) -> PathBuf {
    let start = ROUTER.find("rt :: StaticIPLookup(").expect("router has rt");
    let end = start + ROUTER[start..].find(");").expect("end of rt") + 2;
    let mut routes = vec![
        "10.0.0.1/32 0".to_string(),
        "10.255.255.255/32 0".into(),
        "10.0.0.0/32 0".into(),
        "192.168.1.1/32 0".into(),
        "192.168.1.255/32 0".into(),
        "192.168.1.0/32 0".into(),
        "10.0.0.0/8 1".into(),
        "192.168.1.0/24 2".into(),
        "0.0.0.0/0 10.0.0.254 1".into(),
    ];
    for i in 0..291u32 {
        let (a, b) = (20 + i / 200, i % 200);
        // Half through the default gateway on eth0, half through a host of eth1's subnet.
        if i % 2 == 0 {
            routes.push(format!("{a}.{b}.{}.0/24 10.0.0.254 1", i % 7));
        } else {
            routes.push(format!("{a}.{b}.{}.0/24 192.168.1.2 2", i % 7));
        }
    }
    assert_eq!(routes.len(), 300);
    let text = format!(
        "{}rt :: RadixIPLookup({});{}",
        &ROUTER[..start],
        routes.join(", "),
        &ROUTER[end..]
    );
    let p = dir.join("router300.click");
    std::fs::write(&p, text).expect("write config");
    p
}

fn write_trace(path: &Path, it: impl Iterator<Item = TracePacket>) -> u64 {
    let mut w = PcapWriter::create(path, LINKTYPE_ETHERNET).expect("create trace");
    let mut n = 0;
    for tp in it {
        w.write(&tp).expect("write trace");
        n += 1;
    }
    w.finish().expect("flush trace");
    n
}

fn synthetic_trace(app: &str, n: u64, path: &Path) {
    let a = load_app(app).expect("app");
    let src = Source::Synthetic {
        packets: n,
        seed: 1,
    };
    write_trace(path, packets(&a, &src).expect("source").map(|r| r.unwrap()));
}

/// 1,000 UDP flows 10.1.x.y:(1024+k) -> 93.184.216.34:53 entering the inside interface, round
/// robin, 64-byte frames, one every microsecond.
fn nat_trace(n: u64, path: &Path) {
    let frame = |k: u32| -> Vec<u8> {
        let mut f = vec![0u8; 64];
        f[0..6].copy_from_slice(&[0x00, 0x00, 0xc0, 0xae, 0x67, 0xef]);
        f[6..12].copy_from_slice(&[0x00, 0x16, 0x3e, 0x00, 0x00, 0x01]);
        f[12..14].copy_from_slice(&[0x08, 0x00]);
        let ip = &mut f[14..34];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&50u16.to_be_bytes());
        ip[8] = 64;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&[10, 1, (k / 250) as u8, (k % 250 + 2) as u8]);
        ip[16..20].copy_from_slice(&[93, 184, 216, 34]);
        let c = ip_checksum(&f[14..34]);
        f[24..26].copy_from_slice(&c.to_be_bytes());
        f[34..36].copy_from_slice(&(1024 + k as u16).to_be_bytes());
        f[36..38].copy_from_slice(&53u16.to_be_bytes());
        f[38..40].copy_from_slice(&30u16.to_be_bytes());
        f
    };
    let frames: Vec<Vec<u8>> = (0..1000).map(frame).collect();
    write_trace(
        path,
        (0..n).map(|i| TracePacket {
            timestamp_ns: 1_000_000_000 + i * 1_000,
            iface: 0,
            data: frames[(i % 1000) as usize].clone(),
            orig_len: 64,
        }),
    );
}

fn functional(app: &str, trace: &Path, out: &Path) -> f64 {
    let src = Source::Pcap {
        path: trace.display().to_string(),
        input_port: Default::default(),
    };
    let mut r = Run::start(app, &src, out).expect("run");
    let t0 = Instant::now();
    let mut n = 0u64;
    while r.next_trace().expect("trace").is_some() {
        n += 1;
    }
    n as f64 / t0.elapsed().as_secs_f64()
}

/// `pktflow run` without `--out-dir`: like the functional run above, it writes no device pcap.
/// `model`: rtc, pipeline, or hybrid with `mapping`.
fn fast(app: &str, trace: &Path, threads: usize, model: &str, mapping: Option<&Path>) -> f64 {
    fast_io(app, trace, threads, model, mapping, "dedicated")
}

/// [`fast`] with the I/O policy `io` (`--io`).
fn fast_io(
    app: &str,
    trace: &Path,
    threads: usize,
    model: &str,
    mapping: Option<&Path>,
    io: &str,
) -> f64 {
    let mut v = serde_json::json!({
        "app": app,
        "trace": trace.display().to_string(),
        "threads": threads,
        "model": model,
        "io": io,
    });
    if let Some(m) = mapping {
        v["mapping"] = m.display().to_string().into();
    }
    let req = Request::from_json(&v.to_string()).expect("request");
    let r = run(&req, &mut |_| {}).expect("run");
    assert_eq!(r["balance"]["conserved"], true, "{}", r["balance"]);
    r["timing"]["packets_per_second"].as_f64().unwrap()
}

/// `pktflow run` on one thread on the side-by-side configuration (its own FromDump sources).
fn dump1(cr: &ClickRef) -> f64 {
    let req = Request::from_json(
        &serde_json::json!({"app": cr.config.display().to_string()}).to_string(),
    )
    .expect("request");
    let r = run(&req, &mut |_| {}).expect("run");
    assert_eq!(r["balance"]["conserved"], true, "{}", r["balance"]);
    assert_eq!(r["packets"]["from_source"], cr.packets);
    r["timing"]["packets_per_second"].as_f64().unwrap()
}

/// The two-thread files of a side-by-side case: Click's (its DriverManager prints the rate from
/// `$(now)`) and the one `pktflow run` runs (the same, or its twin that prints the packets only
/// while pktflow's scripts have no `$(now)`).
struct Threads2 {
    click: PathBuf,
    pktflow: PathBuf,
}

/// A benchmark case: name, application, trace, hybrid mapping, and the side-by-side inputs for
/// Click on one and on two threads.
type Case = (
    String,
    String,
    PathBuf,
    PathBuf,
    Option<ClickRef>,
    Option<Threads2>,
);

/// Whether pktflow's scripts have `$(now)` and its arithmetic (a one-packet run tells).
fn pktflow_has_now(dir: &Path) -> bool {
    let c = dir.join("now-probe.click");
    std::fs::write(
        &c,
        "InfiniteSource(LIMIT 1) -> Discard; DriverManager(set t0 $(now), wait, print \"$(sub $(now) $t0)\", stop);",
    )
    .expect("write probe");
    let req = Request::from_json(&serde_json::json!({"app": c.display().to_string()}).to_string())
        .expect("request");
    run(&req, &mut |_| {}).is_ok()
}

/// `pktflow run --threads 2` on the two-pipeline file: packets per second (JSON).
fn dump2(cr: &ClickRef, t2: &Threads2) -> f64 {
    let req = Request::from_json(
        &serde_json::json!({"app": t2.pktflow.display().to_string(), "threads": 2}).to_string(),
    )
    .expect("request");
    let r = run(&req, &mut |_| {}).unwrap_or_else(|e| panic!("{}: {e}", t2.pktflow.display()));
    assert_eq!(r["balance"]["conserved"], true, "{}", r["balance"]);
    assert_eq!(r["packets"]["from_source"], 2 * cr.packets);
    assert_eq!(
        r["packets"]["per_thread_from_source"],
        serde_json::json!([cr.packets, cr.packets])
    );
    r["timing"]["packets_per_second"].as_f64().unwrap()
}

/// `click -j 2` on the two-pipeline file: the rate its DriverManager prints.
fn click2(click_mt: &str, cr: &ClickRef, t2: &Threads2) -> f64 {
    let (_, out) = click_run(click_mt, &["-j", "2"], &t2.click);
    let field = |key: &str| {
        out.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .unwrap_or_else(|| panic!("click -j 2 printed no '{key}' line: {out}"))
    };
    assert_eq!(field("packets ") as u64, 2 * cr.packets, "click -j 2");
    field("rate ")
}

/// Seconds of one run of `click` on `config`, from start to exit.
fn click_seconds(click: &str, config: &Path) -> f64 {
    click_run(click, &[], config).0
}

/// One run of `click ARGS config`: seconds from start to exit, and what it printed (Click's
/// DriverManager prints on standard error).
fn click_run(click: &str, args: &[&str], config: &Path) -> (f64, String) {
    let t0 = Instant::now();
    let out = std::process::Command::new(click)
        .args(args)
        .arg(config)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .output()
        .unwrap_or_else(|e| {
            eprintln!("PKTFLOW_CLICK={click}: {e}");
            std::process::exit(2);
        });
    let secs = t0.elapsed().as_secs_f64();
    if !out.status.success() {
        eprintln!(
            "{click} {}: {}; {}",
            config.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
                .lines()
                .next()
                .unwrap_or("")
        );
        std::process::exit(1);
    }
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (secs, printed)
}

/// The side-by-side configuration with every input replaced by an empty pcap: what Click takes
/// to start and stop.
fn empty_twin(cr: &ClickRef) -> PathBuf {
    let mut text = std::fs::read_to_string(&cr.config).expect("read config");
    for (dev, p) in &cr.inputs {
        let e = p.with_file_name(format!("empty-{dev}.pcap"));
        PcapWriter::create(&e, LINKTYPE_ETHERNET)
            .expect("create")
            .finish()
            .expect("flush");
        text = text.replace(&p.display().to_string(), &e.display().to_string());
    }
    let c = cr.config.with_file_name("empty-click.click");
    std::fs::write(&c, text).expect("write config");
    c
}

fn main() {
    let n: u64 = std::env::var("PKTFLOW_BENCH_PACKETS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let reps: usize = std::env::var("PKTFLOW_BENCH_REPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5)
        .max(1);
    let only = std::env::var("PKTFLOW_BENCH_APPS").ok();
    let kinds: Vec<&str> = match std::env::var("PKTFLOW_BENCH_KINDS") {
        Ok(s) => {
            let v: Vec<&str> = KINDS
                .iter()
                .copied()
                .filter(|k| s.split(',').any(|x| x.trim() == *k))
                .collect();
            if v.is_empty() {
                eprintln!("PKTFLOW_BENCH_KINDS={s}: none of {}", KINDS.join(", "));
                std::process::exit(2);
            }
            v
        }
        Err(_) => KINDS
            .iter()
            .copied()
            .filter(|k| *k != "click" || std::env::var("PKTFLOW_CLICK").is_ok())
            .filter(|k| *k != "click2" || std::env::var("PKTFLOW_CLICK_MT").is_ok())
            .collect(),
    };
    let click = std::env::var("PKTFLOW_CLICK").ok();
    if kinds.contains(&"click") && click.is_none() {
        eprintln!("the kind click needs PKTFLOW_CLICK=PATH of a userlevel click binary");
        std::process::exit(2);
    }
    let click_mt = std::env::var("PKTFLOW_CLICK_MT").ok();
    if kinds.contains(&"click2") && click_mt.is_none() {
        eprintln!("the kind click2 needs PKTFLOW_CLICK_MT=PATH of a multithread userlevel click binary (--enable-user-multithread)");
        std::process::exit(2);
    }
    let dir = std::env::temp_dir().join(format!("pktflow-runtime-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("out");
    std::fs::create_dir_all(&out).expect("out dir");
    let mut cases: Vec<Case> = Vec::new();
    let two = kinds.contains(&"dump2") || kinds.contains(&"click2");
    let has_now = two && pktflow_has_now(&dir);
    if two && !has_now {
        println!("pktflow's scripts have no $(now) yet: dump2 runs a twin of Click's two-thread file whose DriverManager prints the packets only");
    }
    let r300 = router300(&dir);
    for name in ["router300", "nat1000", "mpls", "firewall", "l3switch"] {
        if let Some(o) = &only {
            if !o.split(',').any(|x| x == name) {
                continue;
            }
        }
        let trace = dir.join(format!("{name}.pcap"));
        let app = match name {
            "router300" => {
                synthetic_trace(r300.to_str().unwrap(), n, &trace);
                r300.display().to_string()
            }
            "nat1000" => {
                nat_trace(n, &trace);
                "nat".to_string()
            }
            a => {
                synthetic_trace(a, n, &trace);
                a.to_string()
            }
        };
        // Hybrid: every element on both threads.
        let a = load_app(&app).expect("app");
        let names: Vec<&str> = a.graph.elements.iter().map(|e| e.name.as_str()).collect();
        let mapping = dir.join(format!("{name}-all.json"));
        std::fs::write(
            &mapping,
            serde_json::json!({"threads": [names, names]}).to_string(),
        )
        .expect("write mapping");
        let side = (kinds.contains(&"dump1") || kinds.contains(&"click") || two)
            && CLICK_APPS.contains(&name);
        let cr = side.then(|| {
            write_click_ref(&app, &trace, &dir, name, Sinks::Discard)
                .unwrap_or_else(|e| panic!("{name}: side-by-side inputs: {e}"))
        });
        let t2 = cr.as_ref().filter(|_| two).map(|cr| {
            let click = write_click_threads(&app, cr, 2, true)
                .unwrap_or_else(|e| panic!("{name}: two-thread configuration: {e}"));
            let pktflow = if has_now {
                click.clone()
            } else {
                write_click_threads(&app, cr, 2, false)
                    .unwrap_or_else(|e| panic!("{name}: two-thread configuration: {e}"))
            };
            println!(
                "{name:10} two-thread files: click {}, pktflow {}",
                click.display(),
                pktflow.display()
            );
            Threads2 { click, pktflow }
        });
        cases.push((name.to_string(), app, trace, mapping, cr, t2));
    }
    println!("{n} packets per trace, best of {reps} runs (spread: slowest/best); the kinds of run alternate, so a change of the machine's load touches all of them");
    let load = || {
        std::fs::read_to_string("/proc/loadavg")
            .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
            .unwrap_or_else(|_| "?".into())
    };
    println!("load average at the start: {}", load());
    let what = [
        "functional run (cost recording), 1 thread",
        "pktflow run rtc, 1 thread",
        "pktflow run rtc, 2 threads",
        "pktflow run rtc, 2 threads, --io each",
        "pktflow run pipeline, 1 thread",
        "pktflow run pipeline, 2 threads",
        "pktflow run hybrid (all replicated), 1 thread",
        "pktflow run hybrid (all replicated), 2 threads",
        "pktflow run rtc, 1 thread, Click's configuration",
        "click (userlevel), the same configuration",
        "pktflow run --threads 2, two pipelines, StaticThreadSched",
        "click -j 2 (multithread build), the same file",
    ];
    for (name, app, trace, mapping, cr, t2) in &cases {
        let mut runs: Vec<Vec<f64>> = vec![Vec::new(); what.len()];
        // Click's start-up and shut-down, taken off each of its runs.
        let click_idle = match (&click, cr) {
            (Some(c), Some(cr)) if kinds.contains(&"click") => {
                let e = empty_twin(cr);
                let t = (0..3).map(|_| click_seconds(c, &e)).sum::<f64>() / 3.0;
                println!("{name:10} click start-up and shut-down: {:.1} ms", t * 1e3);
                t
            }
            _ => 0.0,
        };
        for _ in 0..reps {
            for (k, kind) in KINDS.iter().enumerate() {
                if !kinds.contains(kind) {
                    continue;
                }
                if matches!(*kind, "dump2" | "click2") {
                    let (Some(cr), Some(t2)) = (cr, t2) else {
                        continue;
                    };
                    runs[k].push(match *kind {
                        "dump2" => dump2(cr, t2),
                        _ => click2(click_mt.as_deref().expect("PKTFLOW_CLICK_MT"), cr, t2),
                    });
                    continue;
                }
                if matches!(*kind, "dump1" | "click") {
                    let Some(cr) = cr else { continue };
                    runs[k].push(match *kind {
                        "dump1" => dump1(cr),
                        _ => {
                            let c = click.as_deref().expect("PKTFLOW_CLICK");
                            let secs = click_seconds(c, &cr.config) - click_idle;
                            cr.packets as f64 / secs.max(1e-9)
                        }
                    });
                    continue;
                }
                runs[k].push(match *kind {
                    "functional" => functional(app, trace, &out),
                    "rtc1" => fast(app, trace, 1, "rtc", None),
                    "rtc2" => fast(app, trace, 2, "rtc", None),
                    "rtc2each" => fast_io(app, trace, 2, "rtc", None, "each"),
                    "pipeline1" => fast(app, trace, 1, "pipeline", None),
                    "pipeline2" => fast(app, trace, 2, "pipeline", None),
                    "hybrid1" => fast(app, trace, 1, "hybrid", Some(mapping)),
                    _ => fast(app, trace, 2, "hybrid", Some(mapping)),
                });
            }
        }
        for (k, v) in runs.iter().enumerate() {
            if v.is_empty() {
                continue;
            }
            let b = v.iter().cloned().fold(0.0, f64::max);
            let w = v.iter().cloned().fold(f64::MAX, f64::min);
            println!(
                "{name:10} {:48} {b:>12.0} packets/s (slowest {w:.0}, {:.0}%)",
                what[k],
                100.0 * w / b
            );
        }
        println!("{name:10} load average after: {}", load());
    }
    // PKTFLOW_BENCH_KEEP=1 keeps the folder (configurations and traces) for other runs.
    if std::env::var("PKTFLOW_BENCH_KEEP").is_err() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        println!("inputs kept in {}", dir.display());
    }
}
