//! `IPRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])` — network address/port translation
//! (NAPT) of TCP and UDP flows, with a per-flow mapping table covering both directions.
//!
//! A packet is first looked up in the mapping table by its flow id (saddr, sport, daddr,
//! dport, protocol). A hit on a forward entry rewrites it to the mapping's new flow id and
//! sends it to the mapping's FOUTPUT; a hit on a reply entry (keyed by the reversed rewritten
//! flow id) rewrites it back to look like part of the original flow and sends it to ROUTPUT.
//! On a miss, the INPUTSPEC of the input port decides (see [`super::pattern`]): `drop`
//! (reason `no mapping`), `pass OUTPUT` (unchanged, no mapping), `keep FOUTPUT ROUTPUT`
//! (mapping that keeps the flow id), `pattern SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT` or
//! `pattern NAME FOUTPUT ROUTPUT` (a pattern of an IPRewriterPatterns element). Fields `-` are
//! kept; SPORT may be a range `L-H` (allocation rules in [`super::pattern`]; no free port:
//! drop, reason `no free port`). A `keep` mapping or a pattern without a range never fails:
//! as in Click 2.1 (elements/ip/iprewriterbase.cc, store_flow), when its reply flow id is
//! already held by another mapping, that mapping is removed (statistic `evicted`) and the new
//! one takes its place.
//!
//! Ports: one push input per INPUTSPEC; outputs 0..=the largest output an INPUTSPEC names.
//! Input packets need the IP header annotation. Only TCP and UDP first fragments with at
//! least 8 bytes after the IP header are translated (a TCP header shorter than 18 bytes gets
//! its addresses rewritten and keeps its ports, as in Click); other protocols (ICMP included:
//! ICMPPingRewriter translates pings and ICMPRewriter the ICMP errors about this rewriter's
//! flows), later fragments and shorter packets are dropped (`not TCP/UDP`, `fragment`,
//! `truncated TCP/UDP header`) unless they arrive on a `pass` input.
//! Checksums (IP and TCP/UDP) are updated incrementally (RFC 1624); a zero UDP checksum stays
//! zero. With DST_ANNO (default true) the destination address annotation is set to the new
//! destination.
//!
//! Timeouts (Click's keywords and defaults): TCP_TIMEOUT (alias TIMEOUT) 24 h for TCP flows
//! that carried payload both ways, TCP_NODATA_TIMEOUT 5 min for the others, TCP_DONE_TIMEOUT
//! 4 min once a FIN or RST was seen; UDP_TIMEOUT 5 min, UDP_STREAMING_TIMEOUT (default
//! UDP_TIMEOUT) for flows with at least 3 packets and a reply. Each packet of a flow sets its
//! expiry to now + timeout, with now the packet's timestamp (`cx.now_ns`). Expired mappings are
//! removed lazily when a lookup or a port probe finds them, and by a sweep of the whole table
//! every REAP_INTERVAL (default 15 min), run by the first packet at or after the due time.
//! MAPPING_CAPACITY (default unlimited) bounds the number of mappings: new flows beyond it
//! are dropped (`mapping table full`). TCP_GUARANTEE / UDP_GUARANTEE are accepted and have no
//! effect (they only matter when a full table evicts flows, which pktflow does not do).
//!
//! Costs: 6 instructions and a 4 B meta-data read (IP header annotation); reads of protocol
//! (1 B), fragment field (2 B), addresses (8 B) and ports (4 B) from the packet; a 16 B stack
//! write (the flow id); the flow table accesses of [`super::flow`] (bucket and entries read on
//! lookup keyed by bucket index and entry id; flow record read, 24 B, keyed by flow slot on a
//! hit); on a new mapping, the pattern's allocator state read (object 4+pattern, 8 B) and,
//! when a port is allocated from a range, written back, plus one table lookup per port
//! probed, and the insertion writes; the state refresh (8 B flow record write: expiry and
//! TCP/UDP state, after reading 4 B of TCP offset/flags or nothing for UDP); the rewrite
//! (see [`super::hdr::rewrite`]); 4 B meta-data write for DST_ANNO. A sweep charges per live
//! mapping 4 instructions and an 8 B flow record read, plus the removals.
use super::flow::{parse_seconds, Flow, FlowKey, FlowTable, OBJ_FLOWS, OBJ_PATTERN0};
use super::hdr::{self, first_fragment, ip_hl, l4_layout, PROTO_TCP, PROTO_UDP};
use super::pattern::{parse_input_spec, AddrSpec, InputSpec, Pattern, PortSpec};
use crate::conf::{parse_bool, parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "IPRewriter",
    summary: "NAPT: rewrite TCP/UDP flows' addresses and ports, both directions",
    make,
};

