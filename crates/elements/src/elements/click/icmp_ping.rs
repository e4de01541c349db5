//! `ICMPPingSource(SRC, DST [, keywords INTERVAL, IDENTIFIER, LIMIT, DATA, ACTIVE, VERBOSE])`
//! (also `ICMPSendPings`) — sends ICMP echo requests from SRC to DST, as Click builds them:
//! IPv4 with TOS 0, no fragment bits, TTL 200, IP id = (count mod 65535) + 1, protocol 1,
//! header checksum; ICMP type 8, code 0, identifier IDENTIFIER (default 0), sequence number
//! equal to the IP id, then DATA (default none), ICMP checksum. Like Click 2.1 built on Linux,
//! the identifier and the sequence number are stored in the host's (little-endian) byte order.
//! The destination IP and IP header annotations are set. Packet k (from 0) is stamped
//! (k+1) * INTERVAL (default 1 s: Click sends the first one after one interval). LIMIT -1
//! (default) for no limit (the run's own packet limit then stops it).
//!
//! Ports: a generator (push output 0, no input needed); an optional push input takes echo
//! replies: those with our identifier are counted (read handler `received`) and consumed
//! (reason `ping reply consumed`), other packets dropped (`not a ping reply`). Read handlers
//! `count`, `received`; write handlers `active`, `limit`, `reset_counts`.
//! Costs: the runtime's source visit for requests; a reply costs 6 instructions and an 8 B
//! packet-data read.
use crate::conf::{parse_bool, parse_ip, parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Processing, Role};
use crate::elements::io::data::parse_data;
use crate::elements::nat::flow::parse_seconds;
use crate::net;
use crate::registry::ClassInfo;
use pktflow_traffic::checksum::ip_checksum;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "ICMPPingSource",
    summary: "send ICMP echo requests (and count the replies)",
    make,
};
pub const ALIAS: ClassInfo = ClassInfo {
    name: "ICMPSendPings",
    summary: "the old name of ICMPPingSource",
    make,
};

struct PingSource {
    src: [u8; 4],
    dst: [u8; 4],
    interval_ns: u64,
    ident: u16,
    limit: Option<u64>,
    data: Vec<u8>,
    active: bool,
    count: u64,
    received: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "ICMPPingSource";
    let mut a = Args::parse(
        c,
        config,
        &[
            "SRC",
            "DST",
            "INTERVAL",
            "IDENTIFIER",
            "LIMIT",
            "DATA",
            "ACTIVE",
            "VERBOSE",
        ],
    );
    let src = parse_ip(
        &a.keyword_or_positional("SRC")
            .ok_or("ICMPPingSource: missing argument SRC")?,
    )
    .map_err(|e| format!("{c}: SRC: {e}"))?;
    let dst = parse_ip(
        &a.keyword_or_positional("DST")
            .ok_or("ICMPPingSource: missing argument DST")?,
    )
    .map_err(|e| format!("{c}: DST: {e}"))?;
    let interval_ns = match a.keyword("INTERVAL") {
        Some(s) => parse_seconds(&s).map_err(|e| format!("{c}: INTERVAL: {e}"))?,
        None => 1_000_000_000,
    };
    let ident = match a.keyword("IDENTIFIER") {
        Some(s) => {
            let v = parse_uint(&s).map_err(|e| format!("{c}: IDENTIFIER: {e}"))?;
            u16::try_from(v).map_err(|_| format!("{c}: IDENTIFIER {v} is over 65535"))?
        }
        None => 0,
    };
    let limit = match a.keyword("LIMIT").as_deref().map(str::trim) {
        None | Some("-1") => None,
        Some(s) => Some(parse_uint(s).map_err(|e| format!("{c}: LIMIT: {e}"))?),
    };
    let data = match a.keyword("DATA") {
        Some(d) => parse_data(&d).map_err(|e| format!("{c}: DATA: {e}"))?,
        None => Vec::new(),
    };
    if data.len() > 65535 - 28 {
        return Err(format!("{c}: DATA is too long for one IP packet"));
    }
    let active = match a.keyword("ACTIVE") {
        Some(s) => parse_bool(&s).map_err(|e| format!("{c}: ACTIVE: {e}"))?,
        None => true,
    };
    a.keyword("VERBOSE");
    a.finish()?;
    Ok(Box::new(PingSource {
        src,
        dst,
        interval_ns,
        ident,
        limit,
        data,
        active,
        count: 0,
        received: 0,
    }))
}

