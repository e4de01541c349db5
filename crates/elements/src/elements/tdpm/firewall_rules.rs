//! `FirewallRules(RULE, ..., [RANDOM n], [SEED s], [NETS prefix ...], [DEFAULT allow|deny],
//! [OFFSET k])` — an ordered list of 5-tuple rules; the first rule that matches decides.
//! A rule is `allow|deny PROTO SRC DST SPORT DPORT`: PROTO `tcp`, `udp`, `icmp`, `any` or a
//! number; SRC/DST an address, a prefix `a.b.c.d/len` or `any`; SPORT/DPORT `any`, a port or a
//! range `lo-hi` (ports only constrain TCP/UDP). `RANDOM n` appends n generated rules of a
//! realistic shape (after the written ones; deterministic in `SEED`, default 1): 60% allow;
//! protocols 55% TCP, 30% UDP, 5% ICMP, 10% any; sources any (40%) or a /8, /16, /24, /32
//! prefix; destinations inside the `NETS` prefixes for 70% of the rules (the networks the
//! firewall protects) else random, with the same length mix; destination ports any (25%), a
//! well-known service port (50%), 1024-65535 (15%) or a short range; source ports any (85%) or
//! 1024-65535. Packets no rule matches get `DEFAULT` (deny unless given). The IPv4 header
//! starts `OFFSET` bytes in (default 14, after Ethernet). Output 0: allowed; output 1: denied.
//!
//! Ports: 1 push input, 2 push outputs.
//!
//! Costs: 12 instructions and a 12-byte packet read (protocol, addresses) plus a 4-byte read
//! of the ports for TCP/UDP; per rule examined 5 instructions and a 16-byte static-state read
//! of the rule (object 0, key = rule index); 4 instructions to emit.
use crate::conf::{parse_prefix, parse_uint, split_words, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::Read;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "FirewallRules",
    summary: "ordered 5-tuple rules, first match wins (output 0 allow, 1 deny)",
    make,
};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    pub allow: bool,
    pub proto: Option<u8>,
    pub src: (u32, u32), // value, mask
    pub dst: (u32, u32),
    pub sport: (u16, u16),
    pub dport: (u16, u16),
}

impl Rule {
    pub fn matches(&self, proto: u8, src: u32, dst: u32, ports: Option<(u16, u16)>) -> bool {
        if self.proto.is_some_and(|p| p != proto) {
            return false;
        }
        if src & self.src.1 != self.src.0 || dst & self.dst.1 != self.dst.0 {
            return false;
        }
        let any_ports = self.sport == (0, 65535) && self.dport == (0, 65535);
        match ports {
            Some((s, d)) => {
                (self.sport.0..=self.sport.1).contains(&s)
                    && (self.dport.0..=self.dport.1).contains(&d)
            }
            None => any_ports,
        }
    }
}

fn parse_addr(s: &str) -> Result<(u32, u32), String> {
    if s == "any" {
        return Ok((0, 0));
    }
    let (ip, len) = if s.contains('/') {
        parse_prefix(s)?
    } else {
        (crate::conf::parse_ip(s)?, 32)
    };
    let m = crate::conf::mask(len);
    Ok((u32::from_be_bytes(ip) & m, m))
}

fn parse_ports(s: &str) -> Result<(u16, u16), String> {
    if s == "any" {
        return Ok((0, 65535));
    }
    let p = |x: &str| -> Result<u16, String> {
        let v = parse_uint(x)?;
        u16::try_from(v).map_err(|_| format!("port {v} out of range"))
    };
    match s.split_once('-') {
        Some((a, b)) => {
            let (lo, hi) = (p(a)?, p(b)?);
            if lo > hi {
                return Err(format!("empty port range {s}"));
            }
            Ok((lo, hi))
        }
        None => {
            let v = p(s)?;
            Ok((v, v))
        }
    }
}

pub fn parse_rule(s: &str) -> Result<Rule, String> {
    let w = split_words(s);
    if w.len() != 6 {
        return Err(format!(
            "expected 'allow|deny PROTO SRC DST SPORT DPORT', got '{s}'"
        ));
    }
    let allow = match w[0].as_str() {
        "allow" => true,
        "deny" => false,
        x => return Err(format!("rule action must be allow or deny, got '{x}'")),
    };
    let proto = match w[1].as_str() {
        "any" => None,
        "tcp" => Some(6),
        "udp" => Some(17),
        "icmp" => Some(1),
        x => Some(
            parse_uint(x)
                .ok()
                .and_then(|v| u8::try_from(v).ok())
                .ok_or_else(|| format!("unknown protocol '{x}'"))?,
        ),
    };
    Ok(Rule {
        allow,
        proto,
        src: parse_addr(&w[2])?,
        dst: parse_addr(&w[3])?,
        sport: parse_ports(&w[4])?,
        dport: parse_ports(&w[5])?,
    })
}

