//! `ARPQuerier(IP, ETH [, keywords CAPACITY, TIMEOUT, BROADCAST, POLL_TIMEOUT, TABLE])` —
//! encapsulates IP packets in Ethernet headers, finding destination Ethernet addresses with ARP.
//!
//! Input 0: IP packets (IP header at the front) with the destination IP annotation set. If the
//! Ethernet address of the annotation is known the packet gets an Ethernet header (our ETH to
//! it, type 0x0800) and leaves on output 0. Otherwise it is held and an ARP request for the
//! address (from IP/ETH, to ff:ff:ff:ff:ff:ff) is sent, on output 1 when the element has two
//! outputs connected (Click's two-output form), else on output 0; a further request for the
//! same address is sent only when the last one is at least 100 ms old (Click: "at most 10
//! times a second").
//! Special destinations (Click): 0.0.0.0 is dropped (`zero destination`); 255.255.255.255 and
//! the BROADCAST address go to ff:ff:ff:ff:ff:ff; multicast 224/4 to 01:00:5e + the low 23
//! bits. At most CAPACITY packets (default 2048) are held; beyond that they are dropped
//! (`arp queue full`).
//!
//! Input 1: ARP replies with their Ethernet header. A valid Ethernet/IPv4 reply (not from a
//! group Ethernet address, which Click ignores) records sender IP -> sender Ethernet, also
//! when unsolicited, and sends every packet held for that address, in arrival order. The entry
//! is used until TIMEOUT seconds (default 300, 0 = never) after the last reply. Once the last
//! reply is more than POLL_TIMEOUT seconds old (default 60, 0 = never), the next packet sent
//! with the entry is followed by a query (Click's polling), once per reply: unicast to the
//! known Ethernet address, or broadcast with `BROADCAST_POLL true`. The reply
//! itself is consumed (dropped with reason `arp reply consumed`; other packets:
//! `not an ARP reply`).
//!
//! `TABLE NAME` names an ARPTable element, as in Click: lookups and replies then use that
//! shared table (with its TIMEOUT) instead of the querier's own, so several queriers share
//! what each learns; the held packets, query timers and CAPACITY stay the querier's.
//! Static entries (pktflow's extension of the keyword): `TABLE ip eth, ip eth, ...` (the
//! pairs after TABLE may also be separated by spaces). Static entries never expire and
//! replies do not change them.
//!
//! Ports: 2 push inputs, 1-2 push outputs. Queries leave on the last connected output, as in
//! Click (the pktflow keyword `QUERY_OUTPUT 0|1` overrides that).
//!
//! Costs: input 0: 6 instructions, a 4-byte meta-data read (destination) and an 8-byte read of
//! the ARP entry (dynamic state object 0, key = the IP address); hit: 10 instructions, a 14-byte
//! packet-data write and a 2-byte meta-data write. Miss: an 8-byte write of the entry (object 0),
//! an 8-byte write of the held-packet list (dynamic state object 1, key = the IP), 12
//! instructions; a query adds 30 instructions and a 42-byte packet-data write. Input 1: 8
//! instructions, an 18-byte packet-data read, an 8-byte entry read and write (object 0, key =
//! the sender IP), an 8-byte read of the held list (object 1) and, per packet released, 10
//! instructions, an 8-byte held-list write, a 14-byte packet-data write and a 2-byte meta-data
//! write. The 18 bytes are the fields Click's `ARPQuerier::handle_response` reads: the Ethernet
//! type, `ar_hrd`, `ar_pro`, `ar_op`, `arp_spa` and `arp_sha`; the earlier rule read the whole
//! 28-byte ARP body (lengths and target fields Click never looks at) and not the type.
use crate::conf::{parse_ether, parse_ip, parse_uint, split_words, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::elements::ip::arp_table::IpMap;
use crate::net;
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;
use std::collections::VecDeque;

pub const CLASS: ClassInfo = ClassInfo {
    name: "ARPQuerier",
    summary: "Ethernet-encapsulate IP packets, resolving next hops with ARP",
    make,
};

/// Click sends a query for an address at most ten times a second.
const REQUERY_NS: u64 = 100_000_000;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry {
    pub(crate) eth: [u8; 6],
    /// Expiry time (ns); u64::MAX for static entries.
    pub(crate) expires: u64,
    is_static: bool,
    /// Time of the last reply (ns), and whether a poll query was sent since.
    pub(crate) learned: u64,
    polled: bool,
}

impl Entry {
    /// An entry set by a reply (or ARPTable's `insert`) at `now`.
    pub(crate) fn learned(eth: [u8; 6], now: u64, expires: u64) -> Entry {
        Entry {
            eth,
            expires,
            is_static: false,
            learned: now,
            polled: false,
        }
    }
}

/// Emptied held-packet queues kept for the next destinations to miss; beyond that, freed.
const SPARE_QUEUES_MAX: usize = 64;

/// The packets held per unresolved destination, in arrival order. A queue emptied by a reply
/// is kept (up to [`SPARE_QUEUES_MAX`]) and taken by the next destination that misses, so
/// resolving destination after destination does not allocate a queue for each.
#[derive(Default)]
struct Waiting {
    queues: IpMap<VecDeque<Packet>>,
    spare: Vec<VecDeque<Packet>>,
}

impl Waiting {
    /// The queue of `dst`, as `HashMap::entry`: [`WaitingEntry::or_default`] gives it, a spare
    /// one when `dst` has none.
    fn entry(&mut self, dst: [u8; 4]) -> WaitingEntry<'_> {
        WaitingEntry { w: self, dst }
    }

    /// Take the queue of `dst` (give it back with [`Waiting::keep`] once emptied).
    fn remove(&mut self, dst: &[u8; 4]) -> Option<VecDeque<Packet>> {
        self.queues.remove(dst)
    }

    /// Keep an emptied queue for the next destination that misses.
    fn keep(&mut self, q: VecDeque<Packet>) {
        if q.is_empty() && self.spare.len() < SPARE_QUEUES_MAX {
            self.spare.push(q);
        }
    }
}

