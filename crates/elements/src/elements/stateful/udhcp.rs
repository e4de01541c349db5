//! `DHCPServer` — the thesis's UDHCP: a DHCP server (RFC 2131) whose leases live in a linearly
//! traversed array and whose new addresses are offered only after a ping for them times out.
//!
//! After the NetThreads thesis, Table 3.1: "Derived from the widely-used open-source DHCP
//! server. As in the original code, leases are stored in a linearly traversed array and IP
//! addresses are leased after a ping request for them expires, to ensure that they are
//! unused"; "Periodic polling on databases for time expired records results in many
//! read-dominated transactions"; "high contention on shared lease and awaiting-for-ping array
//! data structures".
//!
//! State: the lease array (entry `i` is the address `POOL + i`: client hardware address,
//! state, expiry), under the global *lease lock*; the awaiting-ping array (`PINGS` entries:
//! client, transaction id, flags, lease index, deadline), under the global *ping lock*.
//!
//! Every packet first (1) polls the awaiting-ping array under the ping lock: an entry whose
//! deadline passed (no echo reply came) is removed and, under the lease lock, its address is
//! marked offered and a DHCPOFFER leaves on output 0; then (2) when `POLL` seconds have passed
//! since the last poll, scans the whole lease array under the lease lock and frees expired
//! leases. Then the packet itself:
//! - DHCPDISCOVER: under the lease lock, search the array for the client's lease; found, it is
//!   offered at once (output 0); otherwise search the array for the first free address, reserve
//!   it, and (under the ping lock) add an awaiting-ping entry and send an ICMP echo request to
//!   the address (output 1). No free address: dropped ("address pool exhausted").
//! - DHCPREQUEST: (a server identifier that is not ours: dropped, "for another server"); under
//!   the lease lock, the client's lease (by hardware address) whose address is the requested
//!   one (option 50, else `ciaddr`) is bound for `LEASE` seconds and a DHCPACK leaves on output
//!   0; otherwise a DHCPNAK.
//! - DHCPRELEASE: under the lease lock, the client's lease is freed (no reply; the packet is
//!   consumed: "released").
//! - An ICMP echo reply from an address awaiting its ping: the address is in use; its entry is
//!   removed and the lease marked in use by an unknown host for `LEASE` seconds.
//! - Anything else is dropped with a reason.
//!
//! Replies follow RFC 2131 (Table 3; section 4.1 for the destination): BOOTREPLY, `xid`,
//! `flags` and `giaddr` and `chaddr` copied, `yiaddr` the address (0 in a NAK), `ciaddr` copied
//! in an ACK, options 53 (type), 54 (server identifier), 51 (lease time, OFFER/ACK), 1 (subnet
//! mask, OFFER/ACK), 255, padded with zeros to the 300-byte BOOTP minimum; sent from `SERVER`
//! port 67 to port 68, to the broadcast address (Ethernet and IP) when the client set the
//! broadcast flag or for a NAK, otherwise to `yiaddr` at `chaddr`; IP TTL 64, identification 0,
//! UDP checksum computed.
//!
//! Keywords: `SERVER` (address, required), `MAC` (server Ethernet address, required), `POOL`
//! (first leased address, required), `LEASES` (array size, default 20000), `MASK` (prefix
//! length for option 1, default 16), `LEASE` (seconds, default 3600), `OFFER_HOLD` (seconds an
//! offered address stays reserved, default 60), `PING_WAIT` (milliseconds, default 500),
//! `PINGS` (awaiting-ping entries, default 64), `POLL` (seconds between expiry polls, default
//! 1), `SECTIONS` (`search`, default: one critical section over each lease-array search and
//! the change it leads to, under the array's lock, the thesis's chapter 6-7 code; `entry`: one
//! per entry examined, under the entry's own lock, the entry found staying locked for its
//! change, as chapter 8's short transactions; object 0's key is then 1 + the entry's index).
//!
//! Hardware addresses are compared as `memcmp` compares them: word by word up to the first
//! word that differs, so a search reads one word of a cleared entry and, for clients whose
//! addresses share a first word, two of a used one (all four and the state only on a match).
//! Ports: 1 push input, 2 push outputs (0 DHCP replies, 1 ping requests).
//! Costs: 60 instructions to parse; 6 per lease-array entry and per awaiting-ping entry
//! visited; 150 to build a reply plus one per 2 bytes checksummed. State objects: 0 lease lock,
//! 1 lease array (key index × 32 + field: hardware address +0 16 B, state +16 4 B, expiry +24
//! 8 B), 2 ping lock, 3 awaiting-ping array (key index × 32 + field), 4 poll time.
use crate::conf::{parse_ether, parse_ip, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::{ip_checksum, l4_checksum, Packet};

use super::{lock, unlock};

pub const CLASS: ClassInfo = ClassInfo {
    name: "DHCPServer",
    summary: "DHCP server with a linearly searched lease array and ping-before-offer (the thesis's UDHCP)",
    make,
};

const OBJ_LEASE_LOCK: u8 = 0;
const OBJ_LEASES: u8 = 1;
const OBJ_PING_LOCK: u8 = 2;
const OBJ_PINGS: u8 = 3;
const OBJ_POLL: u8 = 4;
const SEC: u64 = 1_000_000_000;

pub const DISCOVER: u8 = 1;
pub const OFFER: u8 = 2;
pub const REQUEST: u8 = 3;
pub const DECLINE: u8 = 4;
pub const ACK: u8 = 5;
pub const NAK: u8 = 6;
pub const RELEASE: u8 = 7;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Free,
    /// Reserved while its ping is pending.
    Pinging,
    Offered,
    Bound,
    /// Answered a ping: used by a host we did not lease it to.
    InUse,
}

