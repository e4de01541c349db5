//! `FirewallRules(RULE, ..., [RANDOM n], [SEED s], [NETS prefix ...], [DEFAULT allow|deny],
//! [OFFSET k], [LOOKUP bitvector|linear])` — an ordered list of 5-tuple rules; the first rule
//! that matches decides.
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
//! Costs, both lookups: 12 instructions and a 12-byte packet read (protocol, addresses) plus a
//! 4-byte read of the ports for TCP/UDP; 4 instructions to emit. The verdict is the same with
//! either lookup (the first matching rule's); only what finding it costs differs.
//!
//! `LOOKUP bitvector` (the default): the bit-vector classifier of Lakshman and Stiliadis
//! (SIGCOMM 1998), the classification structure an NP firewall of the time holds instead of a
//! rule walk. Each field maps the packet's value to an N-bit vector (bit k set when rule k
//! accepts that value; N = the rule count): the protocol through a 256-entry table, each port
//! through a 65,536-entry table, each address through a multibit trie of strides 16, 8, 8
//! (a level-2 node exists under a /16 only when some rule's prefix on that field is longer than
//! 16 bits and lies in it, a level-3 node likewise under a /24 for prefixes longer than 24).
//! The vectors are ANDed 32 bits at a time from rule 0 on; the first non-zero word holds the
//! first matching rule. Costs: per table or trie level read 3 instructions and a 4-byte
//! static-state read (object 1, key = field << 32 | level); per 32-rule word scanned, for each
//! of the vectors a 4-byte read (object 2, key = field << 32 | word) and 2 instructions, and 2
//! instructions to test the AND; the words scanned run to the one holding the first match, or
//! all of them when none matches; a match adds 2 instructions (find-first-set) and a 4-byte read
//! of the rule's action (object 0, key = rule index). TCP/UDP packets that are not fragments
//! AND 5 vectors (protocol, source, destination, source port, destination port); the others 4
//! (the two port fields are replaced by one constant vector of the rules whose ports are both
//! `any`, the only rules such a packet can match: no port table is read).
//!
//! `LOOKUP linear`: a walk of the list; per rule examined 5 instructions and a 16-byte
//! static-state read of the rule (object 0, key = rule index).
//!
//! Why the bit-vector default: the TDPM paper's Table 2 has the Firewall forwarding 30.79% of
//! OC-48 on one ME against 31.48% for L3-Switch, so its per-packet work is the L3-Switch's to
//! within a few percent; a walk of this rule set (305 rules, 133 examined per packet on the
//! synthetic traffic, 742 instructions) is five times the L3-Switch's, which no NP firewall
//! reaching OC-48 on four MEs does. The rule set is kept (a few hundred rules is the size of
//! the firewall rule sets of the period); the lookup was off.
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

/// The cost structure of the bit-vector lookup (the verdict comes from the rule list).
struct BitVector {
    /// /16 regions holding a prefix longer than 16 bits, per address field (0 src, 1 dst).
    deep16: [std::collections::HashSet<u32>; 2],
    /// /24 regions holding a prefix longer than 24 bits, per address field.
    deep24: [std::collections::HashSet<u32>; 2],
    /// 32-rule words of each vector.
    words: usize,
}

