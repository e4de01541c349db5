//! `ICMPError(SRC, TYPE [, CODE, keywords BADADDRS, MTU, PMTU, SET_FIX_ANNO])` — answers the IP
//! packet it receives with an ICMP error of TYPE/CODE from source address SRC, and drops the
//! original (reason `icmp error sent`).
//!
//! TYPE and CODE are numbers or Click's names: `unreachable` (3: `net`, `host`, `protocol`,
//! `port`, `needfrag`), `sourcequench` (4), `redirect` (5: `net`, `host`), `timeexceeded`
//! (11: `transit`, `reassembly`), `parameterproblem` (12: `erroratptr`, `missingopt`,
//! `length`). As Click does, the error packet is at most MTU bytes (default 576, RFC 1812
//! 4.3.2.3): it quotes as much of the original packet, from its IP header on, as fits in
//! MTU - 28 bytes (548 by default), or all of it when shorter. Type-specific words: parameter
//! problem code 0 takes its pointer from the parameter-problem annotation (IPGWOptions sets
//! it); redirect takes the gateway from the destination annotation (the next hop the route
//! lookup chose); unreachable/needfrag reports PMTU in its next-hop MTU field (pktflow's
//! keyword; default 0, the zero Click leaves there).
//!
//! No error is generated (the original is dropped with reason `icmp error suppressed`) for
//! (RFC 1812 4.3.2.7): a packet that arrived as a link-level broadcast or multicast; a
//! fragment other than the first; an ICMP error message; a source address in 0.0.0.0/8 or
//! 127.0.0.0/8, 255.255.255.255, multicast or class E; a multicast or limited-broadcast destination; a
//! source or destination on the BADADDRS list; a truncated IP header.
//!
//! The new packet is IPv4/ICMP with TOS 0, TTL 200 (Click's value), an IP id from one counter
//! shared by every ICMPError of the configuration (1, 2, 3, ... as Click's process-wide
//! counter), and valid IP and ICMP checksums;
//! its network-header annotation is set, its destination annotation is the original source,
//! and its fix-source annotation is set (unless `SET_FIX_ANNO false`) so that `FixIPSrc` on the
//! way out rewrites the source to the outgoing interface's address.
//!
//! Ports: 1 agnostic input, 1 agnostic output (the packet out is the error, not the input).
//! Costs: 8 instructions, a read of the first 20 header bytes (+1 ICMP type byte), 6 B of
//! meta-data reads (packet type, parameter pointer / destination); a suppressed packet stops
//! there. Building: 40 instructions + 1 per byte copied + 1 per 16-bit word checksummed, a
//! packet-data read of the quoted bytes, a packet-data write of the whole new packet, a
//! 16-byte meta-data write (annotations), and the IP-id counter (dynamic state object 0,
//! key 0, 2-byte read and write: recorded as this element's object although the counter is
//! shared by all ICMPError elements).
use super::ip_header_offset;
use crate::conf::{parse_bool, parse_ip, parse_uint, split_words, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::packet::PacketType;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "ICMPError",
    summary: "answer packets with ICMP errors (time exceeded, unreachable, redirect, ...)",
    make,
};

pub struct ICMPError {
    src: [u8; 4],
    ty: u8,
    code: u8,
    badaddrs: Vec<[u8; 4]>,
    mtu: u16,
    pmtu: u16,
    set_fix: bool,
    ids: std::sync::Arc<crate::conf::Shared>,
    sent: u64,
    suppressed: u64,
}

