//! `FTPPortMapper(CONTROL_REWRITER, DATA_REWRITER, PATTERN FOUTPUT ROUTPUT)` — lets active
//! FTP through a NAT, as Click's FTPPortMapper: it watches FTP control packets (client to
//! server) for a `PORT h1,h2,h3,h4,p1,p2` command, installs a mapping for the announced data
//! connection into DATA_REWRITER, rewrites the command to announce the mapped address and
//! port, and tells CONTROL_REWRITER (a TCPRewriter downstream) to shift the control flow's
//! sequence numbers by the change in payload length.
//!
//! Recognised, as Click documents it: the command must be the first thing in the TCP payload
//! (`PORT`, any letter case, then a space), the six numbers (each below 256, separated by
//! commas, after optional spaces) must be followed by `\r` or `\n` in the same packet. The
//! data connection is (h1.h2.h3.h4 : p1*256+p2) -> (the packet's destination : its
//! destination port - 1), TCP. If DATA_REWRITER already has a live forward mapping for it,
//! that one is used; otherwise PATTERN (an IPRewriterPatterns name or `SADDR SPORT DADDR
//! DPORT`) chooses the new source address and port (a port range: the announced port when it
//! is in range and free, else the next free one after the last this element allocated,
//! wrapping; pktflow keeps its own cursor where Click shares the pattern object's), the
//! mapping is installed in both directions with outputs FOUTPUT/ROUTPUT and the data
//! rewriter's TCP_NODATA_TIMEOUT as its first lifetime. No free port: the packet passes
//! unchanged. The command's argument is replaced by the mapped address and port in decimal,
//! the IP total length and checksum (RFC 1624 incremental update, as Click) and the TCP
//! checksum (recomputed over the segment) are updated; addresses and ports of the control
//! packet are not changed. If CONTROL_REWRITER has a forward mapping for the packet's flow
//! and the packet is not a retransmission (its sequence number is after the last changed
//! one), the mapping's shift becomes (trigger = this packet's sequence number, old shift =
//! the shift so far, shift += new length - old length); TCPRewriter applies it (see
//! [`crate::elements::nat::flow::SeqShift`]).
//!
//! Ports: one input, one output (agnostic). Packets need the IP header annotation; non-TCP
//! packets and packets too short for a TCP header pass unchanged.
//! Costs: 8 instructions, a 4 B meta-data read and a 24 B packet-data read (IP and TCP
//! headers) per packet, plus 5 instructions and a 1 B packet-data read per payload byte
//! examined while parsing a command. A PORT command adds: the data rewriter's table lookup
//! and, for a new mapping, its port probes and insertion (recorded on the data rewriter's
//! state objects, as in [`crate::elements::nat::flow`]); 40 instructions and a write of the
//! rewritten payload tail; 20 instructions, 4 B IP length/checksum write; 2 instructions and
//! a 2 B read per 16-bit word summed for the TCP checksum, and its 2 B write; the control
//! mapping's shift: 10 instructions and an 8 B write of its flow record (on the control
//! rewriter's state object).
use crate::conf::{split_words, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::elements::nat::flow::{Flow, FlowKey, OBJ_FLOWS};
use crate::elements::nat::pattern::{parse_input_spec, AddrSpec, InputSpec, Pattern, PortSpec};
use crate::elements::nat::shared::{lock, seq_gt, SharedRewriter};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::Write;
use pktflow_traffic::checksum::{incremental_update, l4_checksum};
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "FTPPortMapper",
    summary: "rewrite FTP PORT commands and install the data connection's NAT mapping",
    make,
};

struct FtpPortMapper {
    control: SharedRewriter,
    data: SharedRewriter,
    pattern: Pattern,
    fout: u16,
    rout: u16,
    cursor: u32,
    rewritten: u64,
    mappings: u64,
}

