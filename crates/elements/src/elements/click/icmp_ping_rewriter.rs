//! `ICMPPingRewriter(INPUTSPEC, ... [, TIMEOUT T])` — network address (and identifier)
//! translation for ICMP echo ("ping") traffic, the ICMP counterpart of IPRewriter.
//!
//! One push input per input spec, with IPRewriter's spec syntax (`pattern SADDR SID DADDR DID
//! FOUTPUT ROUTPUT`, a named IPRewriterPatterns pattern, `keep F R`, `pass N`/`nochange [N]`,
//! `drop`), where the "ports" are the echo identifier: SID `-` keeps it, a number sets it,
//! a range `L-H` chooses one as IPRewriter chooses source ports (the request's own identifier
//! when in range and free, else from a random start; `L-H#` sequentially); DID must be `-`.
//! An echo request (ICMP type 8, first fragment with at least 6 ICMP bytes, any code) of a
//! known mapping is rewritten and leaves on the mapping's forward output; a new one is mapped
//! by its input's spec. An echo reply (type 0) whose (source, destination, identifier) is the
//! reverse of a mapping's rewritten request is rewritten back (its destination becomes the
//! original source, the identifier the original one) and leaves on the reply output; a reply
//! never uses a request's mapping, nor a request a reply's. As in Click 2.1, a new mapping
//! whose rewritten request is already another mapping's (a fixed identifier, `keep`, two
//! hosts pinging one server with one identifier behind one address) replaces that mapping. Other packets, and replies with no mapping, follow a `pass` spec or are
//! dropped (reasons `not a ping`, `no mapping`). IP checksums and the ICMP checksum (for the
//! identifier) are updated incrementally; the destination annotation is set to the new
//! destination. Mappings expire TIMEOUT seconds (default 300, pktflow's choice) after their
//! last packet, in simulated time.
//! Ports: N push inputs, outputs 1 + the largest output the specs name.
//! Costs: 10 instructions, a 4 B meta-data read, a 12 B packet-data read (addresses,
//! identifier); the mapping lookup is an 8 B read of the flow entry (dynamic state object 0,
//! key = hash of the flow); a new mapping writes 16 B there (both directions), an identifier
//! search 3 instructions and an 8 B read per candidate; a rewrite 12 instructions and a 12 B
//! packet-data write.
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::elements::click::switches::splitmix;
use crate::elements::nat::flow::parse_seconds;
use crate::elements::nat::pattern::{parse_input_spec, AddrSpec, InputSpec, Pattern, PortSpec};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::checksum::incremental_update;
use pktflow_traffic::Packet;
use std::collections::HashMap;

pub const CLASS: ClassInfo = ClassInfo {
    name: "ICMPPingRewriter",
    summary: "rewrite ICMP echo requests and replies (ping NAT)",
    make,
};

/// (source, destination, identifier, is a request) of an echo packet. Requests and replies
/// have separate keys, as Click 2.1's flow ids (identifier, identifier + 1) and
/// (identifier + 1, identifier) do: a reply never hits a request's mapping.
pub(crate) type Key = ([u8; 4], [u8; 4], u16, bool);

#[derive(Clone, Copy, Debug)]
pub(crate) struct Map {
    pub(crate) to: Key,
    out: usize,
    pub(crate) expires: u64,
}

/// The mapping table, kept in the router's registry by element name so ICMPRewriter can
/// read it (the rewriter holds it while it processes a packet).
#[derive(Debug, Default)]
pub struct PingState {
    pub(crate) map: HashMap<Key, Map>,
}

