//! `FromDump(FILENAME [, STOP, TIMING, SAMPLE, FORCE_IP, START_AFTER, END_AFTER, ACTIVE, ...])`
//! — emits the packets of a pcap or pcapng file (read with `pktflow_traffic::TraceFileReader`:
//! a classic pcap file is memory-mapped, as Click's FromDump maps it by default, so a packet's
//! bytes are copied once, into the packet; a pcapng file is streamed. The file must not be
//! shortened while it is read).
//!
//! A generator: no inputs, 1 push output; the runtime takes packets from it with
//! `Router::run_generators` (its packet limit bounds the run). FILENAME is resolved against
//! the configuration's folder and opened (header checked) at configuration time.
//! Timestamps are made relative to the first packet of the file (the annotation counts from
//! the start of the trace), so flow timeouts downstream follow the capture's clock. The
//! input-port annotation is the pcapng interface. For Ethernet (link type 1) and raw-IP
//! (101) captures, IPv4 packets get their IP header annotation set. With FORCE_IP true only
//! IPv4 packets are emitted (others are skipped and counted). START_AFTER / END_AFTER (times
//! relative to the first packet, Click's time syntax) skip the beginning / stop early.
//! STOP, TIMING, MMAP, FILEPOS and END_CALL are accepted without effect (a run always ends
//! when the file does; TIMING is the timing models' business); SAMPLE must be 1. Click's
//! second output for non-IP packets is not provided. A read error (truncated or corrupt file)
//! ends the packets and is reported, with the byte offset, by `Router::finish`.
//!
//! Costs: the runtime's source visit (4 instructions, 16 B meta-data write).
use crate::conf::{parse_bool, unquote, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Role};
use crate::elements::nat::flow::parse_seconds;
use crate::registry::ClassInfo;
use pktflow_traffic::{Packet, TraceFileReader, TracePacket, LINKTYPE_ETHERNET, LINKTYPE_RAW};

pub const CLASS: ClassInfo = ClassInfo {
    name: "FromDump",
    summary: "emit the packets of a pcap/pcapng file",
    make,
};

struct FromDump {
    file: String,
    reader: Option<TraceFileReader>,
    force_ip: bool,
    active: bool,
    start_after_ns: u64,
    end_after_ns: Option<u64>,
    first_ts: Option<u64>,
    count: u64,
    skipped: u64,
    error: Option<String>,
    /// Each record is read into this one (its buffer reused), then copied into the packet.
    scratch: TracePacket,
}

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let kws = [
        "FILENAME",
        "STOP",
        "TIMING",
        "SAMPLE",
        "FORCE_IP",
        "START",
        "START_AFTER",
        "END",
        "END_AFTER",
        "INTERVAL",
        "END_CALL",
        "FILEPOS",
        "MMAP",
        "ACTIVE",
    ];
    let mut a = Args::parse("FromDump", config, &kws);
    let err = |e: String| format!("FromDump: {e}");
    let file = unquote(
        &a.keyword_or_positional("FILENAME")
            .ok_or("FromDump: missing argument FILENAME")?,
    );
    let flag = |a: &mut Args, k: &str, d: bool| -> Result<bool, String> {
        match a.keyword(k) {
            Some(s) => parse_bool(&s).map_err(|e| err(format!("{k}: {e}"))),
            None => Ok(d),
        }
    };
    flag(&mut a, "STOP", false)?;
    flag(&mut a, "TIMING", false)?;
    flag(&mut a, "MMAP", true)?;
    let force_ip = flag(&mut a, "FORCE_IP", false)?;
    let active = flag(&mut a, "ACTIVE", true)?;
    if let Some(s) = a.keyword("SAMPLE") {
        if s.trim().parse::<f64>().ok() != Some(1.0) {
            return Err(err(format!(
                "SAMPLE {s}: sampling is not supported (only SAMPLE 1)"
            )));
        }
    }
    for k in ["START", "END", "INTERVAL"] {
        if a.keyword(k).is_some() {
            return Err(err(format!(
                "{k} is not supported (use START_AFTER / END_AFTER, relative to the first packet)"
            )));
        }
    }
    a.keyword("END_CALL");
    a.keyword("FILEPOS");
    let start_after_ns = match a.keyword("START_AFTER") {
        Some(s) => parse_seconds(&s).map_err(|e| err(format!("START_AFTER: {e}")))?,
        None => 0,
    };
    let end_after_ns = match a.keyword("END_AFTER") {
        Some(s) => Some(parse_seconds(&s).map_err(|e| err(format!("END_AFTER: {e}")))?),
        None => None,
    };
    a.finish()?;
    let path = env.resolve_input(&file);
    let reader = TraceFileReader::open(&path).map_err(|e| err(e.to_string()))?;
    Ok(Box::new(FromDump {
        file: path.display().to_string(),
        reader: Some(reader),
        force_ip,
        active,
        start_after_ns,
        end_after_ns,
        first_ts: None,
        count: 0,
        skipped: 0,
        error: None,
        scratch: TracePacket::default(),
    }))
}

/// Offset of an IPv4 header in a frame of link type `lt`, if it is an IPv4 packet.
fn ipv4_offset(lt: Option<u16>, d: &[u8]) -> Option<usize> {
    let off = match lt? {
        LINKTYPE_ETHERNET if d.len() >= 14 && d[12] == 0x08 && d[13] == 0x00 => 14,
        LINKTYPE_RAW => 0,
        _ => return None,
    };
    let h = d.get(off..)?;
    (h.len() >= 20 && h[0] >> 4 == 4 && (h[0] & 0x0f) >= 5).then_some(off)
}

impl Element for FromDump {
    fn ports(&self) -> Ports {
        Ports::push(0, 1)
    }
    fn role(&self) -> Role {
        Role::Generator
    }
    fn finite_source(&self) -> bool {
        true
    }
    fn generate(&mut self, cx: &mut Cx) -> Option<Packet> {
        if !self.active {
            return None;
        }
        loop {
            let r = self.reader.as_mut()?;
            let (tp, lt) = match r.next_with_linktype(&mut self.scratch) {
                Ok(Some(x)) => x,
                Ok(None) => {
                    self.reader = None;
                    return None;
                }
                Err(e) => {
                    self.error = Some(e.to_string());
                    self.reader = None;
                    return None;
                }
            };
            let t0 = *self.first_ts.get_or_insert(tp.timestamp_ns);
            let rel = tp.timestamp_ns.saturating_sub(t0);
            if self.end_after_ns.is_some_and(|e| rel > e) {
                self.reader = None;
                return None;
            }
            let ipoff = ipv4_offset(lt, tp.data);
            if rel < self.start_after_ns || (self.force_ip && ipoff.is_none()) {
                self.skipped += 1;
                continue;
            }
            let mut p = cx.packet_from(tp.data);
            tp.annotate(&mut p, self.count);
            p.anno.timestamp_ns = rel;
            if let Some(off) = ipoff {
                let hl = ((tp.data[off] & 0x0f) as usize) * 4;
                p.set_ip_header(off, hl);
            }
            self.count += 1;
            return Some(p);
        }
    }
    fn finish(&mut self) -> Result<(), String> {
        match &self.error {
            Some(e) => Err(format!("reading {}: {e}", self.file)),
            None => Ok(()),
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count, "skipped": self.skipped, "file": self.file})
    }
    fn code_size(&self) -> u32 {
        120
    }
}
