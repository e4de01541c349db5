//! `ICMPRewriter(MAPS [, DST_ANNO])` — lets ICMP errors about rewritten flows through a NAT, as
//! Click's ICMPRewriter: MAPS is a space-separated list of IPRewriter, TCPRewriter or
//! ICMPPingRewriter elements.
//! An ICMP error (destination unreachable 3, source quench 4, redirect 5, time exceeded 11,
//! parameter problem 12) quotes the IP header and first 8 bytes of the packet it answers; that
//! packet left through a rewriter, so the quote shows the rewritten addresses and ports.
//! ICMPRewriter reverses the quoted TCP/UDP flow id, looks it up in each named rewriter's
//! mapping table in turn (forward or reply entries, live mappings only), and, on a hit whose
//! mapping rewrites packets to flow id T, makes the quote show T reversed (the packet as its
//! sender sent it): quoted source/destination addresses and ports, the quoted IP checksum, the
//! quoted TCP checksum when its 18 bytes are present or the quoted UDP checksum when it is
//! non-zero (all RFC 1624 incremental updates), and the ICMP checksum for every 16-bit word
//! changed. A quoted echo request or reply is looked up (source and destination swapped,
//! same identifier) in each named ICMPPingRewriter in turn; on a hit the quote gets the
//! mapping's original addresses and identifier, with the quoted ICMP checksum updated for the
//! identifier, the quoted IP checksum and the outer ICMP checksum. When the outer destination is the quoted source, it becomes T reversed's source
//! (the original sender), with the IP checksum updated and, with DST_ANNO (default true), the
//! destination annotation set. The rewritten packet leaves on output 0.
//!
//! Non-ICMP packets and errors too short for the quoted IP header plus 8 bytes are dropped
//! (reasons `not ICMP`, `bad ICMP error`), as in Click. Other ICMP types, quotes of other
//! protocols and quotes with no mapping leave on output 1 when it is connected and are dropped
//! otherwise (reason `unmapped ICMP`). pktflow refuses IPAddrRewriter in MAPS with a message
//! (its address-only mappings are not shared yet).
//!
//! Ports: one input, one or two outputs (agnostic).
//! Costs: 8 instructions, a 4 B meta-data read, a 4 B packet-data read (ICMP type, quoted
//! header length and protocol) per packet; an error with a TCP/UDP quote adds a 12 B read
//! (quoted addresses and ports, or identifier) and per rewriter consulted the table lookup of
//! [`crate::elements::nat::flow::FlowTable::lookup`] recorded on that rewriter's state objects
//! and, on a hit, a 24 B read of its flow record (ICMPPingRewriter: an 8 B read of its
//! entry, dynamic state object 0); the rewrite is 30 instructions, a 16 B
//! packet-data write (quoted addresses, ports and checksums) and a 2 B write (ICMP checksum),
//! plus 6 instructions and a 6 B write when the outer destination changes and a 4 B meta-data
//! write for the annotation.
use crate::conf::{parse_bool, split_words, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::elements::nat::flow::{FlowKey, OBJ_FLOWS};
use crate::elements::nat::shared::{lock, SharedRewriter};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::Read;
use pktflow_traffic::checksum::{incremental_update, incremental_update32};
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "ICMPRewriter",
    summary: "rewrite ICMP errors about flows an IPRewriter/TCPRewriter rewrote",
    make,
};

type PingMap =
    std::sync::Arc<std::sync::Mutex<crate::elements::click::icmp_ping_rewriter::PingState>>;

