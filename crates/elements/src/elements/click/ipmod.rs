//! IP header and annotation elements of Click's ip and tcpudp groups.
//!
//! - `MarkIPHeader([OFFSET])`: sets the IP header annotation to the header at OFFSET
//!   (default 0), its length from the IHL field. 2 instructions, 1 B packet read, 4 B
//!   meta-data write. A packet shorter than OFFSET+20 is dropped (reason `too short`).
//! - `StripIPHeader`: removes everything up to the end of the annotated IP header (the
//!   packet starts at the transport header; Unstrip can restore it). Packets without the
//!   annotation are dropped (`no IP header`). 2 instructions, 4 B meta-data read, 2 B write.
//! - `SetIPAddress(IPADDR)`: sets the destination IP annotation. 2 instructions, 4 B
//!   meta-data write.
//! - `StoreIPAddress([IPADDR,] OFFSET)`: writes IPADDR (default: the destination IP
//!   annotation) into the packet at byte OFFSET; OFFSET `src` or `dst` names the annotated IP
//!   header's field, and then the IP checksum and a TCP or UDP checksum (first fragments
//!   with a whole 20-byte TCP or 8-byte UDP header; a UDP checksum of 0 means none and
//!   stays 0) are updated incrementally (RFC 1624), as Click 2.1 does. 4 instructions, 4 B meta-data read, 4 B packet write; with `src`/`dst` 10
//!   more instructions and 2 B reads and writes per checksum.
//! - `SetRandIPAddress(PREFIX [, LIMIT])`: sets the destination IP annotation to a
//!   pseudo-random address inside PREFIX (the configuration's seed, see RandomSeed), or with
//!   LIMIT to one of LIMIT such addresses chosen when configured. 8 instructions, 8 B dynamic
//!   state read and write (the generator), 4 B meta-data write.
//! - `IPEncap(PROTO, SRC, DST [, TOS, TTL, DF])`: prepends a 20-byte IPv4 header: TOS 0,
//!   total length, an id counting from 0 (one counter per element), DF if set, TTL 250
//!   (defaults as Click's), protocol PROTO (number or name), checksum; DST `DST_ANNO` takes
//!   the destination annotation. Sets the IP header and destination annotations.
//!   12 instructions, 20 B packet write, 4 B id read and write (dynamic state object 0).
//! - `UDPIPEncap(SRC, SPORT, DST, DPORT [, CHECKSUM])`: prepends IPv4 + UDP headers (28
//!   bytes) as Click does: TOS 0, id counting from 0, no fragment bits, TTL 250; the UDP
//!   checksum over the pseudo-header when CHECKSUM (default true, as Click documents it; a
//!   computed 0 is sent as 0, as Click 2.1 does), else 0. 20 instructions + 1 per 2 payload
//!   bytes summed, 28 B packet write, the payload read when summing, id read and write.
//! - `IPMirror([DST_ANNO])`: swaps source and destination addresses, and for TCP/UDP first
//!   fragments with at least 8 transport bytes the ports, and for TCP (12 bytes) the
//!   sequence and acknowledgment numbers, as Click 2.1 does; checksums are unchanged by a
//!   swap. DST_ANNO (default true) sets the destination annotation to the new destination.
//!   8 instructions, 12 B packet read and write.
//! - `HostEtherFilter(ETH [, DROP_OWN, DROP_OTHER])`: Ethernet frames whose destination is
//!   neither ETH, broadcast nor multicast go to output 1 if connected, else are dropped
//!   (`not for host`); with DROP_OWN (default false) frames whose source is ETH go there too
//!   (`own frame`), as in Click 2.1, and so do frames shorter than an Ethernet header
//!   (`too short`). 4 instructions, 12 B packet read.
//! - `ICMPPingResponder`: answers ICMP echo requests (type 8, at least 8 ICMP bytes,
//!   fragments too, as Click 2.1) with echo replies: addresses swapped, fragment field
//!   cleared, TTL 255, type 0 and code 0, the IP and ICMP checksums updated incrementally
//!   (RFC 1624, so a wrong IP checksum stays wrong, as in Click), destination annotation the
//!   new destination; the reply leaves on output 0. Other packets go to output 1 if
//!   connected, else are dropped (`not an echo request`). 24 instructions, IP header read
//!   and write (20 B) and 4 B ICMP write.
use crate::conf::{parse_bool, parse_ether, parse_ip, parse_prefix, parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Processing};
use crate::elements::click::switches::splitmix;
use crate::net;
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::checksum::{incremental_update, l4_checksum};
use pktflow_traffic::Packet;

