//! Drive a functional run: an application, a packet source (pcap/pcapng file or seeded
//! synthetic trace shaped for the application), and a consumer of the per-packet traces.
use crate::app::{load_app, App};
use crate::hints::TrafficHints;
use crate::neighbors::{arp_reply_for, ip_reply_for};
use crate::profiler::Profiler;
use pktflow_elements::Router;
use pktflow_model::PacketTrace;
use pktflow_traffic::{PcapReader, PrefixWeighting, TracePacket};
use serde_json::json;
use std::collections::VecDeque;
use std::path::Path;
use std::time::Instant;

/// Where packets come from.
#[derive(Clone, Debug)]
pub enum Source {
    Pcap(String),
    Synthetic {
        packets: u64,
        seed: u64,
    },
    /// Synthetic, with destinations drawn as `dst_weighting` says (e.g. every output port
    /// equally loaded) instead of the generator's default.
    SyntheticWeighted {
        packets: u64,
        seed: u64,
        dst_weighting: PrefixWeighting,
    },
}

impl Source {
    /// From command-line style arguments (a trace file wins; default 10,000 synthetic packets).
    pub fn from_args(trace: Option<&str>, synthetic: Option<u64>, seed: u64) -> Source {
        match (trace, synthetic) {
            (Some(t), _) => Source::Pcap(t.to_string()),
            (None, n) => Source::Synthetic {
                packets: n.unwrap_or(10_000),
                seed,
            },
        }
    }
    pub fn describe(&self) -> String {
        match self {
            Source::Pcap(p) => p.clone(),
            Source::Synthetic { packets, seed } => {
                format!("{packets} synthetic packets (seed {seed})")
            }
            Source::SyntheticWeighted {
                packets,
                seed,
                dst_weighting,
            } => {
                format!("{packets} synthetic packets (seed {seed}, destinations {dst_weighting:?})")
            }
        }
    }
}

/// A running functional run: pulls packets from its source on demand (bounded memory).
pub struct Run {
    pub app: App,
    pub router: Router,
    packets: Box<dyn Iterator<Item = Result<TracePacket, String>>>,
    /// Packets the link neighbours send in answer (ARP replies), injected before the next
    /// source packet.
    pending: VecDeque<TracePacket>,
    neighbors: bool,
    /// Every k-th IP packet leaving is answered by its destination (0 = never).
    reply_every: u64,
    ip_departures: u64,
    /// The packet being processed came from the source (not a neighbour's answer); only those
    /// are answered by the far end, so replies do not beget replies.
    from_source: bool,
    next_id: u64,
    last_ts: u64,
    finished: bool,
    /// ARP replies the neighbours sent.
    pub neighbor_replies: u64,
    /// IP replies the far ends sent.
    pub ip_replies: u64,
}

/// The packet iterator of a source, shaped for `app` when synthetic.
pub fn packets(
    app: &App,
    source: &Source,
) -> Result<Box<dyn Iterator<Item = Result<TracePacket, String>>>, String> {
    Ok(match source {
        Source::Pcap(path) => {
            let r = PcapReader::open(Path::new(path)).map_err(|e| e.to_string())?;
            Box::new(r.map(|x| x.map_err(|e| e.to_string())))
        }
        Source::Synthetic { packets, seed } => {
            let hints = TrafficHints::from_graph(&app.graph, &app.base_dir)?;
            Box::new(hints.generator(*packets, *seed)?.map(Ok))
        }
        Source::SyntheticWeighted {
            packets,
            seed,
            dst_weighting,
        } => {
            let mut hints = TrafficHints::from_graph(&app.graph, &app.base_dir)?;
            hints.dst_weighting = Some(*dst_weighting);
            Box::new(hints.generator(*packets, *seed)?.map(Ok))
        }
    })
}

impl Run {
    pub fn start(app: &str, source: &Source, out_dir: &Path) -> Result<Run, String> {
        let app = load_app(app)?;
        let router = app.instantiate(out_dir)?;
        if router.n_sources() == 0 {
            return Err(format!(
                "{}: the application has no FromDevice/PollDevice to receive trace packets",
                app.graph.file
            ));
        }
        let packets = packets(&app, source)?;
        let mut run = Run {
            app,
            router,
            packets,
            pending: VecDeque::new(),
            neighbors: true,
            reply_every: 0,
            ip_departures: 0,
            from_source: true,
            next_id: 0,
            last_ts: 0,
            finished: false,
            neighbor_replies: 0,
            ip_replies: 0,
        };
        // Translators (NAT) need return traffic: answer every second departing packet.
        if run
            .app
            .graph
            .elements
            .iter()
            .any(|e| e.class == "IPRewriter" || e.class == "IPAddrRewriter")
        {
            run.reply_every = 2;
        }
        run.router.set_tap(true);
        Ok(run)
    }

    /// Answer every k-th departing IP packet from its destination (0 = never; default 2 for
    /// applications with an IPRewriter/IPAddrRewriter, else 0).
    pub fn set_reply_every(&mut self, k: u64) {
        self.reply_every = k;
    }

    /// Whether simulated link neighbours answer ARP requests (default on).
    pub fn set_neighbors(&mut self, on: bool) {
        self.neighbors = on;
    }