fn type_code(ty: &str, code: Option<&str>) -> Result<(u8, u8), String> {
    let t = match ty.trim() {
        "unreachable" => 3,
        "sourcequench" => 4,
        "redirect" => 5,
        "timeexceeded" => 11,
        "parameterproblem" => 12,
        other => {
            let n = parse_uint(other).map_err(|_| {
                format!("expected an ICMP type (a number or unreachable, sourcequench, redirect, timeexceeded, parameterproblem), found '{other}'")
            })?;
            if n > 255 {
                return Err(format!("ICMP type {n} is over 255"));
            }
            n as u8
        }
    };
    let c = match code.map(str::trim) {
        None => 0,
        Some(c) => {
            let named = match (t, c) {
                (3, "net") | (5, "net") | (11, "transit") | (12, "erroratptr") => Some(0),
                (3, "host") | (5, "host") | (11, "reassembly") | (12, "missingopt") => Some(1),
                (3, "protocol") | (12, "length") => Some(2),
                (3, "port") => Some(3),
                (3, "needfrag") => Some(4),
                _ => None,
            };
            match named {
                Some(n) => n,
                None => {
                    let n = parse_uint(c)
                        .map_err(|_| format!("'{c}' is not a code of ICMP type {t}"))?;
                    if n > 255 {
                        return Err(format!("ICMP code {n} is over 255"));
                    }
                    n as u8
                }
            }
        }
    };
    Ok((t, c))
}

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "ICMPError";
    let mut a = Args::parse(
        c,
        config,
        &[
            "SRC",
            "TYPE",
            "CODE",
            "BADADDRS",
            "MTU",
            "PMTU",
            "SET_FIX_ANNO",
        ],
    );
    let src = a
        .keyword_or_positional("SRC")
        .ok_or("ICMPError: missing argument SRC")?;
    let src = parse_ip(&src).map_err(|e| format!("{c}: SRC: {e}"))?;
    let ty = a
        .keyword_or_positional("TYPE")
        .ok_or("ICMPError: missing argument TYPE")?;
    let code = a.keyword_or_positional("CODE");
    let (ty, code) = type_code(&ty, code.as_deref()).map_err(|e| format!("{c}: {e}"))?;
    let mut badaddrs = Vec::new();
    if let Some(s) = a.keyword("BADADDRS") {
        for w in split_words(&s) {
            badaddrs.push(parse_ip(&w).map_err(|e| format!("{c}: BADADDRS: {e}"))?);
        }
    }
    let mtu = match a.keyword("MTU") {
        Some(s) => {
            let m = parse_uint(&s).map_err(|e| format!("{c}: MTU: {e}"))?;
            if m > 0xffff {
                return Err(format!("{c}: MTU must fit in 16 bits"));
            }
            m as u16
        }
        None => 576,
    };
    if mtu < 28 {
        return Err(format!(
            "{c}: MTU {mtu} is too small (at least 28: the IP and ICMP headers)"
        ));
    }
    let pmtu = match a.keyword("PMTU") {
        Some(s) => {
            let m = parse_uint(&s).map_err(|e| format!("{c}: PMTU: {e}"))?;
            u16::try_from(m).map_err(|_| format!("{c}: PMTU must fit in 16 bits"))?
        }
        None => 0,
    };
    let set_fix = match a.keyword("SET_FIX_ANNO") {
        Some(s) => parse_bool(&s).map_err(|e| format!("{c}: SET_FIX_ANNO: {e}"))?,
        None => true,
    };
    a.finish()?;
    Ok(Box::new(ICMPError {
        src,
        ty,
        code,
        badaddrs,
        mtu,
        pmtu,
        set_fix,
        ids: env.shared.clone(),
        sent: 0,
        suppressed: 0,
    }))
}

