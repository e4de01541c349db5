//! `FlowStatsNAT` — the thesis's NAT: address and port translation through a global
//! synchronized flow table, with per-flow statistics and rate monitoring.
//!
//! After the NetThreads thesis, Table 3.1: "rewriting packets from one network as if
//! originating from one machine, and appropriately rewriting the packets flowing in the other
//! direction. As an extension, NAT collects flow statistics and monitors packet rates"; "short
//! transactions that encompass most of the processing; ... a global synchronized hash-table".
//!
//! Input 0 (inside): a TCP or UDP packet (IPv4 in Ethernet, not a fragment) is looked up by
//! (protocol, addresses, ports) in the global table under the table lock; a new flow gets a
//! record whose slot number fixes its public port (`PORT_BASE + slot`); the flow's lock is taken
//! and the table lock released ([`super::flow_table`]); the source address becomes `PUBLIC`
//! and the source port the flow's public port (IP and TCP/UDP checksums updated incrementally,
//! RFC 1624; a UDP checksum of 0 stays 0); the flow's byte and packet counters and one-second
//! rate window are updated; the flow lock is released; the packet leaves on output 0.
//! Input 1 (outside): a packet for `PUBLIC` whose destination port is a flow's public port,
//! coming from that flow's remote address and port, is rewritten back (destination address and
//! port to the inside host's) under the flow's lock and leaves on output 1; others are dropped
//! ("no mapping"). Not TCP/UDP: dropped ("not TCP or UDP"). A full table: dropped ("flow
//! table full").
//!
//! Keywords: `PUBLIC` (address, required), `PORT_BASE` (default 50000), `BUCKETS` (default
//! 1024), `FLOWS` (default 4096, at most 65536 − PORT_BASE), `TIMEOUT` (idle seconds, default
//! 60), `FREE_LISTS` (1 to 64, default 1: the flow records' free lists; more is a per-thread
//! allocator, see flow_table.rs).
//! Ports: 2 push inputs, 2 push outputs.
//! Costs: 30 instructions to parse; the flow table's; 40 to rewrite and fix checksums; 24 for
//! counters and rate. Record fields (after the table's): bytes (+0, 8 B), packets (+8, 8 B),
//! rate-window start (+16, 8 B), window count (+24, 4 B), rate (+28, 4 B).
use super::flow_table::{FlowKey, FlowTable, OBJ_RECORDS, REC_USER};
use crate::conf::{parse_ip, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::{incremental_update, Packet};

pub const CLASS: ClassInfo = ClassInfo {
    name: "FlowStatsNAT",
    summary: "network address and port translation with per-flow statistics and rate monitoring (the thesis's NAT)",
    make,
};

const REC_BYTES: u64 = REC_USER + 32;
const WINDOW_NS: u64 = 1_000_000_000;

#[derive(Default)]
struct Flow {
    bytes: u64,
    packets: u64,
    win_start: u64,
    win_count: u32,
    rate: u32,
}

struct Nat {
    public: [u8; 4],
    port_base: u16,
    table: FlowTable<Flow>,
    out: u64,
    back: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    const C: &str = "FlowStatsNAT";
    let mut a = Args::parse(
        C,
        config,
        &[
            "PUBLIC",
            "PORT_BASE",
            "BUCKETS",
            "FLOWS",
            "TIMEOUT",
            "FREE_LISTS",
        ],
    );
    let public = a
        .keyword_or_positional("PUBLIC")
        .ok_or_else(|| format!("{C}: missing PUBLIC address"))?;
    let public = parse_ip(public.trim()).map_err(|e| format!("{C}: PUBLIC: {e}"))?;
    let port_base = super::bounded(C, "PORT_BASE", a.keyword("PORT_BASE"), 50_000, 65_535)?;
    let flows = super::bounded(C, "FLOWS", a.keyword("FLOWS"), 4096, 65_536 - port_base)? as usize;
    let buckets = super::bounded(C, "BUCKETS", a.keyword("BUCKETS"), 1024, 1 << 20)? as usize;
    let timeout = super::bounded(C, "TIMEOUT", a.keyword("TIMEOUT"), 60, 86_400 * 365)?;
    let lists = super::bounded(C, "FREE_LISTS", a.keyword("FREE_LISTS"), 1, 64)? as usize;
    a.finish()?;
    let mut el = Nat::new(
        public,
        port_base as u16,
        buckets,
        flows,
        timeout * 1_000_000_000,
    );
    el.table = el.table.with_free_lists(lists);
    Ok(Box::new(el))
}

fn put16(d: &mut [u8], at: usize, v: u16) {
    d[at..at + 2].copy_from_slice(&v.to_be_bytes());
}
fn get16(d: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([d[at], d[at + 1]])
}

/// Replace the address at `addr_at` and the port at `port_at`, updating the IP header checksum
/// and the transport checksum incrementally.
#[allow(clippy::too_many_arguments)]
fn rewrite(
    d: &mut [u8],
    ip_off: usize,
    l4: usize,
    proto: u8,
    addr_at: usize,
    port_at: usize,
    addr: [u8; 4],
    port: u16,
) {
    let csum_at = if proto == 6 { l4 + 16 } else { l4 + 6 };
    let mut ipc = get16(d, ip_off + 10);
    let mut l4c = get16(d, csum_at);
    let l4_on = proto == 6 || l4c != 0;
    for i in 0..2 {
        let old = get16(d, addr_at + 2 * i);
        let new = u16::from_be_bytes([addr[2 * i], addr[2 * i + 1]]);
        ipc = incremental_update(ipc, old, new);
        if l4_on {
            l4c = incremental_update(l4c, old, new);
        }
    }
    let oldp = get16(d, port_at);
    if l4_on {
        l4c = incremental_update(l4c, oldp, port);
        if proto == 17 && l4c == 0 {
            l4c = 0xffff;
        }
        put16(d, csum_at, l4c);
    }
    put16(d, ip_off + 10, ipc);
    d[addr_at..addr_at + 4].copy_from_slice(&addr);
    put16(d, port_at, port);
}

impl Nat {
    fn new(public: [u8; 4], port_base: u16, buckets: usize, flows: usize, timeout_ns: u64) -> Self {
        Nat {
            public,
            port_base,
            table: FlowTable::new(buckets, flows, REC_BYTES, timeout_ns),
            out: 0,
            back: 0,
        }
    }

    fn stats_update(&mut self, cx: &mut Cx, slot: u32, bytes: u64, new: bool) {
        let a = |o: u64| slot as u64 * REC_BYTES + REC_USER + o;
        let now = cx.now_ns;
        cx.instr(24);
        let fl = self.table.data(slot);
        for o in [0u64, 8] {
            cx.dynamic_state(Read, OBJ_RECORDS, a(o), 8);
            cx.dynamic_state(Write, OBJ_RECORDS, a(o), 8);
        }
        fl.bytes += bytes;
        fl.packets += 1;
        cx.dynamic_state(Read, OBJ_RECORDS, a(16), 8);
        cx.dynamic_state(Read, OBJ_RECORDS, a(24), 4);
        if new || now.saturating_sub(fl.win_start) >= WINDOW_NS {
            if !new {
                fl.rate = fl.win_count;
                cx.dynamic_state(Write, OBJ_RECORDS, a(28), 4);
            }
            fl.win_start = now;
            fl.win_count = 0;
            cx.dynamic_state(Write, OBJ_RECORDS, a(16), 8);
        }
        fl.win_count += 1;
        cx.dynamic_state(Write, OBJ_RECORDS, a(24), 4);
    }
}

impl Element for Nat {
    fn ports(&self) -> Ports {
        Ports::push(2, 2)
    }
    fn push(&mut self, port: usize, mut p: Packet, cx: &mut Cx) {
        cx.instr(30);
        cx.read_pkt(38.min(p.len() as u32));
        let Some(ip) = super::parse_ipv4(p.data()) else {
            cx.drop_packet(p, "not IPv4");
            return;
        };
        let l4 = ip.l4();
        let min = if ip.proto == 6 { 20 } else { 8 };
        if !(ip.proto == 6 || ip.proto == 17) || ip.fragment || l4 + min > ip.end() {
            cx.drop_packet(p, "not TCP or UDP");
            return;
        }
        let now = cx.now_ns;
        let d = p.data();
        let sport = get16(d, l4);
        let dport = get16(d, l4 + 2);
        if port == 0 {
            let mut key: FlowKey = [0; 13];
            key[0] = ip.proto;
            key[1..5].copy_from_slice(&ip.src);
            key[5..9].copy_from_slice(&ip.dst);
            key[9..13].copy_from_slice(&d[l4..l4 + 4]);
            let Some(f) = self.table.acquire(cx, &key, true, now) else {
                cx.drop_packet(p, "flow table full");
                return;
            };
            cx.instr(40);
            let public_port = self.port_base + f.slot as u16;
            let public = self.public;
            rewrite(
                p.data_mut(),
                ip.off,
                l4,
                ip.proto,
                ip.off + 12,
                l4,
                public,
                public_port,
            );
            cx.write_pkt(12);
            self.stats_update(cx, f.slot, ip.total as u64, f.new);
            self.table.release(cx, f.slot);
            self.out += 1;
            cx.emit(0, p);
        } else {
            let (proto, src) = (ip.proto, ip.src);
            let slot = dport.wrapping_sub(self.port_base) as u32;
            let found = if ip.dst == self.public && dport >= self.port_base {
                self.table.acquire_slot(cx, slot, now, |k| {
                    k[0] == proto && k[5..9] == src && k[11..13] == sport.to_be_bytes()
                })
            } else {
                None
            };
            let Some(slot) = found else {
                cx.drop_packet(p, "no mapping");
                return;
            };
            let k = self.table.key(slot);
            cx.instr(40);
            let host = [k[1], k[2], k[3], k[4]];
            let hport = u16::from_be_bytes([k[9], k[10]]);
            rewrite(
                p.data_mut(),
                ip.off,
                l4,
                ip.proto,
                ip.off + 16,
                l4 + 2,
                host,
                hport,
            );
            cx.write_pkt(12);
            self.stats_update(cx, slot, ip.total as u64, false);
            self.table.release(cx, slot);
            self.back += 1;
            cx.emit(1, p);
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({
            "flows": self.table.live(),
            "expired_flows": self.table.expired,
            "translated_out": self.out,
            "translated_back": self.back,
        })
    }
    fn code_size(&self) -> u32 {
        900
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::stateful::testutil::{ipv4_frame, tcp};
    use pktflow_traffic::{ip_checksum, l4_checksum};
    use proptest::prelude::*;

    fn nat() -> Nat {
        Nat::new([1, 0, 0, 1], 50000, 64, 64, 60_000_000_000)
    }

    fn fix_tcp(f: &mut [u8]) {
        let ip = super::super::parse_ipv4(f).unwrap();
        f[ip.l4() + 16] = 0;
        f[ip.l4() + 17] = 0;
        let c = l4_checksum(ip.src, ip.dst, 6, &f[ip.l4()..ip.end()]);
        f[ip.l4() + 16..ip.l4() + 18].copy_from_slice(&c.to_be_bytes());
    }

    fn valid(d: &[u8]) -> bool {
        let ip = super::super::parse_ipv4(d).unwrap();
        ip_checksum(&d[14..34]) == 0
            && pktflow_traffic::checksum::l4_checksum_ok(
                ip.src,
                ip.dst,
                ip.proto,
                &d[ip.l4()..ip.end()],
            )
    }

    #[test]
    fn outbound_then_reply_round_trip() {
        let mut n = nat();
        let mut f = ipv4_frame(6, [10, 0, 0, 2], [8, 8, 8, 8], &tcp(1234, 80, 7, b"GET /"));
        fix_tcp(&mut f);
        let mut cx = Cx::new();
        n.push(0, Packet::from_bytes(&f), &mut cx);
        let (port, out) = cx.pop_emitted().unwrap();
        assert_eq!(port, 0);
        let d = out.data().to_vec();
        assert_eq!(&d[26..30], &[1, 0, 0, 1]);
        assert_eq!(get16(&d, 34), 50000);
        assert!(valid(&d));
        let mut r = ipv4_frame(
            6,
            [8, 8, 8, 8],
            [1, 0, 0, 1],
            &tcp(80, 50000, 9, b"HTTP/1.1 200"),
        );
        fix_tcp(&mut r);
        n.push(1, Packet::from_bytes(&r), &mut cx);
        let (port, back) = cx.pop_emitted().unwrap();
        assert_eq!(port, 1);
        assert_eq!(&back.data()[30..34], &[10, 0, 0, 2]);
        assert_eq!(get16(back.data(), 36), 1234);
        assert!(valid(back.data()));
        // An unsolicited packet (wrong remote port) is dropped.
        let mut u = ipv4_frame(6, [8, 8, 8, 8], [1, 0, 0, 1], &tcp(81, 50000, 9, b""));
        fix_tcp(&mut u);
        n.push(1, Packet::from_bytes(&u), &mut cx);
        assert_eq!(cx.emitted_count(), 0);
        assert_eq!(n.table.data(0).packets, 2);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_frames_do_not_panic(bytes in proptest::collection::vec(any::<u8>(), 0..120), port in 0usize..2) {
            let mut n = nat();
            let mut cx = Cx::new();
            n.push(port, Packet::from_bytes(&bytes), &mut cx);
        }
    }
}