/// `n` rules of the shape documented above, deterministic in `seed`.
pub fn generate_rules(n: usize, seed: u64, nets: &[(u32, u32)]) -> Vec<Rule> {
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut unit = move || (next() >> 11) as f64 / (1u64 << 53) as f64;
    let mut rules = Vec::with_capacity(n);
    const SERVICES: [u16; 11] = [22, 25, 53, 80, 110, 123, 143, 443, 993, 3306, 8080];
    for _ in 0..n {
        let r = unit();
        let proto = if r < 0.55 {
            Some(6)
        } else if r < 0.85 {
            Some(17)
        } else if r < 0.90 {
            Some(1)
        } else {
            None
        };
        let len_of = |u: f64| -> u8 {
            if u < 0.15 {
                8
            } else if u < 0.45 {
                16
            } else if u < 0.85 {
                24
            } else {
                32
            }
        };
        let src = if unit() < 0.4 {
            (0, 0)
        } else {
            let m = crate::conf::mask(len_of(unit()));
            ((unit() * u32::MAX as f64) as u32 & m, m)
        };
        let dst = {
            let len = len_of(unit());
            let base = if !nets.is_empty() && unit() < 0.7 {
                let (v, m) = nets[(unit() * nets.len() as f64) as usize % nets.len()];
                v | ((unit() * u32::MAX as f64) as u32 & !m)
            } else {
                (unit() * u32::MAX as f64) as u32
            };
            let m = crate::conf::mask(len);
            // Never narrower than the protected net when drawn inside it.
            (base & m, m)
        };
        let r = unit();
        let dport = if r < 0.25 {
            (0, 65535)
        } else if r < 0.75 {
            let s = SERVICES[(unit() * SERVICES.len() as f64) as usize % SERVICES.len()];
            (s, s)
        } else if r < 0.90 {
            (1024, 65535)
        } else {
            let lo = (unit() * 60000.0) as u16;
            (lo, lo.saturating_add(16))
        };
        let sport = if unit() < 0.85 {
            (0, 65535)
        } else {
            (1024, 65535)
        };
        let (sport, dport) = if matches!(proto, Some(6) | Some(17)) {
            (sport, dport)
        } else {
            ((0, 65535), (0, 65535))
        };
        rules.push(Rule {
            allow: unit() < 0.6,
            proto,
            src,
            dst,
            sport,
            dport,
        });
    }
    rules
}

struct FirewallRules {
    rules: Vec<Rule>,
    default_allow: bool,
    offset: usize,
    allowed: u64,
    denied: u64,
    defaulted: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "FirewallRules";
    let mut a = Args::parse(c, config, &["RANDOM", "SEED", "NETS", "DEFAULT", "OFFSET"]);
    let mut rules = Vec::new();
    for (k, r) in a.take_all_positional().iter().enumerate() {
        rules.push(parse_rule(r).map_err(|e| format!("{c}: rule {}: {e}", k + 1))?);
    }
    let seed = match a.keyword("SEED") {
        Some(s) => parse_uint(&s).map_err(|e| format!("{c}: SEED: {e}"))?,
        None => 1,
    };
    let nets: Vec<(u32, u32)> = match a.keyword("NETS") {
        Some(s) => split_words(&s)
            .iter()
            .map(|w| parse_addr(w))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{c}: NETS: {e}"))?,
        None => vec![],
    };
    if let Some(n) = a.keyword("RANDOM") {
        let n = parse_uint(&n).map_err(|e| format!("{c}: RANDOM: {e}"))? as usize;
        if n > 100_000 {
            return Err(format!("{c}: RANDOM {n}: at most 100000 rules"));
        }
        rules.extend(generate_rules(n, seed, &nets));
    }
    let default_allow = match a.keyword("DEFAULT").as_deref() {
        None | Some("deny") => false,
        Some("allow") => true,
        Some(x) => return Err(format!("{c}: DEFAULT must be allow or deny, got '{x}'")),
    };
    let offset = match a.keyword("OFFSET") {
        Some(s) => parse_uint(&s).map_err(|e| format!("{c}: OFFSET: {e}"))? as usize,
        None => 14,
    };
    a.finish()?;
    Ok(Box::new(FirewallRules {
        rules,
        default_allow,
        offset,
        allowed: 0,
        denied: 0,
        defaulted: 0,
    }))
}

