//! `TCPRewriter(INPUTSPEC, ... [, keywords])` — IPRewriter for TCP only, as Click's
//! TCPRewriter: the same input specifications, patterns, timeouts and mapping table as
//! IPRewriter (see its documentation), but packets that are not TCP, are not first fragments
//! or are too short for the ports leave on their input spec's output when that spec is
//! `pass`/`nochange`, and are dropped otherwise (reason `not TCP`), as in Click. Like
//! Click's, it shifts the sequence numbers of flows whose payload an FTPPortMapper lengthened
//! or shortened: before the mapping's rewrite, a forward packet's sequence number gets the
//! flow's shift added and a reply packet's acknowledgment number (when ACK is set) gets it
//! taken off, by the rule of [`crate::elements::nat::flow::SeqShift`], with the TCP checksum
//! updated incrementally. Flows no FTPPortMapper touched are rewritten exactly as IPRewriter
//! rewrites them.
//! Ports: as IPRewriter (one push input per input spec, push outputs).
//! Costs: IPRewriter's, plus 3 instructions and a 2 B packet-data read (protocol and
//! fragment test) per packet; a shifted packet adds 8 instructions, a 4 B packet-data read
//! and write (the number) and a 2 B packet-data write (the checksum).
use crate::conf::{split_args, split_words, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "TCPRewriter",
    summary: "rewrite TCP flows' addresses and ports (IPRewriter for TCP only)",
    make,
};

struct TcpRewriter {
    inner: Box<dyn Element>,
    /// Per input: the output of a `pass`/`nochange` spec.
    pass: Vec<Option<usize>>,
    shared: crate::elements::nat::shared::SharedRewriter,
}

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let ip_rw = crate::registry::find("IPRewriter").expect("IPRewriter is registered");
    let inner =
        (ip_rw.make)(config, env).map_err(|e| e.replacen("IPRewriter", "TCPRewriter", 1))?;
    let pass = split_args(config)
        .iter()
        .filter(|a| {
            a.split_whitespace()
                .next()
                .is_none_or(|w| !w.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        })
        .map(|a| {
            let w = split_words(a);
            match w.first().map(String::as_str) {
                Some("pass" | "nochange") => {
                    Some(w.get(1).and_then(|x| x.parse().ok()).unwrap_or(0))
                }
                _ => None,
            }
        })
        .collect();
    let shared = env.shared.rewriters.get(&env.name);
    crate::elements::nat::shared::lock(&shared).class = "TCPRewriter".into();
    Ok(Box::new(TcpRewriter {
        inner,
        pass,
        shared,
    }))
}

impl TcpRewriter {
    /// Apply the packet's flow's sequence-number shift, if FTPPortMapper set one.
    fn shift(&self, p: &mut Packet, cx: &mut Cx) {
        use crate::elements::nat::shared::{lock, seq_gt};
        let Some(h) = p.ip_header_mut() else { return };
        let hl = net::ip_hl(h);
        if h.len() < hl + 18 {
            return;
        }
        let key = crate::elements::nat::hdr::flow_key(h, hl, true);
        let g = lock(&self.shared);
        let Some(e) = g.table.find(&key) else { return };
        let f = &g.table.flows[(e >> 1) as usize];
        let s = f.seq;
        if !s.set || f.expiry_ns <= cx.now_ns {
            return;
        }
        let (off, new) = if e & 1 == 0 {
            let seq = net::be32(h, hl + 4);
            let d = if seq_gt(seq, s.trigger) {
                s.delta
            } else {
                s.old_delta
            };
            (hl + 4, seq.wrapping_add(d))
        } else {
            if h[hl + 13] & 0x10 == 0 {
                return;
            }
            let ack = net::be32(h, hl + 8);
            let d = if seq_gt(ack, s.trigger.wrapping_add(s.old_delta)) {
                s.delta
            } else {
                s.old_delta
            };
            (hl + 8, ack.wrapping_sub(d))
        };
        cx.instr(8);
        cx.read_pkt(4);
        let old = net::be32(h, off);
        if old == new {
            return;
        }
        let sum = pktflow_traffic::checksum::incremental_update32(net::be16(h, hl + 16), old, new);
        net::set_be32(h, off, new);
        net::set_be16(h, hl + 16, sum);
        cx.write_pkt(4);
        cx.write_pkt(2);
    }
}

impl Element for TcpRewriter {
    fn ports(&self) -> Ports {
        self.inner.ports()
    }
    fn push(&mut self, port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(3);
        cx.read_pkt(2);
        let ok = p.ip_header().is_some_and(|h| {
            let hl = if h.len() >= 20 { net::ip_hl(h) } else { 0 };
            hl >= 20
                && net::ip_proto(h) == net::IP_PROTO_TCP
                && net::ip_frag_offset(h) == 0
                && h.len() >= hl + 8
        });
        if ok {
            let mut p = p;
            self.shift(&mut p, cx);
            return self.inner.push(port, p, cx);
        }
        match self.pass.get(port).copied().flatten() {
            Some(o) => cx.emit(o, p),
            None => cx.drop_packet(p, "not TCP"),
        }
    }
    fn stats(&self) -> serde_json::Value {
        self.inner.stats()
    }
    fn held(&self) -> usize {
        self.inner.held()
    }
    fn set_port_counts(&mut self, i: usize, o: usize) {
        self.inner.set_port_counts(i, o)
    }
    fn code_size(&self) -> u32 {
        self.inner.code_size() + 16
    }
}

#[cfg(test)]
mod tests {
    use crate::conf::InitEnv;
    use crate::elements::ip::testutil::{drop_reasons, ipv4, make};
    use crate::net;
    use pktflow_traffic::Packet;

    fn env() -> InitEnv {
        InitEnv {
            peers: std::sync::Arc::new(vec![(
                "pats".into(),
                "IPRewriterPatterns".into(),
                "NAT 1.0.0.1 50000-50999# - -".into(),
            )]),
            ..Default::default()
        }
    }

    #[test]
    fn tcp_is_rewritten_other_protocols_are_not() {
        let c = crate::registry::find("TCPRewriter").unwrap();
        let mut rw = (c.make)("pattern NAT 0 1, nochange 1", &env()).unwrap();
        rw.set_port_counts(2, 2);
        let mut tcp = ipv4([10, 0, 0, 2], [8, 8, 8, 8], 64, &[], 20, 0);
        tcp[9] = net::IP_PROTO_TCP;
        tcp[32] = 0x50;
        net::set_ip_checksum(&mut tcp[..20]);
        let mut p = Packet::from_bytes(&tcp);
        p.set_ip_header(0, 20);
        let (out, _) = crate::elements::ip::testutil::push(rw.as_mut(), 0, p);
        assert_eq!(out.len(), 1);
        assert_eq!(net::ip_src(out[0].1.data()), [1, 0, 0, 1]);
        let mut udp = Packet::from_bytes(&ipv4([10, 0, 0, 2], [8, 8, 8, 8], 64, &[], 20, 0));
        udp.set_ip_header(0, 20);
        let (out, t) = crate::elements::ip::testutil::push(rw.as_mut(), 0, udp);
        assert!(out.is_empty());
        assert_eq!(drop_reasons(&t), vec!["not TCP"]);
        let mut udp = Packet::from_bytes(&ipv4([10, 0, 0, 2], [8, 8, 8, 8], 64, &[], 20, 0));
        udp.set_ip_header(0, 20);
        let (out, _) = crate::elements::ip::testutil::push(rw.as_mut(), 1, udp);
        assert_eq!(out[0].0, 1, "nochange 1 passes non-TCP packets to output 1");
        let _ = make;
    }
}