struct IcmpRewriter {
    maps: Vec<SharedRewriter>,
    /// ICMPPingRewriters' tables, with their graph indices (for cost records).
    ping_maps: Vec<(PingMap, u32)>,
    dst_anno: bool,
    noutputs: usize,
    rewritten: u64,
    unmapped: u64,
}

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "ICMPRewriter";
    let mut a = Args::parse(c, config, &["DST_ANNO"]);
    let dst_anno = match a.keyword("DST_ANNO") {
        Some(s) => parse_bool(&s).map_err(|e| format!("{c}: DST_ANNO: {e}"))?,
        None => true,
    };
    let mut maps = Vec::new();
    let mut ping_maps = Vec::new();
    for arg in a.take_all_positional() {
        for name in split_words(&arg) {
            let class = env
                .peers
                .iter()
                .find(|(n, _, _)| *n == name)
                .map(|(_, cl, _)| cl.as_str());
            match class {
                Some("IPRewriter" | "TCPRewriter") => maps.push(env.shared.rewriters.get(&name)),
                Some("ICMPPingRewriter") => {
                    let idx = env.peers.iter().position(|(n, _, _)| *n == name);
                    ping_maps.push((
                        env.shared.ping_rewriters.get(&name),
                        idx.map_or(u32::MAX, |i| i as u32),
                    ));
                }
                Some(cl @ "IPAddrRewriter") => {
                    return Err(format!(
                        "{c}: '{name}' is an {cl}; pktflow's ICMPRewriter reads IPRewriter, TCPRewriter and ICMPPingRewriter mappings"
                    ))
                }
                Some(cl) => {
                    return Err(format!("{c}: '{name}' is a {cl}, not an IP rewriter"))
                }
                None => return Err(format!("{c}: no element named '{name}'")),
            }
        }
    }
    if maps.is_empty() && ping_maps.is_empty() {
        return Err(format!("{c}: no IP rewriters supplied"));
    }
    Ok(Box::new(IcmpRewriter {
        maps,
        ping_maps,
        dst_anno,
        noutputs: 2,
        rewritten: 0,
        unmapped: 0,
    }))
}

fn is_error(t: u8) -> bool {
    matches!(t, 3 | 4 | 5 | 11 | 12)
}

impl IcmpRewriter {
    /// The flow id the mapping hit by `k` rewrites packets to, from the first rewriter that
    /// has a live entry for it.
    fn target(&self, k: &FlowKey, cx: &mut Cx) -> Option<FlowKey> {
        let own = cx.element;
        let mut found = None;
        for m in &self.maps {
            let g = lock(m);
            cx.element = g.element;
            if let Some(e) = g.table.lookup(k, cx) {
                let slot = e >> 1;
                cx.dynamic_state(Read, OBJ_FLOWS, slot as u64, 24);
                let f = &g.table.flows[slot as usize];
                if f.expiry_ns > cx.now_ns {
                    found = Some(if e & 1 == 0 { f.rew } else { f.fwd.reverse() });
                    break;
                }
            }
        }
        cx.element = own;
        found
    }

    /// Point the outer destination at the original sender when the error went to the quoted
    /// source, and emit.
    fn finish(&mut self, mut p: Packet, quoted_src: [u8; 4], new_src: [u8; 4], cx: &mut Cx) {
        let h = p.ip_header_mut().expect("checked");
        if net::ip_dst(h) == quoted_src {
            cx.instr(6);
            let s = incremental_update32(
                net::be16(h, 10),
                u32::from_be_bytes(quoted_src),
                u32::from_be_bytes(new_src),
            );
            net::set_ip_dst(h, new_src);
            net::set_be16(h, 10, s);
            cx.write_pkt(6);
            if self.dst_anno {
                p.anno.dst_ip = new_src;
                cx.write_meta(4);
            }
        }
        self.rewritten += 1;
        cx.emit(0, p);
    }

    /// An error quoting an echo request or reply: ICMPPingRewriter mappings.
    fn ping_error(&mut self, mut p: Packet, hl: usize, q: usize, qhl: usize, cx: &mut Cx) {
        let h = p.ip_header().expect("checked");
        let e = q + qhl;
        if h[e] != 0 && h[e] != 8 {
            return self.unmapped(p, cx);
        }
        cx.read_pkt(10);
        let (qs, qd, id) = (
            net::ip_src(&h[q..]),
            net::ip_dst(&h[q..]),
            net::be16(h, e + 4),
        );
        let own = cx.element;
        let mut found = None;
        for (m, el) in &self.ping_maps {
            let g = lock(m);
            cx.element = *el;
            // The quote reversed: a quoted request reads as its reply, and the reverse.
            let k = (qd, qs, id, h[e] == 0);
            cx.dynamic_state(
                Read,
                0,
                crate::elements::click::icmp_ping_rewriter::key_hash(&k),
                8,
            );
            if let Some(m) = g.map.get(&k).filter(|m| m.expires >= cx.now_ns) {
                found = Some(m.to);
                break;
            }
        }
        cx.element = own;
        let Some(to) = found else {
            return self.unmapped(p, cx);
        };
        // The quote becomes the reverse of what the mapping rewrites its key to.
        let (ns, nd, nid) = (to.1, to.0, to.2);
        cx.instr(30);
        let h = p.ip_header_mut().expect("checked");
        let mut icmp_sum = net::be16(h, hl + 2);
        let mut ip_sum = net::be16(h, q + 10);
        for (off, nw) in [(q + 12, ns), (q + 16, nd)] {
            let (old, nw) = (net::be32(h, off), u32::from_be_bytes(nw));
            ip_sum = incremental_update32(ip_sum, old, nw);
            icmp_sum = incremental_update32(icmp_sum, old, nw);
            net::set_be32(h, off, nw);
        }
        let old_id = net::be16(h, e + 4);
        let old_qsum = net::be16(h, e + 2);
        let qsum = incremental_update(old_qsum, old_id, nid);
        net::set_be16(h, e + 4, nid);
        net::set_be16(h, e + 2, qsum);
        icmp_sum = incremental_update(icmp_sum, old_id, nid);
        icmp_sum = incremental_update(icmp_sum, old_qsum, qsum);
        icmp_sum = incremental_update(icmp_sum, net::be16(h, q + 10), ip_sum);
        net::set_be16(h, q + 10, ip_sum);
        net::set_be16(h, hl + 2, icmp_sum);
        cx.write_pkt(16);
        cx.write_pkt(2);
        self.finish(p, qs, ns, cx);
    }