macro_rules! class {
    ($c:ident, $n:literal, $s:literal, $m:ident) => {
        pub const $c: ClassInfo = ClassInfo {
            name: $n,
            summary: $s,
            make: $m,
        };
    };
}
class!(
    MARK_IP_HEADER,
    "MarkIPHeader",
    "set the IP header annotation",
    make_mark
);
class!(
    STRIP_IP_HEADER,
    "StripIPHeader",
    "remove the IP header (to the transport header)",
    make_strip
);
class!(
    SET_IP_ADDRESS,
    "SetIPAddress",
    "set the destination IP annotation",
    make_set_addr
);
class!(
    STORE_IP_ADDRESS,
    "StoreIPAddress",
    "write an address into the packet",
    make_store
);
class!(
    SET_RAND_IP_ADDRESS,
    "SetRandIPAddress",
    "set a random destination IP annotation",
    make_rand
);
class!(IP_ENCAP, "IPEncap", "prepend an IPv4 header", make_ipencap);
class!(
    UDP_IP_ENCAP,
    "UDPIPEncap",
    "prepend IPv4 and UDP headers",
    make_udpipencap
);
class!(
    IP_MIRROR,
    "IPMirror",
    "swap source and destination addresses and ports",
    make_mirror
);
class!(
    HOST_ETHER_FILTER,
    "HostEtherFilter",
    "keep Ethernet frames for this host",
    make_hef
);
class!(
    ICMP_PING_RESPONDER,
    "ICMPPingResponder",
    "answer ICMP echo requests",
    make_pingresp
);

enum K {
    Mark(usize),
    Strip,
    SetAddr([u8; 4]),
    Store(Option<[u8; 4]>, StoreAt),
    Rand {
        net: u32,
        mask: u32,
        pool: Vec<[u8; 4]>,
        state: u64,
    },
    IpEncap {
        proto: u8,
        src: [u8; 4],
        dst: Option<[u8; 4]>,
        tos: u8,
        ttl: u8,
        df: bool,
        id: u16,
    },
    UdpIpEncap {
        src: [u8; 4],
        sport: u16,
        dst: Option<[u8; 4]>,
        dport: u16,
        cksum: bool,
        id: u16,
    },
    Mirror {
        dst_anno: bool,
    },
    Hef {
        eth: [u8; 6],
        drop_own: bool,
        drop_other: bool,
    },
    PingResp,
}

#[derive(Clone, Copy)]
enum StoreAt {
    Offset(usize),
    Src,
    Dst,
}

struct IpMod {
    k: K,
    nout: usize,
}

fn el(k: K) -> Box<dyn Element> {
    Box::new(IpMod { k, nout: 1 })
}

fn e<T>(c: &str, what: &str, r: Result<T, String>) -> Result<T, String> {
    r.map_err(|m| format!("{c}: {what}: {m}"))
}

