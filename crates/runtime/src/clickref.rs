//! The same application, trace and work for Click, to measure the two side by side
//! (docs/benchmarks.md, "Side by side with Click").
//!
//! [`write_click_ref`] writes, from an application and a trace file:
//! - one pcap per input device (`NAME-DEV.pcap`): the trace packets `pktflow run` gives that
//!   device (the same input-interface rule), after the ARP replies its neighbours send to the
//!   queries the application makes on the trace. An `ARPQuerier` learns from such unsolicited
//!   replies (in Click as in pktflow), so its cache is warm from the first trace packet in both.
//!   This stands in for the link neighbours, which `pktflow run` has and Click has not.
//! - a Click configuration (`NAME-click.click`) written from the application's flattened graph:
//!   every element with its class and configuration string, every connection. Each
//!   `FromDevice(DEV)` / `PollDevice(DEV)` becomes `FromDump(NAME-DEV.pcap, STOP true)`. Each
//!   `ToDevice(DEV)` becomes `Discard`, or `ToDump(NAME-out-DEV.pcap)` with [`Sinks::Dump`].
//!   A `DriverManager` stops the router once every FromDump has finished. Names are kept, but
//!   `@` becomes `_a` (flattened anonymous names, `Queue@3`), so the file is plain Click.
//!
//! Both Click (`click CONFIG`) and `pktflow run CONFIG` run that file, so they read the same
//! packets through the same elements with no neighbours on either side. Only the classes both
//! have can be compared this way: those of the IP router and the NAT, not pktflow's own
//! (FirewallRules, MPLSPush, ...).
use crate::api::{run, Request};
use pktflow_profile::app::{load_app, App};
use pktflow_profile::neighbors::arp_reply_for;
use pktflow_profile::run::{packets, InputPort, Source};
use pktflow_traffic::{PcapReader, PcapWriter, TracePacket, LINKTYPE_ETHERNET};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// What the device outputs become in the Click configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sinks {
    /// `Discard`: nothing written (as `pktflow run` without `--out-dir`).
    Discard,
    /// `ToDump(NAME-out-DEV.pcap)`: what leaves each device, written.
    Dump,
}

/// The files [`write_click_ref`] wrote.
#[derive(Clone, Debug)]
pub struct ClickRef {
    /// The Click configuration.
    pub config: PathBuf,
    /// Per input device: its name and its pcap.
    pub inputs: Vec<(String, PathBuf)>,
    /// Packets in the inputs: the trace's, and the ARP replies put first.
    pub packets: u64,
    pub arp_replies: u64,
}

/// A Click element name for a flattened pktflow name.
fn click_name(name: &str) -> String {
    name.replace('@', "_a")
}