#[derive(Clone, Copy)]
struct Lease {
    chaddr: [u8; 16],
    state: State,
    expires: u64,
}

#[derive(Clone, Copy)]
struct Ping {
    chaddr: [u8; 16],
    xid: [u8; 4],
    flags: [u8; 2],
    giaddr: [u8; 4],
    index: u32,
    deadline: u64,
}

/// How the lease array's searches are synchronized.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Sections {
    /// One critical section over each whole search (and the change it leads to): the thesis's
    /// chapter 6-7 code, Table 6.2's 90% synchronized instructions.
    Search,
    /// One critical section per entry examined; the entry found stays locked for its change:
    /// the short transactions of the thesis's chapter 8 code (Table 8.1: 4 distinct words per
    /// transaction on average, at most 20).
    Entry,
}

struct Server {
    sections: Sections,
    ip: [u8; 4],
    mac: [u8; 6],
    pool: u32,
    mask: u8,
    lease_ns: u64,
    hold_ns: u64,
    ping_ns: u64,
    poll_ns: u64,
    leases: Vec<Lease>,
    pings: Vec<Ping>,
    ping_cap: usize,
    next_poll: u64,
    counts: [u64; 8],
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    const C: &str = "DHCPServer";
    let mut a = Args::parse(
        C,
        config,
        &[
            "SERVER",
            "MAC",
            "POOL",
            "LEASES",
            "MASK",
            "LEASE",
            "OFFER_HOLD",
            "PING_WAIT",
            "PINGS",
            "POLL",
            "SECTIONS",
        ],
    );
    let need = |a: &mut Args, k: &str| a.keyword(k).ok_or_else(|| format!("{C}: missing {k}"));
    let ip = parse_ip(need(&mut a, "SERVER")?.trim()).map_err(|e| format!("{C}: SERVER: {e}"))?;
    let mac = parse_ether(need(&mut a, "MAC")?.trim()).map_err(|e| format!("{C}: MAC: {e}"))?;
    let pool = parse_ip(need(&mut a, "POOL")?.trim()).map_err(|e| format!("{C}: POOL: {e}"))?;
    let leases = super::bounded(C, "LEASES", a.keyword("LEASES"), 20_000, 1 << 20)?;
    let mask = super::bounded(C, "MASK", a.keyword("MASK"), 16, 32)? as u8;
    let lease = super::bounded(C, "LEASE", a.keyword("LEASE"), 3600, 86_400 * 365)?;
    let hold = super::bounded(C, "OFFER_HOLD", a.keyword("OFFER_HOLD"), 60, 86_400)?;
    let ping = super::bounded(C, "PING_WAIT", a.keyword("PING_WAIT"), 500, 3_600_000)?;
    let pings = super::bounded(C, "PINGS", a.keyword("PINGS"), 64, 1 << 16)? as usize;
    let poll = super::bounded(C, "POLL", a.keyword("POLL"), 1, 86_400)?;
    let sections = match a.keyword("SECTIONS").map(|s| s.trim().to_ascii_lowercase()) {
        None => Sections::Search,
        Some(s) if s == "search" => Sections::Search,
        Some(s) if s == "entry" => Sections::Entry,
        Some(s) => {
            return Err(format!(
                "{C}: SECTIONS must be 'search' or 'entry', not '{s}'"
            ))
        }
    };
    a.finish()?;
    let pool = u32::from_be_bytes(pool);
    if pool as u64 + leases > u32::MAX as u64 {
        return Err(format!("{C}: POOL plus LEASES runs past 255.255.255.255"));
    }
    let mut server = Server::new(
        ip,
        mac,
        pool,
        leases as usize,
        mask,
        lease * SEC,
        hold * SEC,
        ping * 1_000_000,
        pings,
        poll * SEC,
    );
    server.sections = sections;
    Ok(Box::new(server))
}

/// A DHCP message's fields the server uses.
struct Msg {
    kind: u8,
    xid: [u8; 4],
    flags: [u8; 2],
    ciaddr: [u8; 4],
    giaddr: [u8; 4],
    chaddr: [u8; 16],
    requested: Option<[u8; 4]>,
    server_id: Option<[u8; 4]>,
}

/// Parse a BOOTREQUEST carrying DHCP options (UDP to port 67) at `bootp` in `d`.
fn parse_dhcp(b: &[u8]) -> Result<Msg, &'static str> {
    if b.len() < 240 || b[0] != 1 {
        return Err("not a DHCP request");
    }
    if b[236..240] != [99, 130, 83, 99] {
        return Err("not a DHCP request");
    }
    let mut m = Msg {
        kind: 0,
        xid: b[4..8].try_into().expect("4"),
        flags: [b[10], b[11]],
        ciaddr: b[12..16].try_into().expect("4"),
        giaddr: b[24..28].try_into().expect("4"),
        chaddr: b[28..44].try_into().expect("16"),
        requested: None,
        server_id: None,
    };
    let mut i = 240;
    while i < b.len() {
        let code = b[i];
        if code == 255 {
            break;
        }
        if code == 0 {
            i += 1;
            continue;
        }
        let len = *b.get(i + 1).ok_or("malformed DHCP options")? as usize;
        let v = b.get(i + 2..i + 2 + len).ok_or("malformed DHCP options")?;
        match (code, len) {
            (53, 1) => m.kind = v[0],
            (50, 4) => m.requested = Some(v.try_into().expect("4")),
            (54, 4) => m.server_id = Some(v.try_into().expect("4")),
            _ => {}
        }
        i += 2 + len;
    }
    if m.kind == 0 {
        return Err("not a DHCP request");
    }
    Ok(m)
}