const S: u64 = 1_000_000_000;
const ST_FWD_DATA: u8 = 1;
const ST_REV_DATA: u8 = 2;
const ST_DONE: u8 = 4;
const ST_REPLY: u8 = 8;

/// Expiry handling shared by the rewriters.
pub(crate) struct Reaper {
    pub interval_ns: u64,
    pub next_ns: Option<u64>,
}

impl Reaper {
    /// True when a sweep is due at `now` (and schedules the next one).
    pub fn due(&mut self, now: u64) -> bool {
        match self.next_ns {
            None => {
                self.next_ns = Some(now.saturating_add(self.interval_ns));
                false
            }
            Some(t) if now >= t => {
                self.next_ns = Some(now.saturating_add(self.interval_ns));
                true
            }
            _ => false,
        }
    }
}

/// Remove every expired mapping of `table`; returns how many.
pub(crate) fn sweep(table: &mut FlowTable, now: u64, cx: &mut Cx) -> u64 {
    let mut n = 0;
    for slot in 0..table.flows.len() as u32 {
        if !table.flows[slot as usize].live {
            continue;
        }
        cx.instr(4);
        cx.dynamic_state(Read, OBJ_FLOWS, slot as u64, 8);
        if table.flows[slot as usize].expiry_ns <= now {
            table.remove(slot, cx);
            n += 1;
        }
    }
    n
}

/// The configuration both rewriters share, parsed after their own timeout keywords:
/// REAP_INTERVAL, MAPPING_CAPACITY, DST_ANNO, and the input specs with their patterns.
pub(crate) struct CommonConfig {
    pub reap_ns: u64,
    pub capacity: usize,
    pub dst_anno: bool,
    pub specs: Vec<InputSpec>,
    pub patterns: Vec<Pattern>,
    /// Output ports the input specs use.
    pub nout: usize,
}

/// Parse the shared part of a rewriter's configuration; `addr_only` is true for
/// IPAddrRewriter (patterns rewrite addresses only). Errors are unprefixed.
pub(crate) fn parse_common(
    a: &mut Args,
    env: &InitEnv,
    addr_only: bool,
) -> Result<CommonConfig, String> {
    let reap_ns = seconds_kw(a, "REAP_INTERVAL", 900)?;
    if reap_ns == 0 {
        return Err("REAP_INTERVAL must be positive".into());
    }
    let capacity = match a.keyword("MAPPING_CAPACITY") {
        None => usize::MAX,
        Some(s) => parse_uint(&s).map(|v| v as usize).map_err(|_| {
            format!("MAPPING_CAPACITY: expected a number, found '{s}' (sharing another rewriter's capacity is not supported)")
        })?,
    };
    let dst_anno = match a.keyword("DST_ANNO") {
        Some(s) => parse_bool(&s).map_err(|e| format!("DST_ANNO: {e}"))?,
        None => true,
    };
    let raw = a.take_all_positional();
    if raw.is_empty() {
        return Err("expected at least one INPUTSPEC".into());
    }
    let mut patterns = Vec::new();
    let mut specs = Vec::new();
    for (i, s) in raw.iter().enumerate() {
        specs.push(
            parse_input_spec(s, env, &mut patterns, addr_only)
                .map_err(|e| format!("INPUTSPEC {i}: {e}"))?,
        );
    }
    if patterns.len() > 200 {
        return Err("too many patterns (at most 200)".into());
    }
    let nout = specs
        .iter()
        .filter_map(InputSpec::max_output)
        .max()
        .map_or(1, |m| m as usize + 1);
    Ok(CommonConfig {
        reap_ns,
        capacity,
        dst_anno,
        specs,
        patterns,
        nout,
    })
}

pub(crate) fn seconds_kw(a: &mut Args, k: &str, default_s: u64) -> Result<u64, String> {
    match a.keyword(k) {
        Some(s) => parse_seconds(&s).map_err(|e| format!("{k}: {e}")),
        None => Ok(default_s * S),
    }
}