impl ICMPError {
    /// Whether RFC 1812 forbids answering the header `h` (already known to be >= 20 bytes).
    fn suppressed(&self, p: &Packet, h: &[u8], cx: &mut Cx) -> bool {
        if matches!(
            p.anno.packet_type,
            PacketType::Broadcast | PacketType::Multicast
        ) {
            return true;
        }
        let hl = net::ip_hl(h);
        if net::ip_version(h) != 4 || hl < 20 || hl > h.len() {
            return true;
        }
        if net::ip_frag_field(h) & net::IP_OFFMASK != 0 {
            return true;
        }
        let (src, dst) = (net::ip_src(h), net::ip_dst(h));
        // Click's valid_source: not 0.x.x.x (this network), 127.x.x.x, broadcast, multicast
        // or class E.
        if net::is_bad_unicast_src(src)
            || src[0] == 0
            || src[0] == 127
            || dst == [255; 4]
            || dst[0] >> 4 == 0xe
        {
            return true;
        }
        cx.instr(2 * self.badaddrs.len() as u32);
        if self.badaddrs.contains(&src) || self.badaddrs.contains(&dst) {
            return true;
        }
        // Click 2.1 (elements/icmp/icmperror.cc): an ICMP packet is not answered when the
        // packet, counted from its first byte (the Ethernet header too when it is still
        // there), is shorter than the IP header plus 4 bytes. A type byte past the end of
        // the packet reads as 0 (Click reads whatever follows the data).
        if net::ip_proto(h) == net::IP_PROTO_ICMP {
            if p.len() < hl + 4 {
                return true;
            }
            cx.read_pkt(1);
            if net::icmp_is_error_type(h.get(hl).copied().unwrap_or(0)) {
                return true;
            }
        }
        false
    }
}

/// The offset (from the IP header) of a well-formed loose or strict source route option in
/// the options of `h` (`hl` bytes of header), as Click 2.1's ICMPError looks for one: the
/// options are walked until EOL or a malformed length, and the first LSRR/SSRR whose pointer
/// is a multiple of 4, at least 4 and at most its length + 1 is taken.
pub fn source_route(h: &[u8], hl: usize) -> Option<usize> {
    let hl = hl.min(h.len());
    let mut i = 20;
    while i < hl {
        match h[i] {
            1 => {
                i += 1;
                continue;
            }
            0 => return None,
            ty => {
                let len = *h.get(i + 1)? as usize;
                if len < 2 || i + len > hl {
                    return None;
                }
                let ptr = *h.get(i + 2)? as usize;
                if (ty == 131 || ty == 137) && ptr >= 4 && ptr.is_multiple_of(4) && ptr <= len + 1 {
                    return Some(i);
                }
                i += len;
            }
        }
    }
    None
}

/// The option Click 2.1 puts in an ICMP error about a source-routed packet (RFC 1812
/// 4.3.2.6): the route's type, length pointer - 1, pointer 4, the addresses already visited
/// in reverse order, and an end-of-options byte; `opt` is the option in the original header.
fn reversed_route(opt: &[u8]) -> Vec<u8> {
    let ptr = opt[2] as usize;
    let olen = ptr - 1;
    let mut o = vec![0u8; olen + 1];
    o[0] = opt[0];
    o[1] = olen as u8;
    o[2] = 4;
    let mut k = 3;
    let mut a = ptr as isize - 5;
    while a >= 3 {
        let a_us = a as usize;
        o[k..k + 4].copy_from_slice(&opt[a_us..a_us + 4]);
        k += 4;
        a -= 4;
    }
    o[olen] = 0;
    o
}

