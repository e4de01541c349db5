//! The driver of one router: feeds it the packets of a source, answers for the link neighbours
//! exactly as the functional run does (`pktflow_profile::run::Run`: an ARP reply to every ARP
//! request the application sends, and for applications with a rewriter a reply from the far end
//! to every second IP packet that leaves), and writes what leaves through each `ToDevice` to
//! `<out_dir>/<device>.pcap`.
//!
//! The same code drives the recording build and the fast build ([`crate::engine::Engine`]), so a
//! difference between their outputs can only come from the elements' two compilations.
use crate::engine::Engine;
use pktflow_model::cancel;
use pktflow_profile::neighbors::{arp_reply_into, ip_reply_due, ip_reply_into};
use pktflow_profile::run::{IterSource, PacketSource, MAX_CONFIG_SOURCE_PACKETS};
use pktflow_traffic::{Packet, TracePacket, TraceRef};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};

/// How a departed packet is handled, per sink element.
#[derive(Clone, Debug, Default)]
struct SinkInfo {
    /// Input interface of the same device (where neighbours' answers enter), if any.
    iface: Option<usize>,
    /// Index into the device writers, for ToDevice sinks when outputs are written.
    writer: Option<usize>,
}

/// The device pcaps, written as by `pktflow profile` (shared writer: `pktflow_traffic::devices`).
pub use pktflow_traffic::device_file_name;
use pktflow_traffic::DevicePcaps as DeviceOutputs;

/// Most buffers of injected neighbour answers kept for reuse.
const MAX_SPARE: usize = 64;

/// Drives one router. See the module documentation.
pub struct Driver<E: Engine> {
    pub engine: E,
    sinks: Vec<Option<SinkInfo>>,
    outputs: Option<DeviceOutputs>,
    pending: VecDeque<TracePacket>,
    /// Buffers of neighbour answers already injected, reused for the next ones.
    spare: Vec<TracePacket>,
    departed: Vec<(u32, Packet)>,
    /// Every k-th IP packet leaving is answered by its far end (0: never).
    pub reply_every: u64,
    /// IP departures a far end would answer, since its last answer.
    ip_departures: u64,
    from_source: bool,
    pub next_id: u64,
    last_ts: u64,
    /// Packets taken from the source.
    pub from_source_count: u64,
    pub neighbor_replies: u64,
    pub ip_replies: u64,
    pub source_limit_hit: bool,
}

impl<E: Engine> Driver<E> {
    /// `out_dir`: where ToDevice pcaps go (`None`: not written). `n_elements`: of the graph.
    /// `reply_every`: `None` for the functional run's default (2 with a rewriter, else 0).
    pub fn new(
        mut engine: E,
        graph: &pktflow_model::AppGraph,
        out_dir: Option<&Path>,
        reply_every: Option<u64>,
    ) -> Result<Self, String> {
        engine.set_tap(true);
        let mut sinks = vec![None; graph.elements.len()];
        let mut outputs = out_dir.map(DeviceOutputs::new);
        for (i, d) in graph.elements.iter().enumerate() {
            let Some(dev) = engine.device_of(i as u32) else {
                continue;
            };
            let mut info = SinkInfo {
                iface: engine.source_index_of_device(&dev),
                writer: None,
            };
            if d.class == "ToDevice" {
                if let Some(o) = outputs.as_mut() {
                    let k = o.open(&dev)?;
                    info.writer = Some(k);
                }
            }
            sinks[i] = Some(info);
        }
        let rewriter = graph
            .elements
            .iter()
            .any(|e| e.class == "IPRewriter" || e.class == "IPAddrRewriter");
        Ok(Driver {
            engine,
            sinks,
            outputs,
            pending: VecDeque::new(),
            spare: Vec::new(),
            departed: Vec::with_capacity(64),
            reply_every: reply_every.unwrap_or(if rewriter { 2 } else { 0 }),
            ip_departures: 0,
            from_source: true,
            next_id: 0,
            last_ts: 0,
            from_source_count: 0,
            neighbor_replies: 0,
            ip_replies: 0,
            source_limit_hit: false,
        })
    }