    fn unmapped(&mut self, p: Packet, cx: &mut Cx) {
        self.unmapped += 1;
        if self.noutputs > 1 {
            cx.emit(1, p);
        } else {
            cx.drop_packet(p, "unmapped ICMP");
        }
    }
}

impl Element for IcmpRewriter {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 2).with_outputs(1, 2)
    }
    fn set_port_counts(&mut self, _i: usize, o: usize) {
        self.noutputs = o;
    }

    fn push(&mut self, _port: usize, mut p: Packet, cx: &mut Cx) {
        cx.instr(8);
        cx.read_meta(4);
        let Some(h) = p.ip_header() else {
            return cx.drop_packet(p, "not ICMP");
        };
        let hl = if h.len() >= 20 { net::ip_hl(h) } else { 0 };
        if hl < 20 || h.len() < hl + 8 || net::ip_proto(h) != net::IP_PROTO_ICMP {
            return cx.drop_packet(p, "not ICMP");
        }
        cx.read_pkt(4);
        if !is_error(h[hl]) {
            return self.unmapped(p, cx);
        }
        let q = hl + 8; // the quoted IP header
        let qhl = h.get(q).map_or(0, |b| ((b & 0x0f) as usize) * 4);
        if qhl < 20 || h.len() < q + qhl + 8 {
            return cx.drop_packet(p, "bad ICMP error");
        }
        let qproto = h[q + 9];
        if qproto == net::IP_PROTO_ICMP {
            return self.ping_error(p, hl, q, qhl, cx);
        }
        if qproto != net::IP_PROTO_TCP && qproto != net::IP_PROTO_UDP {
            return self.unmapped(p, cx);
        }
        cx.read_pkt(12);
        let quoted = crate::elements::nat::hdr::flow_key(&h[q..], qhl, true);
        let Some(t) = self.target(&quoted.reverse(), cx) else {
            return self.unmapped(p, cx);
        };
        let new = t.reverse();
        cx.instr(30);
        let h = p.ip_header_mut().expect("checked");
        let l4 = q + qhl;
        // Where the quoted L4 checksum is, when it is present and in use.
        let l4sum = if qproto == net::IP_PROTO_UDP {
            (net::be16(h, l4 + 6) != 0).then_some(l4 + 6)
        } else {
            (h.len() >= l4 + 18).then_some(l4 + 16)
        };
        let mut icmp_sum = net::be16(h, hl + 2);
        let mut ip_sum = net::be16(h, q + 10);
        let mut l4_sum = l4sum.map(|o| net::be16(h, o));
        let changes32 = [
            (q + 12, net::be32(h, q + 12), new.saddr),
            (q + 16, net::be32(h, q + 16), new.daddr),
        ];
        for (off, old, nw) in changes32 {
            ip_sum = incremental_update32(ip_sum, old, nw);
            icmp_sum = incremental_update32(icmp_sum, old, nw);
            l4_sum = l4_sum.map(|s| incremental_update32(s, old, nw));
            net::set_be32(h, off, nw);
        }
        for (off, nw) in [(l4, new.sport), (l4 + 2, new.dport)] {
            let old = net::be16(h, off);
            icmp_sum = incremental_update(icmp_sum, old, nw);
            l4_sum = l4_sum.map(|s| incremental_update(s, old, nw));
            net::set_be16(h, off, nw);
        }
        icmp_sum = incremental_update(icmp_sum, net::be16(h, q + 10), ip_sum);
        net::set_be16(h, q + 10, ip_sum);
        if let (Some(o), Some(s)) = (l4sum, l4_sum) {
            let s = if qproto == net::IP_PROTO_UDP && s == 0 {
                0xffff
            } else {
                s
            };
            icmp_sum = incremental_update(icmp_sum, net::be16(h, o), s);
            net::set_be16(h, o, s);
        }
        net::set_be16(h, hl + 2, icmp_sum);
        cx.write_pkt(16);
        cx.write_pkt(2);
        self.finish(p, quoted.saddr.to_be_bytes(), new.saddr.to_be_bytes(), cx);
    }

    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"rewritten": self.rewritten, "unmapped": self.unmapped})
    }

    fn code_size(&self) -> u32 {
        240
    }
}