impl Element for ICMPError {
    fn cycle_safe(&self) -> bool {
        // RFC 1812: no ICMP error is sent about an ICMP error, so a packet passes at most once.
        true
    }

    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(8);
        cx.read_meta(2);
        let off = ip_header_offset(&p);
        let h = &p.data()[off..];
        if h.len() < net::IP_MIN_LEN {
            self.suppressed += 1;
            cx.drop_packet(p, "icmp error suppressed");
            return None;
        }
        cx.read_pkt(20);
        if self.suppressed(&p, h, cx) {
            self.suppressed += 1;
            cx.drop_packet(p, "icmp error suppressed");
            return None;
        }
        // A source-routed packet: no redirect (RFC 1812 5.2.7.2), and the error carries the
        // reversed route (4.3.2.6) unless a parameter problem points into the route.
        let hl = net::ip_hl(h);
        let mut route = source_route(h, hl);
        if let Some(r) = route {
            if self.ty == 5 {
                self.suppressed += 1;
                cx.drop_packet(p, "icmp error suppressed");
                return None;
            }
            let at = p.anno.icmp_param_prob as usize;
            if self.ty == 12 && self.code == 0 && r <= at && at < r + h[r + 1] as usize {
                route = None;
            }
        }
        let opts = route.map(|r| reversed_route(&h[r..])).unwrap_or_default();
        // The header with the route option, padded to whole words as Click does.
        let nhl = (20 + opts.len() + 2) / 4 * 4;
        // Quote from the IP header to the end of the packet, as much as fits in MTU.
        let quoted = h.len().min((self.mtu as usize).saturating_sub(nhl + 8));
        let len = nhl + 8 + quoted;
        let mut q = cx.new_packet(len);
        q.anno.timestamp_ns = p.anno.timestamp_ns;
        q.anno.input_port = p.anno.input_port;
        q.id = p.id;
        {
            let d = q.data_mut();
            // IP header.
            d[0] = 0x40 | (nhl / 4) as u8;
            d[20..20 + opts.len()].copy_from_slice(&opts);
            net::set_be16(d, 2, len as u16);
            cx.dynamic_state(Read, 0, 0, 2);
            let id = self
                .ids
                .icmp_error_id
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            cx.dynamic_state(Write, 0, 0, 2);
            net::set_be16(d, 4, id as u16);
            d[8] = 200;
            d[9] = net::IP_PROTO_ICMP;
            net::set_ip_src(d, self.src);
            net::set_ip_dst(d, net::ip_src(h));
            net::set_ip_checksum(&mut d[..nhl]);
            // ICMP header.
            let icmp = &mut d[nhl..];
            icmp[0] = self.ty;
            icmp[1] = self.code;
            match (self.ty, self.code) {
                (12, 0) => {
                    cx.read_meta(1);
                    icmp[4] = p.anno.icmp_param_prob;
                }
                (5, _) => {
                    cx.read_meta(4);
                    icmp[4..8].copy_from_slice(&p.anno.dst_ip);
                }
                (3, 4) => net::set_be16(icmp, 6, self.pmtu),
                _ => {}
            }
            icmp[8..8 + quoted].copy_from_slice(&h[..quoted]);
            let s = pktflow_traffic::checksum::ip_checksum(icmp);
            net::set_be16(icmp, 2, s);
        }
        cx.instr(40 + quoted as u32 + (len as u32) / 2);
        cx.read_pkt(quoted as u32);
        cx.write_pkt(len as u32);
        q.set_ip_header(0, nhl);
        q.anno.dst_ip = net::ip_src(h);
        q.anno.fix_ip_src = self.set_fix;
        cx.write_meta(16);
        self.sent += 1;
        cx.drop_packet(p, "icmp error sent");
        Some(q)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"sent": self.sent, "suppressed": self.suppressed})
    }
    fn code_size(&self) -> u32 {
        220
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{self, ipv4, push};
    use super::*;

    fn answer(cfg: &str, p: Packet) -> Result<Packet, &'static str> {
        let mut e = testutil::make("ICMPError", cfg);
        let (mut out, t) = push(e.as_mut(), 0, p);
        let r = testutil::drop_reasons(&t);
        match out.pop() {
            Some((0, q)) => {
                assert_eq!(r, vec!["icmp error sent"]);
                Ok(q)
            }
            _ => Err(r[0]),
        }
    }

    #[test]
    fn builds_valid_errors_with_type_specific_fields() {
        let orig = ipv4([10, 0, 0, 2], [192, 168, 1, 9], 1, &[], 100, 0);
        let q = answer("192.168.1.1, timeexceeded", Packet::from_bytes(&orig)).unwrap();
        let d = q.data();
        // The whole 120-byte original fits in 576 - 28 bytes: it is all quoted.
        assert_eq!(d.len(), 20 + 8 + 120);
        assert!(net::ip_header_ok(d));
        assert_eq!(net::ip_header_sum(d), 0);
        assert_eq!(
            (
                net::ip_src(d),
                net::ip_dst(d),
                net::ip_proto(d),
                net::ip_ttl(d)
            ),
            ([192, 168, 1, 1], [10, 0, 0, 2], 1, 200)
        );
        assert_eq!(
            pktflow_traffic::checksum::ip_checksum(&d[20..]),
            0,
            "ICMP checksum"
        );
        assert_eq!((d[20], d[21]), (11, 0));
        assert_eq!(&d[28..], &orig[..], "quotes the packet");
        assert_eq!(q.anno.dst_ip, [10, 0, 0, 2]);
        assert!(q.anno.fix_ip_src);
        assert_eq!(q.ip_offset(), Some(0));

        let mut p = Packet::from_bytes(&orig);
        p.anno.icmp_param_prob = 22;
        let q = answer("1.1.1.1, parameterproblem", p).unwrap();
        assert_eq!((q.data()[20], q.data()[24]), (12, 22));
        let mut p = Packet::from_bytes(&orig);
        p.anno.dst_ip = [10, 0, 0, 254];
        let q = answer("1.1.1.1, redirect, host", p).unwrap();
        assert_eq!((q.data()[20], q.data()[21]), (5, 1));
        assert_eq!(&q.data()[24..28], &[10, 0, 0, 254]);
        let q = answer(
            "1.1.1.1, unreachable, needfrag, PMTU 1500",
            Packet::from_bytes(&orig),
        )
        .unwrap();
        assert_eq!((q.data()[20], q.data()[21]), (3, 4));
        assert_eq!(net::be16(q.data(), 26), 1500);
        let q = answer(
            "1.1.1.1, 3, 4, SET_FIX_ANNO false",
            Packet::from_bytes(&orig),
        )
        .unwrap();
        assert_eq!(net::be16(q.data(), 26), 0, "no PMTU: the field stays 0");
        assert!(!q.anno.fix_ip_src);
    }

    #[test]
    fn quote_is_limited_by_mtu_and_ids_are_shared() {
        let big = ipv4([10, 0, 0, 2], [192, 168, 1, 9], 1, &[], 1000, 0);
        let q = answer("192.168.1.1, timeexceeded", Packet::from_bytes(&big)).unwrap();
        assert_eq!(q.data().len(), 576);
        assert_eq!(net::ip_total_len(q.data()), 576);
        assert_eq!(&q.data()[28..], &big[..548]);
        let q = answer(
            "192.168.1.1, timeexceeded, MTU 100",
            Packet::from_bytes(&big),
        )
        .unwrap();
        assert_eq!(q.data().len(), 100);
        // Two ICMPError elements of one router number their packets from one counter: 1, 2, 3.
        let env = InitEnv::default();
        let mut a = make("1.1.1.1, timeexceeded", &env).unwrap();
        let mut b = make("1.1.1.1, parameterproblem", &env).unwrap();
        let id = |e: &mut Box<dyn Element>| {
            let (out, _) = push(e.as_mut(), 0, Packet::from_bytes(&big));
            net::ip_id(out[0].1.data())
        };
        let ids = vec![id(&mut a), id(&mut b), id(&mut a)];
        assert_eq!(ids, vec![1, 2, 3]);
        assert!(make("1.1.1.1, timeexceeded, MTU 27", &env).is_err());
    }

    #[test]
    fn rfc1812_suppression() {
        let cfg = "192.168.1.1, timeexceeded, BADADDRS 10.9.9.9";
        let sup = |b: Vec<u8>, bcast: bool| {
            let mut p = Packet::from_bytes(&b);
            if bcast {
                p.anno.packet_type = PacketType::Broadcast;
            }
            answer(cfg, p).unwrap_err()
        };
        assert_eq!(
            sup(ipv4([10, 0, 0, 2], [1, 2, 3, 4], 1, &[], 8, 0), true),
            "icmp error suppressed"
        );
        assert_eq!(
            sup(ipv4([10, 0, 0, 2], [1, 2, 3, 4], 1, &[], 8, 100), false),
            "icmp error suppressed"
        );
        assert!(
            answer(
                cfg,
                Packet::from_bytes(&ipv4([10, 0, 0, 2], [1, 2, 3, 4], 1, &[], 8, net::IP_MF))
            )
            .is_ok(),
            "first fragment is answered"
        );
        for (s, d) in [
            ([0, 0, 0, 0], [1, 2, 3, 4]),
            ([255; 4], [1, 2, 3, 4]),
            ([224, 1, 1, 1], [1, 2, 3, 4]),
            ([10, 0, 0, 2], [255; 4]),
            ([10, 0, 0, 2], [239, 1, 1, 1]),
            ([10, 9, 9, 9], [1, 2, 3, 4]),
            ([10, 0, 0, 2], [10, 9, 9, 9]),
        ] {
            assert_eq!(
                sup(ipv4(s, d, 1, &[], 8, 0), false),
                "icmp error suppressed",
                "{s:?} -> {d:?}"
            );
        }
        // ICMP errors are not answered; ICMP echo requests are.
        let mut b = ipv4([10, 0, 0, 2], [1, 2, 3, 4], 1, &[], 8, 0);
        b[9] = 1;
        b[20] = 11;
        net::set_ip_checksum(&mut b);
        assert_eq!(sup(b.clone(), false), "icmp error suppressed");
        b[20] = 8;
        assert!(answer(cfg, Packet::from_bytes(&b)).is_ok());
    }

    /// Click 2.1's recorded answer (`crates/elements/tests/data/click21/
    /// icmperror_timeexceeded/out0.pcap`, written by `click conf.click` with
    /// `ICMPError(18.26.4.24, timeexceeded)`) to a TTL-1 TCP packet with a loose source route
    /// whose pointer (8) shows one visited address: the error carries the reversed route
    /// `83 07 04 09090909 00` in a 28-byte IP header, and quotes the whole packet.
    #[test]
    fn source_routed_packet_gets_the_reversed_route_as_click() {
        let hex = |s: &str| -> Vec<u8> {
            (0..s.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
                .collect()
        };
        let click = hex(concat!(
            "4700005901030000c801364f121a04180a00000783070409090909000b000f3200000000",
            "48000035000100000106ef7e0a00000708080808830b0809090909080808080015b30050",
            "000003e8000007d050182000dbf9000078"
        ));
        let orig = click[36..].to_vec();
        let q = answer("18.26.4.24, timeexceeded", Packet::from_bytes(&orig)).unwrap();
        let d = q.data();
        assert_eq!(d.len(), click.len());
        // All but the IP id (Click's counter had reached 259) and so the header checksum.
        assert_eq!(&d[..4], &click[..4]);
        assert_eq!(&d[6..10], &click[6..10]);
        assert_eq!(&d[12..], &click[12..]);
        assert_eq!(net::ip_header_sum(d), 0);
        assert_eq!(q.ip_offset(), Some(0));
        // A redirect about a source-routed packet is not sent (RFC 1812 5.2.7.2).
        assert_eq!(
            answer("18.26.4.24, redirect", Packet::from_bytes(&orig)).unwrap_err(),
            "icmp error suppressed"
        );
    }

    #[test]
    fn names_and_numbers() {
        assert_eq!(type_code("timeexceeded", None).unwrap(), (11, 0));
        assert_eq!(type_code("unreachable", Some("needfrag")).unwrap(), (3, 4));
        assert_eq!(type_code("redirect", Some("host")).unwrap(), (5, 1));
        assert_eq!(type_code("12", Some("0")).unwrap(), (12, 0));
        assert!(type_code("bogus", None).is_err());
        assert!(type_code("timeexceeded", Some("needfrag")).is_err());
    }
}