struct WaitingEntry<'a> {
    w: &'a mut Waiting,
    dst: [u8; 4],
}

impl<'a> WaitingEntry<'a> {
    fn or_default(self) -> &'a mut VecDeque<Packet> {
        let Waiting { queues, spare } = self.w;
        queues
            .entry(self.dst)
            .or_insert_with(|| spare.pop().unwrap_or_default())
    }
}

pub struct ARPQuerier {
    ip: [u8; 4],
    eth: [u8; 6],
    broadcast: Option<[u8; 4]>,
    capacity: usize,
    timeout_ns: u64,
    poll_ns: u64,
    broadcast_poll: bool,
    query_port: Option<usize>,
    nout: usize,
    table: IpMap<Entry>,
    pending: Waiting,
    last_query: IpMap<u64>,
    held: usize,
    queries: u64,
    hits: u64,
    drops: u64,
    /// The ARPTable named by TABLE, whose entries replace `table` while a packet is processed.
    shared: Option<std::sync::Arc<std::sync::Mutex<crate::elements::ip::arp_table::ArpTableState>>>,
}

fn parse_pairs(c: &str, s: &str, out: &mut Vec<([u8; 4], [u8; 6])>) -> Result<(), String> {
    let w = split_words(s);
    if !w.len().is_multiple_of(2) || w.is_empty() {
        return Err(format!(
            "{c}: TABLE: expected the name of an ARPTable element or 'IP ETH' pairs, found '{s}'"
        ));
    }
    for pair in w.chunks(2) {
        let ip = parse_ip(&pair[0]).map_err(|e| format!("{c}: TABLE: {e}"))?;
        let eth = parse_ether(&pair[1]).map_err(|e| format!("{c}: TABLE: {e}"))?;
        out.push((ip, eth));
    }
    Ok(())
}

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "ARPQuerier";
    let mut a = Args::parse(
        c,
        config,
        &[
            "IP",
            "ETH",
            "CAPACITY",
            "TIMEOUT",
            "BROADCAST",
            "POLL_TIMEOUT",
            "TABLE",
            "QUERY_OUTPUT",
            "BROADCAST_POLL",
            "ENTRY_CAPACITY",
            "ENTRY_PACKET_CAPACITY",
        ],
    );
    let ip_s = a
        .keyword_or_positional("IP")
        .ok_or("ARPQuerier: missing argument IP")?;
    // Allow "IP ETH" in one argument.
    // An AddressInfo name alone gives both (`ARPQuerier(intern)`), as in Click.
    let named = crate::conf::lookup_name(ip_s.trim(), &[])
        .filter(|e| e.eth.is_some() && (e.ip.is_some() || e.net.is_some()));
    let (ip, eth) = match split_words(&ip_s).as_slice() {
        [i, e] => (parse_ip(i), parse_ether(e)),
        [n] if named.is_some() && a.keyword("ETH").is_none() => (parse_ip(n), parse_ether(n)),
        _ => {
            let eth_s = a
                .keyword_or_positional("ETH")
                .ok_or("ARPQuerier: missing argument ETH")?;
            (parse_ip(&ip_s), parse_ether(&eth_s))
        }
    };
    let ip = ip.map_err(|e| format!("{c}: IP: {e}"))?;
    let eth = eth.map_err(|e| format!("{c}: ETH: {e}"))?;
    let mut statics = Vec::new();
    let mut shared = None;
    let table_kw = a.keyword("TABLE");
    let named_table = table_kw.as_deref().map(str::trim).filter(|t| {
        env.peers
            .iter()
            .any(|(n, cl, _)| n == t && cl == "ARPTable")
    });
    if let Some(t) = named_table {
        shared = Some(env.shared.arp_tables.get(t));
    } else if let Some(t) = table_kw {
        parse_pairs(c, &t, &mut statics)?;
        // Pairs after a comma arrive as positional arguments.
        while let Some(more) = a.optional() {
            parse_pairs(c, &more, &mut statics)?;
        }
    }
    let capacity = match a.keyword("CAPACITY") {
        Some(s) => parse_uint(&s).map_err(|e| format!("{c}: CAPACITY: {e}"))? as usize,
        None => 2048,
    };
    let timeout_ns = match a.keyword("TIMEOUT") {
        Some(s) => parse_uint(&s).map_err(|e| format!("{c}: TIMEOUT: {e}"))? * 1_000_000_000,
        None => 300 * 1_000_000_000,
    };
    let broadcast = match a.keyword("BROADCAST") {
        Some(s) => Some(parse_ip(&s).map_err(|e| format!("{c}: BROADCAST: {e}"))?),
        None => None,
    };
    let query_port = match a.keyword("QUERY_OUTPUT") {
        Some(s) => match parse_uint(&s) {
            Ok(p @ 0..=1) => Some(p as usize),
            _ => return Err(format!("{c}: QUERY_OUTPUT must be 0 or 1")),
        },
        None => None,
    };
    let poll_ns = match a.keyword("POLL_TIMEOUT") {
        Some(s) => crate::elements::nat::flow::parse_seconds(&s)
            .map_err(|e| format!("{c}: POLL_TIMEOUT: {e}"))?,
        None => 60 * 1_000_000_000,
    };
    let broadcast_poll = match a.keyword("BROADCAST_POLL") {
        Some(s) => crate::conf::parse_bool(&s).map_err(|e| format!("{c}: BROADCAST_POLL: {e}"))?,
        None => false,
    };
    for k in ["ENTRY_CAPACITY", "ENTRY_PACKET_CAPACITY"] {
        a.keyword(k);
    }
    a.finish()?;
    let mut table = IpMap::default();
    for (i, e) in statics {
        table.insert(
            i,
            Entry {
                eth: e,
                expires: u64::MAX,
                is_static: true,
                learned: 0,
                polled: false,
            },
        );
    }
    Ok(Box::new(ARPQuerier {
        ip,
        eth,
        broadcast,
        capacity,
        timeout_ns: if timeout_ns == 0 {
            u64::MAX
        } else {
            timeout_ns
        },
        poll_ns,
        broadcast_poll,
        query_port,
        nout: 1,
        table,
        pending: Waiting::default(),
        last_query: IpMap::default(),
        held: 0,
        queries: 0,
        hits: 0,
        drops: 0,
        shared,
    }))
}

