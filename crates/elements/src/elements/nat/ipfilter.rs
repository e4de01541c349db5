//! The tcpdump-like pattern language of `IPClassifier` (and Click's `IPFilter`): a parser to
//! an expression tree, done once at configuration time, and its evaluator on an IPv4 header.
//!
//! Supported (Click's IPClassifier documentation):
//! - `ip proto PROTO` (a number or `icmp`, `igmp`, `ipip`, `tcp`, `udp`), and the bare
//!   protocol names `tcp`, `udp`, `icmp`, `igmp`, `ipip`;
//! - `[SRCORDST] host ADDR`, `[SRCORDST] net ADDR/LEN`, `net ADDR mask MASK`, a bare address
//!   (= `host`) or a bare `ADDR/LEN` (= `net`); SRCORDST is `src`, `dst`, `src or dst`
//!   (the default) or `src and dst`;
//! - `[SRCORDST] [tcp | udp] port PORT` (a number or a well-known name such as `www`; a bare
//!   name is `port NAME`); without `tcp`/`udp` either protocol is accepted: a port test is
//!   true only for TCP or UDP packets (first fragments);
//! - `ip vers N`, `ip hl N` (in 32-bit words), `ip tos N`, `ip dscp N`, `ip ttl N`, `ip id N`,
//!   `ip frag`, `ip unfrag` (also bare `frag`/`unfrag`), `ip ect`, `ip ce`;
//! - `tcp opt FLAG` / `tcp FLAG` / bare `FLAG` for `syn fin ack rst psh urg`; `tcp win N`;
//! - `icmp type TYPE` (number or name: `echo`, `echo-reply`, `unreachable`, ...);
//! - comparison operators `==` `!=` (all but `tcp opt`) and `<` `>` `<=` `>=` on integer
//!   fields; as in Click, `src tcp port != 5` still requires TCP (it is not `not (...)`);
//! - `true`, `false`; a whole pattern `-`, `any` or `all` matches everything;
//! - `and`/`&&`, `or`/`||`, `not`/`!`, parentheses, `COND ? A : B`, and implicit `and`
//!   between juxtaposed terms (`10.0.0.0/24 syn`);
//! - repeated qualifiers may be omitted: `src port 80 or 81` is `src port 80 or src port 81`.
//!
//! - Click's shorthands: `dst tcp ssh` (a port after the protocol without `port`), `icmp
//!   echo-reply` (a type name after `icmp`), `proto icmp` (without `ip`), `ip len N` (total
//!   length), byte tests `ip[POS] = V` / `ip[POS:LEN] OP V` / `transp[POS:LEN] OP V` (LEN 1-4
//!   bytes, big-endian; transp is relative to the transport header, first fragments only),
//!   `=` as `==`;
//! - with `!=`, `port != 53` and `host != A` mean that neither port (address) is 53 (A), as
//!   in Click (the negation of `port 53`, still requiring TCP or UDP for ports).
//!
//! Not supported (a clear error names them): bit masks (`&`).
//!
//! Costs (used by the element): evaluation is short-circuit over the tree; every primitive
//! tested costs 3 instructions plus the packet bytes it reads (protocol 1 B, fragment field
//! 2 B, address 4 B, port 2 B, ...), as in a compiled decision tree that tests each field once
//! per path.

use std::fmt;

/// A field a primitive tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Proto,
    SrcAddr,
    DstAddr,
    /// Source/destination port; `Some(p)` restricts to that IP protocol, `None` is TCP or UDP.
    SrcPort(Option<u8>),
    DstPort(Option<u8>),
    Vers,
    /// Header length in 32-bit words.
    Hl,
    Tos,
    Dscp,
    Ttl,
    Id,
    /// 1 when the packet is a fragment (MF set or offset non-zero), else 0.
    Frag,
    /// ECN bits (the low 2 bits of TOS).
    Ecn,
    /// TCP flags byte (tested with a mask: `tcp opt syn`).
    TcpFlags,
    TcpWin,
    IcmpType,
    /// IP total length.
    Len,
    /// `ip[POS:LEN]`: LEN (1-4) bytes at POS of the IP header, big-endian.
    IpBytes(u16, u8),
    /// `transp[POS:LEN]`: bytes at POS of the transport header (first fragments only).
    TranspBytes(u16, u8),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
    /// `(field & value) != 0` (TCP flags, ECN).
    AnyBits,
}

/// One test: `(field & mask) OP value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Prim {
    pub field: Field,
    pub op: Op,
    pub value: u32,
    pub mask: u32,
}

/// An expression tree.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    True,
    False,
    Prim(Prim),
    Not(Box<Expr>),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
}

/// A parse error: the 1-based column in the pattern and what went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    pub column: usize,
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "column {}: {}", self.column, self.message)
    }
}