const REWRITERS: &[&str] = &["IPRewriter", "TCPRewriter"];

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "FTPPortMapper";
    let mut a = Args::parse(c, config, &[]);
    let ctl = a.required("CONTROL_REWRITER")?;
    let data = a.required("DATA_REWRITER")?;
    let pat = a.required("PATTERN FOUTPUT ROUTPUT")?;
    a.finish()?;
    let class_of = |n: &str| {
        env.peers
            .iter()
            .find(|(name, _, _)| name == n)
            .map(|(_, cl, _)| cl.clone())
    };
    match class_of(ctl.trim()) {
        Some(cl) if cl == "TCPRewriter" => {}
        Some(cl) => {
            return Err(format!(
                "{c}: CONTROL_REWRITER '{ctl}' is a {cl}, expected a TCPRewriter"
            ))
        }
        None => return Err(format!("{c}: no element named '{ctl}'")),
    }
    match class_of(data.trim()) {
        Some(cl) if REWRITERS.contains(&cl.as_str()) => {}
        Some(cl) => {
            return Err(format!(
                "{c}: DATA_REWRITER '{data}' is a {cl}, expected an IPRewriter or TCPRewriter"
            ))
        }
        None => return Err(format!("{c}: no element named '{data}'")),
    }
    if split_words(&pat).first().map(String::as_str) == Some("pattern") {
        return Err(format!(
            "{c}: PATTERN: expected 'NAME FOUTPUT ROUTPUT' or 'SADDR SPORT DADDR DPORT FOUTPUT ROUTPUT', found '{pat}'"
        ));
    }
    let mut patterns = Vec::new();
    let spec = parse_input_spec(&format!("pattern {pat}"), env, &mut patterns, false)
        .map_err(|e| format!("{c}: PATTERN: {e}"))?;
    let InputSpec::Pattern(i, fout, rout) = spec else {
        return Err(format!("{c}: PATTERN: expected a pattern, found '{pat}'"));
    };
    let pattern = patterns[i].clone();
    if matches!(pattern.saddr, AddrSpec::Range { .. }) {
        return Err(format!(
            "{c}: PATTERN: address ranges are not supported (give one source address)"
        ));
    }
    Ok(Box::new(FtpPortMapper {
        control: env.shared.rewriters.get(ctl.trim()),
        data: env.shared.rewriters.get(data.trim()),
        pattern,
        fout,
        rout,
        cursor: 0,
        rewritten: 0,
        mappings: 0,
    }))
}

/// A parsed PORT command: where its argument starts and ends in the payload, and the
/// announced address and port.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PortCommand {
    pub arg_start: usize,
    pub arg_end: usize,
    pub addr: [u8; 4],
    pub port: u16,
}

/// Parse a PORT command at the start of `payload` (rules in the module documentation).
/// Returns the command and the number of payload bytes examined.
pub(crate) fn parse_port_command(payload: &[u8]) -> (Option<PortCommand>, usize) {
    if payload.len() < 5 || !payload[..4].eq_ignore_ascii_case(b"PORT") || payload[4] != b' ' {
        return (None, payload.len().min(5));
    }
    let mut pos = 5;
    while pos < payload.len() && payload[pos] == b' ' {
        pos += 1;
    }
    let arg_start = pos;
    let mut nums = [0u32; 6];
    let mut which = 0;
    while pos < payload.len() && which < 6 {
        match payload[pos] {
            d @ b'0'..=b'9' => nums[which] = (nums[which] * 10 + (d - b'0') as u32).min(1000),
            b',' => which += 1,
            _ => break,
        }
        pos += 1;
    }
    let examined = (pos + 1).min(payload.len());
    if which != 5
        || pos >= payload.len()
        || (payload[pos] != b'\r' && payload[pos] != b'\n')
        || nums.iter().any(|&n| n >= 256)
    {
        return (None, examined);
    }
    (
        Some(PortCommand {
            arg_start,
            arg_end: pos,
            addr: [nums[0] as u8, nums[1] as u8, nums[2] as u8, nums[3] as u8],
            port: ((nums[4] << 8) | nums[5]) as u16,
        }),
        examined,
    )
}