fn make_mark(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("MarkIPHeader", config, &["OFFSET"]);
    let off = match a.keyword_or_positional("OFFSET") {
        Some(s) => e("MarkIPHeader", "OFFSET", parse_uint(&s))?,
        None => 0,
    };
    a.finish()?;
    if off > 65535 {
        return Err("MarkIPHeader: OFFSET must be at most 65535".into());
    }
    Ok(el(K::Mark(off as usize)))
}
fn make_strip(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("StripIPHeader", config, &[]).finish()?;
    Ok(el(K::Strip))
}
fn make_set_addr(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("SetIPAddress", config, &["IPADDR", "ANNO"]);
    let ip = e(
        "SetIPAddress",
        "IPADDR",
        parse_ip(
            &a.keyword_or_positional("IPADDR")
                .ok_or("SetIPAddress: missing argument IPADDR")?,
        ),
    )?;
    if a.keyword("ANNO").is_some() {
        return Err("SetIPAddress: ANNO is not supported (the destination annotation only)".into());
    }
    a.finish()?;
    Ok(el(K::SetAddr(ip)))
}
fn make_store(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "StoreIPAddress";
    let mut a = Args::parse(c, config, &["OFFSET", "ADDR"]);
    let mut pos = a.take_all_positional();
    let kw_off = a.keyword("OFFSET");
    let kw_addr = a.keyword("ADDR");
    let (addr, off) = match (pos.len(), kw_off) {
        (0, Some(o)) => (kw_addr, o),
        (1, Some(o)) => (Some(pos.remove(0)), o),
        (1, None) => (kw_addr, pos.remove(0)),
        (2, None) => (Some(pos.remove(0)), pos.remove(0)),
        _ => return Err(format!("{c}: expected '[IPADDR,] OFFSET'")),
    };
    let addr = addr.map(|s| e(c, "IPADDR", parse_ip(&s))).transpose()?;
    let at = match off.trim() {
        "src" => StoreAt::Src,
        "dst" => StoreAt::Dst,
        o => {
            let n = e(c, "OFFSET", parse_uint(o))?;
            if n > 65535 {
                return Err(format!("{c}: OFFSET must be at most 65535"));
            }
            StoreAt::Offset(n as usize)
        }
    };
    Ok(el(K::Store(addr, at)))
}
fn make_rand(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "SetRandIPAddress";
    let mut a = Args::parse(c, config, &["PREFIX", "LIMIT"]);
    let (ip, len) = e(
        c,
        "PREFIX",
        parse_prefix(
            &a.keyword_or_positional("PREFIX")
                .ok_or("SetRandIPAddress: missing argument PREFIX")?,
        ),
    )?;
    let limit = a
        .keyword_or_positional("LIMIT")
        .map(|s| e(c, "LIMIT", parse_uint(&s)))
        .transpose()?;
    a.finish()?;
    let mask = crate::conf::mask(len);
    let net = u32::from_be_bytes(ip) & mask;
    let mut state = splitmix(env.seed);
    let mut pool = Vec::new();
    if let Some(l) = limit {
        if l == 0 || l > 1_000_000 {
            return Err(format!("{c}: LIMIT must be 1 to 1000000"));
        }
        for _ in 0..l {
            state = splitmix(state);
            pool.push((net | (state as u32 & !mask)).to_be_bytes());
        }
    }
    Ok(el(K::Rand {
        net,
        mask,
        pool,
        state,
    }))
}
fn proto_num(c: &str, s: &str) -> Result<u8, String> {
    match s.trim() {
        "icmp" => Ok(1),
        "igmp" => Ok(2),
        "ipip" => Ok(4),
        "tcp" => Ok(6),
        "udp" => Ok(17),
        o => {
            let v = e(c, "PROTO", parse_uint(o))?;
            u8::try_from(v).map_err(|_| format!("{c}: PROTO {v} is over 255"))
        }
    }
}
fn dst_or_anno(c: &str, s: &str) -> Result<Option<[u8; 4]>, String> {
    if s.trim() == "DST_ANNO" {
        Ok(None)
    } else {
        Ok(Some(e(c, "DST", parse_ip(s))?))
    }
}
fn make_ipencap(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "IPEncap";
    let mut a = Args::parse(
        c,
        config,
        &[
            "PROTO", "SRC", "DST", "TOS", "TTL", "DF", "DSCP", "ECT", "CE",
        ],
    );
    let proto = proto_num(
        c,
        &a.keyword_or_positional("PROTO")
            .ok_or("IPEncap: missing argument PROTO")?,
    )?;
    let src = e(
        c,
        "SRC",
        parse_ip(
            &a.keyword_or_positional("SRC")
                .ok_or("IPEncap: missing argument SRC")?,
        ),
    )?;
    let dst = dst_or_anno(
        c,
        &a.keyword_or_positional("DST")
            .ok_or("IPEncap: missing argument DST")?,
    )?;
    let byte = |a: &mut Args, k: &str, d: u8| -> Result<u8, String> {
        match a.keyword(k) {
            Some(s) => {
                let v = e(c, k, parse_uint(&s))?;
                u8::try_from(v).map_err(|_| format!("{c}: {k} {v} is over 255"))
            }
            None => Ok(d),
        }
    };
    let tos = byte(&mut a, "TOS", 0)?;
    let ttl = byte(&mut a, "TTL", 250)?;
    let df = match a.keyword("DF") {
        Some(s) => e(c, "DF", parse_bool(&s))?,
        None => false,
    };
    for k in ["DSCP", "ECT", "CE"] {
        if a.keyword(k).is_some() {
            return Err(format!("{c}: {k} is not supported (use TOS)"));
        }
    }
    a.finish()?;
    Ok(el(K::IpEncap {
        proto,
        src,
        dst,
        tos,
        ttl,
        df,
        id: 0,
    }))
}
fn make_udpipencap(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "UDPIPEncap";
    let mut a = Args::parse(c, config, &["SRC", "SPORT", "DST", "DPORT", "CHECKSUM"]);
    let src = e(
        c,
        "SRC",
        parse_ip(
            &a.keyword_or_positional("SRC")
                .ok_or("UDPIPEncap: missing argument SRC")?,
        ),
    )?;
    let port = |s: Option<String>, k: &str| -> Result<u16, String> {
        let s = s.ok_or_else(|| format!("{c}: missing argument {k}"))?;
        let v = crate::elements::nat::ipfilter::port_by_name(s.trim())
            .map(u64::from)
            .map_or_else(|| e(c, k, parse_uint(&s)), Ok)?;
        u16::try_from(v).map_err(|_| format!("{c}: {k} {v} is over 65535"))
    };
    let sport = port(a.keyword_or_positional("SPORT"), "SPORT")?;
    let dst = dst_or_anno(
        c,
        &a.keyword_or_positional("DST")
            .ok_or("UDPIPEncap: missing argument DST")?,
    )?;
    let dport = port(a.keyword_or_positional("DPORT"), "DPORT")?;
    let cksum = match a.keyword_or_positional("CHECKSUM") {
        Some(s) => e(c, "CHECKSUM", parse_bool(&s))?,
        None => true,
    };
    a.finish()?;
    Ok(el(K::UdpIpEncap {
        src,
        sport,
        dst,
        dport,
        cksum,
        id: 0,
    }))
}
fn make_mirror(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("IPMirror", config, &["DST_ANNO"]);
    let dst_anno = match a.keyword_or_positional("DST_ANNO") {
        Some(v) => e("IPMirror", "DST_ANNO", parse_bool(&v))?,
        None => true,
    };
    a.finish()?;
    Ok(el(K::Mirror { dst_anno }))
}
fn make_hef(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "HostEtherFilter";
    let mut a = Args::parse(c, config, &["ETHER", "DROP_OWN", "DROP_OTHER", "OFFSET"]);
    let eth = e(
        c,
        "ETHER",
        parse_ether(
            &a.keyword_or_positional("ETHER")
                .ok_or("HostEtherFilter: missing argument ETHER")?,
        ),
    )?;
    let drop_own = a
        .keyword_or_positional("DROP_OWN")
        .map(|s| e(c, "DROP_OWN", parse_bool(&s)))
        .transpose()?
        .unwrap_or(false);
    let drop_other = a
        .keyword_or_positional("DROP_OTHER")
        .map(|s| e(c, "DROP_OTHER", parse_bool(&s)))
        .transpose()?
        .unwrap_or(true);
    if a.keyword("OFFSET").is_some() {
        return Err(format!("{c}: OFFSET is not supported"));
    }
    a.finish()?;
    Ok(el(K::Hef {
        eth,
        drop_own,
        drop_other,
    }))
}
fn make_pingresp(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("ICMPPingResponder", config, &[]).finish()?;
    Ok(el(K::PingResp))
}