const PORT_NAMES: &[(&str, u16)] = &[
    ("echo", 7),
    ("discard", 9),
    ("daytime", 13),
    ("chargen", 19),
    ("ftp-data", 20),
    ("ftp", 21),
    ("ssh", 22),
    ("telnet", 23),
    ("smtp", 25),
    ("domain", 53),
    ("dns", 53),
    ("bootps", 67),
    ("bootpc", 68),
    ("tftp", 69),
    ("finger", 79),
    ("www", 80),
    ("pop3", 110),
    ("sunrpc", 111),
    ("auth", 113),
    ("nntp", 119),
    ("ntp", 123),
    ("netbios-ns", 137),
    ("netbios-dgm", 138),
    ("netbios-ssn", 139),
    ("snmp", 161),
    ("snmp-trap", 162),
    ("irc", 194),
    ("imap3", 220),
    ("https", 443),
    ("rip", 520),
    ("route", 520),
    ("imaps", 993),
    ("pop3s", 995),
];

const PROTO_NAMES: &[(&str, u8)] = &[
    ("icmp", 1),
    ("igmp", 2),
    ("ipip", 4),
    ("tcp", 6),
    ("udp", 17),
];

const TCP_FLAGS: &[(&str, u8)] = &[
    ("fin", 0x01),
    ("syn", 0x02),
    ("rst", 0x04),
    ("psh", 0x08),
    ("ack", 0x10),
    ("urg", 0x20),
];

const ICMP_TYPES: &[(&str, u8)] = &[
    ("echo-reply", 0),
    ("unreachable", 3),
    ("sourcequench", 4),
    ("redirect", 5),
    ("echo", 8),
    ("routeradvert", 9),
    ("routersolicit", 10),
    ("timeexceeded", 11),
    ("parameterproblem", 12),
    ("timestamp", 13),
    ("timestamp-reply", 14),
    ("inforeq", 15),
    ("inforeq-reply", 16),
    ("maskreq", 17),
    ("maskreq-reply", 18),
];

fn lookup<T: Copy>(table: &[(&str, T)], w: &str) -> Option<T> {
    table.iter().find(|(n, _)| *n == w).map(|&(_, v)| v)
}

/// Well-known port number of a name (`www` -> 80).
pub fn port_by_name(w: &str) -> Option<u16> {
    lookup(PORT_NAMES, w)
}

#[derive(Clone, Debug, PartialEq)]
struct Tok {
    text: String,
    col: usize,
}