impl FtpPortMapper {
    /// The data connection's rewritten flow id: an existing live mapping's, or a new one
    /// installed in the data rewriter. None when no port is free.
    fn map_data_flow(&mut self, key: FlowKey, cx: &mut Cx) -> Option<FlowKey> {
        let now = cx.now_ns;
        let data = self.data.clone();
        let mut g = lock(&data);
        let own = cx.element;
        cx.element = g.element;
        let r = (|| {
            if let Some(e) = g.table.lookup(&key, cx) {
                let f = g.table.flows[(e >> 1) as usize];
                if e & 1 == 0 && f.expiry_ns > now {
                    return Some(f.rew);
                }
            }
            let p = &self.pattern;
            let mut t = FlowKey {
                saddr: match p.saddr {
                    AddrSpec::Fixed(a) => a,
                    _ => key.saddr,
                },
                daddr: p.daddr.unwrap_or(key.daddr),
                sport: key.sport,
                dport: p.dport.unwrap_or(key.dport),
                proto: key.proto,
            };
            let free = |sport: u16, cx: &mut Cx| {
                let r = FlowKey { sport, ..t }.reverse();
                match g.table.lookup(&r, cx) {
                    None => true,
                    Some(e) => g.table.flows[(e >> 1) as usize].expiry_ns <= now,
                }
            };
            match p.sport.clone() {
                PortSpec::Keep => free(t.sport, cx).then_some(())?,
                PortSpec::Fixed(s) => {
                    t.sport = s;
                    free(s, cx).then_some(())?
                }
                PortSpec::Range {
                    lo,
                    hi,
                    prefer_source,
                    ..
                } => {
                    let n = (hi - lo) as u32 + 1;
                    let chosen =
                        if prefer_source && (lo..=hi).contains(&key.sport) && free(key.sport, cx) {
                            Some(key.sport)
                        } else {
                            (0..n)
                                .map(|k| lo + ((self.cursor + k) % n) as u16)
                                .find(|&cand| {
                                    cx.instr(3);
                                    free(cand, cx)
                                })
                        };
                    let c = chosen?;
                    self.cursor = ((c - lo) as u32 + 1) % n;
                    t.sport = c;
                }
            }
            // An expired mapping still holding either key is removed first; a live one
            // holding the data flow's id as its reply id leaves the command unmapped.
            for k in [key, t.reverse()] {
                if let Some(e) = g.table.lookup(&k, cx) {
                    if g.table.flows[(e >> 1) as usize].expiry_ns > now {
                        return None;
                    }
                    g.table.remove(e >> 1, cx);
                }
            }
            let flow = Flow {
                fwd: key,
                rew: t,
                fout: self.fout,
                rout: self.rout,
                expiry_ns: now.saturating_add(g.new_flow_timeout_ns),
                pattern: u16::MAX,
                live: true,
                ..Flow::default()
            };
            g.table.insert(flow, key, t.reverse(), cx);
            self.mappings += 1;
            Some(t)
        })();
        cx.element = own;
        r
    }

    /// Record the control flow's sequence-number shift (see the module documentation).
    fn shift_control(&mut self, key: FlowKey, seq: u32, change: i64, cx: &mut Cx) {
        let ctl = self.control.clone();
        let mut g = lock(&ctl);
        let Some(e) = g.table.find(&key) else { return };
        if e & 1 != 0 || g.table.flows[(e >> 1) as usize].expiry_ns <= cx.now_ns {
            return;
        }
        cx.instr(10);
        let el = g.element;
        let s = &mut g.table.flows[(e >> 1) as usize].seq;
        if !s.set || seq_gt(seq, s.trigger) {
            s.old_delta = s.delta;
            s.delta = s.delta.wrapping_add(change as u32);
            s.trigger = seq;
            s.set = true;
            let own = cx.element;
            cx.element = el;
            cx.dynamic_state(Write, OBJ_FLOWS, (e >> 1) as u64, 8);
            cx.element = own;
        }
    }
}

