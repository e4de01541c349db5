//! Drive a functional run: an application, a packet source (pcap/pcapng file or seeded
//! synthetic trace shaped for the application), and a consumer of the per-packet traces.
use crate::app::{load_app, App};
use crate::costs::{CostOverride, CostTable};
use crate::hints::TrafficHints;
use crate::neighbors::{arp_reply_for, ip_reply_for};
use crate::profiler::Profiler;
use pktflow_elements::Router;
use pktflow_model::{cancel, PacketTrace};
use pktflow_traffic::{
    CaptureFormat, DevicePcaps, PrefixWeighting, TraceFileReader, TracePacket, TraceRef,
    LINKTYPE_ETHERNET,
};
use serde_json::json;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Instant;

/// Most packets a synthetic trace (profile, gen-trace) may have: about 360 GB of pcap, and
/// hours of functional run. Larger counts are refused before anything is generated.
pub const MAX_SYNTHETIC_PACKETS: u64 = 1_000_000_000;

/// Default number of synthetic packets when neither a trace nor a count is given.
pub const DEFAULT_SYNTHETIC_PACKETS: u64 = 10_000;

/// Most packets taken from a configuration's own sources (FromDump, InfiniteSource) in one
/// run: an InfiniteSource without LIMIT never ends by itself.
pub const MAX_CONFIG_SOURCE_PACKETS: u64 = 1_000_000;

/// How the packets of a trace file are assigned to the application's input interfaces (its
/// FromDevice/PollDevice elements, numbered 0, 1, ... in declaration order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InputPort {
    /// pcapng: each packet's interface id (a capture per interface); classic pcap, which
    /// records no interface: [`InputPort::ByDstMac`].
    #[default]
    Auto,
    /// Packet k enters interface k mod (number of interfaces).
    RoundRobin,
    /// The interface whose MAC address (from the configuration's ARPQuerier/ARPResponder) is
    /// the frame's destination; broadcast, multicast and unknown destinations fall back to
    /// [`InputPort::BySubnet`].
    ByDstMac,
    /// The interface whose connected subnet holds the packet's IPv4 source (the ARP sender
    /// address for ARP).
    BySubnet,
    /// Every packet enters this interface.
    Fixed(u16),
}

impl InputPort {
    /// From the command-line spelling: `auto`, `round-robin`, `by-dst-mac`, `by-subnet` or an
    /// interface number.
    pub fn parse(s: &str) -> Result<InputPort, String> {
        Ok(match s.trim() {
            "auto" => InputPort::Auto,
            "round-robin" => InputPort::RoundRobin,
            "by-dst-mac" => InputPort::ByDstMac,
            "by-subnet" => InputPort::BySubnet,
            t => InputPort::Fixed(t.parse::<u16>().map_err(|_| {
                format!("--input-port {t}: expected auto, round-robin, by-dst-mac, by-subnet or an interface number 0..65535")
            })?),
        })
    }

    pub fn name(&self) -> String {
        match self {
            InputPort::Auto => "auto".into(),
            InputPort::RoundRobin => "round-robin".into(),
            InputPort::ByDstMac => "by-dst-mac".into(),
            InputPort::BySubnet => "by-subnet".into(),
            InputPort::Fixed(n) => n.to_string(),
        }
    }
}

/// Where packets come from.
#[derive(Clone, Debug)]
pub enum Source {
    /// A pcap or pcapng file, and how its packets are assigned to input interfaces.
    Pcap {
        path: String,
        input_port: InputPort,
    },
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
    /// Nothing chosen: the configuration's own sources (FromDump, InfiniteSource, ...) if it
    /// has any, else [`DEFAULT_SYNTHETIC_PACKETS`] synthetic packets with `seed`.
    Auto {
        seed: u64,
    },
}

impl Source {
    /// From command-line style arguments (a trace file wins; nothing given: [`Source::Auto`]).
    pub fn from_args(trace: Option<&str>, synthetic: Option<u64>, seed: u64) -> Source {
        Source::from_args_with(trace, synthetic, seed, InputPort::Auto)
    }

    /// As [`Source::from_args`], with the input-port rule of a trace file.
    pub fn from_args_with(
        trace: Option<&str>,
        synthetic: Option<u64>,
        seed: u64,
        input_port: InputPort,
    ) -> Source {
        match (trace, synthetic) {
            (Some(t), _) => Source::Pcap {
                path: t.to_string(),
                input_port,
            },
            (None, Some(n)) => Source::Synthetic { packets: n, seed },
            (None, None) => Source::Auto { seed },
        }
    }

    /// Refuse counts that measure nothing or could not finish: 0 and above
    /// [`MAX_SYNTHETIC_PACKETS`].
    pub fn validate(&self) -> Result<(), String> {
        match self {
            Source::Synthetic { packets, .. } | Source::SyntheticWeighted { packets, .. } => {
                check_packet_count("--synthetic", *packets)
            }
            _ => Ok(()),
        }
    }