#[cfg(test)]
mod tests {
    use crate::conf::InitEnv;
    use crate::elements::ip::testutil::push;
    use crate::net;
    use pktflow_traffic::checksum::{ip_checksum, l4_checksum};
    use pktflow_traffic::Packet;
    use std::sync::Arc;

    /// IPv4 header + `body`, checksum computed over the finished header (RFC 791).
    fn ip(src: [u8; 4], dst: [u8; 4], proto: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![0u8; 20];
        v[0] = 0x45;
        net::set_be16(&mut v, 2, (20 + body.len()) as u16);
        v[8] = 64;
        v[9] = proto;
        v[12..16].copy_from_slice(&src);
        v[16..20].copy_from_slice(&dst);
        let s = ip_checksum(&v);
        net::set_be16(&mut v, 10, s);
        v.extend_from_slice(body);
        v
    }

    /// A UDP datagram with its checksum (RFC 768).
    fn udp(src: ([u8; 4], u16), dst: ([u8; 4], u16)) -> Vec<u8> {
        let mut u = vec![0u8; 8];
        net::set_be16(&mut u, 0, src.1);
        net::set_be16(&mut u, 2, dst.1);
        net::set_be16(&mut u, 4, 8);
        let c = l4_checksum(src.0, dst.0, 17, &u);
        net::set_be16(&mut u, 6, c);
        ip(src.0, dst.0, 17, &u)
    }

    /// ICMP destination unreachable (port) from `from` to `to`, quoting `quoted` (RFC 792).
    fn unreach(from: [u8; 4], to: [u8; 4], quoted: &[u8]) -> Packet {
        let mut b = vec![3, 3, 0, 0, 0, 0, 0, 0];
        b.extend_from_slice(quoted);
        let c = ip_checksum(&b);
        net::set_be16(&mut b, 2, c);
        let mut p = Packet::from_bytes(&ip(from, to, 1, &b));
        p.set_ip_header(0, 20);
        p
    }

    /// Inside host 10.0.0.2:5000 sends UDP to 8.8.8.8:53 through `rw`, which maps it to
    /// 1.0.0.1:9000. The server answers with a port unreachable quoting the rewritten
    /// datagram; ICMPRewriter makes it quote the original and sends it to 10.0.0.2.
    #[test]
    fn icmp_error_quoting_a_rewritten_flow_is_rewritten_back() {
        let shared = Arc::new(crate::conf::Shared::default());
        let env = |name: &str| InitEnv {
            index: if name == "rw" { 1 } else { 2 },
            name: name.into(),
            peers: Arc::new(vec![
                ("rw".into(), "IPRewriter".into(), String::new()),
                ("p".into(), "Idle".into(), String::new()),
            ]),
            shared: shared.clone(),
            ..Default::default()
        };
        let mut rw = (crate::registry::find("IPRewriter").unwrap().make)(
            "pattern 1.0.0.1 9000-9999# - - 0 1, drop",
            &env("rw"),
        )
        .unwrap();
        let mut ir =
            (crate::registry::find("ICMPRewriter").unwrap().make)("rw", &env("ir")).unwrap();
        ir.set_port_counts(1, 2);
        let (inside, nat, server) = (
            ([10, 0, 0, 2], 5000),
            ([1, 0, 0, 1], 9000),
            ([8, 8, 8, 8], 53),
        );
        let mut p = Packet::from_bytes(&udp(inside, server));
        p.set_ip_header(0, 20);
        let (out, _) = push(rw.as_mut(), 0, p);
        assert_eq!(out[0].1.data(), &udp(nat, server)[..]);

        let (out, _) = push(ir.as_mut(), 0, unreach(server.0, nat.0, &udp(nat, server)));
        assert_eq!(out[0].0, 0);
        assert_eq!(
            out[0].1.data(),
            unreach(server.0, inside.0, &udp(inside, server)).data()
        );
        assert_eq!(out[0].1.anno.dst_ip, inside.0);

        // No mapping (another port), or not an error: output 1; not ICMP: dropped.
        let other = ([1, 0, 0, 1], 9100);
        let (out, _) = push(
            ir.as_mut(),
            0,
            unreach(server.0, nat.0, &udp(other, server)),
        );
        assert_eq!(out[0].0, 1);
        let mut p = Packet::from_bytes(&udp(server, nat));
        p.set_ip_header(0, 20);
        let (out, t) = push(ir.as_mut(), 0, p);
        assert!(out.is_empty());
        assert_eq!(
            crate::elements::ip::testutil::drop_reasons(&t),
            vec!["not ICMP"]
        );
        assert!((crate::registry::find("ICMPRewriter").unwrap().make)("p", &env("ir")).is_err());
        assert!((crate::registry::find("ICMPRewriter").unwrap().make)("", &env("ir")).is_err());
    }