impl Element for FtpPortMapper {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }

    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(8);
        cx.read_meta(4);
        let (ip_off, hl, doff) = {
            let Some(h) = p.ip_header() else {
                return Some(p);
            };
            let hl = if h.len() >= 20 { net::ip_hl(h) } else { 0 };
            if hl < 20 || net::ip_proto(h) != net::IP_PROTO_TCP || h.len() < hl + 20 {
                return Some(p);
            }
            cx.read_pkt(24);
            let doff = ((h[hl + 12] >> 4) as usize) * 4;
            if doff < 20 || h.len() < hl + doff {
                return Some(p);
            }
            (
                p.ip_offset().expect("IP header is inside the data"),
                hl,
                doff,
            )
        };
        let h = p.ip_header().expect("checked");
        // The IP total length bounds the segment (trailing link padding is not payload).
        let ip_len = (net::ip_total_len(h)).clamp(hl + doff, h.len());
        let payload = &h[hl + doff..ip_len];
        let (cmd, examined) = parse_port_command(payload);
        cx.instr(5 * examined as u32);
        cx.read_pkt(examined as u32);
        let Some(cmd) = cmd else {
            return Some(p);
        };
        let ctl_key = crate::elements::nat::hdr::flow_key(h, hl, true);
        let seq = net::be32(h, hl + 4);
        let data_key = FlowKey {
            saddr: u32::from_be_bytes(cmd.addr),
            sport: cmd.port,
            daddr: u32::from_be_bytes(net::ip_dst(h)),
            dport: net::be16(h, hl + 2).wrapping_sub(1),
            proto: net::IP_PROTO_TCP,
        };
        let Some(new) = self.map_data_flow(data_key, cx) else {
            return Some(p);
        };
        let a = new.saddr.to_be_bytes();
        let text = format!(
            "{},{},{},{},{},{}",
            a[0],
            a[1],
            a[2],
            a[3],
            new.sport >> 8,
            new.sport & 0xff
        );
        let old_len = cmd.arg_end - cmd.arg_start;
        let change = text.len() as i64 - old_len as i64;
        // Rebuild the IP datagram: headers, the new argument, the rest of the payload.
        cx.instr(40);
        let seg0 = ip_off + hl + doff;
        let (arg0, arg1) = (seg0 + cmd.arg_start, seg0 + cmd.arg_end);
        let end = ip_off + ip_len;
        let tail: Vec<u8> = p.data()[arg1..].to_vec();
        let new_total = p.len() as i64 + change;
        if change > 0 {
            p.put(change as usize);
        } else {
            p.take((-change) as usize);
        }
        let d = p.data_mut();
        d[arg0..arg0 + text.len()].copy_from_slice(text.as_bytes());
        d[arg0 + text.len()..new_total as usize].copy_from_slice(&tail);
        cx.write_pkt((text.len() + tail.len()) as u32);
        let new_end = (end as i64 + change) as usize;
        cx.instr(20);
        let h = p.ip_header_mut().expect("checked");
        let old_tl = net::be16(h, 2);
        let new_tl = (new_end - ip_off) as u16;
        net::set_be16(h, 2, new_tl);
        let sum = incremental_update(net::be16(h, 10), old_tl, new_tl);
        net::set_be16(h, 10, sum);
        cx.write_pkt(4);
        let (src, dst) = (net::ip_src(h), net::ip_dst(h));
        let seg = &mut h[hl..new_end - ip_off];
        seg[16] = 0;
        seg[17] = 0;
        let words = seg.len().div_ceil(2) as u32;
        cx.instr(2 * words);
        cx.read_pkt(2 * words);
        let c = l4_checksum(src, dst, net::IP_PROTO_TCP, seg);
        net::set_be16(seg, 16, c);
        cx.write_pkt(2);
        self.rewritten += 1;
        if change != 0 {
            self.shift_control(ctl_key, seq, change, cx);
        }
        Some(p)
    }

    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"rewritten": self.rewritten, "mappings": self.mappings})
    }

    fn code_size(&self) -> u32 {
        300
    }
}

#[cfg(test)]
mod tests {
    use super::parse_port_command;
    use crate::conf::InitEnv;
    use crate::elements::ip::testutil::push;
    use crate::net;
    use pktflow_traffic::checksum::{ip_checksum, l4_checksum};
    use pktflow_traffic::Packet;
    use proptest::prelude::Strategy;
    use std::sync::Arc;

