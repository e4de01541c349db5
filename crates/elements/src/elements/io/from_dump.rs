//! `FromDump(FILENAME [, STOP, TIMING, SAMPLE, FORCE_IP, START_AFTER, END_AFTER, ACTIVE, ...])`
//! — emits the packets of a pcap or pcapng file (read with `pktflow_traffic::TraceFileReader`:
//! a classic pcap file is memory-mapped, as Click's FromDump maps it by default, so a packet's
//! bytes are copied once, into the packet; a pcapng file is streamed. The file must not be
//! shortened while it is read).
//!
//! A generator: no inputs, 1 push output; the runtime takes packets from it with
//! `Router::run_generators` (its packet limit bounds the run). FILENAME is resolved against
//! the configuration's folder and opened (header checked) at configuration time.
//! Each packet's timestamp annotation is its record's own timestamp, as in Click
//! (fromdump.cc: the packet is made with the record's seconds and subseconds), so
//! `FromDump(a.pcap) -> ToDump(b.pcap)` copies the record headers. The simulated clock
//! (`Cx::now_ns`) is the annotation of the packet being processed, as for `--trace` packets,
//! so flow timeouts downstream follow the capture's clock; only START_AFTER / END_AFTER count
//! from the first packet. The input-port annotation is the pcapng interface. For Ethernet
//! (link type 1) and raw-IP (101) captures, IPv4 packets get their IP header annotation set.
//! With FORCE_IP true only IP packets as Click's FORCE_IP defines them are emitted (IPv4 with
//! its whole header in the record, IPv6, also behind an 802.1Q tag; others are skipped and
//! counted), IPv4 ones with their destination address annotation set. START_AFTER / END_AFTER (times
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

/// Click's FORCE_IP test (fakepcap.cc, `fake_pcap_force_ip`) for Ethernet and raw-IP
/// captures: the frame's network header follows an Ethernet header of type IPv4 or IPv6 (or an
/// 802.1Q tag of one of them), or starts the record (raw IP); an IPv4 header counts when its
/// header length is at least 5 words and within the record, an IPv6 header when its 40 bytes
/// are. `Some(Some(off))`: IPv4 at `off`; `Some(None)`: IPv6; `None`: not IP (skipped).
fn force_ip(lt: Option<u16>, d: &[u8]) -> Option<Option<usize>> {
    let is_ip = |t: &[u8]| t == [0x08, 0x00] || t == [0x86, 0xdd];
    let off = match lt? {
        LINKTYPE_RAW => 0,
        LINKTYPE_ETHERNET if d.len() >= 14 && is_ip(&d[12..14]) => 14,
        LINKTYPE_ETHERNET if d.len() >= 18 && d[12..14] == [0x81, 0x00] && is_ip(&d[16..18]) => 18,
        _ => return None,
    };
    let h = d.get(off..).filter(|h| !h.is_empty())?;
    match h[0] >> 4 {
        4 => {
            let hl = ((h[0] & 0x0f) as usize) * 4;
            (hl >= 20 && hl <= h.len()).then_some(Some(off))
        }
        6 => (h.len() >= 40).then_some(None),
        _ => None,
    }
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
            let forced = if self.force_ip {
                match force_ip(lt, tp.data) {
                    Some(f) => Some(f),
                    None => {
                        self.skipped += 1;
                        continue;
                    }
                }
            } else {
                None
            };
            if rel < self.start_after_ns {
                self.skipped += 1;
                continue;
            }
            let mut p = cx.packet_from(tp.data);
            // The record's own timestamp (and, for a truncated record, its wire length).
            tp.annotate(&mut p, self.count);
            if let Some(off) = ipoff {
                let hl = ((tp.data[off] & 0x0f) as usize) * 4;
                p.set_ip_header(off, hl);
            }
            // FORCE_IP also sets the destination address annotation, as Click does.
            if let Some(Some(off)) = forced {
                p.anno.dst_ip.copy_from_slice(&tp.data[off + 16..off + 20]);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn eth(etype: [u8; 2], ip: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 12];
        f.extend_from_slice(&etype);
        f.extend_from_slice(ip);
        f
    }

    /// FORCE_IP as Click's `fake_pcap_force_ip`: IPv6 and 802.1Q-tagged IP pass, an IPv4
    /// header longer than the record does not.
    #[test]
    fn force_ip_follows_click() {
        let mut v4 = vec![0x45u8; 20];
        v4[16..20].copy_from_slice(&[10, 0, 0, 1]);
        let eth_lt = Some(LINKTYPE_ETHERNET);
        assert_eq!(force_ip(eth_lt, &eth([0x08, 0x00], &v4)), Some(Some(14)));
        assert_eq!(
            force_ip(eth_lt, &eth([0x86, 0xdd], &[0x60; 40])),
            Some(None)
        );
        assert_eq!(force_ip(eth_lt, &eth([0x86, 0xdd], &[0x60; 39])), None);
        let mut tagged = vec![0x81, 0x00, 0x00, 0x05, 0x08, 0x00];
        tagged.extend_from_slice(&v4);
        assert_eq!(
            force_ip(eth_lt, &eth([0x81, 0x00], &tagged[2..])),
            Some(Some(18))
        );
        let mut long_hl = v4.clone();
        long_hl[0] = 0x46; // a 24-byte header in 20 bytes
        assert_eq!(force_ip(eth_lt, &eth([0x08, 0x00], &long_hl)), None);
        assert_eq!(force_ip(eth_lt, &eth([0x08, 0x06], &v4)), None);
        assert_eq!(force_ip(Some(LINKTYPE_RAW), &v4), Some(Some(0)));
        assert_eq!(force_ip(Some(LINKTYPE_RAW), &[0x44; 20]), None);
    }
}