/// Incrementally update the 16-bit checksum at `sum_at` for a 32-bit field change.
fn update32(b: &mut [u8], sum_at: usize, old: [u8; 4], new: [u8; 4]) {
    let mut s = net::be16(b, sum_at);
    for k in [0, 2] {
        s = incremental_update(
            s,
            u16::from_be_bytes([old[k], old[k + 1]]),
            u16::from_be_bytes([new[k], new[k + 1]]),
        );
    }
    net::set_be16(b, sum_at, s);
}

impl IpMod {
    fn act(&mut self, mut p: Packet, cx: &mut Cx) -> Result<Packet, (Packet, &'static str, bool)> {
        match &mut self.k {
            K::Mark(off) => {
                cx.instr(2);
                cx.read_pkt(1);
                let off = *off;
                let Some(&b) = p.data().get(off) else {
                    return Err((p, "too short", false));
                };
                let hl = ((b & 0x0f) as usize) * 4;
                if p.len() < off + 20 {
                    return Err((p, "too short", false));
                }
                p.set_ip_header(off, hl.max(20));
                cx.write_meta(4);
            }
            K::Strip => {
                cx.instr(2);
                cx.read_meta(4);
                let Some(off) = p.ip_offset() else {
                    return Err((p, "no IP header", false));
                };
                let hl = p.anno.network_header_len;
                let n = (off + hl).min(p.len());
                p.strip_front(n);
                cx.write_meta(2);
            }
            K::SetAddr(ip) => {
                cx.instr(2);
                p.anno.dst_ip = *ip;
                cx.write_meta(4);
            }
            K::Store(addr, at) => {
                cx.instr(4);
                cx.read_meta(4);
                let v = addr.unwrap_or(p.anno.dst_ip);
                match *at {
                    StoreAt::Offset(o) => {
                        let Some(d) = p.data_mut().get_mut(o..o + 4) else {
                            return Err((p, "too short", false));
                        };
                        d.copy_from_slice(&v);
                        cx.write_pkt(4);
                    }
                    StoreAt::Src | StoreAt::Dst => {
                        let Some(off) = p.ip_offset() else {
                            return Err((p, "no IP header", false));
                        };
                        let fo = if matches!(at, StoreAt::Src) { 12 } else { 16 };
                        let d = p.data_mut();
                        let h = &mut d[off..];
                        if h.len() < 20 {
                            return Err((p, "too short", false));
                        }
                        let hl = net::ip_hl(h).max(20);
                        let old = [h[fo], h[fo + 1], h[fo + 2], h[fo + 3]];
                        h[fo..fo + 4].copy_from_slice(&v);
                        cx.write_pkt(4);
                        cx.instr(10);
                        update32(h, 10, old, v);
                        cx.read_pkt(2);
                        cx.write_pkt(2);
                        let first = net::ip_frag_offset(h) == 0;
                        // Click 2.1 (elements/ip/storeipaddress.cc): the TCP checksum when a
                        // whole 20-byte TCP header is present, the UDP checksum when 8 bytes
                        // are and it is not 0 (none); no 0xffff substitution.
                        let sum_at = match h[9] {
                            net::IP_PROTO_TCP if h.len() >= hl + 20 => Some(hl + 16),
                            net::IP_PROTO_UDP if h.len() >= hl + 8 => Some(hl + 6),
                            _ => None,
                        };
                        if let Some(sa) = sum_at.filter(|_| first) {
                            let udp_none = h[9] == net::IP_PROTO_UDP && net::be16(h, sa) == 0;
                            if !udp_none {
                                update32(h, sa, old, v);
                                cx.read_pkt(2);
                                cx.write_pkt(2);
                            }
                        }
                    }
                }
            }
            K::Rand {
                net,
                mask,
                pool,
                state,
            } => {
                cx.instr(8);
                cx.dynamic_state(Read, 0, 0, 8);
                *state = splitmix(*state);
                cx.dynamic_state(Write, 0, 0, 8);
                p.anno.dst_ip = if pool.is_empty() {
                    (*net | (*state as u32 & !*mask)).to_be_bytes()
                } else {
                    pool[(*state % pool.len() as u64) as usize]
                };
                cx.write_meta(4);
            }
            K::IpEncap {
                proto,
                src,
                dst,
                tos,
                ttl,
                df,
                id,
            } => {
                cx.instr(12);
                cx.dynamic_state(Read, 0, 0, 2);
                let total = p.len() + 20;
                if total > 65535 {
                    return Err((p, "too long", false));
                }
                let d = dst.unwrap_or(p.anno.dst_ip);
                p.push_front(20);
                let h = &mut p.data_mut()[..20];
                h.fill(0);
                h[0] = 0x45;
                h[1] = *tos;
                net::set_be16(h, 2, total as u16);
                net::set_be16(h, 4, *id);
                net::set_be16(h, 6, if *df { net::IP_DF } else { 0 });
                h[8] = *ttl;
                h[9] = *proto;
                net::set_ip_src(h, *src);
                net::set_ip_dst(h, d);
                net::set_ip_checksum(h);
                *id = id.wrapping_add(1);
                cx.dynamic_state(Write, 0, 0, 2);
                cx.write_pkt(20);
                p.set_ip_header(0, 20);
                p.anno.dst_ip = d;
                cx.write_meta(8);
            }
            K::UdpIpEncap {
                src,
                sport,
                dst,
                dport,
                cksum,
                id,
            } => {
                cx.instr(20);
                cx.dynamic_state(Read, 0, 0, 2);
                let total = p.len() + 28;
                if total > 65535 {
                    return Err((p, "too long", false));
                }
                let d = dst.unwrap_or(p.anno.dst_ip);
                p.push_front(28);
                let f = p.data_mut();
                f[..28].fill(0);
                f[0] = 0x45;
                net::set_be16(f, 2, total as u16);
                net::set_be16(f, 4, *id);
                f[8] = 250;
                f[9] = net::IP_PROTO_UDP;
                net::set_ip_src(f, *src);
                net::set_ip_dst(f, d);
                net::set_ip_checksum(&mut f[..20]);
                let udp = &mut f[20..];
                net::set_be16(udp, 0, *sport);
                net::set_be16(udp, 2, *dport);
                net::set_be16(udp, 4, (total - 20) as u16);
                if *cksum {
                    // As Click 2.1: a computed 0 is sent as 0 (no 0xffff substitution).
                    let c = l4_checksum(*src, d, net::IP_PROTO_UDP, udp);
                    net::set_be16(udp, 6, c);
                    cx.instr(((total - 20) / 2) as u32);
                    cx.read_pkt((total - 28) as u32);
                }
                *id = id.wrapping_add(1);
                cx.dynamic_state(Write, 0, 0, 2);
                cx.write_pkt(28);
                p.set_ip_header(0, 20);
                p.anno.dst_ip = d;
                cx.write_meta(8);
            }
            K::Mirror { dst_anno } => {
                cx.instr(8);
                let Some(off) = p.ip_offset() else {
                    return Err((p, "no IP header", false));
                };
                let h = &mut p.data_mut()[off..];
                if h.len() < 20 {
                    return Err((p, "too short", false));
                }
                cx.read_pkt(8);
                let (s, d) = (net::ip_src(h), net::ip_dst(h));
                net::set_ip_src(h, d);
                net::set_ip_dst(h, s);
                cx.write_pkt(8);
                let hl = net::ip_hl(h).max(20);
                // Click 2.1 (elements/ip/ipmirror.cc): ports are swapped when at least 8
                // transport bytes are present, and a TCP packet's sequence and
                // acknowledgment numbers are swapped too (checksums stay valid).
                if matches!(h[9], net::IP_PROTO_TCP | net::IP_PROTO_UDP)
                    && net::ip_frag_offset(h) == 0
                    && h.len() >= hl + 8
                {
                    cx.read_pkt(4);
                    let (sp, dp) = (net::be16(h, hl), net::be16(h, hl + 2));
                    net::set_be16(h, hl, dp);
                    net::set_be16(h, hl + 2, sp);
                    cx.write_pkt(4);
                    if h[9] == net::IP_PROTO_TCP && h.len() >= hl + 12 {
                        cx.read_pkt(8);
                        let mut seq = [0u8; 4];
                        seq.copy_from_slice(&h[hl + 4..hl + 8]);
                        h.copy_within(hl + 8..hl + 12, hl + 4);
                        h[hl + 8..hl + 12].copy_from_slice(&seq);
                        cx.write_pkt(8);
                    }
                }
                if *dst_anno {
                    p.anno.dst_ip = s;
                    cx.write_meta(4);
                }
            }
            K::Hef {
                eth,
                drop_own,
                drop_other,
            } => {
                cx.instr(4);
                cx.read_pkt(12);
                // A frame too short for an Ethernet header is not for this host: output 1
                // (Click 2.1 reads its addresses past the data and sends it there too).
                if p.len() < 14 {
                    return Err((p, "too short", true));
                }
                let d = p.data();
                // Click 2.1 (elements/ethernet/hostetherfilter.cc): own frames leave on
                // output 1 too.
                if *drop_own && d[6..12] == eth[..] {
                    return Err((p, "own frame", true));
                }
                let dst = &d[0..6];
                if *drop_other && dst != eth && dst[0] & 1 == 0 {
                    return Err((p, "not for host", true));
                }
            }
            K::PingResp => {
                cx.instr(24);
                let Some(off) = p.ip_offset() else {
                    return Err((p, "not an echo request", true));
                };
                let h = &p.data()[off..];
                let hl = if h.len() >= 20 {
                    net::ip_hl(h).max(20)
                } else {
                    0
                };
                // Click 2.1 (elements/icmp/icmppingresponder.cc): an ICMP packet with at
                // least 8 transport bytes whose type is echo request, fragment or not.
                let is_req =
                    hl > 0 && h[9] == net::IP_PROTO_ICMP && h.len() >= hl + 8 && h[hl] == 8;
                cx.read_pkt(21);
                if !is_req {
                    return Err((p, "not an echo request", true));
                }
                let h = &mut p.data_mut()[off..];
                let (s, d) = (net::ip_src(h), net::ip_dst(h));
                net::set_ip_src(h, d);
                net::set_ip_dst(h, s);
                // As Click: the fragment field is cleared and the TTL set to 255, the header
                // checksum updated incrementally (a wrong checksum stays wrong).
                let sum = incremental_update(net::be16(h, 10), net::be16(h, 6), 0);
                net::set_be16(h, 6, 0);
                let old = net::be16(h, 8);
                h[8] = 255;
                let sum = incremental_update(sum, old, net::be16(h, 8));
                net::set_be16(h, 10, sum);
                // ICMP type 8 -> 0 and code 0, the checksum updated incrementally.
                let old = net::be16(h, hl);
                h[hl] = 0;
                h[hl + 1] = 0;
                let mut sum = incremental_update(net::be16(h, hl + 2), old, 0);
                // All-zero ICMP bytes sum to 0xffff, not 0 (Click's
                // click_update_zero_in_cksum).
                if sum == 0 && h[hl + 4..].iter().all(|&b| b == 0) {
                    sum = 0xffff;
                }
                net::set_be16(h, hl + 2, sum);
                cx.write_pkt(24);
                p.anno.dst_ip = s;
                cx.write_meta(4);
            }
        }
        Ok(p)
    }
}