    /// An IPv4/TCP segment built field by field from RFC 791 / RFC 793 (checksums computed
    /// over the finished header and pseudo-header).
    fn tcp(
        src: ([u8; 4], u16),
        dst: ([u8; 4], u16),
        seq: u32,
        ack: u32,
        flags: u8,
        payload: &[u8],
    ) -> Vec<u8> {
        let mut v = vec![0u8; 40];
        v[0] = 0x45;
        net::set_be16(&mut v, 2, (40 + payload.len()) as u16);
        v[8] = 64;
        v[9] = 6;
        v[12..16].copy_from_slice(&src.0);
        v[16..20].copy_from_slice(&dst.0);
        let s = ip_checksum(&v[..20]);
        net::set_be16(&mut v, 10, s);
        net::set_be16(&mut v, 20, src.1);
        net::set_be16(&mut v, 22, dst.1);
        net::set_be32(&mut v, 24, seq);
        net::set_be32(&mut v, 28, ack);
        v[32] = 0x50;
        v[33] = flags;
        net::set_be16(&mut v, 34, 8192);
        v.extend_from_slice(payload);
        let c = l4_checksum(src.0, dst.0, 6, &v[20..]);
        net::set_be16(&mut v, 36, c);
        v
    }

    fn pkt(v: &[u8]) -> Packet {
        let mut p = Packet::from_bytes(v);
        p.set_ip_header(0, 20);
        p
    }

    fn env(name: &str, shared: &Arc<crate::conf::Shared>) -> InitEnv {
        InitEnv {
            index: match name {
                "ctl" => 1,
                "data" => 2,
                _ => 3,
            },
            name: name.into(),
            peers: Arc::new(vec![
                ("ctl".into(), "TCPRewriter".into(), "keep 0 1".into()),
                ("data".into(), "IPRewriter".into(), "drop, drop".into()),
            ]),
            shared: shared.clone(),
            ..Default::default()
        }
    }

    /// Click's documented example: client 1.0.0.2:6587 -> server 2.0.0.2:21 says
    /// `PORT 1,0,0,2,3,9` (1.0.0.2:777); pattern `1.0.0.1 9000-14000 - -` maps it to
    /// 1.0.0.1:9000, announced as `PORT 1,0,0,1,35,40` (9000 = 35 * 256 + 40), two bytes longer.
    #[test]
    fn port_command_is_rewritten_mapped_and_the_control_flow_shifted() {
        let shared = Arc::new(crate::conf::Shared::default());
        let make = |class: &str, name: &str, conf: &str| {
            (crate::registry::find(class).unwrap().make)(conf, &env(name, &shared)).unwrap()
        };
        let mut ctl = make("TCPRewriter", "ctl", "keep 0 1");
        ctl.set_port_counts(1, 2);
        let mut data = make("IPRewriter", "data", "drop, drop");
        data.set_port_counts(2, 2);
        let mut ftp = make(
            "FTPPortMapper",
            "ftp",
            "ctl, data, 1.0.0.1 9000-14000 - - 0 1",
        );
        let (c, s) = (([1, 0, 0, 2], 6587), ([2, 0, 0, 2], 21));
        // The control connection's first packet creates its mapping in ctl.
        let (out, _) = push(ctl.as_mut(), 0, pkt(&tcp(c, s, 1000, 0, 0x02, b"")));
        assert_eq!(out.len(), 1);

        let cmd = b"PORT 1,0,0,2,3,9\r\n";
        let (out, _) = push(ftp.as_mut(), 0, pkt(&tcp(c, s, 1001, 5000, 0x18, cmd)));
        let expected = tcp(c, s, 1001, 5000, 0x18, b"PORT 1,0,0,1,35,40\r\n");
        assert_eq!(out[0].1.data(), &expected[..]);
        assert_eq!(net::be16(&expected, 2), 60);

        // ctl: the PORT packet keeps its sequence number (its start did not move); the next
        // client packet (1001 + 18 = 1019 before the edit) is shifted by +2; the server's ack
        // of 1021 (in the shifted numbering) is shifted back to 1019.
        let (out, _) = push(ctl.as_mut(), 0, out.into_iter().next().unwrap().1);
        assert_eq!(out[0].1.data(), &expected[..]);
        let (out, _) = push(
            ctl.as_mut(),
            0,
            pkt(&tcp(c, s, 1019, 5000, 0x10, b"LIST\r\n")),
        );
        assert_eq!(
            out[0].1.data(),
            &tcp(c, s, 1021, 5000, 0x10, b"LIST\r\n")[..]
        );
        let (out, _) = push(ctl.as_mut(), 0, pkt(&tcp(s, c, 5000, 1021, 0x10, b"")));
        assert_eq!(out[0].1.data(), &tcp(s, c, 5000, 1019, 0x10, b"")[..]);
        assert_eq!(out[0].0, 1);

        // data: the server's data connection 2.0.0.2:20 -> 1.0.0.1:9000 reaches the client's
        // announced 1.0.0.2:777 on the reply output.
        let (out, _) = push(
            data.as_mut(),
            1,
            pkt(&tcp(
                ([2, 0, 0, 2], 20),
                ([1, 0, 0, 1], 9000),
                7,
                0,
                0x02,
                b"",
            )),
        );
        assert_eq!(out[0].0, 1);
        assert_eq!(
            out[0].1.data(),
            &tcp(([2, 0, 0, 2], 20), ([1, 0, 0, 2], 777), 7, 0, 0x02, b"")[..]
        );

        // A retransmitted PORT packet is rewritten the same way and does not shift again.
        let (out, _) = push(ftp.as_mut(), 0, pkt(&tcp(c, s, 1001, 5000, 0x18, cmd)));
        let (out, _) = push(ctl.as_mut(), 0, out.into_iter().next().unwrap().1);
        assert_eq!(out[0].1.data(), &expected[..]);
        let (out, _) = push(ctl.as_mut(), 0, pkt(&tcp(c, s, 1025, 5000, 0x10, b"")));
        assert_eq!(net::be32(out[0].1.data(), 24), 1027);
    }