fn tokenize(s: &str) -> Vec<Tok> {
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < cs.len() {
        let c = cs[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let two: String = cs[i..(i + 2).min(cs.len())].iter().collect();
        if ["&&", "||", "==", "!=", "<=", ">="].contains(&two.as_str()) {
            out.push(Tok {
                text: two,
                col: i + 1,
            });
            i += 2;
            continue;
        }
        if "()!<>?:&[]".contains(c) {
            out.push(Tok {
                text: c.to_string(),
                col: i + 1,
            });
            i += 1;
            continue;
        }
        let start = i;
        while i < cs.len() && !cs[i].is_whitespace() && !"()!<>?:&=[]|".contains(cs[i]) {
            i += 1;
        }
        if i == start {
            // A lone '=' or '|': keep it as its own token so the parser can complain about it.
            i += 1;
        }
        out.push(Tok {
            text: cs[start..i].iter().collect(),
            col: start + 1,
        });
    }
    out
}

/// What a bare value continuing an expression (`src port 80 or 81`) is tested against.
#[derive(Clone, Copy, Debug)]
enum Last {
    Addr(SrcDst),
    Port(SrcDst, Option<u8>),
    Field(Field),
    IcmpType,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SrcDst {
    Src,
    Dst,
    Or,
    And,
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    end_col: usize,
    last: Option<Last>,
    depth: usize,
}

type R<T> = Result<T, ParseError>;

fn is_ip_like(w: &str) -> bool {
    w.split('/').next().is_some_and(|a| {
        let parts: Vec<&str> = a.split('.').collect();
        parts.len() == 4
            && parts
                .iter()
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
    })
}

fn parse_num(w: &str) -> Option<u32> {
    if let Some(h) = w.strip_prefix("0x").or_else(|| w.strip_prefix("0X")) {
        u32::from_str_radix(h, 16).ok()
    } else if !w.is_empty() && w.chars().all(|c| c.is_ascii_digit()) {
        w.parse().ok()
    } else {
        None
    }
}

fn addr_u32(w: &str) -> Option<u32> {
    crate::conf::parse_ip(w).ok().map(u32::from_be_bytes)
}

impl Parser {
    fn peek(&self) -> Option<&str> {
        self.toks.get(self.pos).map(|t| t.text.as_str())
    }
    fn peek_at(&self, k: usize) -> Option<&str> {
        self.toks.get(self.pos + k).map(|t| t.text.as_str())
    }
    fn col(&self) -> usize {
        self.toks.get(self.pos).map_or(self.end_col, |t| t.col)
    }
    fn found(&self) -> String {
        match self.peek() {
            Some(t) => format!("'{t}'"),
            None => "end of pattern".into(),
        }
    }
    fn err<T>(&self, expected: &str) -> R<T> {
        Err(ParseError {
            column: self.col(),
            message: format!("expected {expected}, found {}", self.found()),
        })
    }
    fn next(&mut self) -> Option<String> {
        let t = self.toks.get(self.pos).map(|t| t.text.clone());
        if t.is_some() {
            self.pos += 1;
        }
        t
    }
    fn eat(&mut self, w: &str) -> bool {
        if self.peek() == Some(w) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> R<Expr> {
        self.depth += 1;
        if self.depth > 200 {
            return Err(ParseError {
                column: self.col(),
                message: "pattern nests too deeply".into(),
            });
        }
        let c = self.or_expr()?;
        let r = if self.eat("?") {
            let a = self.expr()?;
            if !self.eat(":") {
                return self.err("':' of 'COND ? A : B'");
            }
            let b = self.expr()?;
            Expr::Cond(Box::new(c), Box::new(a), Box::new(b))
        } else {
            c
        };
        self.depth -= 1;
        Ok(r)
    }

    fn or_expr(&mut self) -> R<Expr> {
        let mut v = vec![self.and_expr()?];
        while matches!(self.peek(), Some("or") | Some("||")) {
            self.pos += 1;
            v.push(self.and_expr()?);
        }
        Ok(if v.len() == 1 {
            v.pop().unwrap()
        } else {
            Expr::Or(v)
        })
    }

    fn and_expr(&mut self) -> R<Expr> {
        let mut v = vec![self.not_expr()?];
        loop {
            match self.peek() {
                Some("and") | Some("&&") => {
                    self.pos += 1;
                    v.push(self.not_expr()?);
                }
                None | Some("or") | Some("||") | Some(")") | Some("?") | Some(":") => break,
                Some(_) => v.push(self.not_expr()?), // implicit 'and'
            }
        }
        Ok(if v.len() == 1 {
            v.pop().unwrap()
        } else {
            Expr::And(v)
        })
    }

    fn not_expr(&mut self) -> R<Expr> {
        if matches!(self.peek(), Some("not") | Some("!")) {
            self.pos += 1;
            self.depth += 1;
            if self.depth > 200 {
                return Err(ParseError {
                    column: self.col(),
                    message: "pattern nests too deeply".into(),
                });
            }
            let e = self.not_expr()?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(e)));
        }
        if self.eat("(") {
            let e = self.expr()?;
            if !self.eat(")") {
                return self.err("')'");
            }
            return Ok(e);
        }
        self.term()
    }

    /// Optional comparison operator.
    fn op(&mut self) -> Op {
        let op = match self.peek() {
            Some("==") | Some("=") => Op::Eq,
            Some("!=") => Op::Ne,
            Some("<") => Op::Lt,
            Some(">") => Op::Gt,
            Some("<=") => Op::Le,
            Some(">=") => Op::Ge,
            _ => return Op::Eq,
        };
        self.pos += 1;
        op
    }

    fn no_mask(&self) -> R<()> {
        if self.peek() == Some("&") {
            return Err(ParseError {
                column: self.col(),
                message: "bit masks ('&') in IPClassifier patterns are not supported".into(),
            });
        }
        Ok(())
    }

    fn number(&mut self, what: &str, max: u32) -> R<u32> {
        let col = self.col();
        match self.peek().and_then(parse_num) {
            Some(n) if n <= max => {
                self.pos += 1;
                Ok(n)
            }
            Some(n) => Err(ParseError {
                column: col,
                message: format!("{what} {n} is out of range (0-{max})"),
            }),
            None => self.err(what),
        }
    }

    fn field_prim(&mut self, field: Field, what: &str, max: u32) -> R<Expr> {
        self.no_mask()?;
        let op = self.op();
        let v = self.number(what, max)?;
        self.last = Some(Last::Field(field));
        Ok(prim(field, op, v, u32::MAX))
    }

    fn srcdst(&mut self) -> Option<SrcDst> {
        let first = match self.peek() {
            Some("src") => SrcDst::Src,
            Some("dst") => SrcDst::Dst,
            _ => return None,
        };
        self.pos += 1;
        // 'src or dst' / 'src and dst' (only when followed by the other word).
        let other = if first == SrcDst::Src { "dst" } else { "src" };
        match (self.peek(), self.peek_at(1)) {
            (Some("or") | Some("||"), Some(o)) if o == other => {
                self.pos += 2;
                Some(SrcDst::Or)
            }
            (Some("and") | Some("&&"), Some(o)) if o == other => {
                self.pos += 2;
                Some(SrcDst::And)
            }
            _ => Some(first),
        }
    }

    fn addr_expr(&mut self, sd: SrcDst, net: bool) -> R<Expr> {
        self.no_mask()?;
        let op = self.op();
        if !matches!(op, Op::Eq | Op::Ne) {
            return Err(ParseError {
                column: self.col(),
                message: "addresses take only '==' or '!='".into(),
            });
        }
        let col = self.col();
        let Some(w) = self.next() else {
            return self.err(if net { "network address" } else { "IP address" });
        };
        let (addr, mask) = if net || w.contains('/') {
            if let Some((a, l)) = w.split_once('/') {
                let a = addr_u32(a).ok_or_else(|| ParseError {
                    column: col,
                    message: format!("expected network address, found '{w}'"),
                })?;
                let m = match parse_num(l) {
                    Some(len) if len <= 32 => crate::conf::mask(len as u8),
                    _ => match addr_u32(l) {
                        Some(m) if m.leading_ones() + m.trailing_zeros() == 32 => m,
                        _ => {
                            return Err(ParseError {
                                column: col,
                                message: format!("bad prefix length or mask in '{w}'"),
                            })
                        }
                    },
                };
                (a, m)
            } else {
                let a = addr_u32(&w).ok_or_else(|| ParseError {
                    column: col,
                    message: format!("expected network address, found '{w}'"),
                })?;
                if self.eat("mask") {
                    let mc = self.col();
                    let mw = self.next().unwrap_or_default();
                    match addr_u32(&mw) {
                        Some(m) if m.leading_ones() + m.trailing_zeros() == 32 => (a, m),
                        _ => {
                            return Err(ParseError {
                                column: mc,
                                message: format!("expected contiguous netmask, found '{mw}'"),
                            })
                        }
                    }
                } else {
                    (a, u32::MAX)
                }
            }
        } else {
            let a = addr_u32(&w).ok_or_else(|| ParseError {
                column: col,
                message: format!("expected IP address, found '{w}'"),
            })?;
            (a, u32::MAX)
        };
        self.last = Some(Last::Addr(sd));
        let mk = |f| prim(f, op, addr & mask, mask);
        Ok(both(
            negated(sd, op),
            mk(Field::SrcAddr),
            mk(Field::DstAddr),
        ))
    }

    fn port_value(&mut self) -> R<u32> {
        let col = self.col();
        let Some(w) = self.peek().map(str::to_string) else {
            return self.err("port number or name");
        };
        if let Some(n) = parse_num(&w) {
            if n > 65535 {
                return Err(ParseError {
                    column: col,
                    message: format!("port {n} is out of range (0-65535)"),
                });
            }
            self.pos += 1;
            return Ok(n);
        }
        if let Some(p) = port_by_name(&w) {
            self.pos += 1;
            return Ok(p as u32);
        }
        self.err("port number or name (e.g. 80, www, ssh)")
    }

    fn port_expr(&mut self, sd: SrcDst, proto: Option<u8>) -> R<Expr> {
        self.no_mask()?;
        let op = self.op();
        let v = self.port_value()?;
        self.last = Some(Last::Port(sd, proto));
        Ok(both(
            negated(sd, op),
            prim(Field::SrcPort(proto), op, v, 0xffff),
            prim(Field::DstPort(proto), op, v, 0xffff),
        ))
    }

    fn icmp_type_expr(&mut self) -> R<Expr> {
        self.no_mask()?;
        let op = self.op();
        let col = self.col();
        let w = self.peek().map(str::to_string);
        let v = match w.as_deref() {
            Some(w) => match parse_num(w).or_else(|| lookup(ICMP_TYPES, w).map(u32::from)) {
                Some(v) if v <= 255 => v,
                Some(v) => {
                    return Err(ParseError {
                        column: col,
                        message: format!("ICMP type {v} is out of range (0-255)"),
                    })
                }
                None => return self.err("ICMP type number or name (e.g. echo, unreachable)"),
            },
            None => return self.err("ICMP type number or name"),
        };
        self.pos += 1;
        self.last = Some(Last::IcmpType);
        Ok(prim(Field::IcmpType, op, v, 0xff))
    }

    fn tcp_opt(&mut self) -> R<Expr> {
        let Some(f) = self.peek().and_then(|w| lookup(TCP_FLAGS, w)) else {
            return self.err("TCP flag (syn, fin, ack, rst, psh, urg)");
        };
        self.pos += 1;
        self.last = None;
        Ok(prim(Field::TcpFlags, Op::AnyBits, f as u32, 0xff))
    }

    /// After `tcp`/`udp`/`icmp`/... : a qualifier, or just the protocol test.
    fn after_proto(&mut self, p: u8) -> R<Expr> {
        let sd = match self.peek() {
            // 'tcp src port 80', 'udp src or dst port 53' (not 'tcp src host X', which is
            // 'tcp and src host X').
            Some("src") | Some("dst")
                if self.peek_at(1) == Some("port")
                    || (matches!(self.peek_at(1), Some("or" | "||" | "and" | "&&"))
                        && matches!(self.peek_at(2), Some("src" | "dst"))
                        && self.peek_at(3) == Some("port")) =>
            {
                self.srcdst()
            }
            _ => None,
        };
        match self.peek() {
            Some("port") if p == 6 || p == 17 => {
                self.pos += 1;
                self.port_expr(sd.unwrap_or(SrcDst::Or), Some(p))
            }
            Some("opt") if p == 6 => {
                self.pos += 1;
                self.tcp_opt()
            }
            Some(w) if p == 6 && lookup(TCP_FLAGS, w).is_some() => self.tcp_opt(),
            Some("win") if p == 6 => {
                self.pos += 1;
                self.field_prim(Field::TcpWin, "TCP window", 65535)
            }
            Some("type") if p == 1 => {
                self.pos += 1;
                self.icmp_type_expr()
            }
            // 'icmp echo-reply': a type name right after 'icmp' (Click's shorthand).
            Some(w) if p == 1 && lookup(ICMP_TYPES, w).is_some() => self.icmp_type_expr(),
            _ if sd.is_some() => self.err("'port'"),
            _ => {
                self.last = None;
                Ok(prim(Field::Proto, Op::Eq, p as u32, 0xff))
            }
        }
    }

    /// `[POS]` or `[POS:LEN]` (LEN 1 to 4, default 1), then an optional operator and a value.
    fn byte_test(&mut self, transp: bool) -> R<Expr> {
        self.pos += 1; // '['
        let pos = self.number("byte offset", 65535)?;
        let len = if self.eat(":") {
            self.number("byte count (1-4)", 4)?
        } else {
            1
        };
        if len == 0 {
            return self.err("byte count (1-4)");
        }
        if !self.eat("]") {
            return self.err("']'");
        }
        self.no_mask()?;
        let op = self.op();
        let max = if len == 4 {
            u32::MAX
        } else {
            (1u32 << (8 * len)) - 1
        };
        let v = self.number("value", max)?;
        self.last = None;
        let f = if transp {
            Field::TranspBytes(pos as u16, len as u8)
        } else {
            Field::IpBytes(pos as u16, len as u8)
        };
        Ok(prim(f, op, v, u32::MAX))
    }

    fn ip_rest(&mut self) -> R<Expr> {
        if self.peek() == Some("[") {
            return self.byte_test(false);
        }
        let Some(w) = self.peek().map(str::to_string) else {
            return self.err("'proto', 'vers', 'hl', 'tos', 'dscp', 'ttl', 'id', 'frag', 'unfrag', 'ect' or 'ce' after 'ip'");
        };
        self.pos += 1;
        match w.as_str() {
            "proto" => {
                self.no_mask()?;
                let op = self.op();
                let col = self.col();
                let v = match self.peek() {
                    Some(x) => match parse_num(x).or_else(|| lookup(PROTO_NAMES, x).map(u32::from))
                    {
                        Some(v) if v <= 255 => v,
                        _ => {
                            return self
                                .err("IP protocol number or name (tcp, udp, icmp, igmp, ipip)")
                        }
                    },
                    None => return self.err("IP protocol"),
                };
                let _ = col;
                self.pos += 1;
                self.last = Some(Last::Field(Field::Proto));
                Ok(prim(Field::Proto, op, v, 0xff))
            }
            "vers" => self.field_prim(Field::Vers, "IP version", 15),
            "hl" => self.field_prim(Field::Hl, "IP header length", 15),
            "tos" => self.field_prim(Field::Tos, "TOS", 255),
            "dscp" => self.field_prim(Field::Dscp, "DSCP", 63),
            "ttl" => self.field_prim(Field::Ttl, "TTL", 255),
            "id" => self.field_prim(Field::Id, "IP ID", 65535),
            "len" => self.field_prim(Field::Len, "IP length", 65535),
            "frag" => Ok(prim(Field::Frag, Op::Eq, 1, 1)),
            "unfrag" => Ok(prim(Field::Frag, Op::Eq, 0, 1)),
            "ect" => Ok(prim(Field::Ecn, Op::AnyBits, 3, 3)),
            "ce" => Ok(prim(Field::Ecn, Op::Eq, 3, 3)),
            "host" | "net" | "src" | "dst" | "port" => {
                self.pos -= 1;
                self.term()
            }
            _ => {
                self.pos -= 1;
                self.err("'proto', 'vers', 'hl', 'tos', 'dscp', 'ttl', 'id', 'frag', 'unfrag', 'ect' or 'ce' after 'ip'")
            }
        }
    }

    fn term(&mut self) -> R<Expr> {
        let col = self.col();
        let Some(w) = self.peek().map(str::to_string) else {
            return self.err("a pattern term (e.g. 'tcp', 'src host 10.0.0.1', 'dst port 80')");
        };
        if let Some(sd) = self.srcdst() {
            return match self.peek() {
                Some("host") => {
                    self.pos += 1;
                    self.addr_expr(sd, false)
                }
                Some("net") => {
                    self.pos += 1;
                    self.addr_expr(sd, true)
                }
                Some("port") => {
                    self.pos += 1;
                    self.port_expr(sd, None)
                }
                Some("tcp") | Some("udp") => {
                    let p = if self.next().as_deref() == Some("tcp") {
                        6
                    } else {
                        17
                    };
                    // 'dst tcp port 22' or, as Click also accepts, 'dst tcp ssh' / 'dst tcp 22'.
                    let _ = self.eat("port");
                    self.port_expr(sd, Some(p))
                }
                Some(x) if is_ip_like(x) => self.addr_expr(sd, false),
                Some(x) if port_by_name(x).is_some() || parse_num(x).is_some() => {
                    self.port_expr(sd, None)
                }
                _ => self.err("'host', 'net', 'port' or an address after 'src'/'dst'"),
            };
        }
        match w.as_str() {
            "true" | "-" | "any" | "all" => {
                self.pos += 1;
                self.last = None;
                Ok(Expr::True)
            }
            "false" => {
                self.pos += 1;
                self.last = None;
                Ok(Expr::False)
            }
            "host" => {
                self.pos += 1;
                self.addr_expr(SrcDst::Or, false)
            }
            "net" => {
                self.pos += 1;
                self.addr_expr(SrcDst::Or, true)
            }
            "port" => {
                self.pos += 1;
                self.port_expr(SrcDst::Or, None)
            }
            "ip" => {
                self.pos += 1;
                self.ip_rest()
            }
            "frag" => {
                self.pos += 1;
                Ok(prim(Field::Frag, Op::Eq, 1, 1))
            }
            "unfrag" => {
                self.pos += 1;
                Ok(prim(Field::Frag, Op::Eq, 0, 1))
            }
            "opt" => {
                self.pos += 1;
                self.tcp_opt()
            }
            // 'proto icmp' without 'ip' (Click accepts it).
            "proto" => self.ip_rest(),
            "transp" if self.peek_at(1) == Some("[") => {
                self.pos += 1;
                self.byte_test(true)
            }
            "[" | "&" => Err(ParseError {
                column: col,
                message:
                    "byte-offset tests (ip[POS:LEN], transp[...]) and bit masks are not supported"
                        .into(),
            }),
            "==" | "!=" | "<" | ">" | "<=" | ">=" => {
                // A comparison continuing the previous primitive: 'ttl > 5 and < 10'.
                self.continuation(col, &w)
            }
            _ => {
                if let Some(p) = lookup(PROTO_NAMES, &w) {
                    self.pos += 1;
                    return self.after_proto(p);
                }
                if lookup(TCP_FLAGS, &w).is_some() {
                    return self.tcp_opt();
                }
                if is_ip_like(&w) {
                    let sd = match self.last {
                        Some(Last::Addr(sd)) => sd,
                        _ => SrcDst::Or,
                    };
                    return self.addr_expr(sd, false);
                }
                self.continuation(col, &w)
            }
        }
    }

    /// A bare value: repeat the previous primitive with a new value.
    fn continuation(&mut self, col: usize, w: &str) -> R<Expr> {
        match self.last {
            Some(Last::Port(sd, p)) => self.port_expr(sd, p),
            Some(Last::IcmpType) => self.icmp_type_expr(),
            Some(Last::Field(f)) => {
                let (what, max) = match f {
                    Field::Vers => ("IP version", 15),
                    Field::Hl => ("IP header length", 15),
                    Field::Tos => ("TOS", 255),
                    Field::Dscp => ("DSCP", 63),
                    Field::Ttl => ("TTL", 255),
                    Field::Id => ("IP ID", 65535),
                    Field::Len => ("IP length", 65535),
                    Field::TcpWin => ("TCP window", 65535),
                    _ => ("IP protocol", 255),
                };
                if f == Field::Proto {
                    let op = self.op();
                    let v = match self.peek() {
                        Some(x) => match parse_num(x).or_else(|| lookup(PROTO_NAMES, x).map(u32::from)) {
                            Some(v) if v <= 255 => v,
                            _ => return self.err("IP protocol number or name"),
                        },
                        None => return self.err("IP protocol"),
                    };
                    self.pos += 1;
                    return Ok(prim(Field::Proto, op, v, 0xff));
                }
                self.field_prim(f, what, max)
            }
            _ if port_by_name(w).is_some() => self.port_expr(SrcDst::Or, None),
            _ => Err(ParseError {
                column: col,
                message: format!(
                    "expected a pattern term (e.g. 'tcp', 'src host 10.0.0.1', 'dst port 80', 'icmp type echo'), found '{w}'"
                ),
            }),
        }
    }
}

fn prim(field: Field, op: Op, value: u32, mask: u32) -> Expr {
    Expr::Prim(Prim {
        field,
        op,
        value,
        mask,
    })
}

/// With `!=`, `src or dst port != 53` means neither port is 53 (Click's meaning): the
/// negation of `src or dst port 53`, so the two tests are joined by `and` (and `src and dst`
/// by `or`).
fn negated(sd: SrcDst, op: Op) -> SrcDst {
    match (sd, op) {
        (SrcDst::Or, Op::Ne) => SrcDst::And,
        (SrcDst::And, Op::Ne) => SrcDst::Or,
        (x, _) => x,
    }
}

fn both(sd: SrcDst, s: Expr, d: Expr) -> Expr {
    match sd {
        SrcDst::Src => s,
        SrcDst::Dst => d,
        SrcDst::Or => Expr::Or(vec![s, d]),
        SrcDst::And => Expr::And(vec![s, d]),
    }
}

/// Parse one pattern to an expression tree.
pub fn parse_pattern(s: &str) -> Result<Expr, ParseError> {
    let uncommented = crate::conf::strip_comments(s);
    let s = uncommented.as_str();
    let toks = tokenize(s);
    if toks.is_empty() {
        return Err(ParseError {
            column: 1,
            message: "empty pattern (use '-' to match every packet)".into(),
        });
    }
    let mut p = Parser {
        toks,
        pos: 0,
        end_col: s.chars().count() + 1,
        last: None,
        depth: 0,
    };
    let e = p.expr()?;
    if p.pos < p.toks.len() {
        return p.err("'and', 'or' or end of pattern");
    }
    Ok(e)
}

/// Cost sink of an evaluation: `(instructions, packet bytes read)` per primitive tested.
pub trait EvalCost {
    fn prim(&mut self, instr: u32, bytes: u32);
}

impl EvalCost for () {
    #[inline]
    fn prim(&mut self, _instr: u32, _bytes: u32) {}
}

/// Tally of an evaluation (tests, reports).
#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub prims: u32,
    pub instr: u32,
    pub bytes: u32,
}

