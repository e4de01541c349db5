//! `RegexFlowClassifier` — the thesis's Classifier: per-flow regular-expression classification
//! of TCP payloads with reassembly, byte statistics and rate monitoring.
//!
//! After the NetThreads thesis, Table 3.1: "Performs a regular expression matching on TCP
//! packets, collects statistics on the number of bytes transferred and monitors the packet rate
//! for classified flows ... In the absence of a match, the payloads of packets are reassembled
//! and tested up to 500 bytes before a flow is marked as non-matching", with the HTTP pattern
//! of the Linux layer-7 packet classifier; flows live in "a global synchronized hash-table".
//!
//! Processing of a TCP segment (IPv4 in Ethernet, not an IP fragment): look the flow (protocol,
//! addresses, ports; one direction) up in the global table under the table lock, take the
//! flow's lock, release the table lock ([`super::flow_table`]); add the segment's bytes and one
//! packet to the flow's counters; count the packet in the flow's current one-second rate window
//! (when a window ends its count becomes the flow's rate); while the flow is undecided, append
//! the payload to the flow's reassembly buffer (arrival order, at most `LIMIT` bytes) and search
//! the whole buffer for the pattern: a match marks the flow matching, a full buffer without one
//! marks it non-matching; release the flow lock. Every packet leaves on output 0 with its paint
//! annotation set to the flow's class (0 undecided or not TCP, 1 matching, 2 non-matching).
//! Packets of a full table leave unclassified (paint 0, counted as `table_full`).
//!
//! Keywords: `PATTERN` (default the l7-filter HTTP pattern), `LIMIT` (bytes reassembled, default
//! 500), `BUCKETS` (default 1024), `FLOWS` (records, default 4096), `TIMEOUT` (idle seconds
//! before a flow is removed, default 60), `BUDGET` (regular-expression steps per search, default
//! 200000), `FREE_LISTS` (1 to 64, default 1: the flow records' free lists; more is a
//! per-thread allocator, see flow_table.rs).
//! Ports: 1 push input, 1 push output.
//! Costs: 30 instructions to parse; the flow table's costs; 24 for the counters and rate
//! window; 3 per 32-bit word appended to the buffer; 6 per step of the regular-expression
//! search plus 24 per search; the search's stack frames as stack writes and reads (32 bytes per
//! frame of its deepest recursion). State objects: those of the flow table, and object 5 the
//! reassembly buffers (key slot × LIMIT + offset). Record fields (after the table's): bytes
//! (+0, 8 B), packets (+8, 8 B), rate-window start (+16, 8 B), window count (+24, 4 B), rate
//! (+28, 4 B), class (+32, 4 B), buffered length (+36, 4 B).
use super::flow_table::{FlowKey, FlowTable, OBJ_RECORDS, REC_USER};
use super::regex::{Regex, L7_HTTP};
use crate::conf::{unquote, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "RegexFlowClassifier",
    summary: "classify TCP flows by a regular expression over reassembled payloads, with byte and rate statistics (the thesis's Classifier)",
    make,
};

const OBJ_REASM: u8 = 5;
const REC_BYTES: u64 = REC_USER + 40;
const WINDOW_NS: u64 = 1_000_000_000;

#[derive(Default)]
struct Flow {
    bytes: u64,
    packets: u64,
    win_start: u64,
    win_count: u32,
    rate: u32,
    class: u8,
    buf: Vec<u8>,
}

struct Classifier {
    re: Regex,
    limit: usize,
    budget: u64,
    table: FlowTable<Flow>,
    matched: u64,
    nonmatching: u64,
    searches: u64,
    exhausted: u64,
    table_full: u64,
    not_tcp: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    const C: &str = "RegexFlowClassifier";
    let mut a = Args::parse(
        C,
        config,
        &[
            "PATTERN",
            "LIMIT",
            "BUCKETS",
            "FLOWS",
            "TIMEOUT",
            "BUDGET",
            "FREE_LISTS",
        ],
    );
    let pattern = a
        .keyword("PATTERN")
        .map(|p| unquote(&p))
        .unwrap_or_else(|| L7_HTTP.to_string());
    let re = Regex::new(&pattern).map_err(|e| format!("{C}: PATTERN: {e}"))?;
    let limit = super::bounded(C, "LIMIT", a.keyword("LIMIT"), 500, 65_536)? as usize;
    let buckets = super::bounded(C, "BUCKETS", a.keyword("BUCKETS"), 1024, 1 << 20)? as usize;
    let flows = super::bounded(C, "FLOWS", a.keyword("FLOWS"), 4096, 1 << 20)? as usize;
    let timeout = super::bounded(C, "TIMEOUT", a.keyword("TIMEOUT"), 60, 86_400 * 365)?;
    let lists = super::bounded(C, "FREE_LISTS", a.keyword("FREE_LISTS"), 1, 64)? as usize;
    let budget = super::bounded(C, "BUDGET", a.keyword("BUDGET"), 200_000, 1 << 32)?;
    a.finish()?;
    let mut el = Classifier::new(re, limit, buckets, flows, timeout * 1_000_000_000, budget);
    el.table = el.table.with_free_lists(lists);
    Ok(Box::new(el))
}