impl ARPQuerier {
    #[inline]
    fn encap(&self, mut p: Packet, dst: [u8; 6], cx: &mut Cx) -> Packet {
        cx.instr(10);
        p.push_front(net::ETHER_LEN);
        net::write_ether(p.data_mut(), dst, self.eth, net::ETHERTYPE_IP);
        cx.write_pkt(14);
        cx.write_meta(2);
        p
    }

    fn send_query(&mut self, target: [u8; 4], cx: &mut Cx) {
        self.send_query_to(target, net::ETHER_BROADCAST, cx)
    }

    /// An ARP request for `target`, sent to Ethernet address `to` (broadcast, or the known
    /// address when polling).
    fn send_query_to(&mut self, target: [u8; 4], to: [u8; 6], cx: &mut Cx) {
        let mut q = cx.new_packet(net::ETHER_LEN + net::ARP_LEN);
        q.anno.timestamp_ns = cx.now_ns;
        let d = q.data_mut();
        net::write_ether(d, to, self.eth, net::ETHERTYPE_ARP);
        net::write_arp(
            &mut d[net::ETHER_LEN..],
            net::ARP_OP_REQUEST,
            self.eth,
            self.ip,
            [0; 6],
            target,
        );
        cx.instr(30);
        cx.write_pkt(42);
        self.queries += 1;
        let port = self.query_port.unwrap_or(self.nout - 1);
        cx.emit(port, q);
    }

