//! `IPAddrRewriter(INPUTSPEC1, ..., INPUTSPECn [, KEYWORDS])` — Basic NAT: rewrites source
//! addresses of outgoing packets and destination addresses of replies, for any IP protocol.
//!
//! A packet is looked up by its source address (forward mappings: old source -> new source)
//! and then by its destination address (reply mappings: new source -> old source). A forward
//! hit rewrites the source address and sends the packet to FOUTPUT; a reply hit rewrites the
//! destination address back and sends it to ROUTPUT. On a miss, the INPUTSPEC of the input
//! port decides: `drop` (reason `no mapping`), `pass OUTPUT`, `keep FOUTPUT ROUTPUT`,
//! `pattern SADDR - FOUTPUT ROUTPUT` (SADDR an address, a range `L-H`, a prefix `ADDR/LEN`
//! (network and broadcast addresses excluded) or `-`), or `pattern NAME FOUTPUT ROUTPUT`
//! naming an IPRewriterPatterns pattern whose SPORT, DADDR and DPORT are `-`. From a range,
//! the first address not held by a live mapping is taken, round-robin from one past the last
//! one allocated (Click picks randomly unless the range ends in `#`; pktflow is sequential so
//! that runs are reproducible); none free: drop, reason `no free address`. A `keep` mapping
//! or a fixed address (or `-`) never fails: as in Click 2.1, a new mapping whose reply
//! address is held by another mapping removes that mapping and takes its place (statistic
//! `evicted`), so several inside hosts behind one fixed address take turns, replies going
//! to the latest.
//!
//! Ports: one push input per INPUTSPEC, outputs 0..=the largest output named. Input packets
//! need the IP header annotation. The IP checksum is updated incrementally (RFC 1624), and so
//! is the TCP/UDP checksum of first fragments (its pseudo-header covers the addresses); a
//! zero UDP checksum stays zero. The IP header quoted inside an ICMP error is not rewritten
//! (Click does that in ICMPRewriter, which pktflow does not implement). DST_ANNO (default true) sets the destination address
//! annotation.
//! Keywords: TIMEOUT (default 5 min; each packet sets expiry to now + TIMEOUT), GUARANTEE
//! (accepted, no effect), REAP_INTERVAL (default 15 min), MAPPING_CAPACITY, DST_ANNO. Expiry
//! as in IPRewriter: lazily on lookup and by a periodic sweep.
//!
//! Costs: as IPRewriter's (see [`super::ip_rewriter`]), with flow ids of addresses only: reads
//! of protocol/fragment field (3 B) and addresses (8 B), an 8 B stack write, up to two table
//! lookups (source, then destination), the flow record read (24 B) on a hit and write (8 B)
//! on refresh, the allocator state read/write (object 4+pattern) on a new mapping, insertion,
//! and the rewrite.
use super::flow::{parse_seconds, Flow, FlowKey, FlowTable, OBJ_FLOWS, OBJ_PATTERN0};
use super::hdr::{self, first_fragment, ip_hl, l4_layout};
use super::ip_rewriter::{parse_common, seconds_kw, sweep, Reaper};
use super::pattern::{AddrSpec, InputSpec, Pattern};
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "IPAddrRewriter",
    summary: "Basic NAT: rewrite source addresses (and replies' destinations), any protocol",
    make,
};