impl Element for IpMod {
    fn ports(&self) -> Ports {
        match self.k {
            K::Hef { .. } | K::PingResp => Ports::agnostic(1, 1).with_outputs(1, 2),
            _ => Ports::agnostic(1, 1),
        }
    }
    fn output_processing_of(&self, port: usize) -> Processing {
        if port == 0 {
            Processing::Agnostic
        } else {
            Processing::Push
        }
    }
    fn set_port_counts(&mut self, _i: usize, o: usize) {
        self.nout = o.max(1);
    }
    #[inline(always)]
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        match self.act(p, cx) {
            Ok(p) => Some(p),
            Err((p, _, true)) if self.nout > 1 => {
                cx.emit(1, p);
                None
            }
            Err((p, why, _)) => {
                cx.drop_packet(p, why);
                None
            }
        }
    }
    fn code_size(&self) -> u32 {
        48
    }
}

#[cfg(test)]
mod tests {
    use crate::elements::ip::testutil::{drop_reasons, ipv4, make, push};
    use crate::net;
    use pktflow_traffic::Packet;

    fn ip_pkt(bytes: &[u8]) -> Packet {
        let mut p = Packet::from_bytes(bytes);
        p.set_ip_header(0, 20);
        p
    }

    #[test]
    fn udpipencap_bytes_by_hand() {
        let mut e = make("UDPIPEncap", "1.0.0.2, 1234, 2.0.0.2, 1234, 1");
        let (out, _) = push(e.as_mut(), 0, Packet::from_bytes(&[0x55, 0x44]));
        let want = [
            // IP: 4500 001e 0000 0000 fa11 sum 01000002 02000002
            // sum = 4500+001e+fa11+0100+0002+0200+0002 = 0x14233 -> 0x4234 -> ~ = 0xbdcb
            0x45, 0x00, 0x00, 0x1e, 0, 0, 0, 0, 250, 17, 0xbd, 0xcb, 1, 0, 0, 2, 2, 0, 0, 2,
            // UDP: 04d2 04d2 000a sum; pseudo 0100+0002+0200+0002+0011+000a = 0x031f;
            // + 04d2+04d2+000a+5544 = 0x5ef2; 0x5ef2+0x031f = 0x6211 -> ~ = 0x9dee
            0x04, 0xd2, 0x04, 0xd2, 0x00, 0x0a, 0x9d, 0xee, 0x55, 0x44,
        ];
        assert_eq!(out[0].1.data(), &want);
        assert_eq!(out[0].1.ip_offset(), Some(0));
        let (out, _) = push(e.as_mut(), 0, Packet::from_bytes(&[0x55, 0x44]));
        assert_eq!(net::be16(out[0].1.data(), 4), 1, "the id counts up");
    }