    fn handle_ip(&mut self, p: Packet, cx: &mut Cx) {
        cx.instr(6);
        cx.read_meta(4);
        let dst = p.anno.dst_ip;
        if dst == [0; 4] {
            self.drops += 1;
            cx.drop_packet(p, "zero destination");
            return;
        }
        if dst == [255; 4] || Some(dst) == self.broadcast {
            let p = self.encap(p, net::ETHER_BROADCAST, cx);
            cx.emit(0, p);
            return;
        }
        if dst[0] >> 4 == 0xe {
            let m = [0x01, 0x00, 0x5e, dst[1] & 0x7f, dst[2], dst[3]];
            let p = self.encap(p, m, cx);
            cx.emit(0, p);
            return;
        }
        let key = u32::from_be_bytes(dst) as u64;
        cx.dynamic_state(Read, 0, key, 8);
        if let Some(e) = self.table.get_mut(&dst) {
            if e.expires >= cx.now_ns {
                let eth = e.eth;
                let poll = !e.is_static
                    && !e.polled
                    && self.poll_ns > 0
                    && cx.now_ns.saturating_sub(e.learned) > self.poll_ns;
                if poll {
                    e.polled = true;
                }
                self.hits += 1;
                let p = self.encap(p, eth, cx);
                cx.emit(0, p);
                if poll {
                    let to = if self.broadcast_poll {
                        net::ETHER_BROADCAST
                    } else {
                        eth
                    };
                    self.send_query_to(dst, to, cx);
                }
                return;
            }
        }
        self.miss(p, dst, cx);
    }