impl Server {
    #[allow(clippy::too_many_arguments)]
    fn new(
        ip: [u8; 4],
        mac: [u8; 6],
        pool: u32,
        n: usize,
        mask: u8,
        lease_ns: u64,
        hold_ns: u64,
        ping_ns: u64,
        pings: usize,
        poll_ns: u64,
    ) -> Self {
        Server {
            sections: Sections::Search,
            ip,
            mac,
            pool,
            mask,
            lease_ns,
            hold_ns,
            ping_ns,
            poll_ns,
            leases: vec![
                Lease {
                    chaddr: [0; 16],
                    state: State::Free,
                    expires: 0
                };
                n
            ],
            pings: Vec::with_capacity(pings),
            ping_cap: pings,
            next_poll: 0,
            counts: [0; 8],
        }
    }

    fn addr(&self, i: usize) -> [u8; 4] {
        (self.pool + i as u32).to_be_bytes()
    }

    /// Start using the lease array: the search's critical section (`SECTIONS search`); with
    /// `SECTIONS entry` each entry takes its own.
    fn open(&self, cx: &mut Cx) {
        if self.sections == Sections::Search {
            lock(cx, OBJ_LEASE_LOCK, 0);
        }
    }

    /// Stop using the lease array; `holding`: a search found an entry (which `SECTIONS entry`
    /// keeps locked until its change is made).
    fn close(&self, cx: &mut Cx, found: Option<usize>) {
        match (self.sections, found) {
            (Sections::Search, _) => unlock(cx, OBJ_LEASE_LOCK, 0),
            (Sections::Entry, Some(i)) => unlock(cx, OBJ_LEASE_LOCK, self.key_of(i)),
            (Sections::Entry, None) => {}
        }
    }

    /// The lease lock that guards entry `i`: the array's (key 0) with `SECTIONS search`, the
    /// entry's own (key `1 + i`) with `SECTIONS entry`.
    fn key_of(&self, i: usize) -> u64 {
        match self.sections {
            Sections::Search => 0,
            Sections::Entry => 1 + i as u64,
        }
    }

    fn enter_entry(&self, cx: &mut Cx, i: usize) {
        if self.sections == Sections::Entry {
            lock(cx, OBJ_LEASE_LOCK, self.key_of(i));
        }
    }

    fn leave_entry(&self, cx: &mut Cx, i: usize) {
        if self.sections == Sections::Entry {
            unlock(cx, OBJ_LEASE_LOCK, self.key_of(i));
        }
    }