struct IPAddrRewriter {
    specs: Vec<InputSpec>,
    patterns: Vec<Pattern>,
    cursors: Vec<u32>,
    table: FlowTable,
    nout: usize,
    timeout_ns: u64,
    reaper: Reaper,
    capacity: usize,
    dst_anno: bool,
    created: u64,
    expired: u64,
    mapping_failures: u64,
    /// Mappings removed because a new `keep` or fixed-address mapping took their reply key.
    evicted: u64,
    /// The table's slot in the router's registry: copies of the element on several threads
    /// (`pktflow run`) share one table, as IPRewriter's do (see [`super::shared`]).
    shared: super::shared::SharedRewriter,
}

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse(
        "IPAddrRewriter",
        config,
        &[
            "TIMEOUT",
            "GUARANTEE",
            "REAP_INTERVAL",
            "MAPPING_CAPACITY",
            "DST_ANNO",
        ],
    );
    let err = |e: String| format!("IPAddrRewriter: {e}");
    let timeout_ns = match a.keyword("TIMEOUT") {
        Some(s) => parse_seconds(&s).map_err(|e| err(format!("TIMEOUT: {e}")))?,
        None => 300_000_000_000,
    };
    seconds_kw(&mut a, "GUARANTEE", 5).map_err(err)?;
    let c = parse_common(&mut a, env, true).map_err(err)?;
    let shared = env.shared.rewriters.get(&env.name);
    {
        let mut g = super::shared::lock(&shared);
        if g.class.is_empty() {
            // The first copy installs the table; the others use it.
            *g.table = FlowTable::new(256, c.capacity.min(1024));
            g.element = env.index;
            g.class = "IPAddrRewriter".into();
            g.noutputs = c.nout;
        }
    }
    Ok(Box::new(IPAddrRewriter {
        shared,
        cursors: vec![0; c.patterns.len()],
        specs: c.specs,
        patterns: c.patterns,
        // A spare: the shared table is swapped in for each packet.
        table: FlowTable::new(256, 0),
        nout: c.nout,
        timeout_ns,
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

fn fwd_key(a: u32) -> FlowKey {
    FlowKey {
        saddr: a,
        ..Default::default()
    }
}
fn rev_key(a: u32) -> FlowKey {
    FlowKey {
        daddr: a,
        ..Default::default()
    }
}

impl IPAddrRewriter {
    /// Look `k` up; an expired mapping found is removed. Returns the live entry.
    fn find_live(&mut self, k: &FlowKey, now: u64, cx: &mut Cx) -> Option<u32> {
        let e = self.table.lookup(k, cx)?;
        let slot = e >> 1;
        cx.dynamic_state(Read, OBJ_FLOWS, slot as u64, 24);
        if self.table.flows[slot as usize].expiry_ns <= now {
            self.table.remove(slot, cx);
            self.expired += 1;
            None
        } else {
            Some(e)
        }
    }

    /// Remove the mapping holding the reply key of address `a`, if any: Click 2.1 lets a new
    /// `keep` or fixed-address mapping take over the reply entry of an older one and destroys
    /// the older mapping (elements/ip/iprewriterbase.cc, store_flow).
    fn evict(&mut self, a: u32, cx: &mut Cx) {
        if let Some(e) = self.table.lookup(&rev_key(a), cx) {
            self.table.remove(e >> 1, cx);
            self.evicted += 1;
        }
    }

    fn allocate(&mut self, i: usize, src: u32, now: u64, cx: &mut Cx) -> Option<u32> {
        cx.instr(8);
        let obj = OBJ_PATTERN0 + i as u8;
        cx.dynamic_state(Read, obj, 0, 8);
        match self.patterns[i].saddr.clone() {
            AddrSpec::Keep => {
                self.evict(src, cx);
                Some(src)
            }
            AddrSpec::Fixed(a) => {
                self.evict(a, cx);
                Some(a)
            }
            AddrSpec::Range { lo, hi } => {
                let n = (hi - lo) as u64 + 1;
                let cur = self.cursors[i] as u64;
                for k in 0..n {
                    cx.instr(3);
                    let cand = lo + ((cur + k) % n) as u32;
                    if self.find_live(&rev_key(cand), now, cx).is_none() {
                        self.cursors[i] = (((cand - lo) as u64 + 1) % n) as u32;
                        cx.dynamic_state(Write, obj, 0, 8);
                        return Some(cand);
                    }
                }
                None
            }
        }
    }
}

impl Element for IPAddrRewriter {
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
        serde_json::json!({
            "table_size": g.table.len(),
            "created": self.created,
            "expired": self.expired,
            "mapping_failures": self.mapping_failures,
            "evicted": self.evicted,
        })
    }

    fn code_size(&self) -> u32 {
        260
    }
}

impl IPAddrRewriter {
    fn push_packet(&mut self, port: usize, mut p: Packet, cx: &mut Cx) {
        cx.instr(6);
        cx.read_meta(4);
        let now = cx.now_ns;
        if self.reaper.due(now) {
            self.expired += sweep(&mut self.table, now, cx);
        }
        let Some(h) = p.ip_header() else {
            cx.drop_packet(p, "no IP header");
            return;
        };
        let Some(hl) = ip_hl(h) else {
            cx.drop_packet(p, "bad IP header");
            return;
        };
        cx.read_pkt(3);
        cx.read_pkt(8);
        cx.stack(Write, 8);
        let (src, dst) = (hdr::be32(h, 12), hdr::be32(h, 16));
        let l4 = first_fragment(h) && l4_layout(h[9]).is_some_and(|(_, need)| h.len() >= hl + need);

        let hit = match self.find_live(&fwd_key(src), now, cx) {
            Some(e) => Some(e),
            None => self.find_live(&rev_key(dst), now, cx),
        };
        let (slot, dir) = match hit {
            Some(e) => (e >> 1, e & 1),
            None => {
                let (new, fout, rout, pat) = match self.specs[port].clone() {
                    InputSpec::Drop => {
                        cx.drop_packet(p, "no mapping");
                        return;
                    }
                    InputSpec::Pass(o) => {
                        cx.emit(o as usize, p);
                        return;
                    }
                    InputSpec::Keep(f, r) => {
                        self.evict(src, cx);
                        (src, f, r, u16::MAX)
                    }
                    InputSpec::Pattern(i, f, r) => match self.allocate(i, src, now, cx) {
                        Some(a) => (a, f, r, i as u16),
                        None => {
                            self.mapping_failures += 1;
                            cx.drop_packet(p, "no free address");
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
                    fwd: fwd_key(src),
                    rew: fwd_key(new),
                    fout,
                    rout,
                    expiry_ns: now,
                    state: 0,
                    packets: 0,
                    pattern: pat,
                    live: true,
                };
                self.created += 1;
                (self.table.insert(flow, fwd_key(src), rev_key(new), cx), 0)
            }
        };
        cx.instr(6);
        let f = &mut self.table.flows[slot as usize];
        f.packets = f.packets.saturating_add(1);
        f.expiry_ns = now.saturating_add(self.timeout_ns);
        cx.dynamic_state(Write, OBJ_FLOWS, slot as u64, 8);
        let mut target = hdr::flow_key(h, hl, l4);
        let out = if dir == 0 {
            target.saddr = f.rew.saddr;
            f.fout
        } else {
            target.daddr = f.fwd.saddr;
            f.rout
        };
        let h = p.ip_header_mut().expect("checked above");
        hdr::rewrite(h, hl, &target, false, l4, cx);
        if self.dst_anno {
            p.anno.dst_ip = target.daddr.to_be_bytes();
            cx.write_meta(4);
        }
        cx.emit(out as usize, p);
    }
}