pub struct IPRewriter {
    specs: Vec<InputSpec>,
    patterns: Vec<Pattern>,
    cursors: Vec<u32>,
    /// Pseudo-random state for the starting port of non-sequential ranges.
    rng: u64,
    table: Box<FlowTable>,
    nout: usize,
    tcp_data_ns: u64,
    tcp_nodata_ns: u64,
    tcp_done_ns: u64,
    udp_ns: u64,
    udp_streaming_ns: u64,
    reaper: Reaper,
    capacity: usize,
    dst_anno: bool,
    created: u64,
    expired: u64,
    mapping_failures: u64,
    /// Mappings removed because a new `keep` or fixed-pattern mapping took their reply flow id.
    evicted: u64,
    /// The table's slot in the router's registry (other elements read and extend it between
    /// packets; see [`super::shared`]).
    shared: super::shared::SharedRewriter,
}

const KEYWORDS: &[&str] = &[
    "TCP_TIMEOUT",
    "TIMEOUT",
    "TCP_DONE_TIMEOUT",
    "TCP_NODATA_TIMEOUT",
    "TCP_GUARANTEE",
    "UDP_TIMEOUT",
    "UDP_STREAMING_TIMEOUT",
    "UDP_GUARANTEE",
    "REAP_INTERVAL",
    "MAPPING_CAPACITY",
    "DST_ANNO",
];

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("IPRewriter", config, KEYWORDS);
    let err = |e: String| format!("IPRewriter: {e}");
    let tcp_data_ns = match a.keyword("TCP_TIMEOUT").or_else(|| a.keyword("TIMEOUT")) {
        Some(s) => parse_seconds(&s).map_err(|e| err(format!("TCP_TIMEOUT: {e}")))?,
        None => 86400 * S,
    };
    let tcp_nodata_ns = seconds_kw(&mut a, "TCP_NODATA_TIMEOUT", 300).map_err(err)?;
    let tcp_done_ns = seconds_kw(&mut a, "TCP_DONE_TIMEOUT", 240).map_err(err)?;
    let udp_ns = seconds_kw(&mut a, "UDP_TIMEOUT", 300).map_err(err)?;
    let udp_streaming_ns = match a.keyword("UDP_STREAMING_TIMEOUT") {
        Some(s) => parse_seconds(&s).map_err(|e| err(format!("UDP_STREAMING_TIMEOUT: {e}")))?,
        None => udp_ns,
    };
    seconds_kw(&mut a, "TCP_GUARANTEE", 5).map_err(err)?;
    seconds_kw(&mut a, "UDP_GUARANTEE", 5).map_err(err)?;
    let c = parse_common(&mut a, env, false).map_err(err)?;
    let initial = c.capacity.min(4096);
    let shared = env.shared.rewriters.get(&env.name);
    {
        let mut g = super::shared::lock(&shared);
        g.element = env.index;
        g.class = "IPRewriter".into();
        g.new_flow_timeout_ns = tcp_nodata_ns;
        g.noutputs = c.nout;
    }
    Ok(Box::new(IPRewriter {
        shared,
        cursors: vec![0; c.patterns.len()],
        rng: crate::elements::click::switches::splitmix(env.seed ^ 0x1f_7e_a1),
        specs: c.specs,
        patterns: c.patterns,
        table: Box::new(FlowTable::new(1024, initial)),
        nout: c.nout,
        tcp_data_ns,
        tcp_nodata_ns,
        tcp_done_ns,
        udp_ns,
        udp_streaming_ns,
        reaper: Reaper {
            interval_ns: c.reap_ns,
            next_ns: None,
        },
        capacity: c.capacity,
        dst_anno: c.dst_anno,
        created: 0,
        expired: 0,
        mapping_failures: 0,
        evicted: 0,
    }))
}

impl IPRewriter {
    fn timeout(&self, f: &Flow) -> u64 {
        if f.fwd.proto == PROTO_TCP {
            if f.state & ST_DONE != 0 {
                self.tcp_done_ns
            } else if f.state & (ST_FWD_DATA | ST_REV_DATA) == ST_FWD_DATA | ST_REV_DATA {
                self.tcp_data_ns
            } else {
                self.tcp_nodata_ns
            }
        } else if f.packets >= 3 && f.state & ST_REPLY != 0 {
            self.udp_streaming_ns
        } else {
            self.udp_ns
        }
    }

    /// Is the reply flow id `r` unused by a live mapping? Expired ones found are removed.
    fn reply_free(&mut self, r: &FlowKey, now: u64, cx: &mut Cx) -> bool {
        match self.table.lookup(r, cx) {
            None => true,
            Some(e) => {
                let slot = e >> 1;
                cx.dynamic_state(Read, OBJ_FLOWS, slot as u64, 8);
                if self.table.flows[slot as usize].expiry_ns <= now {
                    self.table.remove(slot, cx);
                    self.expired += 1;
                    true
                } else {
                    false
                }
            }
        }
    }