    /// Linear search of the lease array for `chaddr` (between [`Self::open`] and
    /// [`Self::close`]). The hardware address is compared as `memcmp` does, which returns at
    /// the first difference: a 32-bit machine reads the stored address word by word up to and
    /// including the first word that differs (one word for a cleared entry, whose address is
    /// zero; two for this workload's clients, whose addresses share their first four bytes),
    /// and all four only when it matches.
    fn find_by_chaddr(&self, cx: &mut Cx, chaddr: &[u8; 16]) -> Option<usize> {
        for (i, l) in self.leases.iter().enumerate() {
            self.enter_entry(cx, i);
            cx.instr(6);
            let words = (0..4)
                .position(|w| l.chaddr[4 * w..4 * w + 4] != chaddr[4 * w..4 * w + 4])
                .map_or(4, |w| w + 1);
            cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32, 4 * words as u32);
            if l.state != State::Free && l.chaddr == *chaddr {
                cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32 + 16, 4);
                return Some(i);
            }
            self.leave_entry(cx, i);
        }
        None
    }

    /// Linear search for the first free (or expired) address (between [`Self::open`] and
    /// [`Self::close`]).
    fn find_free(&self, cx: &mut Cx, now: u64) -> Option<usize> {
        for (i, l) in self.leases.iter().enumerate() {
            self.enter_entry(cx, i);
            cx.instr(6);
            cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32 + 16, 4);
            if l.state == State::Free {
                return Some(i);
            }
            cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32 + 24, 8);
            if l.state != State::Pinging && l.expires <= now {
                return Some(i);
            }
            self.leave_entry(cx, i);
        }
        None
    }

    fn set_lease(&mut self, cx: &mut Cx, i: usize, chaddr: [u8; 16], state: State, expires: u64) {
        cx.instr(10);
        self.leases[i] = Lease {
            chaddr,
            state,
            expires,
        };
        cx.dynamic_state(Write, OBJ_LEASES, i as u64 * 32, 16);
        cx.dynamic_state(Write, OBJ_LEASES, i as u64 * 32 + 16, 4);
        cx.dynamic_state(Write, OBJ_LEASES, i as u64 * 32 + 24, 8);
    }

    /// Build a reply frame (RFC 2131 Table 3).
    #[allow(clippy::too_many_arguments)]
    fn reply(
        &self,
        cx: &mut Cx,
        kind: u8,
        xid: [u8; 4],
        flags: [u8; 2],
        ciaddr: [u8; 4],
        yiaddr: [u8; 4],
        giaddr: [u8; 4],
        chaddr: [u8; 16],
    ) -> Packet {
        let mut b = vec![0u8; 240];
        b[0] = 2;
        b[1] = 1;
        b[2] = 6;
        b[4..8].copy_from_slice(&xid);
        b[10..12].copy_from_slice(&flags);
        b[12..16].copy_from_slice(&ciaddr);
        b[16..20].copy_from_slice(&yiaddr);
        b[24..28].copy_from_slice(&giaddr);
        b[28..44].copy_from_slice(&chaddr);
        b[236..240].copy_from_slice(&[99, 130, 83, 99]);
        b.extend_from_slice(&[53, 1, kind, 54, 4]);
        b.extend_from_slice(&self.ip);
        if kind != NAK {
            b.extend_from_slice(&[51, 4]);
            b.extend_from_slice(&((self.lease_ns / SEC) as u32).to_be_bytes());
            let m = if self.mask == 0 {
                0
            } else {
                u32::MAX << (32 - self.mask as u32)
            };
            b.extend_from_slice(&[1, 4]);
            b.extend_from_slice(&m.to_be_bytes());
        }
        b.push(255);
        if b.len() < 300 {
            b.resize(300, 0);
        }
        let broadcast = kind == NAK || flags[0] & 0x80 != 0;
        let (dmac, dip) = if broadcast {
            ([0xff; 6], [255; 4])
        } else {
            (chaddr[0..6].try_into().expect("6"), yiaddr)
        };
        let f = udp_frame(dmac, self.mac, self.ip, dip, 67, 68, &b);
        cx.instr(150 + f.len() as u32 / 2);
        cx.write_pkt(f.len() as u32);
        Packet::from_bytes(&f)
    }

    fn ping_request(&self, cx: &mut Cx, index: usize) -> Packet {
        let mut icmp = vec![8, 0, 0, 0, 0x75, 0x64];
        icmp.extend_from_slice(&(index as u16).to_be_bytes());
        icmp.extend_from_slice(b"udhcp-ping-probe");
        let c = ip_checksum(&icmp);
        icmp[2..4].copy_from_slice(&c.to_be_bytes());
        let f = ip_frame([0xff; 6], self.mac, self.ip, self.addr(index), 1, &icmp);
        cx.instr(80);
        cx.write_pkt(f.len() as u32);
        Packet::from_bytes(&f)
    }

    fn poll_pings(&mut self, cx: &mut Cx) {
        let now = cx.now_ns;
        lock(cx, OBJ_PING_LOCK, 0);
        let mut due = Vec::new();
        let mut k = 0;
        while k < self.pings.len() {
            cx.instr(6);
            cx.dynamic_state(Read, OBJ_PINGS, k as u64 * 32 + 24, 8);
            if self.pings[k].deadline <= now {
                cx.dynamic_state(Read, OBJ_PINGS, k as u64 * 32, 24);
                due.push(self.pings.swap_remove(k));
                // The last entry moves into slot k.
                if k < self.pings.len() {
                    cx.dynamic_state(Read, OBJ_PINGS, self.pings.len() as u64 * 32, 32);
                    cx.dynamic_state(Write, OBJ_PINGS, k as u64 * 32, 32);
                }
            } else {
                k += 1;
            }
        }
        if !due.is_empty() {
            cx.dynamic_state(Write, OBJ_PINGS, u64::MAX, 4); // entry count
        }
        unlock(cx, OBJ_PING_LOCK, 0);
        for p in due {
            let i = p.index as usize;
            lock(cx, OBJ_LEASE_LOCK, self.key_of(i));
            cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32 + 16, 4);
            let still = self.leases[i].state == State::Pinging && self.leases[i].chaddr == p.chaddr;
            if still {
                self.set_lease(cx, i, p.chaddr, State::Offered, now + self.hold_ns);
            }
            unlock(cx, OBJ_LEASE_LOCK, self.key_of(i));
            if still {
                let r = self.reply(
                    cx,
                    OFFER,
                    p.xid,
                    p.flags,
                    [0; 4],
                    self.addr(i),
                    p.giaddr,
                    p.chaddr,
                );
                self.counts[OFFER as usize] += 1;
                cx.emit(0, r);
            }
        }
    }

    fn poll_expiry(&mut self, cx: &mut Cx) {
        let now = cx.now_ns;
        cx.instr(4);
        cx.dynamic_state(Read, OBJ_POLL, 0, 8);
        if now < self.next_poll {
            return;
        }
        lock(cx, OBJ_LEASE_LOCK, 0);
        self.next_poll = now + self.poll_ns;
        cx.dynamic_state(Write, OBJ_POLL, 0, 8);
        if self.sections == Sections::Entry {
            unlock(cx, OBJ_LEASE_LOCK, 0);
        }
        for i in 0..self.leases.len() {
            self.enter_entry(cx, i);
            cx.instr(6);
            cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32 + 16, 4);
            let l = self.leases[i];
            if l.state != State::Free && l.state != State::Pinging {
                cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32 + 24, 8);
                if l.expires <= now {
                    cx.instr(4);
                    self.leases[i].state = State::Free;
                    cx.dynamic_state(Write, OBJ_LEASES, i as u64 * 32 + 16, 4);
                }
            }
            self.leave_entry(cx, i);
        }
        if self.sections == Sections::Search {
            unlock(cx, OBJ_LEASE_LOCK, 0);
        }
    }

    fn handle(&mut self, p: Packet, cx: &mut Cx) {
        let now = cx.now_ns;
        cx.instr(60);
        let d = p.data();
        cx.read_pkt(42.min(d.len() as u32));
        let Some(ip) = super::parse_ipv4(d) else {
            cx.drop_packet(p, "not IPv4");
            return;
        };
        let l4 = ip.l4();
        if ip.proto == 1 && l4 + 8 <= ip.end() && d[l4] == 0 && !ip.fragment {
            // An echo reply: is it for an address awaiting its ping?
            let from = u32::from_be_bytes(ip.src);
            lock(cx, OBJ_PING_LOCK, 0);
            let mut hit = None;
            for (k, e) in self.pings.iter().enumerate() {
                cx.instr(6);
                cx.dynamic_state(Read, OBJ_PINGS, k as u64 * 32 + 20, 4);
                if self.pool + e.index == from {
                    hit = Some(k);
                    break;
                }
            }
            let hit = hit.map(|k| {
                let e = self.pings.swap_remove(k);
                cx.dynamic_state(Write, OBJ_PINGS, k as u64 * 32, 32);
                e
            });
            unlock(cx, OBJ_PING_LOCK, 0);
            let Some(e) = hit else {
                cx.drop_packet(p, "unexpected ICMP");
                return;
            };
            let i = e.index as usize;
            lock(cx, OBJ_LEASE_LOCK, self.key_of(i));
            self.set_lease(cx, i, [0; 16], State::InUse, now + self.lease_ns);
            unlock(cx, OBJ_LEASE_LOCK, self.key_of(i));
            cx.drop_packet(p, "ping answered: address in use");
            return;
        }
        if ip.proto != 17 || ip.fragment || l4 + 8 > ip.end() || d[l4 + 2..l4 + 4] != [0, 67] {
            cx.drop_packet(p, "not a DHCP request");
            return;
        }
        let msg = match parse_dhcp(&d[l4 + 8..ip.end()]) {
            Ok(m) => m,
            Err(e) => {
                cx.drop_packet(p, e);
                return;
            }
        };
        cx.read_pkt((ip.end() - l4 - 8) as u32);
        if (msg.kind as usize) < self.counts.len() {
            self.counts[msg.kind as usize] += 1;
        }
        match msg.kind {
            DISCOVER => {
                self.open(cx);
                if let Some(i) = self.find_by_chaddr(cx, &msg.chaddr) {
                    if self.leases[i].state != State::Pinging {
                        let exp = self.leases[i].expires.max(now + self.hold_ns);
                        let st = self.leases[i].state;
                        self.set_lease(
                            cx,
                            i,
                            msg.chaddr,
                            if st == State::Bound {
                                st
                            } else {
                                State::Offered
                            },
                            exp,
                        );
                    }
                    let pinging = self.leases[i].state == State::Pinging;
                    self.close(cx, Some(i));
                    if pinging {
                        cx.drop_packet(p, "offer pending");
                        return;
                    }
                    let r = self.reply(
                        cx,
                        OFFER,
                        msg.xid,
                        msg.flags,
                        [0; 4],
                        self.addr(i),
                        msg.giaddr,
                        msg.chaddr,
                    );
                    self.counts[OFFER as usize] += 1;
                    cx.emit(0, r);
                    cx.drop_packet(p, "answered");
                    return;
                }
                if self.pings.len() >= self.ping_cap {
                    self.close(cx, None);
                    cx.drop_packet(p, "awaiting-ping array full");
                    return;
                }
                let Some(i) = self.find_free(cx, now) else {
                    self.close(cx, None);
                    cx.drop_packet(p, "address pool exhausted");
                    return;
                };
                self.set_lease(cx, i, msg.chaddr, State::Pinging, now + self.ping_ns);
                self.close(cx, Some(i));
                lock(cx, OBJ_PING_LOCK, 0);
                let k = self.pings.len();
                self.pings.push(Ping {
                    chaddr: msg.chaddr,
                    xid: msg.xid,
                    flags: msg.flags,
                    giaddr: msg.giaddr,
                    index: i as u32,
                    deadline: now + self.ping_ns,
                });
                cx.instr(12);
                cx.dynamic_state(Write, OBJ_PINGS, k as u64 * 32, 32);
                cx.dynamic_state(Write, OBJ_PINGS, u64::MAX, 4);
                unlock(cx, OBJ_PING_LOCK, 0);
                let ping = self.ping_request(cx, i);
                cx.emit(1, ping);
                cx.drop_packet(p, "answered");
            }
            REQUEST => {
                if msg.server_id.is_some_and(|s| s != self.ip) {
                    cx.drop_packet(p, "for another server");
                    return;
                }
                let want = msg.requested.unwrap_or(msg.ciaddr);
                self.open(cx);
                let found = self.find_by_chaddr(cx, &msg.chaddr);
                let ok = found.filter(|&i| {
                    self.addr(i) == want
                        && matches!(self.leases[i].state, State::Offered | State::Bound)
                });
                if let Some(i) = ok {
                    self.set_lease(cx, i, msg.chaddr, State::Bound, now + self.lease_ns);
                }
                self.close(cx, found);
                let r = match ok {
                    Some(i) => {
                        self.counts[ACK as usize] += 1;
                        self.reply(
                            cx,
                            ACK,
                            msg.xid,
                            msg.flags,
                            msg.ciaddr,
                            self.addr(i),
                            msg.giaddr,
                            msg.chaddr,
                        )
                    }
                    None => {
                        self.counts[NAK as usize] += 1;
                        self.reply(
                            cx, NAK, msg.xid, msg.flags, [0; 4], [0; 4], msg.giaddr, msg.chaddr,
                        )
                    }
                };
                cx.emit(0, r);
                cx.drop_packet(p, "answered");
            }
            RELEASE => {
                self.open(cx);
                let found = self.find_by_chaddr(cx, &msg.chaddr);
                if let Some(i) = found {
                    if self.addr(i) == msg.ciaddr {
                        self.set_lease(cx, i, [0; 16], State::Free, 0);
                    }
                }
                self.close(cx, found);
                cx.drop_packet(p, "released");
            }
            _ => cx.drop_packet(p, "unsupported DHCP message type"),
        }
    }
}