    fn after_packet(&mut self) -> Result<(), String> {
        self.engine.drain_departed(&mut self.departed);
        if self.departed.is_empty() {
            return Ok(());
        }
        let mut err = None;
        if self.departed.len() == 1 {
            // The common case, one packet left: no drain of the vector.
            if let Some((sink, p)) = self.departed.pop() {
                self.departure(sink, p, &mut err);
            }
        } else {
            let mut departed = std::mem::take(&mut self.departed);
            for (sink, p) in departed.drain(..) {
                self.departure(sink, p, &mut err);
            }
            self.departed = departed;
        }
        err.map_or(Ok(()), Err)
    }

    /// One packet that left through sink `sink`: written to its file, answered by the
    /// neighbour, then its buffer given back. The first write error is kept in `err`.
    #[inline]
    fn departure(&mut self, sink: u32, p: Packet, err: &mut Option<String>) {
        if let Some(Some(info)) = self.sinks.get(sink as usize) {
            if let (Some(k), Some(o)) = (info.writer, self.outputs.as_mut()) {
                if let Err(e) = o.write(k, &p) {
                    err.get_or_insert(e);
                }
            }
            if let Some(iface) = info.iface {
                if let Some(r) = self.answer(p.data(), iface as u16) {
                    self.pending.push_back(r);
                }
            }
        }
        self.engine.recycle(p);
    }

    /// The neighbour's answer to `frame`, leaving through the device of input interface
    /// `iface`, if it has one: an ARP reply to an ARP request, or the far end's reply to every
    /// `reply_every`-th IP packet of a source packet. Built in a spare buffer.
    #[inline]
    fn answer(&mut self, frame: &[u8], iface: u16) -> Option<TracePacket> {
        let ethertype = frame.get(12..14)?;
        if ethertype == [0x08, 0x06] {
            let mut r = self.spare.pop().unwrap_or_default();
            if arp_reply_into(frame, self.last_ts, iface, &mut r) {
                self.neighbor_replies += 1;
                return Some(r);
            }
            self.spare.push(r);
        } else if self.reply_every > 0 && self.from_source && ip_reply_due(frame) {
            // Every `reply_every`-th: counted since the last reply (no division per packet).
            self.ip_departures += 1;
            if self.ip_departures >= self.reply_every {
                self.ip_departures = 0;
                let mut r = self.spare.pop().unwrap_or_default();
                if ip_reply_into(frame, self.last_ts, iface, &mut r) {
                    self.ip_replies += 1;
                    return Some(r);
                }
                self.spare.push(r);
            }
        }
        None
    }

    /// Process one trace packet (`from_source`: it came from the source, not a neighbour).
    #[inline]
    pub fn process(&mut self, tp: &TraceRef<'_>, from_source: bool) -> Result<(), String> {
        self.from_source = from_source;
        if from_source {
            self.from_source_count += 1;
        }
        self.last_ts = tp.timestamp_ns;
        self.engine.inject_trace(tp, self.next_id)?;
        self.next_id += 1;
        self.after_packet()
    }

    /// Answers of the neighbours waiting to be injected, in order.
    pub fn process_pending(&mut self) -> Result<(), String> {
        while let Some(tp) = self.pending.pop_front() {
            if self.next_id.is_multiple_of(1024) {
                cancel::check().map_err(|c| c.to_string())?;
            }
            self.process(&tp.as_ref(), false)?;
            if self.spare.len() < MAX_SPARE {
                self.spare.push(tp);
            }
        }
        Ok(())
    }

    /// Run every packet of `packets`, each followed by the neighbours' answers it caused. Stops
    /// with the error `interrupted` on Ctrl-C (checked every 1,024 packets).
    pub fn run_stream(
        &mut self,
        packets: &mut dyn Iterator<Item = Result<TracePacket, String>>,
        tick: impl FnMut(u64),
    ) -> Result<(), String> {
        self.run_source(&mut IterSource(packets), tick)
    }