impl Classifier {
    fn new(
        re: Regex,
        limit: usize,
        buckets: usize,
        flows: usize,
        timeout_ns: u64,
        budget: u64,
    ) -> Self {
        Classifier {
            re,
            limit,
            budget,
            table: FlowTable::new(buckets, flows, REC_BYTES, timeout_ns),
            matched: 0,
            nonmatching: 0,
            searches: 0,
            exhausted: 0,
            table_full: 0,
            not_tcp: 0,
        }
    }

    fn classify(&mut self, p: &mut Packet, cx: &mut Cx) {
        cx.instr(30);
        let d = p.data();
        cx.read_pkt(34.min(d.len() as u32));
        let Some(ip) = super::parse_ipv4(d) else {
            self.not_tcp += 1;
            return;
        };
        let l4 = ip.l4();
        if ip.proto != 6 || ip.fragment || l4 + 20 > ip.end() {
            self.not_tcp += 1;
            return;
        }
        let doff = ((d[l4 + 12] >> 4) as usize) * 4;
        cx.read_pkt(20);
        if doff < 20 || l4 + doff > ip.end() {
            self.not_tcp += 1;
            return;
        }
        let payload_range = l4 + doff..ip.end();
        let mut key: FlowKey = [0; 13];
        key[0] = 6;
        key[1..5].copy_from_slice(&ip.src);
        key[5..9].copy_from_slice(&ip.dst);
        key[9..13].copy_from_slice(&d[l4..l4 + 4]);
        let now = cx.now_ns;
        let Some(f) = self.table.acquire(cx, &key, true, now) else {
            self.table_full += 1;
            return;
        };
        let slot = f.slot;
        let a = |o: u64| slot as u64 * REC_BYTES + REC_USER + o;
        // Counters and rate window.
        cx.instr(24);
        let seg_bytes = (ip.total) as u64;
        let limit = self.limit;
        let fl = self.table.data(slot);
        for o in [0u64, 8] {
            cx.dynamic_state(Read, OBJ_RECORDS, a(o), 8);
            cx.dynamic_state(Write, OBJ_RECORDS, a(o), 8);
        }
        fl.bytes += seg_bytes;
        fl.packets += 1;
        cx.dynamic_state(Read, OBJ_RECORDS, a(16), 8);
        cx.dynamic_state(Read, OBJ_RECORDS, a(24), 4);
        if f.new || now.saturating_sub(fl.win_start) >= WINDOW_NS {
            if !f.new {
                fl.rate = fl.win_count;
                cx.dynamic_state(Write, OBJ_RECORDS, a(28), 4);
            }
            fl.win_start = now;
            fl.win_count = 0;
            cx.dynamic_state(Write, OBJ_RECORDS, a(16), 8);
        }
        fl.win_count += 1;
        cx.dynamic_state(Write, OBJ_RECORDS, a(24), 4);
        // Classification.
        cx.dynamic_state(Read, OBJ_RECORDS, a(32), 4);
        let payload = &p.data()[payload_range];
        if fl.class == 0 && !payload.is_empty() {
            cx.dynamic_state(Read, OBJ_RECORDS, a(36), 4);
            let take = payload.len().min(limit - fl.buf.len());
            let start = fl.buf.len();
            fl.buf.extend_from_slice(&payload[..take]);
            cx.read_pkt(take as u32);
            let words = take.div_ceil(4) as u32;
            cx.instr(3 * words);
            let base = slot as u64 * limit as u64;
            for w in 0..words as u64 {
                let off = start as u64 + w * 4;
                cx.dynamic_state(Write, OBJ_REASM, base + off, 4);
            }
            cx.dynamic_state(Write, OBJ_RECORDS, a(36), 4);
            // Search the whole buffer (the matcher reads it word by word).
            let s = self.re.search(&fl.buf, self.budget);
            self.searches += 1;
            if s.exhausted {
                self.exhausted += 1;
            }
            cx.instr(24 + (6 * s.steps).min(u32::MAX as u64 / 2) as u32);
            for w in 0..fl.buf.len().div_ceil(4) as u64 {
                cx.dynamic_state(Read, OBJ_REASM, base + w * 4, 4);
            }
            let frames = 32 * s.max_depth.max(1);
            cx.stack(Write, frames);
            cx.stack(Read, frames);
            if s.matched {
                fl.class = 1;
                self.matched += 1;
            } else if fl.buf.len() >= limit {
                fl.class = 2;
                self.nonmatching += 1;
            }
            if fl.class != 0 {
                cx.dynamic_state(Write, OBJ_RECORDS, a(32), 4);
                fl.buf = Vec::new();
            }
        }
        let class = fl.class;
        self.table.release(cx, slot);
        p.anno.paint = class;
        cx.write_meta(1);
    }
}