/// An Ethernet + IPv4 frame around `payload` (TTL 64, identification 0).
pub fn ip_frame(
    dmac: [u8; 6],
    smac: [u8; 6],
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    payload: &[u8],
) -> Vec<u8> {
    let mut f = Vec::with_capacity(34 + payload.len());
    f.extend_from_slice(&dmac);
    f.extend_from_slice(&smac);
    f.extend_from_slice(&[0x08, 0x00]);
    let total = (20 + payload.len()) as u16;
    let mut ip = vec![0x45, 0];
    ip.extend_from_slice(&total.to_be_bytes());
    ip.extend_from_slice(&[0, 0, 0, 0, 64, proto, 0, 0]);
    ip.extend_from_slice(&src);
    ip.extend_from_slice(&dst);
    let c = ip_checksum(&ip);
    ip[10..12].copy_from_slice(&c.to_be_bytes());
    f.extend_from_slice(&ip);
    f.extend_from_slice(payload);
    f
}

/// An Ethernet + IPv4 + UDP frame (UDP checksum computed).
pub fn udp_frame(
    dmac: [u8; 6],
    smac: [u8; 6],
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    payload: &[u8],
) -> Vec<u8> {
    let mut u = Vec::with_capacity(8 + payload.len());
    u.extend_from_slice(&sport.to_be_bytes());
    u.extend_from_slice(&dport.to_be_bytes());
    u.extend_from_slice(&((8 + payload.len()) as u16).to_be_bytes());
    u.extend_from_slice(&[0, 0]);
    u.extend_from_slice(payload);
    let mut c = l4_checksum(src, dst, 17, &u);
    if c == 0 {
        c = 0xffff;
    }
    u[6..8].copy_from_slice(&c.to_be_bytes());
    ip_frame(dmac, smac, src, dst, 17, &u)
}