impl Element for FirewallRules {
    fn ports(&self) -> Ports {
        Ports::push(1, 2)
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(12);
        let d = p.data();
        let o = self.offset;
        if d.len() < o + 20 || d[o] >> 4 != 4 {
            cx.drop_packet(p, "not IPv4");
            return;
        }
        cx.read_pkt(12);
        let proto = d[o + 9];
        let src = u32::from_be_bytes([d[o + 12], d[o + 13], d[o + 14], d[o + 15]]);
        let dst = u32::from_be_bytes([d[o + 16], d[o + 17], d[o + 18], d[o + 19]]);
        let hl = ((d[o] & 0xf) as usize) * 4;
        let frag = u16::from_be_bytes([d[o + 6], d[o + 7]]) & 0x1fff != 0;
        let ports = if matches!(proto, 6 | 17) && !frag && d.len() >= o + hl + 4 {
            cx.read_pkt(4);
            Some((
                u16::from_be_bytes([d[o + hl], d[o + hl + 1]]),
                u16::from_be_bytes([d[o + hl + 2], d[o + hl + 3]]),
            ))
        } else {
            None
        };
        let mut verdict = None;
        for (k, r) in self.rules.iter().enumerate() {
            cx.instr(5);
            cx.static_state(Read, 0, k as u64, 16);
            if r.matches(proto, src, dst, ports) {
                verdict = Some(r.allow);
                break;
            }
        }
        let allow = verdict.unwrap_or_else(|| {
            self.defaulted += 1;
            self.default_allow
        });
        cx.instr(4);
        if allow {
            self.allowed += 1;
            cx.emit(0, p);
        } else {
            self.denied += 1;
            cx.emit(1, p);
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"rules": self.rules.len(), "allowed": self.allowed, "denied": self.denied, "default": self.defaulted})
    }
    fn code_size(&self) -> u32 {
        260
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(proto: u8, src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16) -> Packet {
        let mut v = vec![0u8; 14 + 40];
        v[12..14].copy_from_slice(&[8, 0]);
        v[14] = 0x45;
        v[14 + 9] = proto;
        v[26..30].copy_from_slice(&src);
        v[30..34].copy_from_slice(&dst);
        v[34..36].copy_from_slice(&sp.to_be_bytes());
        v[36..38].copy_from_slice(&dp.to_be_bytes());
        Packet::from_bytes(&v)
    }

    #[test]
    fn first_match_wins() {
        let env = InitEnv::default();
        let mut f = make(
            "deny tcp 10.0.0.0/8 any any 23, allow tcp any 192.168.1.0/24 any 1000-2000, allow udp any any any 53, DEFAULT deny",
            &env,
        )
        .unwrap();
        let mut cx = Cx::new();
        let mut verdict = |p: Packet| {
            f.push(0, p, &mut cx);
            cx.out.pop().unwrap().0
        };
        assert_eq!(verdict(pkt(6, [10, 1, 1, 1], [192, 168, 1, 5], 999, 23)), 1);
        assert_eq!(
            verdict(pkt(6, [11, 1, 1, 1], [192, 168, 1, 5], 999, 1500)),
            0
        );
        assert_eq!(
            verdict(pkt(6, [11, 1, 1, 1], [192, 168, 1, 5], 999, 2001)),
            1
        );
        assert_eq!(verdict(pkt(17, [1, 1, 1, 1], [8, 8, 8, 8], 5000, 53)), 0);
        assert_eq!(
            verdict(pkt(1, [1, 1, 1, 1], [8, 8, 8, 8], 0, 0)),
            1,
            "default deny"
        );
        assert!(make("permit tcp any any any any", &env).is_err());
        assert!(make("allow tcp any any 5-1 any", &env).is_err());
    }

    #[test]
    fn generated_rules_have_the_documented_shape() {
        let nets = [parse_addr("10.0.0.0/8").unwrap()];
        let r = generate_rules(1000, 7, &nets);
        assert_eq!(r, generate_rules(1000, 7, &nets));
        let tcp = r.iter().filter(|x| x.proto == Some(6)).count();
        assert!((480..=620).contains(&tcp), "{tcp}");
        let inside = r
            .iter()
            .filter(|x| x.dst.0 >> 24 == 10 && x.dst.1 >= 0xff00_0000)
            .count();
        assert!(inside > 600, "{inside}");
        let allow = r.iter().filter(|x| x.allow).count();
        assert!((520..=680).contains(&allow), "{allow}");
    }
}