impl Element for Classifier {
    fn ports(&self) -> Ports {
        Ports::push(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        p.anno.paint = 0;
        self.classify(&mut p, cx);
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({
            "flows": self.table.live(),
            "matching_flows": self.matched,
            "nonmatching_flows": self.nonmatching,
            "searches": self.searches,
            "searches_out_of_budget": self.exhausted,
            "expired_flows": self.table.expired,
            "table_full": self.table_full,
            "not_tcp": self.not_tcp,
        })
    }
    fn code_size(&self) -> u32 {
        2000
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::stateful::flow_table::{OBJ_FLOW_LOCKS, OBJ_TABLE_LOCK};
    use crate::elements::stateful::testutil::{ipv4_frame, tcp};
    use proptest::prelude::*;

    fn cl() -> Classifier {
        Classifier::new(
            Regex::new(L7_HTTP).unwrap(),
            500,
            64,
            64,
            60_000_000_000,
            200_000,
        )
    }

    fn seg(c: &mut Classifier, sport: u16, payload: &[u8]) -> (u8, Cx) {
        let f = ipv4_frame(
            6,
            [8, 8, 8, 8],
            [10, 0, 0, 2],
            &tcp(sport, 40000, 1, payload),
        );
        let mut cx = Cx::new();
        let p = c.simple_action(Packet::from_bytes(&f), &mut cx).unwrap();
        assert_eq!(
            p.data(),
            &f[..],
            "the classifier does not change the packet"
        );
        (p.anno.paint, cx)
    }

    #[test]
    fn pattern_matches_across_a_segment_boundary() {
        let mut c = cl();
        let (k1, _) = seg(&mut c, 80, b"HTTP/1.1 200 OK\r\nServer: t\r\nConte");
        assert_eq!(k1, 0, "not yet: the header name is split");
        let (k2, cx) = seg(&mut c, 80, b"nt-Type: text/html\r\n\r\n");
        assert_eq!(k2, 1);
        assert_eq!(c.matched, 1);
        // The search ran inside the flow lock, after the table lock was released.
        let acc = &cx.trace().accesses;
        let flow_locks: Vec<usize> = acc
            .iter()
            .enumerate()
            .filter(|(_, a)| a.object == OBJ_FLOW_LOCKS as u32)
            .map(|(i, _)| i)
            .collect();
        let reasm: Vec<usize> = acc
            .iter()
            .enumerate()
            .filter(|(_, a)| a.object == OBJ_REASM as u32)
            .map(|(i, _)| i)
            .collect();
        assert!(flow_locks.first() < reasm.first() && reasm.last() < flow_locks.last());
        let table_unlock = acc
            .iter()
            .rposition(|a| a.object == OBJ_TABLE_LOCK as u32 && a.mem.is_persistent())
            .unwrap();
        assert!(table_unlock < reasm[0]);
        // Later packets of a decided flow do not search again.
        let before = c.searches;
        let (k3, _) = seg(&mut c, 80, b"<html>");
        assert_eq!((k3, c.searches), (1, before));
    }

    #[test]
    fn a_flow_without_match_is_decided_after_500_bytes() {
        let mut c = cl();
        let mut last = 0;
        for _ in 0..4 {
            last = seg(&mut c, 5000, &[b'z'; 130]).0;
        }
        assert_eq!(last, 2);
        assert_eq!(c.nonmatching, 1);
        let d = c.table.data(0);
        assert_eq!(d.packets, 4);
        assert_eq!(d.bytes, 4 * (20 + 20 + 130));
    }

    #[test]
    fn non_tcp_passes_without_locks() {
        let mut c = cl();
        let f = ipv4_frame(17, [1, 1, 1, 1], [2, 2, 2, 2], &[0; 8]);
        let mut cx = Cx::new();
        let p = c.simple_action(Packet::from_bytes(&f), &mut cx).unwrap();
        assert_eq!(p.anno.paint, 0);
        assert!(cx
            .trace()
            .accesses
            .iter()
            .all(|a| a.object == 0 || !a.mem.is_persistent()));
        assert_eq!(c.not_tcp, 1);
    }

    #[test]
    fn bad_configurations_are_refused() {
        let env = InitEnv::default();
        for bad in [
            "LIMIT 0",
            "FLOWS -1",
            "PATTERN \"(ab\"",
            "BUCKETS 99999999999",
        ] {
            assert!(make(bad, &env).is_err(), "{bad}");
        }
        assert!(make("LIMIT 100, PATTERN \"^get \"", &env).is_ok());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_frames_do_not_panic(bytes in proptest::collection::vec(any::<u8>(), 0..120), tcp_payload in proptest::collection::vec(any::<u8>(), 0..80)) {
            let mut c = cl();
            let mut cx = Cx::new();
            let n = bytes.len();
            let p = c.simple_action(Packet::from_bytes(&bytes), &mut cx).unwrap();
            prop_assert_eq!(p.len(), n);
            let f = ipv4_frame(6, [1, 2, 3, 4], [5, 6, 7, 8], &tcp(1, 2, 3, &tcp_payload));
            c.simple_action(Packet::from_bytes(&f), &mut cx).unwrap();
        }
    }
}