    #[test]
    fn ipencap_and_mark_and_strip() {
        let mut e = make("IPEncap", "4, 10.0.0.1, 10.0.0.2");
        let (out, _) = push(e.as_mut(), 0, Packet::from_bytes(&[9; 4]));
        let h = out[0].1.data();
        // 4500 0018 0000 0000 fa04 sum 0a000001 0a000002:
        // 4500+0018+fa04+0a00+0001+0a00+0002 = 0x1531f -> 0x5320 -> ~ = 0xacdf
        assert_eq!(
            &h[..12],
            &[0x45, 0, 0, 0x18, 0, 0, 0, 0, 250, 4, 0xac, 0xdf]
        );
        let mut s = make("StripIPHeader", "");
        let (out, _) = push(s.as_mut(), 0, out.into_iter().next().unwrap().1);
        assert_eq!(out[0].1.data(), &[9; 4]);
        let mut m = make("MarkIPHeader", "14");
        let mut f = vec![0u8; 14];
        f.extend(ipv4([1, 2, 3, 4], [5, 6, 7, 8], 64, &[], 0, 0));
        let (out, _) = push(m.as_mut(), 0, Packet::from_bytes(&f));
        assert_eq!(out[0].1.ip_offset(), Some(14));
        let (out, t) = push(m.as_mut(), 0, Packet::from_bytes(&[0; 20]));
        assert!(out.is_empty());
        assert_eq!(drop_reasons(&t), vec!["too short"]);
    }