impl EvalCost for Tally {
    fn prim(&mut self, instr: u32, bytes: u32) {
        self.prims += 1;
        self.instr += instr;
        self.bytes += bytes;
    }
}

/// A view of the IP header fields an expression may test. `h` starts at the IP header and
/// extends to the end of the packet data.
#[inline]
fn be16(h: &[u8], o: usize) -> Option<u32> {
    Some(u16::from_be_bytes([*h.get(o)?, *h.get(o + 1)?]) as u32)
}

#[inline]
fn be32(h: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_be_bytes([
        *h.get(o)?,
        *h.get(o + 1)?,
        *h.get(o + 2)?,
        *h.get(o + 3)?,
    ]))
}

#[inline]
fn compare(op: Op, x: u32, v: u32) -> bool {
    match op {
        Op::Eq => x == v,
        Op::Ne => x != v,
        Op::Lt => x < v,
        Op::Gt => x > v,
        Op::Le => x <= v,
        Op::Ge => x >= v,
        Op::AnyBits => x & v != 0,
    }
}

impl Prim {
    /// Evaluate on the IP header `h`; records the bytes read. Truncated fields do not match.
    fn eval<C: EvalCost>(&self, h: &[u8], c: &mut C) -> bool {
        // Header facts, each read only by the fields that need it.
        let hl = || ((h.first().copied().unwrap_or(0) & 0x0f) as usize) * 4;
        let proto = h.get(9).copied().unwrap_or(0);
        let first_frag = || be16(h, 6).is_some_and(|f| f & 0x1fff == 0);
        // L4 tests: protocol (`proto_ok`), first fragment, then the field.
        let l4 = |proto_ok: bool, c: &mut C| -> bool {
            c.prim(3, 3);
            h.len() >= 20 && proto_ok && first_frag()
        };
        let x = match self.field {
            Field::Proto => {
                c.prim(3, 1);
                proto as u32
            }
            Field::SrcAddr | Field::DstAddr => {
                c.prim(3, 4);
                let off = if self.field == Field::SrcAddr { 12 } else { 16 };
                match be32(h, off) {
                    Some(a) => a,
                    None => return false,
                }
            }
            Field::SrcPort(p) | Field::DstPort(p) => {
                let ok = l4(
                    match p {
                        Some(p) => proto == p,
                        None => proto == 6 || proto == 17,
                    },
                    c,
                );
                if !ok {
                    return false;
                }
                c.prim(3, 2);
                let off = if matches!(self.field, Field::SrcPort(_)) {
                    0
                } else {
                    2
                };
                match be16(h, hl() + off) {
                    Some(v) => v,
                    None => return false,
                }
            }
            Field::Vers => {
                c.prim(3, 1);
                (h.first().copied().unwrap_or(0) >> 4) as u32
            }
            Field::Hl => {
                c.prim(3, 1);
                (h.first().copied().unwrap_or(0) & 0x0f) as u32
            }
            Field::Tos | Field::Dscp | Field::Ecn => {
                c.prim(3, 1);
                let t = h.get(1).copied().unwrap_or(0) as u32;
                match self.field {
                    Field::Tos => t,
                    Field::Dscp => t >> 2,
                    _ => t & 3,
                }
            }
            Field::Ttl => {
                c.prim(3, 1);
                h.get(8).copied().unwrap_or(0) as u32
            }
            Field::Id => {
                c.prim(3, 2);
                be16(h, 4).unwrap_or(0)
            }
            Field::Len => {
                c.prim(3, 2);
                be16(h, 2).unwrap_or(0)
            }
            Field::IpBytes(pos, len) | Field::TranspBytes(pos, len) => {
                let base = if matches!(self.field, Field::TranspBytes(..)) {
                    if !first_frag() {
                        c.prim(3, 2);
                        return false;
                    }
                    hl()
                } else {
                    0
                };
                c.prim(3, len as u32);
                let at = base + pos as usize;
                match h.get(at..at + len as usize) {
                    Some(b) => b.iter().fold(0u32, |v, &x| (v << 8) | x as u32),
                    None => return false,
                }
            }
            Field::Frag => {
                c.prim(3, 2);
                match be16(h, 6) {
                    Some(f) => (f & 0x3fff != 0) as u32,
                    None => return false,
                }
            }
            Field::TcpFlags | Field::TcpWin => {
                if !l4(proto == 6, c) {
                    return false;
                }
                c.prim(3, 2);
                let v = if self.field == Field::TcpFlags {
                    h.get(hl() + 13).map(|&b| b as u32)
                } else {
                    be16(h, hl() + 14)
                };
                match v {
                    Some(v) => v,
                    None => return false,
                }
            }
            Field::IcmpType => {
                if !l4(proto == 1, c) {
                    return false;
                }
                c.prim(3, 1);
                match h.get(hl()) {
                    Some(&t) => t as u32,
                    None => return false,
                }
            }
        };
        compare(self.op, x & self.mask, self.value)
    }
}