    /// Make room for a new mapping whose reply flow id is `r`, as Click 2.1 does for `keep`
    /// and for patterns without a port or address range (elements/ip/iprewriterbase.cc,
    /// store_flow): the mapping holding `r`, if any, is removed (both directions) and the
    /// new one takes its place. (A range instead probes for a free port.)
    fn evict(&mut self, r: &FlowKey, cx: &mut Cx) {
        if let Some(e) = self.table.lookup(r, cx) {
            self.table.remove(e >> 1, cx);
            self.evicted += 1;
        }
    }

    /// The new flow id for `key` under pattern `i`, or `None` when no port is free.
    fn allocate(&mut self, i: usize, key: &FlowKey, now: u64, cx: &mut Cx) -> Option<FlowKey> {
        cx.instr(8);
        let obj = OBJ_PATTERN0 + i as u8;
        cx.dynamic_state(Read, obj, 0, 8);
        let p = &self.patterns[i];
        let mut t = FlowKey {
            saddr: match p.saddr {
                AddrSpec::Fixed(a) => a,
                _ => key.saddr,
            },
            daddr: p.daddr.unwrap_or(key.daddr),
            sport: key.sport,
            dport: p.dport.unwrap_or(key.dport),
            proto: key.proto,
        };
        let reply = |t: &FlowKey, sport: u16| FlowKey { sport, ..*t }.reverse();
        match p.sport.clone() {
            PortSpec::Keep | PortSpec::Fixed(_) => {
                if let PortSpec::Fixed(sp) = p.sport {
                    t.sport = sp;
                }
                let r = reply(&t, t.sport);
                self.evict(&r, cx);
                Some(t)
            }
            PortSpec::Range {
                lo,
                hi,
                prefer_source,
                sequential,
            } => {
                let n = (hi - lo) as u32 + 1;
                let mut chosen = None;
                if prefer_source && (lo..=hi).contains(&key.sport) {
                    cx.instr(3);
                    if self.reply_free(&reply(&t, key.sport), now, cx) {
                        chosen = Some(key.sport);
                    }
                }
                if chosen.is_none() {
                    // Click: a sequential ('#') range scans from one past the last port
                    // allocated, any other from a random port.
                    let cur = if sequential {
                        self.cursors[i]
                    } else {
                        cx.instr(4);
                        self.rng = crate::elements::click::switches::splitmix(self.rng);
                        ((self.rng >> 16) % n as u64) as u32
                    };
                    for k in 0..n {
                        cx.instr(3);
                        let cand = lo + ((cur + k) % n) as u16;
                        if self.reply_free(&reply(&t, cand), now, cx) {
                            chosen = Some(cand);
                            break;
                        }
                    }
                }
                let c = chosen?;
                self.cursors[i] = ((c - lo) as u32 + 1) % n;
                cx.dynamic_state(Write, obj, 0, 8);
                t.sport = c;
                Some(t)
            }
        }
    }
}

impl Element for IPRewriter {
    fn ports(&self) -> Ports {
        Ports::push(self.specs.len(), self.nout)
    }

    fn push(&mut self, port: usize, p: Packet, cx: &mut Cx) {
        // Hold the shared table for the packet (see `super::shared`).
        let shared = self.shared.clone();
        let mut g = super::shared::lock(&shared);
        std::mem::swap(&mut self.table, &mut g.table);
        self.push_packet(port, p, cx);
        std::mem::swap(&mut self.table, &mut g.table);
    }

    fn stats(&self) -> serde_json::Value {
        let g = super::shared::lock(&self.shared);
        let table = &g.table;
        serde_json::json!({
            "table_size": table.len(),
            "created": self.created,
            "expired": self.expired,
            "mapping_failures": self.mapping_failures,
            "evicted": self.evicted,
            "buckets": table.n_buckets(),
            "rehashes": table.rehashes,
        })
    }

    fn code_size(&self) -> u32 {
        420
    }
}