    #[test]
    fn store_and_set_addresses() {
        let mut s = make("SetIPAddress", "9.9.9.9");
        let (out, _) = push(s.as_mut(), 0, Packet::from_bytes(&[0; 8]));
        assert_eq!(out[0].1.anno.dst_ip, [9, 9, 9, 9]);
        let mut st = make("StoreIPAddress", "2");
        let (out, _) = push(st.as_mut(), 0, out.into_iter().next().unwrap().1);
        assert_eq!(out[0].1.data(), &[0, 0, 9, 9, 9, 9, 0, 0]);
        // 'dst' keeps the IP checksum valid.
        let mut st = make("StoreIPAddress", "7.7.7.7, dst");
        let pkt = ipv4([1, 2, 3, 4], [5, 6, 7, 8], 64, &[], 8, 0);
        let (out, _) = push(st.as_mut(), 0, ip_pkt(&pkt));
        let h = out[0].1.data();
        assert_eq!(net::ip_dst(h), [7, 7, 7, 7]);
        assert_eq!(pktflow_traffic::checksum::ip_checksum(&h[..20]), 0);
        let mut r = make("SetRandIPAddress", "10.1.0.0/16");
        for _ in 0..20 {
            let (out, _) = push(r.as_mut(), 0, Packet::from_bytes(&[0]));
            assert_eq!(&out[0].1.anno.dst_ip[..2], &[10, 1]);
        }
    }

