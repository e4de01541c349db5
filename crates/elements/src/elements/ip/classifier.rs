//! `Classifier(PATTERN_1, ..., PATTERN_N)` — sends each packet to the output of the first
//! pattern it matches (Click semantics).
//!
//! A pattern is a space-separated list of clauses that must all hold; `-` matches every
//! packet. A clause is `OFFSET/VALUE` or `OFFSET/VALUE%MASK`: OFFSET is a decimal byte offset
//! into the packet data, VALUE and MASK are hex digits (two per byte; VALUE may use `?` for a
//! don't-care nibble), and the clause holds when `data[OFFSET..] & MASK == VALUE & MASK`.
//! A clause prefixed with `!` holds when the unnegated clause does not. A clause that reaches
//! past the end of the packet does not hold (so its negation does). Packets that match no
//! pattern are dropped with reason `no match`.
//!
//! Ports: 1 push input, N push outputs (one per pattern).
//!
//! Compilation: at configure time the clauses are split into tests on aligned 32-bit words
//! (offset, mask, value), each pattern becomes a chain of tests, and the chains are turned into
//! a decision tree in which a test whose outcome is already implied by the tests on the path
//! to it is skipped (e.g. `12/0806 20/0001, 12/0806 20/0002, 12/0800` tests the Ethernet type
//! once per path, as Click's Classifier optimizer does). The tree is capped at 4096 nodes; past
//! that the unoptimized chain is used.
//!
//! Costs: 4 instructions to start, 4 per word test executed, 2 at the end; a packet-data read
//! of the masked bytes of each distinct word loaded (a test on the word loaded just before
//! reads nothing new); a 2-byte meta-data read of the packet length. Pattern values and masks
//! are immediates of the compiled code (as click-fastclassifier generates), not state reads.
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;
use std::collections::HashMap;

pub const CLASS: ClassInfo = ClassInfo {
    name: "Classifier",
    summary: "send packets to the output of the first offset/value pattern they match",
    make,
};

/// A test on the aligned 32-bit word at byte `off`: `word & mask == value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Test {
    pub off: u32,
    pub mask: u32,
    pub value: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Target {
    Node(u32),
    Output(u16),
    Drop,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    pub test: Test,
    pub yes: Target,
    pub no: Target,
}

/// One clause: its word tests (all must hold) and whether it is negated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clause {
    pub tests: Vec<Test>,
    pub negated: bool,
}

/// A parsed pattern: clauses that must all hold (empty = `-`, matches everything).
pub type Pattern = Vec<Clause>;

/// Parse one pattern (`-`, or clauses).
pub fn parse_pattern(s: &str) -> Result<Pattern, String> {
    let s = s.trim();
    if s == "-" {
        return Ok(Vec::new());
    }
    if s.is_empty() {
        return Err("empty pattern (use '-' to match every packet)".into());
    }
    let mut out = Vec::new();
    for word in s.split_whitespace() {
        let (negated, body) = match word.strip_prefix('!') {
            Some(b) => (true, b),
            None => (false, word),
        };
        let (off, rest) = body
            .split_once('/')
            .ok_or_else(|| format!("expected OFFSET/VALUE in pattern clause '{word}'"))?;
        let off: u32 = off
            .parse()
            .map_err(|_| format!("expected decimal offset in clause '{word}', found '{off}'"))?;
        let (val, mask) = match rest.split_once('%') {
            Some((v, m)) => (v, Some(m)),
            None => (rest, None),
        };
        if val.is_empty() || val.len() % 2 != 0 {
            return Err(format!(
                "value in clause '{word}' must be an even number of hex digits"
            ));
        }
        if let Some(m) = mask {
            if m.len() != val.len() {
                return Err(format!(
                    "mask in clause '{word}' must have as many hex digits as the value"
                ));
            }
        }
        let nib = |c: char| -> Result<Option<u8>, String> {
            if c == '?' {
                return Ok(None);
            }
            c.to_digit(16)
                .map(|d| Some(d as u8))
                .ok_or_else(|| format!("bad hex digit '{c}' in clause '{word}'"))
        };
        let vchars: Vec<char> = val.chars().collect();
        let mchars: Option<Vec<char>> = mask.map(|m| m.chars().collect());
        // Bytes -> per-word (mask, value).
        let mut words: Vec<Test> = Vec::new();
        for i in 0..vchars.len() {
            let v = nib(vchars[i])?;
            let mut mn: u8 = if v.is_some() { 0xf } else { 0 };
            if let Some(mc) = &mchars {
                match nib(mc[i])? {
                    Some(m) => mn &= m,
                    None => return Err(format!("'?' is not allowed in the mask of '{word}'")),
                }
            }
            let vn = v.unwrap_or(0) & mn;
            let byte = off + (i / 2) as u32;
            let woff = byte & !3;
            let shift = (3 - (byte & 3)) * 8 + if i % 2 == 0 { 4 } else { 0 };
            let t = match words.iter_mut().find(|t| t.off == woff) {
                Some(t) => t,
                None => {
                    words.push(Test {
                        off: woff,
                        mask: 0,
                        value: 0,
                    });
                    words.last_mut().unwrap()
                }
            };
            t.mask |= (mn as u32) << shift;
            t.value |= (vn as u32) << shift;
        }
        words.retain(|t| t.mask != 0);
        out.push(Clause {
            tests: words,
            negated,
        });
    }
    Ok(out)
}