/// Write the side-by-side inputs of `app` (a built-in name or a Click file) on the pcap `trace`
/// into `dir`, their names starting with `name` (see the module documentation).
pub fn write_click_ref(
    app: &str,
    trace: &Path,
    dir: &Path,
    name: &str,
    sinks: Sinks,
) -> Result<ClickRef, String> {
    let a = load_app(app)?;
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let dir = std::fs::canonicalize(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if let Some(e) = a.graph.elements.iter().find(|e| {
        matches!(
            e.class.as_str(),
            "Script" | "DriverManager" | "FromDump" | "InfiniteSource" | "RatedSource"
        )
    }) {
        return Err(format!(
            "{app}: has its own {} ({}): the side-by-side configuration feeds the devices from the trace and stops by itself",
            e.class, e.name
        ));
    }
    let devs = input_devices(&a);
    if devs.is_empty() {
        return Err(format!(
            "{app}: no FromDevice/PollDevice: nothing to feed the trace to"
        ));
    }
    // The queries the application makes on the trace: a run with the neighbours answering
    // (far ends off: Click has none), its device outputs kept.
    let cold = dir.join(format!("{name}-arp-run"));
    std::fs::create_dir_all(&cold).map_err(|e| format!("{}: {e}", cold.display()))?;
    let req = Request::from_json(
        &serde_json::json!({
            "app": app,
            "trace": trace.display().to_string(),
            "out_dir": cold.display().to_string(),
            "reply_every": 0,
        })
        .to_string(),
    )?;
    run(&req, &mut |_| {})?;
    let first_ts = PcapReader::open(trace)
        .map_err(|e| format!("{}: {e}", trace.display()))?
        .next()
        .transpose()
        .map_err(|e| format!("{}: {e}", trace.display()))?
        .map_or(0, |p| p.timestamp_ns);
    // Each input is written beside its name and renamed once complete: nothing half-written.
    let tmp_of = |p: &Path| p.with_extension("pcap.tmp");
    let mut writers = Vec::new();
    let mut inputs = Vec::new();
    for dev in &devs {
        let p = dir.join(format!("{name}-{dev}.pcap"));
        writers.push(
            PcapWriter::create(tmp_of(&p), LINKTYPE_ETHERNET)
                .map_err(|e| format!("{}: {e}", p.display()))?,
        );
        inputs.push((dev.clone(), p));
    }
    let written = write_inputs(&a, trace, &cold, &devs, &inputs, writers, first_ts);
    let _ = std::fs::remove_dir_all(&cold);
    let (total, replies) = match written {
        Ok(n) => n,
        Err(e) => {
            for (_, p) in &inputs {
                let _ = std::fs::remove_file(tmp_of(p));
            }
            return Err(e);
        }
    };
    for (_, p) in &inputs {
        std::fs::rename(tmp_of(p), p).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    let config = dir.join(format!("{name}-click.click"));
    let text = click_config(&a, &inputs, &dir, name, sinks);
    let tmp = config.with_extension("click.tmp");
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &config).map_err(|e| format!("{}: {e}", config.display()))?;
    Ok(ClickRef {
        config,
        inputs,
        packets: total + replies,
        arp_replies: replies,
    })
}

/// The device inputs: each device's ARP replies to the queries of the run in `cold`, then the
/// trace packets `pktflow run` gives it. Returns (trace packets, replies).
fn write_inputs(
    a: &App,
    trace: &Path,
    cold: &Path,
    devs: &[String],
    inputs: &[(String, PathBuf)],
    mut writers: Vec<PcapWriter<std::io::BufWriter<std::fs::File>>>,
    first_ts: u64,
) -> Result<(u64, u64), String> {
    let mut total = 0u64;
    let mut replies = 0u64;
    for (iface, r) in arp_answers(a, cold, first_ts)? {
        writers[iface]
            .write(&r)
            .map_err(|e| format!("{}: {e}", inputs[iface].1.display()))?;
        replies += 1;
    }
    let src = Source::Pcap {
        path: trace.display().to_string(),
        input_port: InputPort::Auto,
    };
    for tp in packets(a, &src)? {
        let tp: TracePacket = tp?;
        let k = tp.iface as usize % devs.len();
        writers[k]
            .write(&tp)
            .map_err(|e| format!("{}: {e}", inputs[k].1.display()))?;
        total += 1;
    }
    for (w, (_, p)) in writers.into_iter().zip(inputs) {
        w.finish().map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok((total, replies))
}

/// The neighbours' answers to the ARP queries a run of `a` sent through its devices (the device
/// pcaps that run wrote into `run_dir`): one per (input interface, address asked), stamped
/// `timestamp_ns`, each with the input interface it enters at (interface k is the k-th
/// FromDevice/PollDevice). Put before a trace, they warm the ARP queriers' caches, as a
/// gateway's cache is warm when the measured traffic starts (an ARPQuerier learns from
/// unsolicited replies, as Click's does).
pub fn arp_answers(
    a: &App,
    run_dir: &Path,
    timestamp_ns: u64,
) -> Result<Vec<(usize, TracePacket)>, String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (iface, dev) in input_devices(a).iter().enumerate() {
        let f = run_dir.join(crate::driver::device_file_name(dev));
        if !f.exists() {
            continue;
        }
        for tp in PcapReader::open(&f).map_err(|e| format!("{}: {e}", f.display()))? {
            let tp = tp.map_err(|e| format!("{}: {e}", f.display()))?;
            if let Some(r) = arp_reply_for(&tp.data, timestamp_ns, iface as u16) {
                if seen.insert((iface, r.data[28..32].to_vec())) {
                    out.push((iface, r));
                }
            }
        }
    }
    Ok(out)
}

/// The input devices in the order `pktflow run` numbers its input interfaces (the sources in
/// declaration order).
fn input_devices(a: &App) -> Vec<String> {
    a.graph
        .elements
        .iter()
        .filter(|e| e.class == "FromDevice" || e.class == "PollDevice")
        .map(|e| first_arg(&e.config))
        .collect()
}

fn first_arg(config: &str) -> String {
    config.split(',').next().unwrap_or("").trim().to_string()
}

/// The Click configuration (see the module documentation).
fn click_config(
    a: &App,
    inputs: &[(String, PathBuf)],
    dir: &Path,
    name: &str,
    sinks: Sinks,
) -> String {
    let mut s = header(a, sinks);
    let p = pipeline(a, inputs, dir, name, sinks, "", false);
    s.push_str(&p.text);
    let pauses = vec!["pause"; p.dumps.len()].join(", ");
    s.push_str(&format!(
        "// Stop once every FromDump has read its file.\nclick_ref_driver :: DriverManager({pauses}, stop);\n"
    ));
    s
}

fn header(a: &App, sinks: Sinks) -> String {
    format!(
        "// {} on its trace, written by pktflow for a side-by-side run with Click\n\
         // (docs/benchmarks.md, \"Side by side with Click\"): devices replaced by FromDump and {}.\n",
        a.graph.file,
        match sinks {
            Sinks::Discard => "Discard",
            Sinks::Dump => "ToDump",
        }
    )
}

/// Classes whose names are the whole configuration's (an IPRewriterPatterns' pattern names,
/// AddressInfo's addresses): Click refuses a second definition of a name ("pattern 'NAT'
/// already defined"), so the copies of [`write_click_threads`] share the first copy's.
const GLOBAL_NAMES: &[&str] = &["IPRewriterPatterns", "AddressInfo"];

/// One copy of the application's graph for Click.
struct Pipeline {
    text: String,
    /// Names of its FromDump elements.
    dumps: Vec<String>,
    /// Names of its device outputs (Discard or ToDump: the tasks that pull from its Queues).
    outputs: Vec<String>,
    /// Names of the Counters after its FromDumps (with `counters`).
    counters: Vec<String>,
}

/// The application's elements and connections for Click, every name starting with `prefix`;
/// with `counters`, a Counter after each FromDump.
fn pipeline(
    a: &App,
    inputs: &[(String, PathBuf)],
    dir: &Path,
    name: &str,
    sinks: Sinks,
    prefix: &str,
    counters: bool,
) -> Pipeline {
    let mut p = Pipeline {
        text: String::new(),
        dumps: Vec::new(),
        outputs: Vec::new(),
        counters: Vec::new(),
    };
    let el = |i: usize| format!("{prefix}{}", click_name(&a.graph.elements[i].name));
    // A FromDump's connections leave from its Counter.
    let mut counter_of = vec![None; a.graph.elements.len()];
    for (i, e) in a.graph.elements.iter().enumerate() {
        // Names these define are the configuration's, not a copy's: written once.
        if !prefix.is_empty()
            && !prefix.starts_with("p0_")
            && GLOBAL_NAMES.contains(&e.class.as_str())
        {
            continue;
        }
        let (class, config) = match e.class.as_str() {
            "FromDevice" | "PollDevice" => {
                let dev = first_arg(&e.config);
                let file = inputs
                    .iter()
                    .find(|(d, _)| *d == dev)
                    .map(|(_, p)| p.display().to_string())
                    .unwrap_or_default();
                p.dumps.push(el(i));
                if counters {
                    let c = format!("{}_count", el(i));
                    counter_of[i] = Some(c.clone());
                    p.counters.push(c);
                }
                ("FromDump".to_string(), format!("{file}, STOP true"))
            }
            "ToDevice" => {
                p.outputs.push(el(i));
                match sinks {
                    Sinks::Discard => ("Discard".to_string(), String::new()),
                    Sinks::Dump => {
                        let dev = first_arg(&e.config);
                        let out = dir.join(format!("{name}-out-{prefix}{dev}.pcap"));
                        ("ToDump".to_string(), out.display().to_string())
                    }
                }
            }
            c => (c.to_string(), e.config.clone()),
        };
        p.text
            .push_str(&format!("{} :: {class}({config});\n", el(i)));
        if let Some(c) = &counter_of[i] {
            p.text.push_str(&format!("{} -> {c} :: Counter;\n", el(i)));
        }
    }
    for c in &a.graph.connections {
        let from = counter_of[c.from].clone().unwrap_or_else(|| el(c.from));
        p.text.push_str(&format!(
            "{from} [{}] -> [{}] {};\n",
            c.from_port,
            c.to_port,
            el(c.to)
        ));
    }
    p
}

/// The side-by-side configuration as Click users write a multithreaded replay
/// (docs/benchmarks.md, "Side by side with Click"): `threads` copies of the application's
/// graph, copy k's names starting with `pK_`, each reading the inputs of `cr` with its own
/// FromDumps (each followed by a Counter), a `StaticThreadSched` putting copy k's tasks (its
/// FromDumps and device outputs) on thread k, and a `DriverManager` that waits for every
/// FromDump to end, then prints the counters' sum (`packets N`) and, with `rate`, the rate
/// from `$(now)` before and after (`rate R`, packets per second, Click's Script arithmetic).
/// Written beside `cr.config` as `NAME-click{threads}.click` (`-counts` without `rate`).
pub fn write_click_threads(
    app: &str,
    cr: &ClickRef,
    threads: usize,
    rate: bool,
) -> Result<PathBuf, String> {
    let a = load_app(app)?;
    let dir = cr
        .config
        .parent()
        .ok_or("the configuration has no folder")?
        .to_path_buf();
    let stem = cr
        .config
        .file_name()
        .and_then(|f| f.to_str())
        .and_then(|f| f.strip_suffix("-click.click"))
        .ok_or("not a configuration write_click_ref wrote")?
        .to_string();
    let mut s = header(&a, Sinks::Discard);
    s.push_str(&format!(
        "// {threads} copies of the pipeline, copy k's tasks on thread k (click -j {threads}).\n"
    ));
    let mut sched = Vec::new();
    let mut counters = Vec::new();
    let mut pauses = 0;
    for k in 0..threads {
        let p = pipeline(
            &a,
            &cr.inputs,
            &dir,
            &stem,
            Sinks::Discard,
            &format!("p{k}_"),
            true,
        );
        s.push_str(&p.text);
        for t in p.dumps.iter().chain(&p.outputs) {
            sched.push(format!("{t} {k}"));
        }
        pauses += p.dumps.len();
        counters.extend(p.counters);
    }
    s.push_str(&format!("StaticThreadSched({});\n", sched.join(", ")));
    let sum = counters
        .iter()
        .map(|c| format!("$({c}.count)"))
        .reduce(|x, c| format!("$(add {x} {c})"))
        .unwrap_or_else(|| "0".into());
    let waits = vec!["pause"; pauses].join(", ");
    let text = if rate {
        format!(
            "DriverManager(set t0 $(now), {waits}, set t1 $(now), print \"packets {sum}\", print \"rate $(div {sum} $(sub $t1 $t0))\", stop);\n"
        )
    } else {
        format!("DriverManager({waits}, print \"packets {sum}\", stop);\n")
    };
    s.push_str(&text);
    let config = dir.join(format!(
        "{stem}-click{threads}{}.click",
        if rate { "" } else { "-counts" }
    ));
    std::fs::write(&config, s).map_err(|e| format!("{}: {e}", config.display()))?;
    Ok(config)
}