    pub fn describe(&self) -> String {
        match self {
            Source::Pcap { path, .. } => path.clone(),
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
            Source::Auto { seed } => {
                format!("{DEFAULT_SYNTHETIC_PACKETS} synthetic packets (seed {seed})")
            }
        }
    }
}

/// `what` (an option name) must be in 1..=[`MAX_SYNTHETIC_PACKETS`].
pub fn check_packet_count(what: &str, n: u64) -> Result<(), String> {
    if n == 0 {
        return Err(format!(
            "{what} must be at least 1 (0 packets measure nothing)"
        ));
    }
    if n > MAX_SYNTHETIC_PACKETS {
        return Err(format!(
            "{what} {n} is more than the limit of {MAX_SYNTHETIC_PACKETS} packets"
        ));
    }
    Ok(())
}

/// What the source delivered so far (shared between the packet iterator and the run).
#[derive(Clone, Debug, Default)]
pub struct SourceStats {
    /// Packets taken from the trace, the synthetic generator or the configuration's sources.
    pub packets: u64,
    /// Packets whose capture kept fewer bytes than they had on the wire (snap length).
    pub truncated: u64,
    /// The input-port rule applied (`interface-id`, `by-dst-mac`, ...), and why.
    pub rule: String,
    pub rule_reason: String,
    /// Packets the rule could not place (entered interface 0 instead).
    pub unassigned: u64,
    /// pcapng packets whose interface id is not an input of the application (they entered
    /// interface id mod the number of inputs).
    pub wrapped: u64,
    /// Packets per input interface.
    pub per_interface: Vec<u64>,
}

type Shared = Rc<RefCell<SourceStats>>;

/// Interface addresses for the input-port rules: (MAC, IPv4 address, prefix length).
type Ifaces = Vec<([u8; 6], [u8; 4], u8)>;

fn in_subnet(ip: [u8; 4], iface: &([u8; 6], [u8; 4], u8)) -> bool {
    let m = mask(iface.2);
    (u32::from_be_bytes(ip) & m) == (u32::from_be_bytes(iface.1) & m)
}

/// Source IPv4 address of an Ethernet frame (IPv4 source, or ARP sender address).
fn frame_src_ip(d: &[u8]) -> Option<[u8; 4]> {
    let et = u16::from_be_bytes([*d.get(12)?, *d.get(13)?]);
    let at = match et {
        0x0800 => 26,
        0x0806 => 28,
        _ => return None,
    };
    d.get(at..at + 4).map(|b| [b[0], b[1], b[2], b[3]])
}

fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(len.min(32)))
    }
}

fn by_subnet(d: &[u8], ifaces: &Ifaces) -> Option<usize> {
    let ip = frame_src_ip(d)?;
    ifaces.iter().position(|i| in_subnet(ip, i))
}

fn by_dst_mac(d: &[u8], ifaces: &Ifaces) -> Option<usize> {
    // An array, not a slice: six bytes compared inline, not through `memcmp`.
    let dst: [u8; 6] = *d.first_chunk::<6>()?;
    if dst[0] & 1 == 0 {
        if let Some(i) = ifaces.iter().position(|i| i.0 == dst) {
            return Some(i);
        }
    }
    by_subnet(d, ifaces)
}

/// Name of a link type for messages.
fn linktype_name(lt: u16) -> &'static str {
    match lt {
        0 => "BSD loopback",
        1 => "Ethernet",
        101 => "raw IP",
        105 => "IEEE 802.11",
        113 => "Linux cooked capture",
        127 => "802.11 radiotap",
        228 => "raw IPv4",
        229 => "raw IPv6",
        276 => "Linux cooked capture v2",
        _ => "unknown",
    }
}

/// The packets of a trace file with link types checked, truncation counted and input
/// interfaces assigned by the rule.
struct TraceFile {
    reader: TraceFileReader,
    place: Placer,
}

/// How a trace file's packets are given their input interface, and the count of them.
struct Placer {
    path: String,
    rule: InputPort,
    ifaces: Ifaces,
    n_inputs: usize,
    /// Where the packets are counted; `None` when nobody reads the counts (the runtime's
    /// source): the placement alone, nothing counted per packet.
    stats: Option<Shared>,
    k: u64,
}

/// A source of trace packets that can also read each packet into the caller's
/// [`TracePacket`], reusing its buffer ([`PacketSource::next_into`]): a trace file then
/// allocates nothing per packet once the buffer holds the largest one. Every source of
/// [`packet_source`] is one; [`IterSource`] makes one of any packet iterator.
pub trait PacketSource: Iterator<Item = Result<TracePacket, String>> {
    /// The next packet, borrowed: from the source's own storage (a mapped trace file) or read
    /// into `scratch` (its buffer reused); `Ok(None)` once the source is exhausted. Default:
    /// [`PacketSource::next_into`] `scratch`.
    fn next_ref<'a>(
        &'a mut self,
        scratch: &'a mut TracePacket,
    ) -> Result<Option<TraceRef<'a>>, String> {
        Ok(self.next_into(scratch)?.then(|| scratch.as_ref()))
    }

    /// Read the next packet into `tp`; `Ok(false)` once the source is exhausted. Default: the
    /// iterator's next packet moved into `tp`.
    fn next_into(&mut self, tp: &mut TracePacket) -> Result<bool, String> {
        match self.next() {
            None => Ok(false),
            Some(Ok(p)) => {
                *tp = p;
                Ok(true)
            }
            Some(Err(e)) => Err(e),
        }
    }
}