/// The packet word at `off` and how many bytes of it exist (short packets: missing bytes 0).
#[inline]
fn word_at(d: &[u8], off: u32) -> (u32, usize) {
    let o = off as usize;
    if o + 4 <= d.len() {
        (u32::from_be_bytes([d[o], d[o + 1], d[o + 2], d[o + 3]]), 4)
    } else {
        let mut b = [0u8; 4];
        let n = d.len().saturating_sub(o).min(4);
        if n > 0 {
            b[..n].copy_from_slice(&d[o..o + n]);
        }
        (u32::from_be_bytes(b), n)
    }
}

/// Whether `d` holds the bytes a test needs and matches it.
#[inline]
pub fn test_holds(d: &[u8], t: &Test) -> bool {
    let (w, n) = word_at(d, t.off);
    // Bytes beyond the packet that the mask needs make the test fail.
    let need = 4 - (t.mask.trailing_zeros() / 8) as usize;
    n >= need && w & t.mask == t.value
}

/// Reference matcher: the first pattern (in order) whose clauses all hold.
pub fn match_naive(patterns: &[Pattern], d: &[u8]) -> Option<usize> {
    patterns.iter().position(|p| {
        p.iter().all(|c| {
            let all = c.tests.iter().all(|t| test_holds(d, t));
            all != c.negated
        })
    })
}

/// Compile patterns into a decision program; the root is node 0 unless the program is empty
/// (then `root` says where every packet goes).
pub struct Program {
    pub nodes: Vec<Node>,
    pub root: Target,
}

fn chain(patterns: &[Pattern]) -> Program {
    // Nodes of the unoptimized chain: pattern i's tests in order; "fail" jumps to the start of
    // pattern i+1. Build back to front so targets are known.
    let mut nodes: Vec<Node> = Vec::new();
    let mut next_pattern = Target::Drop;
    for (i, p) in patterns.iter().enumerate().rev() {
        let fail = next_pattern;
        let mut succ = Target::Output(i as u16);
        for c in p.iter().rev() {
            if c.tests.is_empty() {
                // An empty clause always holds; negated it never does.
                if c.negated {
                    succ = fail;
                }
                continue;
            }
            if !c.negated {
                for t in c.tests.iter().rev() {
                    nodes.push(Node {
                        test: *t,
                        yes: succ,
                        no: fail,
                    });
                    succ = Target::Node((nodes.len() - 1) as u32);
                }
            } else {
                // not(all tests): first failing test -> clause holds (succ); all hold -> fail.
                let mut inner = fail;
                for t in c.tests.iter().rev() {
                    nodes.push(Node {
                        test: *t,
                        yes: inner,
                        no: succ,
                    });
                    inner = Target::Node((nodes.len() - 1) as u32);
                }
                succ = inner;
            }
        }
        next_pattern = succ;
    }
    Program {
        nodes,
        root: next_pattern,
    }
}

/// Known outcome of `t` given a fact (`f` had result `r`), if implied.
fn implied(f: &Test, r: bool, t: &Test) -> Option<bool> {
    if f.off != t.off {
        return None;
    }
    if r {
        // word & f.mask == f.value is known.
        let common = f.mask & t.mask;
        if f.value & common != t.value & common {
            return Some(false);
        }
        if t.mask & !f.mask == 0 {
            return Some(true);
        }
        None
    } else if f == t {
        Some(false)
    } else if t.mask & f.mask == f.mask && t.value & f.mask == f.value {
        // t is stricter than f on f's bits: f failing implies t fails.
        Some(false)
    } else {
        None
    }
}

struct Opt<'a> {
    src: &'a Program,
    out: Vec<Node>,
    memo: HashMap<(Target, Vec<(Test, bool)>), Target>,
}

