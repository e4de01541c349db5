//! `IPPrint([LABEL, keywords CONTENTS, PAYLOAD, MAXLENGTH, ID, TTL, TOS, LENGTH, ...])` —
//! shows IP packets one line each: `LABEL: SECONDS: SRC[.SPORT] > DST[.DPORT]: PROTO ...`
//! (TCP flags, UDP length, ICMP type/code), with `id`, `ttl`, `tos`, `length` appended when
//! those keywords are true. Like Print it writes (to stderr) only when the environment
//! variable `PKTFLOW_PRINT=1` is set; otherwise it only counts (read handler `count`). The
//! line layout is pktflow's (close to Click's, not byte-identical); CONTENTS and PAYLOAD are
//! accepted and ignored.
//! Ports: 1 agnostic input, 1 agnostic output. Packets without an IP header annotation pass
//! (and print as `not IP`).
//! Costs: 40 instructions, a 4 B meta-data read (the annotation) and an 8 B one (the
//! timestamp), a 20 B packet read of the IP header and 4 B of the transport header.
use crate::conf::{parse_bool, parse_uint, unquote, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "IPPrint",
    summary: "print a line per IP packet when PKTFLOW_PRINT=1, else count them",
    make,
};

struct IpPrint {
    label: String,
    show: [bool; 4],
    enabled: bool,
    count: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "IPPrint";
    let kws = [
        "LABEL",
        "CONTENTS",
        "PAYLOAD",
        "MAXLENGTH",
        "ID",
        "TTL",
        "TOS",
        "LENGTH",
        "TIMESTAMP",
        "AGGREGATE",
        "PAINT",
        "SWAP",
        "OUTFILE",
        "ACTIVE",
    ];
    let mut a = Args::parse(c, config, &kws);
    let label = a
        .keyword_or_positional("LABEL")
        .map(|s| unquote(&s))
        .unwrap_or_default();
    let mut show = [false; 4];
    for (i, k) in ["ID", "TTL", "TOS", "LENGTH"].iter().enumerate() {
        if let Some(v) = a.keyword(k) {
            show[i] = parse_bool(&v).map_err(|e| format!("{c}: {k}: {e}"))?;
        }
    }
    if let Some(m) = a.keyword("MAXLENGTH") {
        parse_uint(&m).map_err(|e| format!("{c}: MAXLENGTH: {e}"))?;
    }
    if a.keyword("OUTFILE").is_some() {
        return Err(format!("{c}: OUTFILE is not supported"));
    }
    for k in [
        "CONTENTS",
        "PAYLOAD",
        "TIMESTAMP",
        "AGGREGATE",
        "PAINT",
        "SWAP",
        "ACTIVE",
    ] {
        a.keyword(k);
    }
    a.finish()?;
    Ok(Box::new(IpPrint {
        label,
        show,
        enabled: std::env::var("PKTFLOW_PRINT").is_ok_and(|v| v == "1"),
        count: 0,
    }))
}

/// The line IPPrint shows for `p` (without the label).
pub fn describe(p: &Packet, show: [bool; 4]) -> String {
    let t = p.anno.timestamp_ns;
    let ts = format!("{}.{:06}", t / 1_000_000_000, (t % 1_000_000_000) / 1000);
    let Some(h) = p.ip_header().filter(|h| h.len() >= 20) else {
        return format!("{ts}: not IP");
    };
    let hl = net::ip_hl(h).max(20);
    let (s, d) = (
        net::ip_to_string(net::ip_src(h)),
        net::ip_to_string(net::ip_dst(h)),
    );
    let first = net::ip_frag_offset(h) == 0;
    let l4 = h.get(hl..).filter(|_| first).unwrap_or(&[]);
    let mut line = match (net::ip_proto(h), l4.len()) {
        (net::IP_PROTO_TCP, n) if n >= 14 => {
            let flags: String = [
                (0x02, 'S'),
                (0x01, 'F'),
                (0x04, 'R'),
                (0x08, 'P'),
                (0x10, '.'),
                (0x20, 'U'),
            ]
            .iter()
            .filter(|(b, _)| l4[13] & b != 0)
            .map(|(_, c)| *c)
            .collect();
            format!(
                "{ts}: {s}.{} > {d}.{}: {flags}",
                net::be16(l4, 0),
                net::be16(l4, 2)
            )
        }
        (net::IP_PROTO_UDP, n) if n >= 8 => format!(
            "{ts}: {s}.{} > {d}.{}: udp {}",
            net::be16(l4, 0),
            net::be16(l4, 2),
            net::be16(l4, 4).saturating_sub(8)
        ),
        (net::IP_PROTO_ICMP, n) if n >= 2 => {
            let what = match l4[0] {
                0 => "echo-reply".to_string(),
                8 => "echo".to_string(),
                3 => "unreachable".to_string(),
                11 => "time-exceeded".to_string(),
                t => format!("type {t}"),
            };
            format!("{ts}: {s} > {d}: icmp {what} (code {})", l4[1])
        }
        (p, _) => format!("{ts}: {s} > {d}: ip-proto-{p}"),
    };
    if !first {
        line.push_str(&format!(" (frag offset {})", net::ip_frag_offset(h)));
    }
    let extra = [
        ("id", net::ip_id(h) as u32),
        ("ttl", net::ip_ttl(h) as u32),
        ("tos", h[1] as u32),
        ("length", net::ip_total_len(h) as u32),
    ];
    for (i, (k, v)) in extra.iter().enumerate() {
        if show[i] {
            line.push_str(&format!(" {k} {v}"));
        }
    }
    line
}

impl Element for IpPrint {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(40);
        cx.read_meta(4);
        cx.read_meta(8);
        cx.read_pkt(20);
        cx.read_pkt(4);
        self.count += 1;
        if self.enabled {
            let sep = if self.label.is_empty() { "" } else { ": " };
            eprintln!("{}{sep}{}", self.label, describe(&p, self.show));
        }
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count})
    }
    fn code_size(&self) -> u32 {
        200
    }
}

#[cfg(test)]
mod tests {
    use super::describe;
    use crate::elements::ip::testutil::ipv4;
    use pktflow_traffic::Packet;

    #[test]
    fn lines() {
        let mut b = ipv4([1, 0, 0, 1], [2, 0, 0, 2], 64, &[], 12, 0);
        b[20..26].copy_from_slice(&[0x04, 0xd2, 0x00, 0x35, 0x00, 0x0c]);
        let mut p = Packet::from_bytes(&b);
        p.set_ip_header(0, 20);
        p.anno.timestamp_ns = 1_500_000_000;
        assert_eq!(
            describe(&p, [false; 4]),
            "1.500000: 1.0.0.1.1234 > 2.0.0.2.53: udp 4"
        );
        assert_eq!(
            describe(&p, [false, true, false, true]),
            "1.500000: 1.0.0.1.1234 > 2.0.0.2.53: udp 4 ttl 64 length 32"
        );
        assert_eq!(
            describe(&Packet::from_bytes(&[1]), [false; 4]),
            "0.000000: not IP"
        );
    }
}