struct PingRewriter {
    specs: Vec<InputSpec>,
    patterns: Vec<Pattern>,
    nout: usize,
    timeout_ns: u64,
    /// Request key -> rewritten request; reply key -> rewritten reply.
    map: HashMap<Key, Map>,
    cursors: Vec<u16>,
    rng: u64,
    mapped: u64,
    shared: std::sync::Arc<std::sync::Mutex<PingState>>,
}

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "ICMPPingRewriter";
    let mut a = Args::parse(c, config, &["TIMEOUT", "DST_ANNO"]);
    let timeout_ns = match a.keyword("TIMEOUT") {
        Some(s) => parse_seconds(&s).map_err(|e| format!("{c}: TIMEOUT: {e}"))?,
        None => 300_000_000_000,
    };
    a.keyword("DST_ANNO");
    let mut patterns = Vec::new();
    let mut specs = Vec::new();
    for (i, s) in a.take_all_positional().iter().enumerate() {
        let spec = parse_input_spec(s, env, &mut patterns, false)
            .map_err(|e| format!("{c}: input spec {i}: {e}"))?;
        specs.push(spec);
    }
    if specs.is_empty() {
        return Err(format!("{c}: expected at least one input spec"));
    }
    for p in &patterns {
        if p.dport.is_some() {
            return Err(format!(
                "{c}: pattern '{}': the destination identifier must be '-'",
                p.name
            ));
        }
        if matches!(p.saddr, AddrSpec::Range { .. }) {
            return Err(format!(
                "{c}: pattern '{}': address ranges are not supported",
                p.name
            ));
        }
    }
    let nout = specs
        .iter()
        .filter_map(|s| s.max_output())
        .max()
        .map_or(1, |m| m as usize + 1);
    Ok(Box::new(PingRewriter {
        cursors: vec![0; patterns.len()],
        specs,
        patterns,
        nout,
        timeout_ns,
        map: HashMap::new(),
        rng: splitmix(env.seed ^ 0x1c3f),
        mapped: 0,
        shared: env.shared.ping_rewriters.get(&env.name),
    }))
}

pub(crate) fn key_hash(k: &Key) -> u64 {
    (u32::from_be_bytes(k.0) as u64) << 32
        ^ (u32::from_be_bytes(k.1) as u64) << 8
        ^ k.2 as u64
        ^ (k.3 as u64) << 63
}

impl PingRewriter {
    fn live(&self, k: &Key, now: u64) -> bool {
        self.map.get(k).is_some_and(|m| m.expires >= now)
    }

    /// Choose the rewritten request for `k` under pattern `pi`; None when no identifier is free.
    fn apply(&mut self, pi: usize, k: Key, cx: &mut Cx) -> Option<Key> {
        let now = cx.now_ns;
        let p = self.patterns[pi].clone();
        let src = match p.saddr {
            AddrSpec::Fixed(a) => a.to_be_bytes(),
            _ => k.0,
        };
        let dst = p.daddr.map_or(k.1, |d| d.to_be_bytes());
        let free = |s: &Self, id: u16, cx: &mut Cx| {
            cx.instr(3);
            cx.dynamic_state(Read, 0, key_hash(&(dst, src, id, false)), 8);
            !s.live(&(dst, src, id, false), now)
        };
        let id = match p.sport {
            PortSpec::Keep => k.2,
            PortSpec::Fixed(i) => i,
            PortSpec::Range {
                lo,
                hi,
                prefer_source,
                sequential,
            } => {
                let n = (hi - lo) as u32 + 1;
                if prefer_source && (lo..=hi).contains(&k.2) && free(self, k.2, cx) {
                    k.2
                } else {
                    let start = if sequential {
                        self.cursors[pi] as u32
                    } else {
                        self.rng = splitmix(self.rng);
                        ((self.rng >> 16) % n as u64) as u32
                    };
                    let mut chosen = None;
                    for j in 0..n {
                        let cand = lo + ((start + j) % n) as u16;
                        if free(self, cand, cx) {
                            chosen = Some(cand);
                            break;
                        }
                    }
                    let c = chosen?;
                    self.cursors[pi] = ((c - lo) as u32 + 1).rem_euclid(n) as u16;
                    c
                }
            }
        };
        Some((src, dst, id, true))
    }