impl Element for Server {
    fn ports(&self) -> Ports {
        Ports::push(1, 2)
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        self.poll_pings(cx);
        self.poll_expiry(cx);
        self.handle(p, cx);
    }
    fn stats(&self) -> serde_json::Value {
        let c = &self.counts;
        serde_json::json!({
            "discover": c[DISCOVER as usize], "request": c[REQUEST as usize],
            "release": c[RELEASE as usize], "offer": c[OFFER as usize],
            "ack": c[ACK as usize], "nak": c[NAK as usize],
            "bound": self.leases.iter().filter(|l| l.state == State::Bound).count(),
            "awaiting_ping": self.pings.len(),
        })
    }
    fn code_size(&self) -> u32 {
        1500
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktflow_model::LockMark;
    use proptest::prelude::*;

    const SMAC: [u8; 6] = [0x00, 0x00, 0xc0, 0xae, 0x67, 0xef];
    const CMAC: [u8; 6] = [0x02, 0x11, 0x22, 0x33, 0x44, 0x55];

    fn server() -> Server {
        Server::new(
            [10, 0, 0, 1],
            SMAC,
            u32::from_be_bytes([10, 0, 1, 0]),
            8,
            16,
            3600 * SEC,
            60 * SEC,
            SEC / 2,
            4,
            SEC,
        )
    }

    /// A client's BOOTREQUEST (RFC 2131 section 2, Figure 1) with the given options.
    fn request(kind: u8, ciaddr: [u8; 4], flags: u16, opts: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; 236];
        b[0] = 1; // BOOTREQUEST
        b[1] = 1; // Ethernet
        b[2] = 6;
        b[4..8].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]);
        b[10..12].copy_from_slice(&flags.to_be_bytes());
        b[12..16].copy_from_slice(&ciaddr);
        b[28..34].copy_from_slice(&CMAC);
        b.extend_from_slice(&[99, 130, 83, 99, 53, 1, kind]);
        b.extend_from_slice(opts);
        b.push(255);
        udp_frame([0xff; 6], CMAC, [0; 4], [255; 4], 68, 67, &b)
    }

    fn run(s: &mut Server, f: &[u8], t: u64) -> Cx {
        let mut cx = Cx::new();
        cx.now_ns = t;
        s.push(0, Packet::from_bytes(f), &mut cx);
        cx
    }

    /// The OFFER's bytes written out field by field from RFC 2131 (Table 3, section 4.1) and
    /// RFC 791/768 for the headers, independently of the server's builder.
    fn expected_offer() -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&[0xff; 6]); // broadcast flag set: Ethernet broadcast
        v.extend_from_slice(&SMAC);
        v.extend_from_slice(&[0x08, 0x00]);
        // IPv4: 20 + 8 + 300 = 328 = 0x0148 bytes; TTL 64, UDP; 10.0.0.1 -> 255.255.255.255.
        let mut ip = vec![
            0x45, 0x00, 0x01, 0x48, 0, 0, 0, 0, 0x40, 0x11, 0, 0, 10, 0, 0, 1, 255, 255, 255, 255,
        ];
        // Header checksum by hand: 0x4500+0x0148+0x4011+0x0a00+0x0001+0xffff+0xffff
        // = 0x2_9058 -> 0x905a folded, complement 0x6fa5.
        ip[10] = 0x6f;
        ip[11] = 0xa5;
        v.extend_from_slice(&ip);
        // UDP 67 -> 68, length 308; checksum filled below.
        v.extend_from_slice(&[0, 67, 0, 68, 0x01, 0x34, 0, 0]);
        let mut b = vec![0u8; 300];
        b[0] = 2; // BOOTREPLY
        b[1] = 1;
        b[2] = 6;
        b[4..8].copy_from_slice(&[0xde, 0xad, 0xbe, 0xef]); // xid
        b[10] = 0x80; // flags copied
        b[16..20].copy_from_slice(&[10, 0, 1, 0]); // yiaddr: the first pool address
        b[28..34].copy_from_slice(&CMAC);
        b[236..240].copy_from_slice(&[99, 130, 83, 99]);
        let opts = [
            53, 1, 2, 54, 4, 10, 0, 0, 1, 51, 4, 0, 0, 0x0e, 0x10, 1, 4, 255, 255, 0, 0, 255,
        ];
        b[240..240 + opts.len()].copy_from_slice(&opts);
        v.extend_from_slice(&b);
        let c = l4_checksum([10, 0, 0, 1], [255; 4], 17, &v[34..]);
        v[40..42].copy_from_slice(&c.to_be_bytes());
        v
    }

    #[test]
    fn discover_pings_then_offers_the_expected_bytes() {
        let mut s = server();
        let d = request(DISCOVER, [0; 4], 0x8000, &[]);
        let mut cx = run(&mut s, &d, 0);
        // Ping request to the first pool address on output 1; no offer yet.
        assert_eq!(cx.emitted_count(), 1);
        let (port, ping) = cx.pop_emitted().unwrap();
        assert_eq!(port, 1);
        assert_eq!(&ping.data()[30..34], &[10, 0, 1, 0]);
        assert_eq!(ping.data()[34], 8);
        // Before the ping wait ends, nothing; after it, the OFFER.
        let other = request(99, [0; 4], 0, &[]);
        assert!(run(&mut s, &other, SEC / 4).out.is_empty());
        let mut cx = run(&mut s, &other, SEC);
        let (port, offer) = cx.pop_emitted().unwrap();
        assert_eq!(port, 0);
        assert_eq!(offer.data(), &expected_offer()[..]);
    }

    #[test]
    fn request_ack_nak_release_and_ping_reply() {
        let mut s = server();
        run(&mut s, &request(DISCOVER, [0; 4], 0, &[]), 0);
        run(&mut s, &request(99, [0; 4], 0, &[]), SEC);
        // REQUEST for the offered address: ACK, unicast to yiaddr.
        let mut cx = run(
            &mut s,
            &request(
                REQUEST,
                [0; 4],
                0,
                &[50, 4, 10, 0, 1, 0, 54, 4, 10, 0, 0, 1],
            ),
            2 * SEC,
        );
        let (_, ack) = cx.pop_emitted().unwrap();
        let b = &ack.data()[42..];
        assert_eq!(b[242], ACK);
        assert_eq!(&ack.data()[0..6], &CMAC);
        assert_eq!(&ack.data()[30..34], &[10, 0, 1, 0]);
        assert_eq!(s.leases[0].state, State::Bound);
        // REQUEST for another address: NAK, broadcast.
        let mut cx = run(
            &mut s,
            &request(REQUEST, [0; 4], 0, &[50, 4, 10, 0, 1, 5]),
            3 * SEC,
        );
        let (_, nak) = cx.pop_emitted().unwrap();
        assert_eq!(nak.data()[42 + 242], NAK);
        assert_eq!(&nak.data()[42 + 16..42 + 20], &[0; 4]);
        // RELEASE frees the lease.
        run(&mut s, &request(RELEASE, [10, 0, 1, 0], 0, &[]), 4 * SEC);
        assert_eq!(s.leases[0].state, State::Free);
        // A DISCOVER whose ping is answered: the address is in use, the next one is tried.
        let mut cx = run(&mut s, &request(DISCOVER, [0; 4], 0, &[]), 5 * SEC);
        let (_, ping) = cx.pop_emitted().unwrap();
        let mut reply = ping.data()[34..].to_vec();
        reply[0] = 0;
        let f = ip_frame(SMAC, [2; 6], [10, 0, 1, 0], [10, 0, 0, 1], 1, &reply);
        run(&mut s, &f, 5 * SEC + 1000);
        assert_eq!(s.leases[0].state, State::InUse);
        assert!(run(&mut s, &request(99, [0; 4], 0, &[]), 7 * SEC)
            .out
            .is_empty());
        let mut cx = run(&mut s, &request(DISCOVER, [0; 4], 0, &[]), 8 * SEC);
        assert_eq!(&cx.pop_emitted().unwrap().1.data()[30..34], &[10, 0, 1, 1]);
    }

    #[test]
    fn lease_scans_are_inside_the_lease_lock() {
        let mut s = server();
        let cx = run(&mut s, &request(DISCOVER, [0; 4], 0, &[]), 0);
        let acc = &cx.trace().accesses;
        let locks: Vec<usize> = acc
            .iter()
            .enumerate()
            .filter(|(_, a)| a.object == OBJ_LEASE_LOCK as u32)
            .map(|(i, _)| i)
            .collect();
        for (i, a) in acc.iter().enumerate() {
            if a.object == OBJ_LEASES as u32 {
                assert!(locks.iter().any(|&l| l < i) && locks.iter().any(|&l| l > i));
            }
        }
    }

    /// Lease-array indices each critical section of the lease lock touches, in order.
    fn sections_of(cx: &Cx) -> Vec<Vec<u64>> {
        let mut out = Vec::new();
        let mut cur: Option<Vec<u64>> = None;
        for a in &cx.trace().accesses {
            if a.object == OBJ_LEASE_LOCK as u32 {
                match a.lock {
                    LockMark::Acquire if cur.is_none() => cur = Some(Vec::new()),
                    LockMark::Release => out.extend(cur.take()),
                    _ => {}
                }
            } else if a.object == OBJ_LEASES as u32 {
                let i = a.key / 32;
                let c = cur.as_mut().expect("lease access outside the lease lock");
                if c.last() != Some(&i) {
                    c.push(i);
                }
            }
        }
        assert!(cur.is_none(), "lease lock still held at the end");
        out
    }

    #[test]
    fn entry_sections_lock_each_entry_on_its_own_and_keep_the_found_one_for_its_change() {
        for sections in [Sections::Search, Sections::Entry] {
            let mut s = server();
            s.sections = sections;
            // Three clients: the third DISCOVER searches past two used entries, then frees.
            for (k, mac) in [[2u8, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2], [2, 0, 0, 0, 0, 3]]
                .iter()
                .enumerate()
            {
                let mut f = request(DISCOVER, [0; 4], 0, &[]);
                f[42 + 28..42 + 34].copy_from_slice(mac);
                let cx = run(&mut s, &f, 10 * SEC * k as u64);
                let secs = sections_of(&cx);
                match sections {
                    // One search section (the poll's own first, on the first packet).
                    Sections::Search => assert!(secs.iter().any(|c| c.len() == s.leases.len())),
                    Sections::Entry => {
                        assert!(secs.iter().all(|c| c.len() <= 1), "{secs:?}");
                        // The address search's last section is the entry it reserved.
                        assert!(secs.len() > 8 + k);
                    }
                }
            }
            assert_eq!(s.leases[2].state, State::Pinging);
        }
    }

    #[test]
    fn hardware_addresses_are_compared_up_to_the_first_differing_word() {
        let mut s = server();
        // Entry 0: a client whose address shares its first word (02:11:22:33) with CMAC's and
        // differs in the second.
        s.leases[0] = Lease {
            chaddr: [2, 0x11, 0x22, 0x33, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            state: State::Bound,
            expires: u64::MAX,
        };
        let mut cx = Cx::new();
        let mut want = [0u8; 16];
        want[..6].copy_from_slice(&CMAC);
        assert_eq!(s.find_by_chaddr(&mut cx, &want), None);
        let reads: Vec<(u64, u32)> = cx
            .trace()
            .accesses
            .iter()
            .filter(|a| a.object == OBJ_LEASES as u32)
            .map(|a| (a.key, a.bytes))
            .collect();
        // Entry 0: two words (the first equal, the second not); entries 1..8 cleared: one.
        let mut expect = vec![(0, 8)];
        expect.extend((1..8).map(|i| (i * 32, 4)));
        assert_eq!(reads, expect);
    }

    #[test]
    fn sections_keyword_is_checked() {
        let env = InitEnv::default();
        let conf = "SERVER 10.0.0.1, MAC 00:00:c0:ae:67:ef, POOL 10.0.1.0, SECTIONS";
        assert!(make(&format!("{conf} entry"), &env).is_ok());
        assert!(make(&format!("{conf} search"), &env).is_ok());
        let e = make(&format!("{conf} lines"), &env).err().unwrap();
        assert!(e.contains("SECTIONS must be 'search' or 'entry'"), "{e}");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_packets_do_not_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400), opts in proptest::collection::vec(any::<u8>(), 0..40), kind in 0u8..10) {
            let mut s = server();
            run(&mut s, &bytes, 0);
            run(&mut s, &request(kind, [0; 4], 0, &opts), 1);
            run(&mut s, &request(kind, [10, 0, 1, 0], 0x8000, &opts), 2 * SEC);
        }
    }
}
