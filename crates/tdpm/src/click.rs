//! PPF graph of a Click application with its profile from a functional run (seed 001,
//! `001_50c9ec885c831f52.txt`, section 4.2: "The input packet arrival rate λ is computed from
//! the input packet trace of the Profiler phase. The Profiler also provides the frequency of
//! executing each node").
//!
//! Rules (docs/tdpm.md):
//! * Each element is a PPF, except the receiver (elements with the Source role: FromDevice,
//!   PollDevice) and the transmitter (sinks: ToDevice, Discard; storage: Queue; and elements
//!   fed only by those, i.e. the pull side). Several receivers/transmitters merge into `rx`
//!   and `tx` (the Rx and Tx MEs).
//! * λ_i = visits of element i / packets injected; instructions per visit are the traced
//!   instructions; memory references per visit by level: each traced access goes to the
//!   storage device the architecture's memory map names for its memory type, and moves
//!   ⌈bytes / width⌉ references. Packet data is the exception (option `packet_cache`, on by
//!   default): a task loads the header from DRAM at its input channel (the communication cost)
//!   and its PPFs then read and write that copy in local memory.
//! * Channels: every connection between two PPFs (or rx/tx); its rate is the number of packets
//!   that crossed it per injected packet (a visit's predecessor is the latest earlier visit of
//!   the same packet by an element connected to the visit's input port); its bytes are
//!   `header_bytes` (default 64, one wide DRAM access).
//! * Locks: a persistent object shared between threads (dynamic state, or static state some
//!   packet writes) is one lock per element and object; a visit holds it from its first to its
//!   last access to the object (the placement rule of seed 000 section 2.4 used by the
//!   profiler); the critical section lasts the instructions in between plus the latency of the
//!   accesses inside.
//! * Code size: `Element::code_size()`.
use crate::error::TdpmError;
use crate::graph::{ChannelFile, LockUse, MemUse, Ppf, PpfGraph};
use pktflow_arch::NpArch;
use pktflow_elements::element::Role;
use pktflow_model::{AccessKind, MemType};
use pktflow_profile::run::{Run, Source};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

#[derive(Clone, Debug)]
pub struct ClickOptions {
    pub packet_cache: bool,
    pub header_bytes: u32,
}

impl Default for ClickOptions {
    fn default() -> Self {
        ClickOptions {
            packet_cache: true,
            header_bytes: 64,
        }
    }
}

#[derive(Default, Clone)]
struct Acc {
    visits: u64,
    instr: u64,
    refs: BTreeMap<(String, bool), f64>, // (level, write) -> references
    writes_packet: bool,
}

#[derive(Default, Clone)]
struct LockAcc {
    acquisitions: u64,
    cs_cycles: f64,
}