    fn rewrite(p: &mut Packet, hl: usize, to: Key, cx: &mut Cx) {
        cx.instr(12);
        let h = p.ip_header_mut().expect("checked");
        let (os, od, oid) = (net::ip_src(h), net::ip_dst(h), net::be16(h, hl + 4));
        let mut sum = net::be16(h, 10);
        for (o, n) in [(os, to.0), (od, to.1)] {
            for w in [0, 2] {
                sum = incremental_update(
                    sum,
                    u16::from_be_bytes([o[w], o[w + 1]]),
                    u16::from_be_bytes([n[w], n[w + 1]]),
                );
            }
        }
        net::set_be16(h, 10, sum);
        net::set_ip_src(h, to.0);
        net::set_ip_dst(h, to.1);
        let isum = incremental_update(net::be16(h, hl + 2), oid, to.2);
        net::set_be16(h, hl + 2, isum);
        net::set_be16(h, hl + 4, to.2);
        cx.write_pkt(12);
        p.anno.dst_ip = to.1;
        cx.write_meta(4);
    }

    fn other(&self, port: usize, p: Packet, cx: &mut Cx, why: &'static str) {
        match self.specs.get(port) {
            Some(InputSpec::Pass(o)) => cx.emit(*o as usize, p),
            _ => cx.drop_packet(p, why),
        }
    }
}

impl Element for PingRewriter {
    fn ports(&self) -> Ports {
        Ports::push(self.specs.len(), self.nout)
    }
    fn push(&mut self, port: usize, p: Packet, cx: &mut Cx) {
        let shared = self.shared.clone();
        let mut g = crate::elements::nat::shared::lock(&shared);
        std::mem::swap(&mut self.map, &mut g.map);
        self.push_packet(port, p, cx);
        std::mem::swap(&mut self.map, &mut g.map);
    }
    fn stats(&self) -> serde_json::Value {
        let g = crate::elements::nat::shared::lock(&self.shared);
        serde_json::json!({"mappings": self.mapped, "table_size": g.map.len() / 2})
    }
    fn code_size(&self) -> u32 {
        260
    }
}

impl PingRewriter {
    fn push_packet(&mut self, port: usize, mut p: Packet, cx: &mut Cx) {
        cx.instr(10);
        cx.read_meta(4);
        let now = cx.now_ns;
        let parsed = p.ip_header().and_then(|h| {
            let hl = if h.len() >= 20 { net::ip_hl(h) } else { 0 };
            (hl >= 20
                && net::ip_proto(h) == net::IP_PROTO_ICMP
                && net::ip_frag_offset(h) == 0
                && h.len() >= hl + 6)
                .then(|| {
                    (
                        hl,
                        h[hl],
                        (
                            net::ip_src(h),
                            net::ip_dst(h),
                            net::be16(h, hl + 4),
                            h[hl] == 8,
                        ),
                    )
                })
        });
        let Some((hl, ty, k)) = parsed.filter(|(_, t, _)| *t == 8 || *t == 0) else {
            return self.other(port, p, cx, "not a ping");
        };
        cx.read_pkt(12);
        cx.dynamic_state(Read, 0, key_hash(&k), 8);
        // Requests and replies are both looked up by their own key (a mapping stores both).
        let lookup = k;
        if let Some(m) = self.map.get(&lookup).copied().filter(|m| m.expires >= now) {
            let exp = now.saturating_add(self.timeout_ns);
            if let Some(e) = self.map.get_mut(&lookup) {
                e.expires = exp;
            }
            Self::rewrite(&mut p, hl, m.to, cx);
            cx.emit(m.out, p);
            return;
        }
        if ty == 0 {
            return self.other(port, p, cx, "no mapping");
        }
        let (to, f, r) = match self.specs.get(port).cloned() {
            Some(InputSpec::Pattern(pi, f, r)) => match self.apply(pi, k, cx) {
                Some(to) => (to, f, r),
                None => return cx.drop_packet(p, "no free identifier"),
            },
            Some(InputSpec::Keep(f, r)) => (k, f, r),
            Some(InputSpec::Pass(o)) => return cx.emit(o as usize, p),
            _ => return cx.drop_packet(p, "no mapping"),
        };
        let exp = now.saturating_add(self.timeout_ns);
        // The reply to the rewritten request comes back as (to.dst, to.src, to.id). As in
        // Click 2.1 (elements/ip/iprewriterbase.cc, store_flow), a mapping already holding
        // that reply key is removed, both directions, and the new one takes its place.
        let rkey = (to.1, to.0, to.2, false);
        if let Some(old) = self.map.remove(&rkey) {
            let fwd = (old.to.1, old.to.0, old.to.2, true);
            if self
                .map
                .get(&fwd)
                .is_some_and(|m| m.to == (rkey.1, rkey.0, rkey.2, true))
            {
                self.map.remove(&fwd);
            }
        }
        self.map.insert(
            k,
            Map {
                to,
                out: f as usize,
                expires: exp,
            },
        );
        self.map.insert(
            rkey,
            Map {
                to: (k.1, k.0, k.2, false),
                out: r as usize,
                expires: exp,
            },
        );
        cx.dynamic_state(Write, 0, key_hash(&k), 8);
        cx.dynamic_state(Write, 0, key_hash(&rkey), 8);
        self.mapped += 1;
        if to != k {
            Self::rewrite(&mut p, hl, to, cx);
        }
        cx.emit(f as usize, p);
    }
}