impl Opt<'_> {
    fn build(&mut self, mut t: Target, facts: &mut Vec<(Test, bool)>) -> Option<Target> {
        loop {
            let Target::Node(i) = t else { return Some(t) };
            let n = self.src.nodes[i as usize];
            let known = facts.iter().find_map(|(f, r)| implied(f, *r, &n.test));
            match known {
                Some(true) => t = n.yes,
                Some(false) => t = n.no,
                None => break,
            }
        }
        let key = (t, facts.clone());
        if let Some(&r) = self.memo.get(&key) {
            return Some(r);
        }
        if self.out.len() >= 4096 {
            return None;
        }
        let Target::Node(i) = t else { unreachable!() };
        let n = self.src.nodes[i as usize];
        let idx = self.out.len();
        self.out.push(n);
        facts.push((n.test, true));
        let yes = self.build(n.yes, facts);
        facts.pop();
        facts.push((n.test, false));
        let no = self.build(n.no, facts);
        facts.pop();
        self.out[idx].yes = yes?;
        self.out[idx].no = no?;
        let r = Target::Node(idx as u32);
        self.memo.insert(key, r);
        Some(r)
    }
}

pub fn compile(patterns: &[Pattern]) -> Program {
    let c = chain(patterns);
    let mut o = Opt {
        src: &c,
        out: Vec::new(),
        memo: HashMap::new(),
    };
    match o.build(c.root, &mut Vec::new()) {
        Some(root) => {
            let nodes = o.out;
            // Renumber so the root is node 0 (it is: the first node pushed), unless terminal.
            Program { nodes, root }
        }
        None => c,
    }
}

impl Program {
    /// Run the program on `d`: the output, and the tests executed / distinct words loaded.
    #[inline]
    pub fn run(&self, d: &[u8]) -> (Option<u16>, u32, u32, u32) {
        let mut t = self.root;
        let (mut tests, mut loads, mut bytes) = (0u32, 0u32, 0u32);
        let mut last_off = u32::MAX;
        loop {
            match t {
                Target::Output(o) => return (Some(o), tests, loads, bytes),
                Target::Drop => return (None, tests, loads, bytes),
                Target::Node(i) => {
                    let n = &self.nodes[i as usize];
                    tests += 1;
                    if n.test.off != last_off {
                        last_off = n.test.off;
                        loads += 1;
                        bytes += n
                            .test
                            .mask
                            .to_be_bytes()
                            .iter()
                            .filter(|b| **b != 0)
                            .count() as u32;
                    }
                    t = if test_holds(d, &n.test) { n.yes } else { n.no };
                }
            }
        }
    }
}

pub struct Classifier {
    prog: Program,
    n: usize,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("Classifier", config, &[]);
    let pats = a.take_all_positional();
    if pats.is_empty() {
        return Err("Classifier: expected at least one pattern".into());
    }
    let mut parsed = Vec::new();
    for (i, p) in pats.iter().enumerate() {
        parsed.push(parse_pattern(p).map_err(|e| format!("Classifier: pattern {i}: {e}"))?);
    }
    Ok(Box::new(Classifier {
        prog: compile(&parsed),
        n: parsed.len(),
    }))
}