impl Expr {
    /// Evaluate on the IP header `h` (the slice from the IP header to the end of the packet).
    pub fn eval<C: EvalCost>(&self, h: &[u8], c: &mut C) -> bool {
        match self {
            Expr::True => true,
            Expr::False => false,
            Expr::Prim(p) => p.eval(h, c),
            Expr::Not(e) => !e.eval(h, c),
            Expr::And(v) => v.iter().all(|e| e.eval(h, c)),
            Expr::Or(v) => v.iter().any(|e| e.eval(h, c)),
            Expr::Cond(a, b, d) => {
                if a.eval(h, c) {
                    b.eval(h, c)
                } else {
                    d.eval(h, c)
                }
            }
        }
    }

    /// Evaluate without recording costs.
    pub fn matches(&self, h: &[u8]) -> bool {
        self.eval(h, &mut ())
    }

    /// Number of primitives in the tree (code-size estimates).
    pub fn size(&self) -> usize {
        match self {
            Expr::True | Expr::False => 1,
            Expr::Prim(_) => 1,
            Expr::Not(e) => 1 + e.size(),
            Expr::And(v) | Expr::Or(v) => 1 + v.iter().map(Expr::size).sum::<usize>(),
            Expr::Cond(a, b, c) => 1 + a.size() + b.size() + c.size(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Expr {
        parse_pattern(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn port_implies_tcp_or_udp_and_names_resolve() {
        assert_eq!(
            p("dst port www"),
            prim(Field::DstPort(None), Op::Eq, 80, 0xffff)
        );
        assert_eq!(p("tcp port 22"), p("tcp src or dst port ssh"));
        assert_eq!(
            p("tcp dst host 1.1.1.1 port 80"),
            p("tcp and dst host 1.1.1.1 and port 80")
        );
        assert_eq!(p("udp src port 53"), p("src udp port 53"));
        assert_eq!(
            p("src port 80 or 81"),
            Expr::Or(vec![
                prim(Field::SrcPort(None), Op::Eq, 80, 0xffff),
                prim(Field::SrcPort(None), Op::Eq, 81, 0xffff)
            ])
        );
    }

    #[test]
    fn errors_name_column_and_expectation() {
        let e = parse_pattern("src hots 1.2.3.4").unwrap_err();
        assert_eq!(e.column, 5);
        assert!(e.message.contains("expected 'host', 'net', 'port'"), "{e}");
        let e = parse_pattern("tcp and (udp").unwrap_err();
        assert_eq!(e.column, 13);
        assert!(e.message.contains("expected ')'"), "{e}");
        let e = parse_pattern("dst port 70000").unwrap_err();
        assert!(e.message.contains("out of range"), "{e}");
        let e = parse_pattern("net 10.0.0.0 mask 255.0.255.0").unwrap_err();
        assert!(e.message.contains("contiguous netmask"), "{e}");
        let e = parse_pattern("icmp type bogus").unwrap_err();
        assert!(e.message.contains("ICMP type"), "{e}");
        assert!(parse_pattern("").is_err());
        assert!(parse_pattern("ip[9] & 6 != 0")
            .unwrap_err()
            .message
            .contains("not supported"));
        assert!(parse_pattern("ip[9:5] = 1")
            .unwrap_err()
            .message
            .contains("out of range"));
        assert!(parse_pattern("ip[9 = 1")
            .unwrap_err()
            .message
            .contains("']'"));
        assert!(parse_pattern("ip[2] = 256")
            .unwrap_err()
            .message
            .contains("out of range"));
        assert!(parse_pattern("tcp or").is_err());
        assert!(
            parse_pattern("80").is_err(),
            "a bare number needs a primitive before it"
        );
    }
}