#[cfg(test)]
mod tests {
    use crate::conf::InitEnv;
    use crate::elements::ip::testutil::drop_reasons;
    use crate::net;
    use pktflow_traffic::checksum::ip_checksum;
    use pktflow_traffic::Packet;

    fn ping(ty: u8, src: [u8; 4], dst: [u8; 4], id: u16) -> Packet {
        let mut v = vec![0u8; 28];
        v[0] = 0x45;
        net::set_be16(&mut v, 2, 28);
        v[8] = 64;
        v[9] = 1;
        net::set_ip_src(&mut v, src);
        net::set_ip_dst(&mut v, dst);
        net::set_ip_checksum(&mut v[..20]);
        v[20] = ty;
        net::set_be16(&mut v, 24, id);
        net::set_be16(&mut v, 26, 7);
        let s = ip_checksum(&v[20..]);
        net::set_be16(&mut v, 22, s);
        let mut p = Packet::from_bytes(&v);
        p.set_ip_header(0, 20);
        p
    }

    fn valid(d: &[u8]) -> bool {
        ip_checksum(&d[..20]) == 0 && ip_checksum(&d[20..]) == 0
    }

    #[test]
    fn requests_and_replies_are_translated_both_ways() {
        let c = crate::registry::find("ICMPPingRewriter").unwrap();
        let mut rw = (c.make)(
            "pattern 1.0.0.1 1000-1999# - - 0 1, drop",
            &InitEnv::default(),
        )
        .unwrap();
        let (inside, server) = ([10, 0, 0, 2], [8, 8, 8, 8]);
        let (out, _) =
            crate::elements::ip::testutil::push(rw.as_mut(), 0, ping(8, inside, server, 55));
        let (port, q) = &out[0];
        let d = q.data();
        assert_eq!(
            (*port, net::ip_src(d), net::ip_dst(d), net::be16(d, 24)),
            (0, [1, 0, 0, 1], server, 1000)
        );
        assert!(valid(d));
        // The server's reply to 1.0.0.1 with identifier 1000 goes back to the inside host.
        let (out, _) = crate::elements::ip::testutil::push(
            rw.as_mut(),
            1,
            ping(0, server, [1, 0, 0, 1], 1000),
        );
        let (port, q) = &out[0];
        let d = q.data();
        assert_eq!(
            (*port, net::ip_src(d), net::ip_dst(d), net::be16(d, 24)),
            (1, server, inside, 55)
        );
        assert!(valid(d));
        assert_eq!(q.anno.dst_ip, inside);
        // An unknown reply is dropped; so is a non-ping packet.
        let (out, t) = crate::elements::ip::testutil::push(
            rw.as_mut(),
            1,
            ping(0, server, [1, 0, 0, 1], 4242),
        );
        assert!(out.is_empty());
        assert_eq!(drop_reasons(&t), vec!["no mapping"]);
        let (_, t) =
            crate::elements::ip::testutil::push(rw.as_mut(), 0, ping(3, inside, server, 1));
        assert_eq!(drop_reasons(&t), vec!["not a ping"]);
    }
}