impl BitVector {
    fn new(rules: &[Rule]) -> Self {
        let mut deep16: [std::collections::HashSet<u32>; 2] = Default::default();
        let mut deep24: [std::collections::HashSet<u32>; 2] = Default::default();
        for r in rules {
            for (f, (v, m)) in [r.src, r.dst].into_iter().enumerate() {
                let len = m.count_ones();
                if len > 16 {
                    deep16[f].insert(v >> 16);
                }
                if len > 24 {
                    deep24[f].insert(v >> 8);
                }
            }
        }
        BitVector {
            deep16,
            deep24,
            words: rules.len().div_ceil(32),
        }
    }
    /// Trie levels read for `addr` on address field `f` (1 to 3).
    fn levels(&self, f: usize, addr: u32) -> u32 {
        // A prefix longer than 24 bits is longer than 16 in the same /16: level 3 implies 2.
        1 + self.deep16[f].contains(&(addr >> 16)) as u32
            + self.deep24[f].contains(&(addr >> 8)) as u32
    }
    /// Charges the lookup of a packet whose first matching rule is `hit`.
    fn charge(&self, src: u32, dst: u32, ports: bool, hit: Option<usize>, cx: &mut Cx) {
        // Field tables: protocol (field 0), source (1), destination (2), ports (3, 4).
        let table = |field: u64, levels: u32, cx: &mut Cx| {
            for l in 0..levels {
                cx.instr(3);
                cx.static_state(Read, 1, field << 32 | l as u64, 4);
            }
        };
        table(0, 1, cx);
        table(1, self.levels(0, src), cx);
        table(2, self.levels(1, dst), cx);
        let vectors: u64 = if ports {
            table(3, 1, cx);
            table(4, 1, cx);
            5
        } else {
            4
        };
        let scanned = match hit {
            Some(k) => k / 32 + 1,
            None => self.words,
        };
        for w in 0..scanned as u64 {
            for f in 0..vectors {
                cx.instr(2);
                cx.static_state(Read, 2, f << 32 | w, 4);
            }
            cx.instr(2);
        }
        if let Some(k) = hit {
            cx.instr(2);
            cx.static_state(Read, 0, k as u64, 4);
        }
    }
}

