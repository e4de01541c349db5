//! `ICMPRewriter(MAPS [, DST_ANNO])` — lets ICMP errors about rewritten flows through a NAT, as
//! Click's ICMPRewriter: MAPS is a space-separated list of IPRewriter or TCPRewriter elements.
//! An ICMP error (destination unreachable 3, source quench 4, redirect 5, time exceeded 11,
//! parameter problem 12) quotes the IP header and first 8 bytes of the packet it answers; that
//! packet left through a rewriter, so the quote shows the rewritten addresses and ports.
//! ICMPRewriter reverses the quoted TCP/UDP flow id, looks it up in each named rewriter's
//! mapping table in turn (forward or reply entries, live mappings only), and, on a hit whose
//! mapping rewrites packets to flow id T, makes the quote show T reversed (the packet as its
//! sender sent it): quoted source/destination addresses and ports, the quoted IP checksum, the
//! quoted TCP checksum when its 18 bytes are present or the quoted UDP checksum when it is
//! non-zero (all RFC 1624 incremental updates), and the ICMP checksum for every 16-bit word
//! changed. When the outer destination is the quoted source, it becomes T reversed's source
//! (the original sender), with the IP checksum updated and, with DST_ANNO (default true), the
//! destination annotation set. The rewritten packet leaves on output 0.
//!
//! Non-ICMP packets and errors too short for the quoted IP header plus 8 bytes are dropped
//! (reasons `not ICMP`, `bad ICMP error`), as in Click. Other ICMP types, quotes of other
//! protocols and quotes with no mapping leave on output 1 when it is connected and are dropped
//! otherwise (reason `unmapped ICMP`). pktflow does not yet look quoted echo packets up in
//! ICMPPingRewriter tables (they count as unmapped), and refuses IPAddrRewriter and
//! ICMPPingRewriter in MAPS with a message.
//!
//! Ports: one input, one or two outputs (agnostic).
//! Costs: 8 instructions, a 4 B meta-data read, a 4 B packet-data read (ICMP type, quoted
//! header length and protocol) per packet; an error with a TCP/UDP quote adds a 12 B read
//! (quoted addresses and ports) and per rewriter consulted the table lookup of
//! [`crate::elements::nat::flow::FlowTable::lookup`] recorded on that rewriter's state objects
//! and, on a hit, a 24 B read of its flow record; the rewrite is 30 instructions, a 16 B
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

struct IcmpRewriter {
    maps: Vec<SharedRewriter>,
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
    for arg in a.take_all_positional() {
        for name in split_words(&arg) {
            let class = env
                .peers
                .iter()
                .find(|(n, _, _)| *n == name)
                .map(|(_, cl, _)| cl.as_str());
            match class {
                Some("IPRewriter" | "TCPRewriter") => maps.push(env.shared.rewriters.get(&name)),
                Some(cl @ ("IPAddrRewriter" | "ICMPPingRewriter")) => {
                    return Err(format!(
                        "{c}: '{name}' is an {cl}; pktflow's ICMPRewriter reads IPRewriter and TCPRewriter mappings only"
                    ))
                }
                Some(cl) => {
                    return Err(format!("{c}: '{name}' is a {cl}, not an IP rewriter"))
                }
                None => return Err(format!("{c}: no element named '{name}'")),
            }
        }
    }
    if maps.is_empty() {
        return Err(format!("{c}: no IP rewriters supplied"));
    }
    Ok(Box::new(IcmpRewriter {
        maps,
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
        if net::ip_dst(h) == quoted.saddr.to_be_bytes() {
            cx.instr(6);
            let old = net::be32(h, 16);
            let s = incremental_update32(net::be16(h, 10), old, new.saddr);
            net::set_be32(h, 16, new.saddr);
            net::set_be16(h, 10, s);
            cx.write_pkt(6);
            if self.dst_anno {
                p.anno.dst_ip = new.saddr.to_be_bytes();
                cx.write_meta(4);
            }
        }
        self.rewritten += 1;
        cx.emit(0, p);
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
}