impl Element for Classifier {
    fn ports(&self) -> Ports {
        Ports::push(1, self.n)
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.read_meta(2);
        let (out, tests, _loads, bytes) = self.prog.run(p.data());
        cx.instr(4 + 4 * tests + 2);
        if bytes > 0 {
            cx.read_pkt(bytes);
        }
        match out {
            Some(o) => cx.emit(o as usize, p),
            None => cx.drop_packet(p, "no match"),
        }
    }
    fn code_size(&self) -> u32 {
        24 + 6 * self.prog.nodes.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pats(s: &[&str]) -> Vec<Pattern> {
        s.iter().map(|p| parse_pattern(p).unwrap()).collect()
    }

    fn eth(ty: u16, op: u16) -> Vec<u8> {
        let mut d = vec![0u8; 42];
        d[12..14].copy_from_slice(&ty.to_be_bytes());
        d[20..22].copy_from_slice(&op.to_be_bytes());
        d
    }

    #[test]
    fn router_patterns_and_shared_tests() {
        let p = pats(&["12/0806 20/0001", "12/0806 20/0002", "12/0800", "-"]);
        let prog = compile(&p);
        assert_eq!(prog.run(&eth(0x0806, 1)).0, Some(0));
        assert_eq!(prog.run(&eth(0x0806, 2)).0, Some(1));
        assert_eq!(prog.run(&eth(0x0800, 0)).0, Some(2));
        assert_eq!(prog.run(&eth(0x86dd, 0)).0, Some(3));
        // IP packets: the Ethernet type word is loaded once and tested at most twice.
        let (_, tests, loads, bytes) = prog.run(&eth(0x0800, 0));
        assert!(
            tests <= 2 && loads == 1 && bytes == 2,
            "{tests} {loads} {bytes}"
        );
        // ARP replies never re-test 12/0806 after it held.
        let (_, tests, ..) = prog.run(&eth(0x0806, 2));
        assert_eq!(tests, 3);
    }

    #[test]
    fn masks_wildcards_negation_and_short_packets() {
        let p = pats(&["0/4?", "!12/0800 0/00%f0", "14/45%ff"]);
        assert_eq!(match_naive(&p, &[0x45, 0]), Some(0));
        let prog = compile(&p);
        assert_eq!(prog.run(&[0x45, 0]).0, Some(0));
        assert_eq!(prog.run(&[0x05; 20]).0, Some(1));
        let mut d = eth(0x0800, 0);
        d[0] = 0x10;
        d[14] = 0x45;
        assert_eq!(prog.run(&d).0, Some(2));
        d[14] = 0x46;
        assert_eq!(prog.run(&d).0, None);
        // Short packet: the clause fails, its negation holds.
        let q = compile(&pats(&["30/ff", "!30/ff"]));
        assert_eq!(q.run(&[0u8; 10]).0, Some(1));
        assert!(parse_pattern("12/080").is_err());
        assert!(parse_pattern("x/08").is_err());
        assert!(parse_pattern("12/0800%ff").is_err());
        assert!(parse_pattern("12/08zz").is_err());
    }

    fn arb_clause() -> impl Strategy<Value = String> {
        (
            any::<bool>(),
            0u32..12,
            proptest::collection::vec(
                (
                    0u8..16,
                    prop_oneof![Just(None), (0u8..16).prop_map(Some)],
                    0u8..16,
                ),
                1..4,
            ),
            any::<bool>(),
        )
            .prop_map(|(neg, off, bytes, with_mask)| {
                let mut v = String::new();
                let mut m = String::new();
                for (hi, lo, mk) in bytes {
                    v.push(std::char::from_digit(hi as u32 % 4, 16).unwrap());
                    match lo {
                        Some(l) => v.push(std::char::from_digit(l as u32 % 3, 16).unwrap()),
                        None => v.push('?'),
                    }
                    m.push(std::char::from_digit(mk as u32 | 0x3, 16).unwrap());
                    m.push(std::char::from_digit(mk as u32, 16).unwrap());
                }
                let mut s = format!("{}{}/{}", if neg { "!" } else { "" }, off, v);
                if with_mask {
                    s.push('%');
                    s.push_str(&m);
                }
                s
            })
    }

    fn arb_pattern() -> impl Strategy<Value = String> {
        prop_oneof![
            1 => Just("-".to_string()),
            8 => proptest::collection::vec(arb_clause(), 1..4).prop_map(|c| c.join(" ")),
        ]
    }

    /// Evaluate pattern strings nibble by nibble on the packet bytes (no word compilation).
    fn match_text(ps: &[String], d: &[u8]) -> Option<usize> {
        ps.iter().position(|p| {
            p == "-"
                || p.split_whitespace().all(|c| {
                    let (neg, c) = match c.strip_prefix('!') {
                        Some(r) => (true, r),
                        None => (false, c),
                    };
                    let (off, rest) = c.split_once('/').unwrap();
                    let off: usize = off.parse().unwrap();
                    let (v, m) = rest.split_once('%').unwrap_or((rest, ""));
                    let (v, m): (Vec<char>, Vec<char>) = (v.chars().collect(), m.chars().collect());
                    let mut holds = true;
                    for i in 0..v.len() {
                        let mask = if m.is_empty() {
                            0xf
                        } else {
                            m[i].to_digit(16).unwrap() as u8
                        };
                        let mask = if v[i] == '?' { 0 } else { mask };
                        if mask == 0 {
                            continue;
                        }
                        let want = v[i].to_digit(16).unwrap() as u8;
                        let Some(b) = d.get(off + i / 2) else {
                            holds = false;
                            break;
                        };
                        let nib = if i % 2 == 0 { b >> 4 } else { b & 0xf };
                        if nib & mask != want & mask {
                            holds = false;
                            break;
                        }
                    }
                    holds != neg
                })
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        #[test]
        fn compiled_matches_brute_force(ps in proptest::collection::vec(arb_pattern(), 1..6),
                                        pkts in proptest::collection::vec(proptest::collection::vec(0u8..4, 0..18), 24)) {
            let parsed: Vec<Pattern> = ps.iter().map(|p| parse_pattern(p).unwrap()).collect();
            let prog = compile(&parsed);
            for d in &pkts {
                // Independent reference straight from the pattern text.
                prop_assert_eq!(match_naive(&parsed, d), match_text(&ps, d), "patterns {:?} packet {:?}", ps, d);
                // Bytes drawn from 0..4 so that random patterns match often.
                prop_assert_eq!(prog.run(d).0.map(|o| o as usize), match_naive(&parsed, d), "patterns {:?} packet {:?}", ps, d);
            }
        }
    }
}