    /// An echo message (RFC 792) with no data: type, code 0, checksum, identifier, sequence.
    fn echo(id: u16, seq: u16) -> Vec<u8> {
        let mut e = vec![8, 0, 0, 0, 0, 0, 0, 0];
        net::set_be16(&mut e, 4, id);
        net::set_be16(&mut e, 6, seq);
        let c = ip_checksum(&e);
        net::set_be16(&mut e, 2, c);
        e
    }

    /// 10.0.0.2 pings 8.8.8.8 with identifier 55 through an ICMPPingRewriter that maps it to
    /// 1.0.0.1 / identifier 1000; a router (9.9.9.9) answers "time exceeded" quoting the
    /// rewritten echo request; ICMPRewriter restores the quote and sends it to 10.0.0.2.
    #[test]
    fn icmp_error_quoting_a_rewritten_ping_is_rewritten_back() {
        let shared = Arc::new(crate::conf::Shared::default());
        let env = |name: &str| InitEnv {
            index: if name == "prw" { 0 } else { 1 },
            name: name.into(),
            peers: Arc::new(vec![(
                "prw".into(),
                "ICMPPingRewriter".into(),
                String::new(),
            )]),
            shared: shared.clone(),
            ..Default::default()
        };
        let mut prw = (crate::registry::find("ICMPPingRewriter").unwrap().make)(
            "pattern 1.0.0.1 1000-1999# - - 0 1, drop",
            &env("prw"),
        )
        .unwrap();
        let mut ir =
            (crate::registry::find("ICMPRewriter").unwrap().make)("prw", &env("ir")).unwrap();
        ir.set_port_counts(1, 1);
        let (inside, nat, server, router) =
            ([10, 0, 0, 2], [1, 0, 0, 1], [8, 8, 8, 8], [9, 9, 9, 9]);
        let mut p = Packet::from_bytes(&ip(inside, server, 1, &echo(55, 7)));
        p.set_ip_header(0, 20);
        let (out, _) = push(prw.as_mut(), 0, p);
        assert_eq!(out[0].1.data(), &ip(nat, server, 1, &echo(1000, 7))[..]);

        let mut b = vec![11, 0, 0, 0, 0, 0, 0, 0];
        b.extend_from_slice(&ip(nat, server, 1, &echo(1000, 7)));
        let c = ip_checksum(&b);
        net::set_be16(&mut b, 2, c);
        let mut p = Packet::from_bytes(&ip(router, nat, 1, &b));
        p.set_ip_header(0, 20);
        let (out, _) = push(ir.as_mut(), 0, p);
        let mut want = vec![11, 0, 0, 0, 0, 0, 0, 0];
        want.extend_from_slice(&ip(inside, server, 1, &echo(55, 7)));
        let c = ip_checksum(&want);
        net::set_be16(&mut want, 2, c);
        assert_eq!(out[0].0, 0);
        assert_eq!(out[0].1.data(), &ip(router, inside, 1, &want)[..]);
        // An error quoting an unknown ping is dropped (one output only).
        let mut b = vec![11, 0, 0, 0, 0, 0, 0, 0];
        b.extend_from_slice(&ip(nat, server, 1, &echo(1001, 7)));
        let mut p = Packet::from_bytes(&ip(router, nat, 1, &b));
        p.set_ip_header(0, 20);
        let (out, t) = push(ir.as_mut(), 0, p);
        assert!(out.is_empty());
        assert_eq!(
            crate::elements::ip::testutil::drop_reasons(&t),
            vec!["unmapped ICMP"]
        );
    }
}