/// Run `app` on `source` and build its PPF graph for `arch`.
pub fn from_click(
    app: &str,
    source: &Source,
    arch: &NpArch,
    opts: &ClickOptions,
    out_dir: &Path,
) -> Result<PpfGraph, TdpmError> {
    let mut run = Run::start(app, source, out_dir).map_err(TdpmError::App)?;
    let graph = run.app.graph.clone();
    let n = graph.elements.len();
    let router = &run.router;
    let role: Vec<Role> = (0..n).map(|i| router.element(i).role()).collect();
    let storage: Vec<bool> = (0..n).map(|i| router.element(i).is_storage()).collect();
    let code: Vec<u32> = (0..n).map(|i| router.element(i).code_size()).collect();
    // rx / tx membership.
    let is_rx: Vec<bool> = role.iter().map(|r| *r == Role::Source).collect();
    let mut is_tx: Vec<bool> = (0..n)
        .map(|i| role[i] == Role::Sink || storage[i])
        .collect();
    let inc = graph.incoming();
    loop {
        let mut changed = false;
        for i in 0..n {
            if !is_tx[i] && !is_rx[i] && !inc[i].is_empty() && inc[i].iter().all(|c| is_tx[c.from])
            {
                is_tx[i] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    if !is_rx.iter().any(|&x| x) {
        return Err(TdpmError::App(format!(
            "{}: no receiver (FromDevice/PollDevice)",
            graph.file
        )));
    }
    let level_of = |m: MemType| -> String {
        let mm = &arch.memory_map;
        match m {
            MemType::PacketData if opts.packet_cache => "local_memory".to_string(),
            MemType::PacketData => mm.packet_data.clone(),
            MemType::PacketMeta => mm.packet_meta.clone(),
            MemType::StaticState => mm.static_state.clone(),
            MemType::DynamicState => mm.dynamic_state.clone(),
            MemType::Stack => mm.stack.clone(),
        }
    };
    // Latencies for critical sections (ME cycles).
    let machine = crate::cost::Machine::from_arch_unchecked(arch, 1)?;
    for m in MemType::ALL {
        machine.level(&level_of(m))?;
    }
    let width = |lvl: &str| machine.levels[lvl].width_bytes as f64;
    // (to, to_port) -> elements connected into it.
    let mut preds: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
    for c in &graph.connections {
        preds.entry((c.to, c.to_port)).or_default().push(c.from);
    }
    let mut acc = vec![Acc::default(); n];
    let mut edge_count: HashMap<(usize, usize), u64> = HashMap::new();
    let mut locks: BTreeMap<u32, LockAcc> = BTreeMap::new();
    let mut static_written: HashSet<u32> = HashSet::new();
    let mut dynamic_objects: HashSet<u32> = HashSet::new();
    let mut packets = 0u64;
    let mut wire = 0u64;
    while let Some(t) = run.next_trace().map_err(TdpmError::App)? {
        if packets & 0x3ff == 0 {
            pktflow_model::cancel::check().map_err(|c| TdpmError::Request(c.to_string()))?;
        }
        packets += 1;
        wire += t.wire_bytes as u64;
        for (k, v) in t.visits.iter().enumerate() {
            let e = v.element as usize;
            // A later visit of an element the packet already visited is the pull side of a
            // storage element (a Queue drained by ToDevice): the packet crossed the channel
            // into it once, on the push.
            let revisit = t.visits[..k].iter().any(|w| w.element == v.element);
            if k > 0 && !revisit {
                if let Some(ps) = preds.get(&(e, v.port as usize)) {
                    if let Some(p) = t.visits[..k]
                        .iter()
                        .rev()
                        .find(|w| ps.contains(&(w.element as usize)))
                    {
                        *edge_count.entry((p.element as usize, e)).or_default() += 1;
                    }
                }
            }
            if is_rx[e] || is_tx[e] {
                continue;
            }
            let a = &mut acc[e];
            a.visits += 1;
            a.instr += v.instructions as u64;
            let mut span: BTreeMap<u32, (u32, u32, f64)> = BTreeMap::new();
            for x in t.accesses_of(v) {
                let lvl = level_of(x.mem);
                let w = x.kind == AccessKind::Write;
                let refs = (x.bytes.max(1) as f64 / width(&lvl)).ceil();
                *a.refs.entry((lvl.clone(), w)).or_default() += refs;
                if x.mem == MemType::PacketData && w {
                    a.writes_packet = true;
                }
                if x.mem.is_persistent() {
                    if x.mem == MemType::StaticState && w {
                        static_written.insert(x.object);
                    }
                    if x.mem == MemType::DynamicState {
                        dynamic_objects.insert(x.object);
                    }
                    let l = &machine.levels[&lvl];
                    let lat = refs * if w { l.write_cycles } else { l.read_cycles };
                    let s = span
                        .entry(x.object)
                        .or_insert((x.at_instr, x.at_instr, 0.0));
                    s.1 = x.at_instr;
                    s.2 += lat;
                }
            }
            for (obj, (first, last, lat)) in span {
                let la = locks.entry(obj).or_default();
                la.acquisitions += 1;
                la.cs_cycles += (last - first) as f64 * machine.me_cpi + lat;
            }
        }
    }
    if packets == 0 {
        return Err(TdpmError::App(format!(
            "{}: the functional run produced no packet",
            graph.file
        )));
    }
    let pk = packets as f64;
    let name = |i: usize| -> String {
        if is_rx[i] {
            "rx".into()
        } else if is_tx[i] {
            "tx".into()
        } else {
            graph.elements[i].name.clone()
        }
    };
    let mut ppfs = Vec::new();
    for i in 0..n {
        if is_rx[i] || is_tx[i] {
            continue;
        }
        let a = &acc[i];
        let v = a.visits.max(1) as f64;
        let mut per_level: BTreeMap<String, MemUse> = BTreeMap::new();
        for ((lvl, w), r) in &a.refs {
            let m = per_level.entry(lvl.clone()).or_insert(MemUse {
                level: lvl.clone(),
                reads: 0.0,
                writes: 0.0,
            });
            if *w {
                m.writes += r / v;
            } else {
                m.reads += r / v;
            }
        }
        let mut lk = Vec::new();
        for (&obj, la) in locks.range((i as u32) << 8..((i as u32) + 1) << 8) {
            // Dynamic objects and written static objects are shared (need a lock).
            let shared = dynamic_objects.contains(&obj) || static_written.contains(&obj);
            if shared && la.acquisitions > 0 {
                lk.push(LockUse {
                    name: format!("{}#{}", graph.elements[i].name, obj & 0xff),
                    acquisitions: la.acquisitions as f64 / v,
                    cs_cycles: la.cs_cycles / la.acquisitions as f64,
                });
            }
        }
        ppfs.push(Ppf {
            name: graph.elements[i].name.clone(),
            class: graph.elements[i].class.clone(),
            rate: a.visits as f64 / pk,
            instructions: a.instr as f64 / v,
            mem: per_level.into_values().collect(),
            locks: lk,
            code_size: code[i],
            writes_packet: a.writes_packet,
        });
    }
    // Channels: one per connected pair of ends (rx/tx merged), with the measured rate.
    let mut chans: BTreeMap<(String, String), f64> = BTreeMap::new();
    for c in &graph.connections {
        if is_tx[c.from] || is_rx[c.to] {
            continue;
        }
        let (f, t) = (name(c.from), name(c.to));
        if f == "rx" && t == "tx" {
            continue;
        }
        let cnt = edge_count.get(&(c.from, c.to)).copied().unwrap_or(0) as f64 / pk;
        // Parallel connections between the same two elements are counted once (the
        // predecessor rule attributes the packets to the element pair).
        let e = chans.entry((f, t)).or_insert(-1.0);
        if *e < 0.0 {
            *e = 0.0;
        }
        if !seen_pair(&graph, c) {
            *e += cnt;
        }
    }
    let channels: Vec<ChannelFile> = chans
        .into_iter()
        .map(|((from, to), rate)| ChannelFile {
            from,
            to,
            rate: rate.max(0.0),
            bytes: opts.header_bytes,
        })
        .collect();
    let name = Path::new(&run.app.name)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| run.app.name.clone());
    PpfGraph::new(&name, ppfs, &channels, wire as f64 / pk)
        .map_err(|e| TdpmError::Graph(format!("{}: {e}", graph.file)))
}

/// Whether an earlier connection joins the same two elements (its packets were already
/// attributed to the pair).
fn seen_pair(g: &pktflow_model::AppGraph, c: &pktflow_model::Connection) -> bool {
    let first = g
        .connections
        .iter()
        .position(|d| d.from == c.from && d.to == c.to)
        .expect("c is in the graph");
    !std::ptr::eq(&g.connections[first], c)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ixp() -> NpArch {
        pktflow_arch::Arch::load("ixp2400")
            .unwrap()
            .as_np()
            .unwrap()
            .clone()
    }

    #[test]
    fn cyclic_click_router_is_refused_with_the_cycle() {
        let dir = std::env::temp_dir().join("pktflow-tdpm-click-router");
        let e = from_click(
            "router",
            &Source::Synthetic {
                packets: 200,
                seed: 1,
            },
            &ixp(),
            &ClickOptions::default(),
            &dir,
        )
        .unwrap_err();
        assert!(e.to_string().contains("cycle"), "{e}");
    }
}

#[cfg(test)]
mod bench_apps {
    use super::*;

    #[test]
    fn benchmark_apps_become_ppf_graphs() {
        let arch = pktflow_arch::Arch::load("ixp2400").unwrap();
        let np = arch.as_np().unwrap();
        for app in ["l3switch", "mpls", "firewall"] {
            let dir = std::env::temp_dir().join(format!("pktflow-tdpm-{app}"));
            let g = from_click(
                app,
                &Source::Synthetic {
                    packets: 400,
                    seed: 3,
                },
                np,
                &ClickOptions::default(),
                &dir,
            )
            .unwrap_or_else(|e| panic!("{app}: {e}"));
            // Every PPF's rate equals what its channels bring in.
            for (i, p) in g.ppfs.iter().enumerate() {
                let inflow: f64 = g.in_ch[i].iter().map(|&k| g.channels[k].rate).sum();
                assert!(
                    (inflow - p.rate).abs() < 1e-9,
                    "{app}: {} {} vs {inflow}",
                    p.name,
                    p.rate
                );
            }
            // And no more leaves it than enters (no Tee in these apps): a Queue's pull visit
            // is not a second crossing of the channel into it.
            for (i, p) in g.ppfs.iter().enumerate() {
                let outflow: f64 = g.out_ch[i].iter().map(|&k| g.channels[k].rate).sum();
                assert!(
                    outflow <= p.rate + 1e-9,
                    "{app}: {} rate {} but {outflow} leaves it",
                    p.name,
                    p.rate
                );
            }
            let heavy = g.ppfs.iter().filter(|p| p.rate > 0.5).count();
            assert!(
                heavy >= 3,
                "{app}: {:?}",
                g.ppfs.iter().map(|p| (&p.name, p.rate)).collect::<Vec<_>>()
            );
        }
    }
}