impl PingSource {
    fn packet(&self) -> Vec<u8> {
        let len = 28 + self.data.len();
        let mut v = vec![0u8; len];
        let id = ((self.count % 0xffff) + 1) as u16;
        v[0] = 0x45;
        net::set_be16(&mut v, 2, len as u16);
        net::set_be16(&mut v, 4, id);
        v[8] = 200;
        v[9] = net::IP_PROTO_ICMP;
        net::set_ip_src(&mut v, self.src);
        net::set_ip_dst(&mut v, self.dst);
        net::set_ip_checksum(&mut v[..20]);
        v[20] = 8;
        v[24..26].copy_from_slice(&self.ident.to_le_bytes());
        v[26..28].copy_from_slice(&id.to_le_bytes());
        v[28..].copy_from_slice(&self.data);
        let s = ip_checksum(&v[20..]);
        net::set_be16(&mut v, 22, s);
        v
    }
}

impl Element for PingSource {
    fn ports(&self) -> Ports {
        Ports {
            inputs: (0, 1),
            outputs: (1, 1),
            input_processing: Processing::Push,
            output_processing: Processing::Push,
        }
    }
    fn role(&self) -> Role {
        Role::Generator
    }
    fn generate(&mut self, _cx: &mut Cx) -> Option<Packet> {
        if !self.active || self.limit.is_some_and(|l| self.count >= l) {
            return None;
        }
        let mut p = Packet::from_bytes(&self.packet());
        p.set_ip_header(0, 20);
        p.anno.dst_ip = self.dst;
        p.anno.timestamp_ns = (self.count + 1).saturating_mul(self.interval_ns);
        self.count += 1;
        Some(p)
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(6);
        cx.read_pkt(8);
        let ok = p.ip_header().is_some_and(|h| {
            let hl = if h.len() >= 20 { net::ip_hl(h) } else { 0 };
            hl >= 20
                && net::ip_proto(h) == net::IP_PROTO_ICMP
                && h.len() >= hl + 8
                && h[hl] == 0
                && h[hl + 4..hl + 6] == self.ident.to_le_bytes()
        });
        if ok {
            self.received += 1;
            cx.drop_packet(p, "ping reply consumed");
        } else {
            cx.drop_packet(p, "not a ping reply");
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count, "received": self.received, "active": self.active})
    }
    fn write_handler(&mut self, name: &str, value: &str) -> Result<(), String> {
        match name {
            "active" => self.active = parse_bool(value)?,
            "limit" => {
                self.limit = match value.trim() {
                    "-1" => None,
                    v => Some(parse_uint(v)?),
                }
            }
            "reset_counts" => {
                self.count = 0;
                self.received = 0;
            }
            _ => return Err(format!("no write handler '{name}'")),
        }
        Ok(())
    }
    fn code_size(&self) -> u32 {
        80
    }
}

#[cfg(test)]
mod tests {
    use crate::elements::ip::testutil::make;

    #[test]
    fn echo_request_bytes_by_hand() {
        let mut g = make("ICMPPingSource", "1.0.0.1, 2.0.0.2, IDENTIFIER 1, LIMIT 2");
        let mut cx = crate::cx::Cx::new();
        let p = g.generate(&mut cx).unwrap();
        // IP: 4500 001c 0001 0000 c801 sum 01000001 02000002:
        // 4500+001c+0001+c801+0100+0001+0200+0002 = 0x11021 -> 0x1022 -> ~ = 0xefdd.
        // ICMP: 0800 sum 0100 0100 (identifier 1 and sequence 1, little-endian):
        // 0800+0100+0100 = 0x0a00 -> ~ = 0xf5ff.
        assert_eq!(
            p.data(),
            &[
                0x45, 0, 0, 0x1c, 0, 1, 0, 0, 200, 1, 0xef, 0xdd, 1, 0, 0, 1, 2, 0, 0, 2, //
                8, 0, 0xf5, 0xff, 1, 0, 1, 0
            ]
        );
        assert_eq!(p.anno.timestamp_ns, 1_000_000_000);
        let q = g.generate(&mut cx).unwrap();
        assert_eq!(&q.data()[4..6], &[0, 2]);
        assert!(g.generate(&mut cx).is_none());
    }
}