impl IPRewriter {
    fn push_packet(&mut self, port: usize, mut p: Packet, cx: &mut Cx) {
        cx.instr(6);
        cx.read_meta(4);
        let now = cx.now_ns;
        if self.reaper.due(now) {
            self.expired += sweep(&mut self.table, now, cx);
        }
        let spec = self.specs[port].clone();
        let Some(h) = p.ip_header() else {
            cx.drop_packet(p, "no IP header");
            return;
        };
        let Some(hl) = ip_hl(h) else {
            cx.drop_packet(p, "bad IP header");
            return;
        };
        cx.read_pkt(1);
        cx.read_pkt(2);
        let proto = h[9];
        // Click 2.1 (elements/tcpudp/iprewriter.cc) maps TCP and UDP first fragments with at
        // least 8 transport bytes; a TCP header shorter than 18 bytes has its addresses
        // rewritten but not its ports (see `hdr::rewrite`).
        let reason = match l4_layout(proto) {
            None => Some("not TCP/UDP"),
            Some(_) if !first_fragment(h) => Some("fragment"),
            Some(_) if h.len() < hl + 8 => Some("truncated TCP/UDP header"),
            _ => None,
        };
        if let Some(reason) = reason {
            match spec {
                InputSpec::Pass(o) => cx.emit(o as usize, p),
                _ => cx.drop_packet(p, reason),
            }
            return;
        }
        cx.read_pkt(8);
        cx.read_pkt(4);
        cx.stack(Write, 16);
        let key = hdr::flow_key(h, hl, true);
        // TCP offset/flags and payload presence (for the flow's timeout state).
        let (tcp_flags, has_payload) = if proto == PROTO_TCP && h.len() >= hl + 18 {
            cx.read_pkt(2);
            let doff = ((h[hl + 12] >> 4) as usize) * 4;
            let tot = (hdr::be16(h, 2) as usize).min(h.len());
            (h[hl + 13], tot > hl + doff)
        } else {
            (0, false)
        };

        let mut hit = None;
        if let Some(e) = self.table.lookup(&key, cx) {
            let slot = e >> 1;
            cx.dynamic_state(Read, OBJ_FLOWS, slot as u64, 24);
            if self.table.flows[slot as usize].expiry_ns <= now {
                self.table.remove(slot, cx);
                self.expired += 1;
            } else {
                hit = Some((slot, e & 1));
            }
        }
        let (slot, dir) = match hit {
            Some(x) => x,
            None => {
                let (rew, fout, rout, pat) = match spec {
                    InputSpec::Drop => {
                        cx.drop_packet(p, "no mapping");
                        return;
                    }
                    InputSpec::Pass(o) => {
                        cx.emit(o as usize, p);
                        return;
                    }
                    InputSpec::Keep(f, r) => {
                        self.evict(&key.reverse(), cx);
                        (key, f, r, u16::MAX)
                    }
                    InputSpec::Pattern(i, f, r) => match self.allocate(i, &key, now, cx) {
                        Some(rew) => (rew, f, r, i as u16),
                        None => {
                            self.mapping_failures += 1;
                            cx.drop_packet(p, "no free port");
                            return;
                        }
                    },
                };
                if self.table.len() >= self.capacity {
                    self.mapping_failures += 1;
                    cx.drop_packet(p, "mapping table full");
                    return;
                }
                let flow = Flow {
                    seq: Default::default(),
                    fwd: key,
                    rew,
                    fout,
                    rout,
                    expiry_ns: now,
                    state: 0,
                    packets: 0,
                    pattern: pat,
                    live: true,
                };
                self.created += 1;
                (self.table.insert(flow, key, rew.reverse(), cx), 0)
            }
        };
        // Refresh the mapping's state and expiry.
        cx.instr(8);
        let (target, out) = {
            let f = &mut self.table.flows[slot as usize];
            f.packets = f.packets.saturating_add(1);
            if proto == PROTO_TCP {
                if tcp_flags & 0x05 != 0 {
                    f.state |= ST_DONE;
                }
                if has_payload {
                    f.state |= if dir == 0 { ST_FWD_DATA } else { ST_REV_DATA };
                }
            } else if proto == PROTO_UDP && dir == 1 {
                f.state |= ST_REPLY;
            }
            if dir == 0 {
                (f.rew, f.fout)
            } else {
                (f.fwd.reverse(), f.rout)
            }
        };
        let f = self.table.flows[slot as usize];
        self.table.flows[slot as usize].expiry_ns = now.saturating_add(self.timeout(&f));
        cx.dynamic_state(Write, OBJ_FLOWS, slot as u64, 8);
        let h = p.ip_header_mut().expect("checked above");
        hdr::rewrite(h, hl, &target, true, true, cx);
        if self.dst_anno {
            p.anno.dst_ip = target.daddr.to_be_bytes();
            cx.write_meta(4);
        }
        cx.emit(out as usize, p);
    }
}