    /// [`Driver::run_stream`] taking each packet borrowed ([`PacketSource::next_ref`]): from a
    /// mapped trace file, or read into one reused buffer; a trace file's packets cost no
    /// allocation.
    pub fn run_source(
        &mut self,
        packets: &mut dyn PacketSource,
        mut tick: impl FnMut(u64),
    ) -> Result<(), String> {
        let mut tp = TracePacket::default();
        loop {
            if !self.pending.is_empty() {
                self.process_pending()?;
            }
            if self.next_id.is_multiple_of(1024) {
                cancel::check().map_err(|c| c.to_string())?;
                if self.next_id.is_multiple_of(65536) {
                    tick(self.next_id);
                }
            }
            let Some(r) = packets.next_ref(&mut tp)? else {
                break;
            };
            self.process(&r, true)?;
        }
        Ok(())
    }

    /// Run the configuration's own sources (FromDump, InfiniteSource), with the neighbours'
    /// answers injected before each next packet: to their end when they all end by themselves
    /// (FromDump reads its file), else up to [`MAX_CONFIG_SOURCE_PACKETS`].
    pub fn run_generators(&mut self) -> Result<(), String> {
        let capped = !self.engine.generators_finite();
        loop {
            self.process_pending()?;
            if self.next_id.is_multiple_of(1024) {
                cancel::check().map_err(|c| c.to_string())?;
            }
            if capped && self.from_source_count >= MAX_CONFIG_SOURCE_PACKETS {
                self.source_limit_hit = true;
                break;
            }
            if !self.generate_one()? {
                break;
            }
        }
        Ok(())
    }

    /// The next packet of the configuration's own sources, processed; false once they are
    /// exhausted or a stop was requested. The neighbours' answers it causes wait in
    /// [`Driver::take_pending`].
    #[inline]
    pub fn generate_one(&mut self) -> Result<bool, String> {
        if self.engine.stopped() || !self.engine.generate_next() {
            return Ok(false);
        }
        self.from_source = true;
        self.from_source_count += 1;
        self.next_id += 1;
        self.last_ts = self.engine.last_timestamp();
        self.after_packet()?;
        Ok(true)
    }

    /// Flush the outputs: the elements' files (ToDump) and the device pcaps. Returns the device
    /// pcaps written.
    pub fn finish(&mut self) -> Result<Vec<PathBuf>, String> {
        if let Err(e) = self.engine.finish() {
            if let Some(o) = self.outputs.take() {
                o.discard();
            }
            return Err(e);
        }
        match self.outputs.take() {
            Some(o) => o.finish(),
            None => Ok(Vec::new()),
        }
    }

    /// The next neighbour answer waiting to be injected (the caller injects it, here or on the
    /// thread that runs its source element).
    pub fn take_pending(&mut self) -> Option<TracePacket> {
        self.pending.pop_front()
    }

    /// Keep `tp`, an answer injected (here or on another thread), for building the next
    /// answers in, while fewer than `limit` are kept.
    #[inline]
    pub fn reuse_answer(&mut self, tp: TracePacket, limit: usize) {
        if self.spare.len() < limit {
            self.spare.push(tp);
        }
    }

    /// A kept answer buffer, to give back to the thread that built the answer it came with.
    #[inline]
    pub fn take_spare_answer(&mut self) -> Option<TracePacket> {
        self.spare.pop()
    }

    /// Whether the packet being processed descends from a source packet (not a neighbour's
    /// answer): the far ends answer only those.
    pub fn from_source(&self) -> bool {
        self.from_source
    }

    /// Remove the partial device pcaps (after an error or Ctrl-C).
    pub fn abandon(&mut self) {
        if let Some(o) = self.outputs.take() {
            o.discard();
        }
    }
}

impl Driver<crate::engine::Fast> {
    /// Process a packet handed over by another thread at input `port` of element `to`
    /// (element groups on threads), then what leaves through the sinks as for a trace packet.
    pub fn deliver(
        &mut self,
        to: u32,
        port: u16,
        p: Packet,
        from_source: bool,
    ) -> Result<(), String> {
        self.from_source = from_source;
        self.last_ts = p.anno.timestamp_ns;
        self.engine.0.deliver(to, port, p);
        self.after_packet()
    }
}

impl<E: Engine> Drop for Driver<E> {
    fn drop(&mut self) {
        self.abandon();
    }
}