    #[test]
    fn mirror_ping_and_host_filter() {
        let mut m = make("IPMirror", "");
        let mut pkt = ipv4([1, 2, 3, 4], [5, 6, 7, 8], 64, &[], 8, 0);
        pkt[20..24].copy_from_slice(&[0, 1, 0, 2]);
        let (out, _) = push(m.as_mut(), 0, ip_pkt(&pkt));
        let h = out[0].1.data();
        assert_eq!(
            (net::ip_src(h), net::ip_dst(h)),
            ([5, 6, 7, 8], [1, 2, 3, 4])
        );
        assert_eq!(&h[20..24], &[0, 2, 0, 1]);
        // Echo request 1.0.0.1 -> 2.0.0.2, id 0x0102 seq 3, no data: checksum
        // ~(0x0800 + 0x0102 + 0x0003) = ~0x0905 = 0xf6fa; reply type 0: ~(0x0105) = 0xfefa.
        let mut req = ipv4([1, 0, 0, 1], [2, 0, 0, 2], 64, &[], 8, 0);
        req[9] = 1;
        req[20..28].copy_from_slice(&[8, 0, 0xf6, 0xfa, 1, 2, 0, 3]);
        net::set_ip_checksum(&mut req[..20]);
        let mut r = make("ICMPPingResponder", "");
        let (out, _) = push(r.as_mut(), 0, ip_pkt(&req));
        let h = out[0].1.data();
        assert_eq!(&h[20..28], &[0, 0, 0xfe, 0xfa, 1, 2, 0, 3]);
        assert_eq!(
            (net::ip_src(h), net::ip_dst(h), h[8]),
            ([2, 0, 0, 2], [1, 0, 0, 1], 255)
        );
        assert_eq!(pktflow_traffic::checksum::ip_checksum(&h[..20]), 0);
        let mut f = make("HostEtherFilter", "00:00:00:00:00:01");
        let mut frame = vec![0u8; 14];
        frame[5] = 2;
        let (out, t) = push(f.as_mut(), 0, Packet::from_bytes(&frame));
        assert!(out.is_empty());
        assert_eq!(drop_reasons(&t), vec!["not for host"]);
        frame[5] = 1;
        assert_eq!(push(f.as_mut(), 0, Packet::from_bytes(&frame)).0.len(), 1);
    }
}
