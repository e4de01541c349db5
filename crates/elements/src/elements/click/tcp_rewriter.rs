//! `TCPRewriter(INPUTSPEC, ... [, keywords])` — IPRewriter for TCP only, as Click's
//! TCPRewriter: the same input specifications, patterns, timeouts and mapping table as
//! IPRewriter (see its documentation), but packets that are not TCP, are not first fragments
//! or are too short for the ports leave on their input spec's output when that spec is
//! `pass`/`nochange`, and are dropped otherwise (reason `not TCP`), as in Click. Click's
//! TCPRewriter also shifts sequence numbers for FTPPortMapper's payload rewrites; pktflow has
//! no FTPPortMapper, so there is nothing to shift and TCP packets are rewritten exactly as
//! IPRewriter rewrites them.
//! Ports: as IPRewriter (one push input per input spec, push outputs).
//! Costs: IPRewriter's, plus 3 instructions and a 2 B packet-data read (protocol and
//! fragment test) per packet.
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
    Ok(Box::new(TcpRewriter { inner, pass }))
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