    #[test]
    fn other_payloads_pass_unchanged() {
        for t in [
            &b"USER x\r\n"[..],
            b"PORT 1,2,3,4,5\r\n",
            b"PORT 1,2,3,4,5,256\r\n",
            b"PORT 1,2,3,4,5,6",
            b"PORTS",
        ] {
            assert!(
                parse_port_command(t).0.is_none(),
                "{:?}",
                String::from_utf8_lossy(t)
            );
        }
        let c = parse_port_command(b"port  10,0,0,2,1,2\n").0.unwrap();
        assert_eq!(
            (c.arg_start, c.arg_end, c.addr, c.port),
            (6, 18, [10, 0, 0, 2], 258)
        );
    }

    #[test]
    fn bad_configurations_are_refused() {
        let shared = Arc::new(crate::conf::Shared::default());
        let m = crate::registry::find("FTPPortMapper").unwrap().make;
        for (conf, msg) in [
            (
                "data, data, 1.0.0.1 9000-14000 - - 0 1",
                "expected a TCPRewriter",
            ),
            ("nope, data, 1.0.0.1 - - - 0 1", "no element named"),
            ("ctl, data", "missing argument"),
            ("ctl, data, 1.0.0.1 - - -", "PATTERN"),
        ] {
            let e = m(conf, &env("ftp", &shared)).err().unwrap();
            assert!(e.contains(msg), "{conf}: {e}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]

        /// Near-valid and arbitrary payloads: the parser never panics, and a packet through
        /// the element always comes out (once) with valid IP and TCP checksums.
        #[test]
        fn any_payload_passes_with_valid_checksums(
            body in proptest::prop_oneof![
                proptest::collection::vec(proptest::prelude::any::<u8>(), 0..40),
                "(PORT|port|Port)? {0,3}[0-9,]{0,24}[\\r\\n]?".prop_map(String::into_bytes),
            ],
        ) {
            let _ = parse_port_command(&body);
            let shared = Arc::new(crate::conf::Shared::default());
            let mut ftp = (crate::registry::find("FTPPortMapper").unwrap().make)(
                "ctl, data, 1.0.0.1 9000-9001 - - 0 1",
                &env("ftp", &shared),
            )
            .unwrap();
            let (c, s) = (([1, 0, 0, 2], 6587), ([2, 0, 0, 2], 21));
            let (out, _) = push(ftp.as_mut(), 0, pkt(&tcp(c, s, 1, 1, 0x18, &body)));
            proptest::prop_assert_eq!(out.len(), 1);
            let d = out[0].1.data();
            proptest::prop_assert_eq!(ip_checksum(&d[..20]), 0);
            proptest::prop_assert_eq!(net::be16(d, 2) as usize, d.len());
            proptest::prop_assert!(pktflow_traffic::checksum::l4_checksum_ok(c.0, s.0, 6, &d[20..]));
        }
    }
}