    /// [`Element::push`] with a shared ARPTable: its entries are held for the packet. Out of
    /// line, so that the push of an ARPQuerier with its own table carries no lock handling.
    #[inline(never)]
    fn push_shared(&mut self, port: usize, p: Packet, cx: &mut Cx) {
        let shared = self.shared.clone();
        let mut g = shared
            .as_ref()
            .map(|s| crate::elements::nat::shared::lock(s));
        if let Some(g) = g.as_mut() {
            std::mem::swap(&mut self.table, &mut g.entries);
            self.timeout_ns = g.timeout_ns;
            g.now_ns = g.now_ns.max(cx.now_ns);
        }
        if port == 0 {
            self.handle_ip(p, cx)
        } else {
            self.handle_arp(p, cx)
        }
        if let Some(g) = g.as_mut() {
            std::mem::swap(&mut self.table, &mut g.entries);
        }
    }

    /// No fresh entry for `dst`: hold the packet and maybe query. Out of line: the hit path
    /// (nearly every packet) need not pay for this one's frame.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, p: Packet, dst: [u8; 4], cx: &mut Cx) {
        let key = u32::from_be_bytes(dst) as u64;
        cx.instr(12);
        if self.held >= self.capacity {
            self.drops += 1;
            cx.drop_packet(p, "arp queue full");
            return;
        }
        cx.dynamic_state(Write, 0, key, 8);
        cx.dynamic_state(Write, 1, key, 8);
        self.pending.entry(dst).or_default().push_back(p);
        self.held += 1;
        let due = self
            .last_query
            .get(&dst)
            .is_none_or(|&t| cx.now_ns.saturating_sub(t) >= REQUERY_NS);
        if due {
            self.last_query.insert(dst, cx.now_ns);
            self.send_query(dst, cx);
        }
    }

    fn handle_arp(&mut self, p: Packet, cx: &mut Cx) {
        cx.instr(8);
        let d = p.data();
        if d.len() < net::ETHER_LEN + net::ARP_LEN {
            cx.drop_packet(p, "not an ARP reply");
            return;
        }
        // The fields Click's handle_response reads: the Ethernet type, then ar_hrd, ar_pro,
        // ar_op, arp_spa and arp_sha (2 + 2 + 2 + 2 + 4 + 6 bytes).
        cx.read_pkt(2);
        if net::ether_type(d) != net::ETHERTYPE_ARP {
            cx.drop_packet(p, "not an ARP reply");
            return;
        }
        cx.read_pkt(16);
        let a = &d[net::ETHER_LEN..];
        if !net::arp_ok(a) || net::arp_op(a) != net::ARP_OP_REPLY {
            cx.drop_packet(p, "not an ARP reply");
            return;
        }
        let (spa, sha) = (net::arp_spa(a), net::arp_sha(a));
        let key = u32::from_be_bytes(spa) as u64;
        cx.dynamic_state(Read, 0, key, 8);
        // Click 2.1 stores no entry for a group (multicast) sender Ethernet address.
        if sha[0] & 1 == 1 {
            cx.drop_packet(p, "arp reply consumed");
            return;
        }
        let is_static = self.table.get(&spa).is_some_and(|e| e.is_static);
        if !is_static {
            cx.dynamic_state(Write, 0, key, 8);
            let expires = cx.now_ns.saturating_add(self.timeout_ns);
            self.table.insert(
                spa,
                Entry {
                    eth: sha,
                    expires,
                    is_static: false,
                    learned: cx.now_ns,
                    polled: false,
                },
            );
        }
        let eth = self.table[&spa].eth;
        cx.drop_packet(p, "arp reply consumed");
        cx.dynamic_state(Read, 1, key, 8);
        if let Some(mut q) = self.pending.remove(&spa) {
            self.last_query.remove(&spa);
            for held in q.drain(..) {
                self.held -= 1;
                cx.dynamic_state(Write, 1, key, 8);
                let h = self.encap(held, eth, cx);
                cx.emit(0, h);
            }
            self.pending.keep(q);
        }
    }
}