    fn answer_neighbors(&mut self) {
        let mut replies = Vec::new();
        for (sink, p) in self.router.take_departed() {
            if !self.neighbors {
                continue;
            }
            replies.push((sink, p));
        }
        for (sink, p) in replies {
            let Some(dev) = self
                .router
                .element(sink as usize)
                .device()
                .map(str::to_string)
            else {
                continue;
            };
            let Some(iface) = self.router.source_index_of_device(&dev) else {
                continue;
            };
            if let Some(r) = arp_reply_for(p.data(), self.last_ts, iface as u16) {
                self.neighbor_replies += 1;
                self.pending.push_back(r);
            } else if self.reply_every > 0 && self.from_source {
                if let Some(r) = ip_reply_for(p.data(), self.last_ts, iface as u16) {
                    self.ip_departures += 1;
                    if self.ip_departures % self.reply_every == 0 {
                        self.ip_replies += 1;
                        self.pending.push_back(r);
                    }
                }
            }
        }
    }

    /// The trace of the next packet, or `None` at the end of the source (outputs are then
    /// flushed).
    pub fn next_trace(&mut self) -> Result<Option<&PacketTrace>, String> {
        if self.finished {
            return Ok(None);
        }
        let next = match self.pending.pop_front() {
            Some(tp) => {
                self.from_source = false;
                Some(Ok(tp))
            }
            None => {
                self.from_source = true;
                self.packets.next()
            }
        };
        match next {
            Some(tp) => {
                let tp = tp?;
                self.last_ts = tp.timestamp_ns;
                let p = tp.to_packet(self.next_id);
                self.next_id += 1;
                self.router.inject(tp.iface as usize, p)?;
                self.answer_neighbors();
                Ok(Some(self.router.last_trace()))
            }
            None => {
                self.finished = true;
                self.router.finish()?;
                Ok(None)
            }
        }
    }
}

/// Run `app` on `source` and return the profile report as JSON. `tick(done)` is called every
/// 10,000 packets; returning `false` stops the run (Ctrl-C).
pub fn profile(
    app: &str,
    source: &Source,
    out_dir: &Path,
    mut tick: impl FnMut(u64) -> bool,
) -> Result<serde_json::Value, String> {
    let mut run = Run::start(app, source, out_dir)?;
    let names: Vec<(String, String)> = run
        .app
        .graph
        .elements
        .iter()
        .map(|e| (e.name.clone(), e.class.clone()))
        .collect();
    let mut prof = Profiler::new(names);
    let t0 = Instant::now();
    let mut n = 0u64;
    while let Some(t) = run.next_trace()? {
        prof.add(t);
        n += 1;
        if n % 10_000 == 0 && !tick(n) {
            return Err("interrupted".into());
        }
    }
    let secs = t0.elapsed().as_secs_f64();
    let mut doc = serde_json::to_value(prof.finish()).expect("profile serializes");
    let held: Vec<_> = run
        .router
        .held()
        .into_iter()
        .map(|(e, c)| json!({"element": e, "count": c}))
        .collect();
    let o = doc.as_object_mut().expect("object");
    o.insert("app".into(), json!(run.app.name));
    o.insert("file".into(), json!(run.app.graph.file));
    o.insert("source".into(), json!(source.describe()));
    o.insert("held".into(), json!(held));
    o.insert("neighbor_arp_replies".into(), json!(run.neighbor_replies));
    o.insert("far_end_ip_replies".into(), json!(run.ip_replies));
    o.insert(
        "conservation_errors".into(),
        json!(run.router.conservation_errors),
    );
    o.insert("functional_run_seconds".into(), json!(secs));
    o.insert(
        "packets_per_second_functional".into(),
        json!(if secs > 0.0 { n as f64 / secs } else { 0.0 }),
    );
    o.insert("element_stats".into(), run.router.stats());
    o.insert(
        "warnings".into(),
        json!(run
            .app
            .warnings
            .iter()
            .map(|w| w.to_string())
            .collect::<Vec<_>>()),
    );
    Ok(doc)
}

/// Write `n` synthetic packets shaped for `app` to `path` (pcap, or pcapng).
pub fn write_synthetic(
    path: &str,
    n: u64,
    seed: u64,
    app: &str,
    pcapng: bool,
) -> Result<serde_json::Value, String> {
    let app = load_app(app)?;
    let hints = TrafficHints::from_graph(&app.graph, &app.base_dir)?;
    let tmp = format!("{path}.partial");
    let mut bytes = 0u64;
    let mut count = 0u64;
    {
        let result: Result<(), String> = (|| {
            if pcapng {
                let mut w = pktflow_traffic::PcapngWriter::create(Path::new(&tmp), 1)
                    .map_err(|e| e.to_string())?;
                for tp in hints.generator(n, seed)? {
                    bytes += tp.data.len() as u64;
                    count += 1;
                    w.write(&tp).map_err(|e| e.to_string())?;
                }
                w.finish().map_err(|e| e.to_string())?;
            } else {
                let mut w = pktflow_traffic::PcapWriter::create(Path::new(&tmp), 1)
                    .map_err(|e| e.to_string())?;
                for tp in hints.generator(n, seed)? {
                    bytes += tp.data.len() as u64;
                    count += 1;
                    w.write(&tp).map_err(|e| e.to_string())?;
                }
                w.finish().map_err(|e| e.to_string())?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
    }
    std::fs::rename(&tmp, path).map_err(|e| format!("{path}: {e}"))?;
    Ok(json!({"path": path, "packets": count, "bytes": bytes, "seed": seed, "app": app.name}))
}