/// Any packet iterator as a [`PacketSource`] (packets moved, not read into a reused buffer).
pub struct IterSource<I>(pub I);

impl<I: Iterator<Item = Result<TracePacket, String>>> Iterator for IterSource<I> {
    type Item = Result<TracePacket, String>;
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
}

impl<I: Iterator<Item = Result<TracePacket, String>>> PacketSource for IterSource<I> {}

impl Iterator for TraceFile {
    type Item = Result<TracePacket, String>;
    fn next(&mut self) -> Option<Self::Item> {
        let mut tp = TracePacket::default();
        match self.next_into(&mut tp) {
            Ok(true) => Some(Ok(tp)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

impl Placer {
    /// Check the link type `lt` of a packet read, choose its input interface by the rule and
    /// count it; returns the interface.
    fn place(&mut self, lt: u16, iface: u16, data: &[u8], truncated: bool) -> Result<u16, String> {
        if lt != LINKTYPE_ETHERNET {
            return Err(format!(
                "{}: link type {lt} ({}) is not supported: the trace must hold Ethernet frames (link type 1)",
                self.path,
                linktype_name(lt)
            ));
        }
        let n = self.n_inputs.max(1);
        let placed = match self.rule {
            InputPort::Auto => Some(iface as usize),
            InputPort::RoundRobin => Some((self.k % n as u64) as usize),
            InputPort::ByDstMac => by_dst_mac(data, &self.ifaces),
            InputPort::BySubnet => by_subnet(data, &self.ifaces),
            InputPort::Fixed(i) => Some(i as usize),
        };
        self.k += 1;
        let iface = match placed {
            Some(i) if i < n => i,
            Some(i) => i % n,
            None => 0,
        };
        let Some(stats) = &self.stats else {
            return Ok(iface as u16);
        };
        let mut st = stats.borrow_mut();
        match placed {
            Some(i) if i >= n => st.wrapped += 1,
            None => st.unassigned += 1,
            Some(_) => {}
        }
        st.packets += 1;
        if truncated {
            st.truncated += 1;
        }
        if st.per_interface.len() < n {
            st.per_interface.resize(n, 0);
        }
        st.per_interface[iface] += 1;
        Ok(iface as u16)
    }
}

impl PacketSource for TraceFile {
    fn next_into(&mut self, tp: &mut TracePacket) -> Result<bool, String> {
        if !self.reader.read_into(tp).map_err(|e| e.to_string())? {
            return Ok(false);
        }
        let lt = self.reader.linktype(tp.iface).unwrap_or(LINKTYPE_ETHERNET);
        tp.iface = self
            .place
            .place(lt, tp.iface, &tp.data, tp.is_truncated())?;
        Ok(true)
    }

    /// A mapped file's packets are borrowed from the mapping, not copied.
    fn next_ref<'a>(
        &'a mut self,
        scratch: &'a mut TracePacket,
    ) -> Result<Option<TraceRef<'a>>, String> {
        // A mapped file is a classic pcap: one interface, whose link type is the header's.
        let Some(lt) = self
            .reader
            .is_mapped()
            .then(|| self.reader.linktype(0))
            .flatten()
        else {
            return Ok(self.next_into(scratch)?.then(|| scratch.as_ref()));
        };
        let Some(mut r) = self.reader.next_ref(scratch).map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        r.iface = self.place.place(lt, r.iface, r.data, r.is_truncated())?;
        Ok(Some(r))
    }
}

/// Counts synthetic packets into the shared statistics.
struct Counted<I> {
    inner: I,
    stats: Shared,
}

impl<I: Iterator<Item = TracePacket>> PacketSource for Counted<I> {}

impl<I: Iterator<Item = TracePacket>> Iterator for Counted<I> {
    type Item = Result<TracePacket, String>;
    fn next(&mut self) -> Option<Self::Item> {
        let tp = self.inner.next()?;
        let mut st = self.stats.borrow_mut();
        st.packets += 1;
        let i = tp.iface as usize;
        if st.per_interface.len() <= i {
            st.per_interface.resize(i + 1, 0);
        }
        st.per_interface[i] += 1;
        Some(Ok(tp))
    }
}

/// A running functional run: pulls packets from its source on demand (bounded memory).
pub struct Run {
    pub app: App,
    pub router: Router,
    /// `None`: the configuration's own sources (generators) feed the run.
    packets: Option<Box<dyn PacketSource>>,
    stats: Shared,
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
    /// The configuration's own sources were stopped at [`MAX_CONFIG_SOURCE_PACKETS`].
    pub source_limit_hit: bool,
    /// ARP requests the application sent (answered by the neighbours when they are on).
    pub arp_requests: u64,
    /// ARP replies the neighbours sent.
    pub neighbor_replies: u64,
    /// IP replies the far ends sent.
    pub ip_replies: u64,
    /// One pcap per ToDevice device, when asked ([`Run::write_devices`]).
    devices: Option<DevicePcaps>,
    /// Per element: its device pcap (an index into `devices`), for ToDevice elements.
    device_writer: Vec<Option<usize>>,
    /// The device pcaps written, once the run has finished.
    pub device_outputs: Vec<PathBuf>,
    /// Measured costs replacing the elements' estimates in every trace ([`Run::set_costs`]),
    /// and the rewritten trace handed out.
    costs: Option<CostOverride>,
    costed: PacketTrace,
}

/// The packet iterator of a source (not [`Source::Auto`] with generators), shaped for `app`
/// when synthetic; `n_inputs` is the number of input interfaces of the application.
fn packets_counted(
    app: &App,
    source: &Source,
    n_inputs: usize,
    counts: Option<&Shared>,
) -> Result<Box<dyn PacketSource>, String> {
    source.validate()?;
    // Not counted: the synthetic sources' counts go to a record nobody reads.
    let unread = Shared::default();
    let stats = counts.unwrap_or(&unread);
    let counted = |it: Box<dyn Iterator<Item = TracePacket>>| -> Box<dyn PacketSource> {
        Box::new(Counted {
            inner: it,
            stats: stats.clone(),
        })
    };
    Ok(match source {
        Source::Pcap { path, input_port } => {
            let r = TraceFileReader::open(Path::new(path)).map_err(|e| e.to_string())?;
            let hints = TrafficHints::from_graph(&app.graph, &app.base_dir)?;
            let ifaces: Ifaces = hints.interfaces[..hints.interfaces_known].to_vec();
            let classic = matches!(r.format(), CaptureFormat::Pcap { .. });
            let (rule, reason) = match (*input_port, classic) {
                (InputPort::Auto, false) => (InputPort::Auto, "pcapng records each packet's interface".to_string()),
                (InputPort::Auto, true) if n_inputs <= 1 => (
                    InputPort::Fixed(0),
                    "the application has one input interface".to_string(),
                ),
                (InputPort::Auto, true) if ifaces.is_empty() => (
                    InputPort::Fixed(0),
                    "classic pcap records no interface and the configuration states no interface addresses: every packet enters interface 0".to_string(),
                ),
                (InputPort::Auto, true) => (
                    InputPort::ByDstMac,
                    "classic pcap records no interface: by destination MAC (the default for pcap)".to_string(),
                ),
                (InputPort::Fixed(i), _) if i as usize >= n_inputs => {
                    return Err(format!(
                        "--input-port {i}: the application has {n_inputs} input interface(s), numbered from 0"
                    ))
                }
                (r, _) => (r, "chosen with --input-port".to_string()),
            };
            if matches!(rule, InputPort::ByDstMac | InputPort::BySubnet) && ifaces.is_empty() {
                return Err(format!(
                    "{path}: cannot assign packets {}: the configuration states no interface addresses (no ARPQuerier/ARPResponder); choose --input-port round-robin or an interface number",
                    rule.name()
                ));
            }
            {
                let mut st = stats.borrow_mut();
                st.rule = if rule == InputPort::Auto {
                    "interface-id".into()
                } else {
                    rule.name()
                };
                st.rule_reason = reason;
            }
            Box::new(TraceFile {
                reader: r,
                place: Placer {
                    path: path.clone(),
                    rule,
                    ifaces,
                    n_inputs,
                    stats: counts.cloned(),
                    k: 0,
                },
            })
        }
        Source::Synthetic { packets, seed } => {
            let hints = TrafficHints::from_graph(&app.graph, &app.base_dir)?;
            stats.borrow_mut().rule = "synthetic".into();
            counted(hints.generator(*packets, *seed)?)
        }
        Source::Auto { seed } => {
            let hints = TrafficHints::from_graph(&app.graph, &app.base_dir)?;
            stats.borrow_mut().rule = "synthetic".into();
            counted(hints.generator(DEFAULT_SYNTHETIC_PACKETS, *seed)?)
        }
        Source::SyntheticWeighted {
            packets,
            seed,
            dst_weighting,
        } => {
            let mut hints = TrafficHints::from_graph(&app.graph, &app.base_dir)?;
            hints.dst_weighting = Some(*dst_weighting);
            stats.borrow_mut().rule = "synthetic".into();
            counted(hints.generator(*packets, *seed)?)
        }
    })
}

/// The packet iterator of a source, shaped for `app` when synthetic (input interfaces of a
/// trace file assigned by its rule, as in a run).
pub fn packets(
    app: &App,
    source: &Source,
) -> Result<Box<dyn Iterator<Item = Result<TracePacket, String>>>, String> {
    Ok(packet_source(app, source)?)
}

/// [`packets`] as a [`PacketSource`], which can read a trace file's packets into a reused
/// buffer.
pub fn packet_source(app: &App, source: &Source) -> Result<Box<dyn PacketSource>, String> {
    let n_inputs = app
        .graph
        .elements
        .iter()
        .filter(|e| e.class == "FromDevice" || e.class == "PollDevice")
        .count();
    packets_counted(app, source, n_inputs, None)
}

impl Run {
    pub fn start(app: &str, source: &Source, out_dir: &Path) -> Result<Run, String> {
        source.validate()?;
        let app = load_app(app)?;
        let router = app.instantiate(out_dir)?;
        // No ToDump may replace the trace (the router itself refuses ToDump over FromDump).
        check_outputs(&router, source, out_dir, false, false)?;
        let stats: Shared = Rc::new(RefCell::new(SourceStats::default()));
        let packets = if router.n_generators() > 0 {
            if !matches!(source, Source::Auto { .. }) {
                return Err(format!(
                    "{}: the configuration reads its own packets ({}); run it without --trace or --synthetic",
                    app.graph.file,
                    router.generator_names().join(", ")
                ));
            }
            stats.borrow_mut().rule = "configuration".into();
            None
        } else {
            if router.n_sources() == 0 {
                return Err(format!(
                    "{}: the application has no packet source: no FromDevice/PollDevice to receive trace packets and no FromDump/InfiniteSource of its own",
                    app.graph.file
                ));
            }
            Some(packets_counted(
                &app,
                source,
                router.n_sources(),
                Some(&stats),
            )?)
        };
        let mut run = Run {
            app,
            router,
            packets,
            stats,
            pending: VecDeque::new(),
            neighbors: true,
            reply_every: 0,
            ip_departures: 0,
            from_source: true,
            next_id: 0,
            last_ts: 0,
            finished: false,
            source_limit_hit: false,
            arp_requests: 0,
            neighbor_replies: 0,
            ip_replies: 0,
            devices: None,
            device_writer: Vec::new(),
            device_outputs: Vec::new(),
            costs: None,
            costed: PacketTrace::default(),
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

    /// Replace the elements' estimated costs in every trace [`Run::next_trace`] returns by
    /// `table`'s (crate::costs): the one place measured costs enter the timing models.
    pub fn set_costs(&mut self, table: &CostTable) -> Result<(), String> {
        let names = self.app.graph.element_names();
        self.costs = Some(CostOverride::new(table, &names)?);
        Ok(())
    }

    /// The last packet's trace, with the measured costs when set.
    fn trace_out(&mut self) -> &PacketTrace {
        match self.costs.as_mut() {
            None => self.router.last_trace(),
            Some(o) => {
                self.costed.clone_from(self.router.last_trace());
                o.apply(&mut self.costed);
                &self.costed
            }
        }
    }

    /// Whether simulated link neighbours answer ARP requests (default on).
    pub fn set_neighbors(&mut self, on: bool) {
        self.neighbors = on;
    }

    /// Write what leaves through each `ToDevice(DEV)` to `dir/DEV.pcap`, exactly as `pktflow
    /// run` does (the shared writer `pktflow_traffic::DevicePcaps`: same names, format and
    /// timestamps; temporary files renamed when the run ends, removed if it fails). Call before
    /// the first packet.
    pub fn write_devices(&mut self, dir: &Path) -> Result<(), String> {
        let mut out = DevicePcaps::new(dir);
        let mut writer = vec![None; self.app.graph.elements.len()];
        for (i, d) in self.app.graph.elements.iter().enumerate() {
            if d.class != "ToDevice" {
                continue;
            }
            if let Some(dev) = self.router.element(i).device() {
                writer[i] = Some(out.open(dev)?);
            }
        }
        self.devices = Some(out);
        self.device_writer = writer;
        Ok(())
    }

    /// The end of the source: flush the elements' outputs, then rename the device pcaps.
    fn finish_outputs(&mut self) -> Result<(), String> {
        self.finished = true;
        if let Err(e) = self.router.finish() {
            if let Some(o) = self.devices.take() {
                o.discard();
            }
            return Err(e);
        }
        if let Some(o) = self.devices.take() {
            self.device_outputs = o.finish()?;
        }
        Ok(())
    }

    /// What the source delivered so far.
    pub fn source_stats(&self) -> SourceStats {
        self.stats.borrow().clone()
    }

    /// The packets that left: to their device pcaps (when written), then the neighbours'
    /// answers (when `answer`).
    fn departures(&mut self, answer: bool) -> Result<(), String> {
        let mut replies = Vec::new();
        let mut err = None;
        for (sink, p) in self.router.take_departed() {
            if let (Some(out), Some(Some(k))) =
                (self.devices.as_mut(), self.device_writer.get(sink as usize))
            {
                if let Err(e) = out.write(*k, &p) {
                    err.get_or_insert(e);
                }
            }
            if !self.neighbors || !answer {
                continue;
            }
            replies.push((sink, p));
        }
        if let Some(e) = err {
            return Err(e);
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
                self.arp_requests += 1;
                self.neighbor_replies += 1;
                self.pending.push_back(r);
            } else if self.reply_every > 0 && self.from_source {
                if let Some(r) = ip_reply_for(p.data(), self.last_ts, iface as u16) {
                    self.ip_departures += 1;
                    if self.ip_departures.is_multiple_of(self.reply_every) {
                        self.ip_replies += 1;
                        self.pending.push_back(r);
                    }
                }
            }
        }
        Ok(())
    }

    /// The trace of the next packet, or `None` at the end of the source (outputs are then
    /// flushed). Returns the error `interrupted` once the user has asked to stop
    /// (`pktflow_model::cancel`), checked every 1,024 packets; outputs are then not flushed
    /// (ToDump files are removed, not left half-written).
    pub fn next_trace(&mut self) -> Result<Option<&PacketTrace>, String> {
        if self.finished {
            return Ok(None);
        }
        if self.next_id.is_multiple_of(1024) {
            cancel::check().map_err(|c| c.to_string())?;
        }
        let Some(packets) = self.packets.as_mut() else {
            return self.next_generated();
        };
        let next = match self.pending.pop_front() {
            Some(tp) => {
                self.from_source = false;
                Some(Ok(tp))
            }
            None => {
                self.from_source = true;
                packets.next()
            }
        };
        match next {
            Some(tp) => {
                let tp = tp?;
                self.last_ts = tp.timestamp_ns;
                let p = tp.to_packet(self.next_id);
                self.next_id += 1;
                self.router.inject(tp.iface as usize, p)?;
                self.departures(true)?;
                Ok(Some(self.trace_out()))
            }
            None => {
                self.finish_outputs()?;
                Ok(None)
            }
        }
    }

    /// Generator mode: pending neighbour answers first, then the configuration's sources.
    fn next_generated(&mut self) -> Result<Option<&PacketTrace>, String> {
        if let Some(tp) = self.pending.pop_front() {
            self.from_source = false;
            self.last_ts = tp.timestamp_ns;
            let p = tp.to_packet(self.next_id);
            self.next_id += 1;
            self.router.inject(tp.iface as usize, p)?;
            self.departures(true)?;
            return Ok(Some(self.trace_out()));
        }
        self.from_source = true;
        let limit_hit = self.stats.borrow().packets >= MAX_CONFIG_SOURCE_PACKETS;
        let got = if limit_hit {
            self.source_limit_hit = true;
            false
        } else {
            self.router.generate_next().is_some()
        };
        if !got {
            self.finish_outputs()?;
            return Ok(None);
        }
        self.stats.borrow_mut().packets += 1;
        self.next_id += 1;
        self.last_ts = self.router.last_trace().timestamp_ns;
        let answer = self.router.n_sources() > 0;
        self.departures(answer)?;
        Ok(Some(self.trace_out()))
    }
}

/// Before a run: no output may replace an input or another output, and, when the user named
/// the output folder (`confine`: `--out-dir`), every ToDump file must stay inside it.
///
/// Outputs are the ToDump files and, with `devices`, one pcap per ToDevice device in `out_dir`;
/// inputs are the trace file and the files elements read (FromDump, routing tables). Files are
/// compared by identity (`pktflow_traffic::outfile`). One line naming the element or option.
pub fn check_outputs(
    router: &Router,
    source: &Source,
    out_dir: &Path,
    devices: bool,
    confine: bool,
) -> Result<(), String> {
    use pktflow_traffic::outfile::{check_collisions, escapes};
    let file = &router.graph.file;
    let mut inputs: Vec<(String, PathBuf)> = Vec::new();
    if let Source::Pcap { path, .. } = source {
        inputs.push((format!("--trace {path}"), PathBuf::from(path)));
    }
    let mut outputs: Vec<(String, PathBuf)> = Vec::new();
    for (elem, output, name, path) in router.files() {
        if !output {
            inputs.push((format!("'{elem}'"), path));
            continue;
        }
        if confine && escapes(Path::new(&name)) {
            return Err(format!(
                "{file}: '{elem}' writes {name}, outside --out-dir {}: name a file inside that folder, or run without --out-dir to write where the configuration says",
                out_dir.display()
            ));
        }
        outputs.push((format!("{file}: '{elem}'"), path));
    }
    if devices {
        let mut seen: Vec<String> = Vec::new();
        for i in 0..router.graph.elements.len() {
            if router.graph.elements[i].class != "ToDevice" {
                continue;
            }
            if let Some(dev) = router.element(i).device() {
                if seen.iter().any(|d| d == dev) {
                    continue;
                }
                seen.push(dev.to_string());
                let path = out_dir.join(pktflow_traffic::device_file_name(dev));
                outputs.push((format!("the pcap of device {dev} (ToDevice)"), path));
            }
        }
    }
    check_collisions(&inputs, &outputs)
}

/// Run `app` on `source` and return the profile report as JSON. `tick(done)` is called every
/// 10,000 packets. Stops with the error `interrupted` when `pktflow_model::cancel` is raised.
pub fn profile(
    app: &str,
    source: &Source,
    out_dir: &Path,
    tick: impl FnMut(u64),
) -> Result<serde_json::Value, String> {
    profile_with(app, source, out_dir, false, tick)
}

/// [`profile`], and with `devices` also one pcap per ToDevice device in `out_dir`
/// ([`Run::write_devices`]: the files `pktflow run` writes). The report lists the device pcaps
/// written under `"device_outputs"`.
pub fn profile_with(
    app: &str,
    source: &Source,
    out_dir: &Path,
    devices: bool,
    mut tick: impl FnMut(u64),
) -> Result<serde_json::Value, String> {
    let mut run = Run::start(app, source, out_dir)?;
    check_outputs(&run.router, source, out_dir, devices, devices)?;
    if devices {
        run.write_devices(out_dir)?;
    }
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
        if n.is_multiple_of(10_000) {
            tick(n);
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
    let st = run.source_stats();
    let mut notes: Vec<String> = Vec::new();
    let o = doc.as_object_mut().expect("object");
    o.insert("app".into(), json!(run.app.name));
    o.insert("file".into(), json!(run.app.graph.file));
    o.insert(
        "source".into(),
        json!(match st.rule.as_str() {
            "configuration" => format!(
                "the configuration's own sources ({})",
                run.router.generator_names().join(", ")
            ),
            _ => source.describe(),
        }),
    );
    o.insert("held".into(), json!(held));
    o.insert(
        "packet_counts".into(),
        json!({
            "from_source": st.packets,
            "neighbor_arp_replies": run.neighbor_replies,
            "far_end_ip_replies": run.ip_replies,
            "total": n,
            "arp_requests_sent": run.arp_requests,
        }),
    );
    o.insert("neighbor_arp_replies".into(), json!(run.neighbor_replies));
    o.insert("far_end_ip_replies".into(), json!(run.ip_replies));
    o.insert("truncated_packets".into(), json!(st.truncated));
    let mut input = json!({
        "rule": st.rule,
        "per_interface": st.per_interface,
    });
    if !st.rule_reason.is_empty() {
        input["reason"] = json!(st.rule_reason);
    }
    // The trace cannot tell which interface a packet arrived on: say which rule decided.
    if st.rule_reason.starts_with("classic pcap") {
        input["warning"] = json!(format!("{}: {}", source.describe(), st.rule_reason));
    }
    if matches!(source, Source::Pcap { .. }) {
        input["unassigned"] = json!(st.unassigned);
        if st.unassigned > 0 {
            notes.push(format!(
                "{} of {} trace packets matched no interface by {}; they entered interface 0",
                st.unassigned, st.packets, st.rule
            ));
        }
    }
    if st.wrapped > 0 {
        notes.push(format!(
            "{} of {} trace packets came from an interface the application does not have (it has {}); they entered interface id mod {}",
            st.wrapped,
            st.packets,
            run.router.n_sources(),
            run.router.n_sources()
        ));
    }
    o.insert("input_port".into(), input);
    if st.truncated > 0 {
        notes.push(format!(
            "{} of {} packets were truncated by the capture's snap length; wire bytes use their original length",
            st.truncated, st.packets
        ));
    }
    if run.source_limit_hit {
        notes.push(format!(
            "the configuration's sources were stopped after {MAX_CONFIG_SOURCE_PACKETS} packets"
        ));
    }
    o.insert(
        "conservation_errors".into(),
        json!(run.router.conservation_errors),
    );
    o.insert("functional_run_seconds".into(), json!(secs));
    if n == 0 {
        // Nothing was measured: per-packet figures do not exist.
        for k in [
            "wire_bytes_per_packet",
            "elements_visited_per_packet",
            "instructions_per_packet",
            "bytes_per_packet",
            "critical_section_instruction_share",
            "shared_state_visit_instruction_share",
        ] {
            o.insert(k.into(), serde_json::Value::Null);
        }
        o.insert(
            "packets_per_second_functional".into(),
            serde_json::Value::Null,
        );
        notes.push("the source holds no packets: nothing was measured".into());
    } else {
        o.insert(
            "packets_per_second_functional".into(),
            json!(if secs > 0.0 {
                Some(n as f64 / secs)
            } else {
                None
            }),
        );
    }
    o.insert("element_stats".into(), run.router.stats());
    o.insert(
        "device_outputs".into(),
        json!(run
            .device_outputs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()),
    );
    // Every file the run wrote, where it went: ToDump files, then device pcaps.
    let mut written: Vec<String> = run
        .router
        .files()
        .into_iter()
        .filter(|f| f.1)
        .map(|f| f.3.display().to_string())
        .collect();
    written.extend(run.device_outputs.iter().map(|p| p.display().to_string()));
    o.insert("files_written".into(), json!(written));
    o.insert("notes".into(), json!(notes));
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

/// Bytes of a capture file of `n` packets of mean size `mean` (record headers included).
fn capture_bytes(n: u64, mean: f64, pcapng: bool) -> u64 {
    let (file, per_record) = if pcapng {
        // Section header + interface description; enhanced packet block header, padding.
        (28.0 + 20.0, 32.0 + 2.0)
    } else {
        (24.0, 16.0)
    };
    (file + n as f64 * (mean + per_record)).ceil() as u64
}

/// Free bytes of the file system holding `dir` (None if it cannot be told).
pub fn free_space(dir: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()).ok()?;
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a properly sized out-parameter.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Options of [`write_synthetic_with`] besides the trace itself.
pub struct WriteOptions<'a> {
    /// Free bytes of the target file system (default: [`free_space`]); a test can pretend.
    pub free_space: &'a dyn Fn(&Path) -> Option<u64>,
    /// Called with (packets written, total) about every 10,000 packets.
    pub tick: &'a mut dyn FnMut(u64, u64),
}

/// Write `n` synthetic packets shaped for `app` to `path` (pcap, or pcapng).
pub fn write_synthetic(
    path: &str,
    n: u64,
    seed: u64,
    app: &str,
    pcapng: bool,
) -> Result<serde_json::Value, String> {
    write_synthetic_with(
        path,
        n,
        seed,
        app,
        pcapng,
        WriteOptions {
            free_space: &free_space,
            tick: &mut |_, _| {},
        },
    )
}

/// [`write_synthetic`] with a progress callback and a free-space oracle. The size is estimated
/// from the first packets before anything is written and refused when it exceeds the free
/// space; the file is written to a hidden temporary file beside `path` and renamed on success
/// (removed on error or Ctrl-C, which is checked every 1,024 packets).
pub fn write_synthetic_with(
    path: &str,
    n: u64,
    seed: u64,
    app: &str,
    pcapng: bool,
    opts: WriteOptions<'_>,
) -> Result<serde_json::Value, String> {
    check_packet_count("-n/--packets", n)?;
    let app = load_app(app)?;
    let hints = TrafficHints::from_graph(&app.graph, &app.base_dir)?;
    let target = Path::new(path);
    if target.is_dir() {
        return Err(format!("{path}: is a directory, expected a file name"));
    }
    let dir = match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    if !dir.is_dir() {
        return Err(format!("{path}: folder {} does not exist", dir.display()));
    }
    // Estimate from a sample of the same seeded stream (the generator is deterministic).
    let sample = n.min(2_000);
    let sample_bytes: u64 = hints
        .generator(sample, seed)?
        .map(|tp| tp.data.len() as u64)
        .sum();
    let estimate = capture_bytes(n, sample_bytes as f64 / sample as f64, pcapng);
    // A device or FIFO (`/dev/null`) is written through: the folder's free space is not its.
    let direct = std::fs::metadata(target).is_ok_and(|m| !m.is_file());
    if let Some(free) = (opts.free_space)(&dir).filter(|_| !direct) {
        if estimate > free {
            return Err(format!(
                "{path}: {n} packets need about {} but the file system has {} free",
                human_bytes(estimate),
                human_bytes(free)
            ));
        }
    }
    // Written through `Output`: a temporary file renamed onto a regular file (removed on an
    // error or Ctrl-C), or straight into a device or FIFO; a symbolic link is written through.
    let mut out = pktflow_traffic::Output::plan(target)?;
    let open = |out: &pktflow_traffic::Output| {
        out.open()
            .map(|f| std::io::BufWriter::with_capacity(1 << 16, f))
            .map_err(|e| format!("{}: {e}", out.writing().display()))
    };
    let mut bytes = 0u64;
    let mut count = 0u64;
    let tick = opts.tick;
    let mut each = |tp: &TracePacket, count: &mut u64, bytes: &mut u64| -> Result<(), String> {
        *bytes += tp.data.len() as u64;
        *count += 1;
        if count.is_multiple_of(1024) {
            cancel::check().map_err(|c| c.to_string())?;
        }
        if count.is_multiple_of(10_000) {
            tick(*count, n);
        }
        Ok(())
    };
    if pcapng {
        let opts = pktflow_traffic::PcapngOptions {
            linktype: 1,
            ..Default::default()
        };
        let mut w = pktflow_traffic::PcapngWriter::new(open(&out)?, path, opts)
            .map_err(|e| e.to_string())?;
        for tp in hints.generator(n, seed)? {
            each(&tp, &mut count, &mut bytes)?;
            w.write(&tp).map_err(|e| e.to_string())?;
        }
        w.finish().map_err(|e| e.to_string())?;
    } else {
        let opts = pktflow_traffic::PcapOptions {
            linktype: 1,
            ..Default::default()
        };
        let mut w =
            pktflow_traffic::PcapWriter::new(open(&out)?, path, opts).map_err(|e| e.to_string())?;
        for tp in hints.generator(n, seed)? {
            each(&tp, &mut count, &mut bytes)?;
            w.write(&tp).map_err(|e| e.to_string())?;
        }
        w.finish().map_err(|e| e.to_string())?;
    }
    out.commit()?;
    Ok(json!({
        "path": path,
        "packets": count,
        "bytes": bytes,
        "seed": seed,
        "app": app.name,
        "estimated_file_bytes": estimate,
    }))
}

/// `1234567` -> `1.2 MB` (decimal units).
pub fn human_bytes(b: u64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut v = b as f64;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < units.len() {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{b} B")
    } else {
        format!("{v:.1} {}", units[u])
    }
}