impl Element for ARPQuerier {
    fn ports(&self) -> Ports {
        Ports::push(2, 1).with_outputs(1, 2)
    }
    fn set_port_counts(&mut self, _inputs: usize, outputs: usize) {
        self.nout = outputs.clamp(1, 2);
    }
    fn push(&mut self, port: usize, p: Packet, cx: &mut Cx) {
        if self.shared.is_some() {
            return self.push_shared(port, p, cx);
        }
        if port == 0 {
            self.handle_ip(p, cx)
        } else {
            self.handle_arp(p, cx)
        }
    }
    fn held(&self) -> usize {
        self.held
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"queries": self.queries, "hits": self.hits, "drops": self.drops,
        "held": self.held, "entries": match &self.shared {
            Some(s) => crate::elements::nat::shared::lock(s).entries.len(),
            None => self.table.len(),
        }})
    }
    fn code_size(&self) -> u32 {
        320
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::net;
    use pktflow_model::MemType;
    use pktflow_traffic::Packet;

    const MY: [u8; 4] = [192, 168, 1, 1];

    #[test]
    fn an_emptied_queue_serves_the_next_destination_to_miss() {
        let mut w = super::Waiting::default();
        for n in 0..3 {
            w.entry([10, 0, 0, 1])
                .or_default()
                .push_back(Packet::zeroed(n));
        }
        w.entry([10, 0, 0, 2])
            .or_default()
            .push_back(Packet::zeroed(7));
        let mut q = w.remove(&[10, 0, 0, 1]).unwrap();
        let lens: Vec<usize> = q.drain(..).map(|p| p.len()).collect();
        assert_eq!(lens, [0, 1, 2], "released in arrival order");
        let cap = q.capacity();
        w.keep(q);
        assert_eq!(w.spare.len(), 1);
        // The next destination to miss takes it; one already waiting keeps its own.
        w.entry([10, 0, 0, 3])
            .or_default()
            .push_back(Packet::zeroed(1));
        w.entry([10, 0, 0, 2])
            .or_default()
            .push_back(Packet::zeroed(8));
        assert!(w.spare.is_empty());
        assert_eq!(w.queues[&[10, 0, 0, 3]].capacity(), cap);
        assert_eq!(w.queues[&[10, 0, 0, 2]].len(), 2);
        // A queue still holding packets is not kept, and at most SPARE_QUEUES_MAX are.
        let full = w.remove(&[10, 0, 0, 2]).unwrap();
        w.keep(full);
        assert!(w.spare.is_empty());
        for _ in 0..super::SPARE_QUEUES_MAX + 5 {
            w.keep(std::collections::VecDeque::with_capacity(1));
        }
        assert_eq!(w.spare.len(), super::SPARE_QUEUES_MAX);
    }
    const MYETH: [u8; 6] = [0, 0, 0xc0, 0x4f, 0x71, 0xef];
    const PEER_ETH: [u8; 6] = [2, 0, 0, 0, 0, 7];

    fn ip_to(dst: [u8; 4], n: usize) -> Packet {
        let mut p = Packet::from_bytes(&ipv4([10, 0, 0, 2], dst, 63, &[], n, 0));
        p.anno.dst_ip = dst;
        p
    }

    #[test]
    fn query_then_reply_releases_held_packets() {
        let mut e = make("ARPQuerier", "192.168.1.1, 00:00:c0:4f:71:ef");
        let peer = [192, 168, 1, 7];
        let (out, t) = push_at(e.as_mut(), 0, ip_to(peer, 10), 1_000);
        assert_eq!(out.len(), 1, "one query");
        let q = out[0].1.data();
        assert_eq!(net::ether_dst(q), net::ETHER_BROADCAST);
        assert_eq!(net::ether_type(q), net::ETHERTYPE_ARP);
        let a = &q[14..];
        assert_eq!(
            (
                net::arp_op(a),
                net::arp_spa(a),
                net::arp_tpa(a),
                net::arp_sha(a)
            ),
            (1, MY, peer, MYETH)
        );
        // The entry and held list are dynamic state keyed by the IP address.
        let key = u32::from_be_bytes(peer) as u64;
        assert!(t
            .accesses
            .iter()
            .any(|m| m.mem == MemType::DynamicState && m.key == key));
        assert_eq!(e.held(), 1);
        // A second packet 1 ms later: held, no new query (rate limit).
        let (out, _) = push_at(e.as_mut(), 0, ip_to(peer, 20), 1_001_000);
        assert!(out.is_empty());
        assert_eq!(e.held(), 2);
        // The reply releases both, in order, encapsulated to the peer.
        let reply = arp(2, PEER_ETH, peer, MYETH, MY);
        let (out, t) = push_at(e.as_mut(), 1, Packet::from_bytes(&reply), 2_000_000);
        assert_eq!(drop_reasons(&t), vec!["arp reply consumed"]);
        assert_eq!(out.len(), 2);
        assert_eq!(e.held(), 0);
        for ((port, p), n) in out.iter().zip([10, 20]) {
            assert_eq!(*port, 0);
            let d = p.data();
            assert_eq!(
                (net::ether_dst(d), net::ether_src(d), net::ether_type(d)),
                (PEER_ETH, MYETH, 0x0800)
            );
            assert_eq!(d.len(), 14 + 20 + n);
        }
        // Now known: a hit goes straight out.
        let (out, _) = push_at(e.as_mut(), 0, ip_to(peer, 5), 3_000_000);
        assert_eq!(out.len(), 1);
        assert_eq!(net::ether_dst(out[0].1.data()), PEER_ETH);
        // Entries expire after TIMEOUT (300 s by default): the next packet queries again.
        let (out, _) = push_at(e.as_mut(), 0, ip_to(peer, 5), 400_000_000_000);
        assert_eq!(out.len(), 1);
        assert_eq!(net::ether_type(out[0].1.data()), net::ETHERTYPE_ARP);
    }

    #[test]
    fn a_reply_reads_the_fields_click_reads() {
        let mut e = make("ARPQuerier", "192.168.1.1, 00:00:c0:4f:71:ef");
        let peer = [192, 168, 1, 7];
        let reply = arp(2, PEER_ETH, peer, MYETH, MY);
        let (_, t) = push_at(e.as_mut(), 1, Packet::from_bytes(&reply), 1_000);
        let read: u32 = t
            .accesses
            .iter()
            .filter(|m| m.mem == MemType::PacketData)
            .map(|m| m.bytes)
            .sum();
        assert_eq!(read, 18);
        // A hit writes the 14-byte Ethernet header.
        let (_, t) = push_at(e.as_mut(), 0, ip_to(peer, 5), 2_000);
        let pd: Vec<_> = t
            .accesses
            .iter()
            .filter(|m| m.mem == MemType::PacketData)
            .map(|m| (m.kind, m.bytes))
            .collect();
        assert_eq!(pd, vec![(pktflow_model::AccessKind::Write, 14)]);
    }

    #[test]
    fn click_timers_requery_poll_and_unsolicited_replies() {
        let mut e = make("ARPQuerier", "192.168.1.1, 00:00:c0:4f:71:ef");
        let peer = [192, 168, 1, 7];
        let ms = 1_000_000u64;
        let queries = |out: &[(usize, Packet)]| {
            out.iter()
                .filter(|(_, p)| net::ether_type(p.data()) == net::ETHERTYPE_ARP)
                .count()
        };
        assert_eq!(queries(&push_at(e.as_mut(), 0, ip_to(peer, 1), 0).0), 1);
        // At most one query per 100 ms for an address.
        assert_eq!(
            queries(&push_at(e.as_mut(), 0, ip_to(peer, 1), 99 * ms).0),
            0
        );
        assert_eq!(
            queries(&push_at(e.as_mut(), 0, ip_to(peer, 1), 100 * ms).0),
            1
        );
        // A reply from a group Ethernet address is ignored.
        let other = [192, 168, 1, 8];
        push_at(
            e.as_mut(),
            1,
            Packet::from_bytes(&arp(2, [1, 0, 0x5e, 0, 0, 1], other, MYETH, MY)),
            101 * ms,
        );
        assert_eq!(
            queries(&push_at(e.as_mut(), 0, ip_to(other, 1), 102 * ms).0),
            1
        );
        // The solicited reply: held packets go, then hits until POLL_TIMEOUT (60 s) has passed;
        // the first packet after that is sent and followed by one poll query.
        let t0 = 200 * ms;
        let (out, _) = push_at(
            e.as_mut(),
            1,
            Packet::from_bytes(&arp(2, PEER_ETH, peer, MYETH, MY)),
            t0,
        );
        assert_eq!((out.len(), queries(&out)), (3, 0));
        assert_eq!(
            queries(&push_at(e.as_mut(), 0, ip_to(peer, 1), t0 + 60_000 * ms).0),
            0
        );
        let (out, _) = push_at(e.as_mut(), 0, ip_to(peer, 1), t0 + 60_001 * ms);
        assert_eq!((out.len(), queries(&out)), (2, 1));
        assert_eq!(
            net::ether_type(out[0].1.data()),
            0x0800,
            "the packet first, then the poll"
        );
        assert_eq!(
            net::ether_dst(out[1].1.data()),
            PEER_ETH,
            "polls are unicast"
        );
        let (out, _) = push_at(e.as_mut(), 0, ip_to(peer, 1), t0 + 60_002 * ms);
        assert_eq!((out.len(), queries(&out)), (1, 0), "one poll per reply");
        // Two connected outputs: queries leave on the last one, as in Click.
        let mut two = make("ARPQuerier", "192.168.1.1, 00:00:c0:4f:71:ef");
        two.set_port_counts(2, 2);
        assert_eq!(push(two.as_mut(), 0, ip_to(peer, 1)).0[0].0, 1);
    }

    #[test]
    fn static_table_special_addresses_and_query_output() {
        let mut e = make(
            "ARPQuerier",
            "192.168.1.1, 00:00:c0:4f:71:ef, TABLE 192.168.1.5 02:00:00:00:00:05, 192.168.1.6 02:00:00:00:00:06, QUERY_OUTPUT 1, CAPACITY 1",
        );
        let (out, _) = push(e.as_mut(), 0, ip_to([192, 168, 1, 6], 1));
        assert_eq!(net::ether_dst(out[0].1.data()), [2, 0, 0, 0, 0, 6]);
        let (out, _) = push(e.as_mut(), 0, ip_to([255; 4], 1));
        assert_eq!(net::ether_dst(out[0].1.data()), net::ETHER_BROADCAST);
        let (out, _) = push(e.as_mut(), 0, ip_to([224, 129, 2, 3], 1));
        assert_eq!(net::ether_dst(out[0].1.data()), [1, 0, 0x5e, 1, 2, 3]);
        let (out, t) = push(e.as_mut(), 0, ip_to([0; 4], 1));
        assert!(out.is_empty());
        assert_eq!(drop_reasons(&t), vec!["zero destination"]);
        let (out, _) = push(e.as_mut(), 0, ip_to([192, 168, 1, 9], 1));
        assert_eq!(out[0].0, 1, "queries on output 1");
        let (_, t) = push(e.as_mut(), 0, ip_to([192, 168, 1, 10], 1));
        assert_eq!(drop_reasons(&t), vec!["arp queue full"]);
        // A reply cannot change a static entry.
        let r = arp(2, [9; 6], [192, 168, 1, 6], MYETH, MY);
        push(e.as_mut(), 1, Packet::from_bytes(&r));
        let (out, _) = push(e.as_mut(), 0, ip_to([192, 168, 1, 6], 1));
        assert_eq!(net::ether_dst(out[0].1.data()), [2, 0, 0, 0, 0, 6]);
        let bad = crate::registry::find("ARPQuerier").unwrap();
        let env = crate::conf::InitEnv::default();
        assert!((bad.make)("1.2.3.4, 00:00:00:00:00:01, TABLE arpt", &env).is_err());
    }
}