struct FirewallRules {
    rules: Vec<Rule>,
    /// None: the linear walk (`LOOKUP linear`).
    bitvector: Option<BitVector>,
    default_allow: bool,
    offset: usize,
    allowed: u64,
    denied: u64,
    defaulted: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "FirewallRules";
    let mut a = Args::parse(
        c,
        config,
        &["RANDOM", "SEED", "NETS", "DEFAULT", "OFFSET", "LOOKUP"],
    );
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
    let linear = match a.keyword("LOOKUP").as_deref() {
        None | Some("bitvector") => false,
        Some("linear") => true,
        Some(x) => {
            return Err(format!(
                "{c}: LOOKUP must be bitvector or linear, got '{x}'"
            ))
        }
    };
    a.finish()?;
    let bitvector = (!linear).then(|| BitVector::new(&rules));
    Ok(Box::new(FirewallRules {
        rules,
        bitvector,
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
        let hit = self
            .rules
            .iter()
            .position(|r| r.matches(proto, src, dst, ports));
        match &self.bitvector {
            Some(bv) => bv.charge(src, dst, ports.is_some(), hit, cx),
            None => {
                for k in 0..hit.map_or(self.rules.len(), |k| k + 1) {
                    cx.instr(5);
                    cx.static_state(Read, 0, k as u64, 16);
                }
            }
        }
        let verdict = hit.map(|k| self.rules[k].allow);
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
            cx.pop_emitted().unwrap().0
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

    /// (instructions, static-state bytes read, packet bytes read) of one packet's visit, and its
    /// output port.
    fn cost(f: &mut dyn Element, p: Packet) -> (u64, u32, u32, usize) {
        let mut cx = Cx::new();
        f.push(0, p, &mut cx);
        let t = cx.trace().clone();
        let sum = |m: pktflow_model::MemType| {
            t.accesses
                .iter()
                .filter(|a| a.mem == m && a.kind == Read)
                .map(|a| a.bytes)
                .sum::<u32>()
        };
        let port = cx.pop_emitted().unwrap().0;
        (
            cx.instr as u64,
            sum(pktflow_model::MemType::StaticState),
            sum(pktflow_model::MemType::PacketData),
            port,
        )
    }

    fn rules36(lookup: &str) -> String {
        // 34 rules a test packet from 5.5.5.5 never matches (a /32 source), then rule 34 (index)
        // and rule 35 (a /32 destination).
        let mut v = vec!["deny tcp 1.2.3.4 any any 1".to_string(); 34];
        v.push("allow tcp any 10.0.0.0/8 any 80".into());
        v.push("deny udp any 192.168.1.77 any any".into());
        v.push(format!("LOOKUP {lookup}"));
        v.join(", ")
    }

    #[test]
    fn bitvector_costs_follow_the_structure() {
        let env = InitEnv::default();
        let mut f = make(&rules36("bitvector"), &env).unwrap();
        // Match at index 34: 5 table reads (protocol, source and destination level 1, two
        // ports), 2 words x 5 vectors, the action: 16 reads; 12 + 5*3 + 2*(5*2+2) + 2 + 4.
        let c = cost(f.as_mut(), pkt(6, [5, 5, 5, 5], [10, 1, 1, 1], 999, 80));
        assert_eq!(c, (57, 16 * 4, 16, 0));
        // No match, both addresses under /32 rules: 3 trie levels each, every word scanned.
        let c = cost(f.as_mut(), pkt(6, [1, 2, 3, 9], [192, 168, 1, 77], 999, 80));
        assert_eq!(c, (12 + 9 * 3 + 2 * 12 + 4, (9 + 10) * 4, 16, 1));
        // ICMP: no port tables, 4 vectors.
        let c = cost(f.as_mut(), pkt(1, [5, 5, 5, 5], [8, 8, 8, 8], 0, 0));
        assert_eq!(c, (12 + 3 * 3 + 2 * 10 + 4, (3 + 8) * 4, 12, 1));
        // The default is the bit-vector lookup.
        let mut d = make(
            &rules36("bitvector").replace(", LOOKUP bitvector", ""),
            &env,
        )
        .unwrap();
        assert_eq!(
            cost(d.as_mut(), pkt(6, [5, 5, 5, 5], [10, 1, 1, 1], 999, 80)).0,
            57
        );
    }

    #[test]
    fn linear_walk_reads_every_rule_up_to_the_match() {
        let env = InitEnv::default();
        let mut f = make(&rules36("linear"), &env).unwrap();
        let c = cost(f.as_mut(), pkt(6, [5, 5, 5, 5], [10, 1, 1, 1], 999, 80));
        assert_eq!(c, (12 + 35 * 5 + 4, 35 * 16, 16, 0));
        let c = cost(f.as_mut(), pkt(1, [5, 5, 5, 5], [8, 8, 8, 8], 0, 0));
        assert_eq!(c, (12 + 36 * 5 + 4, 36 * 16, 12, 1));
        assert!(make("allow tcp any any any any, LOOKUP hash", &env)
            .err()
            .unwrap()
            .contains("LOOKUP must be bitvector or linear"));
    }

    #[test]
    fn both_lookups_give_the_same_verdicts() {
        let env = InitEnv::default();
        let cfg = "RANDOM 300, SEED 1, NETS 10.0.0.0/8 192.168.1.0/24";
        let mut a = make(&format!("{cfg}, LOOKUP linear"), &env).unwrap();
        let mut b = make(cfg, &env).unwrap();
        let mut x = 12345u32;
        for _ in 0..500 {
            x = x.wrapping_mul(1664525).wrapping_add(1013904223);
            let dst = if x & 1 == 0 {
                [10, (x >> 8) as u8, 1, 2]
            } else {
                [192, 168, 1, (x >> 8) as u8]
            };
            let proto = [6, 17, 1][(x >> 20) as usize % 3];
            let p = pkt(
                proto,
                (x ^ 0x5a5a_5a5a).to_be_bytes(),
                dst,
                (x >> 3) as u16,
                [80, 53, 23, 443][(x >> 28) as usize % 4],
            );
            assert_eq!(cost(a.as_mut(), p.clone()).3, cost(b.as_mut(), p).3);
        }
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
