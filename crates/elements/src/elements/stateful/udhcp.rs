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
//! 1).
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

struct Server {
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
    a.finish()?;
    let pool = u32::from_be_bytes(pool);
    if pool as u64 + leases > u32::MAX as u64 {
        return Err(format!("{C}: POOL plus LEASES runs past 255.255.255.255"));
    }
    Ok(Box::new(Server::new(
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
    )))
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

    /// Linear search of the lease array for `chaddr` (under the lease lock).
    fn find_by_chaddr(&self, cx: &mut Cx, chaddr: &[u8; 16]) -> Option<usize> {
        for (i, l) in self.leases.iter().enumerate() {
            cx.instr(6);
            cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32, 16);
            if l.state != State::Free && l.chaddr == *chaddr {
                cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32 + 16, 4);
                return Some(i);
            }
        }
        None
    }

    /// Linear search for the first free (or expired) address (under the lease lock).
    fn find_free(&self, cx: &mut Cx, now: u64) -> Option<usize> {
        for (i, l) in self.leases.iter().enumerate() {
            cx.instr(6);
            cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32 + 16, 4);
            if l.state == State::Free {
                return Some(i);
            }
            cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32 + 24, 8);
            if l.state != State::Pinging && l.expires <= now {
                return Some(i);
            }
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
            lock(cx, OBJ_LEASE_LOCK, 0);
            let i = p.index as usize;
            cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32 + 16, 4);
            let still = self.leases[i].state == State::Pinging && self.leases[i].chaddr == p.chaddr;
            if still {
                self.set_lease(cx, i, p.chaddr, State::Offered, now + self.hold_ns);
            }
            unlock(cx, OBJ_LEASE_LOCK, 0);
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
        for i in 0..self.leases.len() {
            cx.instr(6);
            cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32 + 16, 4);
            let l = self.leases[i];
            if l.state == State::Free || l.state == State::Pinging {
                continue;
            }
            cx.dynamic_state(Read, OBJ_LEASES, i as u64 * 32 + 24, 8);
            if l.expires <= now {
                cx.instr(4);
                self.leases[i].state = State::Free;
                cx.dynamic_state(Write, OBJ_LEASES, i as u64 * 32 + 16, 4);
            }
        }
        unlock(cx, OBJ_LEASE_LOCK, 0);
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
            lock(cx, OBJ_LEASE_LOCK, 0);
            self.set_lease(
                cx,
                e.index as usize,
                [0; 16],
                State::InUse,
                now + self.lease_ns,
            );
            unlock(cx, OBJ_LEASE_LOCK, 0);
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
                lock(cx, OBJ_LEASE_LOCK, 0);
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
                    unlock(cx, OBJ_LEASE_LOCK, 0);
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
                    unlock(cx, OBJ_LEASE_LOCK, 0);
                    cx.drop_packet(p, "awaiting-ping array full");
                    return;
                }
                let Some(i) = self.find_free(cx, now) else {
                    unlock(cx, OBJ_LEASE_LOCK, 0);
                    cx.drop_packet(p, "address pool exhausted");
                    return;
                };
                self.set_lease(cx, i, msg.chaddr, State::Pinging, now + self.ping_ns);
                unlock(cx, OBJ_LEASE_LOCK, 0);
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
                lock(cx, OBJ_LEASE_LOCK, 0);
                let found = self.find_by_chaddr(cx, &msg.chaddr);
                let ok = found.filter(|&i| {
                    self.addr(i) == want
                        && matches!(self.leases[i].state, State::Offered | State::Bound)
                });
                if let Some(i) = ok {
                    self.set_lease(cx, i, msg.chaddr, State::Bound, now + self.lease_ns);
                }
                unlock(cx, OBJ_LEASE_LOCK, 0);
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
                lock(cx, OBJ_LEASE_LOCK, 0);
                if let Some(i) = self.find_by_chaddr(cx, &msg.chaddr) {
                    if self.addr(i) == msg.ciaddr {
                        self.set_lease(cx, i, [0; 16], State::Free, 0);
                    }
                }
                unlock(cx, OBJ_LEASE_LOCK, 0);
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
