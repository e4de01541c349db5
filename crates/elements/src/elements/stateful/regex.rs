//! A small backtracking regular-expression matcher, case-insensitive, for the Classifier.
//!
//! The thesis's Classifier runs PCRE (a recursive backtracking matcher) with the HTTP pattern
//! of the Linux layer-7 packet classifier (l7-filter), whose patterns are matched
//! case-insensitively anywhere in the reassembled payload. This matcher supports what those
//! patterns use: literals, `.`, classes `[...]` with ranges and negation, escapes `\.` `\xHH`
//! `\d` `\s` `\w`, groups `(...)` with alternation `|`, the quantifiers `*` `+` `?`, and the
//! anchors `^` and `$`. It is a recursive backtracking search, like PCRE's interpreter, and
//! counts its steps (node visits) and its deepest recursion so the element can charge
//! instructions and stack traffic. A step budget bounds pathological patterns: a search that
//! exhausts it reports no match (and says so).

/// The HTTP pattern of the l7-filter protocol definitions (`http.pat`).
pub const L7_HTTP: &str = r"http/(0\.9|1\.0|1\.1) [1-5][0-9][0-9] [\x09-\x0d -~]*(connection:|content-type:|content-length:|date:)|post [\x09-\x0d -~]* http/[01]\.[019]";

#[derive(Clone, Debug)]
enum Node {
    /// One byte in the set (case folded when the pattern was compiled).
    Set(Box<[bool; 256]>),
    Group(Vec<Vec<Node>>),
    Repeat(Box<Node>, u32, u32),
    Start,
    End,
}

/// A compiled pattern.
#[derive(Clone, Debug)]
pub struct Regex {
    alts: Vec<Vec<Node>>,
}

/// The result of one search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Search {
    pub matched: bool,
    /// Node visits (the work of the search).
    pub steps: u64,
    /// Deepest recursion reached (stack frames live at once).
    pub max_depth: u32,
    /// The step budget ran out (the search reports no match).
    pub exhausted: bool,
}

struct St {
    steps: u64,
    budget: u64,
    depth: u32,
    max_depth: u32,
    exhausted: bool,
}

fn fold(c: u8) -> u8 {
    c.to_ascii_lowercase()
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl Parser<'_> {
    fn err(&self, what: &str) -> String {
        format!("regular expression: {what} at character {}", self.i + 1)
    }
    fn alts(&mut self, depth: u32) -> Result<Vec<Vec<Node>>, String> {
        if depth > 64 {
            return Err(self.err("groups nested more than 64 deep"));
        }
        let mut alts = vec![Vec::new()];
        while self.i < self.s.len() {
            let c = self.s[self.i];
            match c {
                b'|' => {
                    self.i += 1;
                    alts.push(Vec::new());
                    continue;
                }
                b')' => break,
                _ => {}
            }
            let atom = self.atom(depth)?;
            let atom = self.quant(atom)?;
            alts.last_mut().expect("non-empty").push(atom);
        }
        Ok(alts)
    }
    fn quant(&mut self, atom: Node) -> Result<Node, String> {
        let Some(&q) = self.s.get(self.i) else {
            return Ok(atom);
        };
        let (lo, hi) = match q {
            b'*' => (0, u32::MAX),
            b'+' => (1, u32::MAX),
            b'?' => (0, 1),
            _ => return Ok(atom),
        };
        if matches!(atom, Node::Start | Node::End) {
            return Err(self.err("quantifier after an anchor"));
        }
        self.i += 1;
        if matches!(self.s.get(self.i), Some(b'*' | b'+' | b'?')) {
            return Err(self.err("repeated quantifier"));
        }
        Ok(Node::Repeat(Box::new(atom), lo, hi))
    }
    fn hex(&mut self) -> Result<u8, String> {
        let h = self
            .s
            .get(self.i..self.i + 2)
            .ok_or_else(|| self.err("\\x needs two hex digits"))?;
        let v = std::str::from_utf8(h)
            .ok()
            .and_then(|h| u8::from_str_radix(h, 16).ok())
            .ok_or_else(|| self.err("\\x needs two hex digits"))?;
        self.i += 2;
        Ok(v)
    }
    /// An escape after the backslash: a byte, or a class.
    fn escape(&mut self) -> Result<Result<u8, [bool; 256]>, String> {
        let c = *self
            .s
            .get(self.i)
            .ok_or_else(|| self.err("pattern ends with a backslash"))?;
        self.i += 1;
        let class = |f: fn(u8) -> bool| {
            let mut s = [false; 256];
            for b in 0..=255u8 {
                s[b as usize] = f(b);
            }
            s
        };
        Ok(match c {
            b'x' => Ok(self.hex()?),
            b'n' => Ok(b'\n'),
            b'r' => Ok(b'\r'),
            b't' => Ok(b'\t'),
            b'd' => Err(class(|b| b.is_ascii_digit())),
            b's' => Err(class(|b| b.is_ascii_whitespace() || b == 0x0b)),
            b'w' => Err(class(|b| b.is_ascii_alphanumeric() || b == b'_')),
            c if c.is_ascii_alphanumeric() => return Err(self.err("unsupported escape")),
            c => Ok(c),
        })
    }
    fn atom(&mut self, depth: u32) -> Result<Node, String> {
        let c = self.s[self.i];
        self.i += 1;
        let single = |b: u8| {
            let mut s = [false; 256];
            s[fold(b) as usize] = true;
            s[b.to_ascii_uppercase() as usize] = true;
            Node::Set(Box::new(s))
        };
        Ok(match c {
            b'(' => {
                let alts = self.alts(depth + 1)?;
                if self.s.get(self.i) != Some(&b')') {
                    return Err(self.err("unclosed group"));
                }
                self.i += 1;
                Node::Group(alts)
            }
            b'^' => Node::Start,
            b'$' => Node::End,
            b'.' => Node::Set(Box::new([true; 256])),
            b'*' | b'+' | b'?' => return Err(self.err("quantifier with nothing to repeat")),
            b'\\' => match self.escape()? {
                Ok(b) => single(b),
                Err(set) => Node::Set(Box::new(set)),
            },
            b'[' => {
                let mut set = [false; 256];
                let neg = self.s.get(self.i) == Some(&b'^');
                if neg {
                    self.i += 1;
                }
                let mut first = true;
                loop {
                    let Some(&c) = self.s.get(self.i) else {
                        return Err(self.err("unclosed class"));
                    };
                    if c == b']' && !first {
                        self.i += 1;
                        break;
                    }
                    first = false;
                    self.i += 1;
                    let lo = if c == b'\\' {
                        match self.escape()? {
                            Ok(b) => b,
                            Err(s) => {
                                for (d, x) in set.iter_mut().zip(s.iter()) {
                                    *d |= *x;
                                }
                                continue;
                            }
                        }
                    } else {
                        c
                    };
                    let mut hi = lo;
                    if self.s.get(self.i) == Some(&b'-')
                        && self.s.get(self.i + 1).is_some_and(|&n| n != b']')
                    {
                        self.i += 1;
                        let c2 = self.s[self.i];
                        self.i += 1;
                        hi = if c2 == b'\\' {
                            self.escape()?
                                .map_err(|_| self.err("class as a range end"))?
                        } else {
                            c2
                        };
                        if hi < lo {
                            return Err(self.err("range out of order"));
                        }
                    }
                    for b in lo..=hi {
                        set[b as usize] = true;
                        set[fold(b) as usize] = true;
                        set[b.to_ascii_uppercase() as usize] = true;
                    }
                }
                if neg {
                    for x in set.iter_mut() {
                        *x = !*x;
                    }
                }
                Node::Set(Box::new(set))
            }
            b => single(b),
        })
    }
}

impl Regex {
    /// Compile `pattern` (case-insensitive). The error says what is wrong and where.
    pub fn new(pattern: &str) -> Result<Regex, String> {
        if pattern.len() > 4096 {
            return Err("regular expression longer than 4096 characters".into());
        }
        let mut p = Parser {
            s: pattern.as_bytes(),
            i: 0,
        };
        let alts = p.alts(0)?;
        if p.i < p.s.len() {
            return Err(p.err("unbalanced ')'"));
        }
        Ok(Regex { alts })
    }

    /// Search `text` for a match starting anywhere, within `budget` steps.
    pub fn search(&self, text: &[u8], budget: u64) -> Search {
        let mut st = St {
            steps: 0,
            budget,
            depth: 0,
            max_depth: 0,
            exhausted: false,
        };
        let mut matched = false;
        for start in 0..=text.len() {
            if self.alt(&self.alts, start, text, &mut st, &mut |_, _| true) {
                matched = true;
                break;
            }
            if st.exhausted {
                break;
            }
        }
        Search {
            matched,
            steps: st.steps,
            max_depth: st.max_depth,
            exhausted: st.exhausted,
        }
    }

    fn alt(
        &self,
        alts: &[Vec<Node>],
        pos: usize,
        t: &[u8],
        st: &mut St,
        k: &mut dyn FnMut(usize, &mut St) -> bool,
    ) -> bool {
        for a in alts {
            if self.seq(a, pos, t, st, k) {
                return true;
            }
            if st.exhausted {
                return false;
            }
        }
        false
    }

    fn seq(
        &self,
        seq: &[Node],
        pos: usize,
        t: &[u8],
        st: &mut St,
        k: &mut dyn FnMut(usize, &mut St) -> bool,
    ) -> bool {
        st.steps += 1;
        if st.steps > st.budget {
            st.exhausted = true;
            return false;
        }
        let Some((first, rest)) = seq.split_first() else {
            return k(pos, st);
        };
        match first {
            Node::Set(s) => {
                pos < t.len() && s[t[pos] as usize] && self.seq(rest, pos + 1, t, st, k)
            }
            Node::Start => pos == 0 && self.seq(rest, pos, t, st, k),
            Node::End => pos == t.len() && self.seq(rest, pos, t, st, k),
            Node::Group(alts) => {
                st.depth += 1;
                st.max_depth = st.max_depth.max(st.depth);
                let r = self.alt(alts, pos, t, st, &mut |p, st| self.seq(rest, p, t, st, k));
                st.depth -= 1;
                r
            }
            Node::Repeat(node, lo, hi) => {
                st.depth += 1;
                st.max_depth = st.max_depth.max(st.depth);
                let r = self.rep(node, *lo, *hi, 0, rest, pos, t, st, k);
                st.depth -= 1;
                r
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn rep(
        &self,
        node: &Node,
        lo: u32,
        hi: u32,
        count: u32,
        rest: &[Node],
        pos: usize,
        t: &[u8],
        st: &mut St,
        k: &mut dyn FnMut(usize, &mut St) -> bool,
    ) -> bool {
        // Greedy: one more repetition first (it must consume input), then the rest.
        if count < hi {
            // Fast path for a single-byte set: iterate instead of recursing per repetition,
            // counting one step per byte consumed (what PCRE's compiled character loops do).
            if let Node::Set(s) = node {
                let mut n = 0usize;
                while count as usize + n < hi as usize
                    && pos + n < t.len()
                    && s[t[pos + n] as usize]
                {
                    n += 1;
                }
                st.steps += n as u64;
                if st.steps > st.budget {
                    st.exhausted = true;
                    return false;
                }
                let mut m = n;
                loop {
                    if count as usize + m >= lo as usize && self.seq(rest, pos + m, t, st, k) {
                        return true;
                    }
                    if st.exhausted || m == 0 {
                        return false;
                    }
                    m -= 1;
                }
            }
            let one = std::slice::from_ref(node);
            if self.seq(one, pos, t, st, &mut |p, st| {
                p != pos && self.rep(node, lo, hi, count + 1, rest, p, t, st, k)
            }) {
                return true;
            }
            if st.exhausted {
                return false;
            }
        }
        count >= lo && self.seq(rest, pos, t, st, k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn m(p: &str, t: &str) -> bool {
        Regex::new(p)
            .unwrap()
            .search(t.as_bytes(), 1_000_000)
            .matched
    }

    #[test]
    fn basics() {
        assert!(m("abc", "xxabcxx"));
        assert!(!m("^abc", "xabc"));
        assert!(m("a(b|c)+d$", "zzabcbcd"));
        assert!(!m("a(b|c)+d$", "zzad"));
        assert!(m("[0-9][0-9]?x", "a7x"));
        assert!(m(r"\x41b", "ab"));
        assert!(m("[^a-z]", "abc1"));
        assert!(!m("[^a-z]", "abc"));
        assert!(m("a.*b", "a123b"));
        assert!(m("HeLLo", "hello"));
    }

    #[test]
    fn l7_http_pattern() {
        let re = Regex::new(L7_HTTP).unwrap();
        let reply = b"HTTP/1.1 200 OK\r\nServer: x\r\nContent-Type: text/html\r\n\r\n";
        assert!(re.search(reply, 1_000_000).matched);
        assert!(re.search(b"POST /form HTTP/1.0\r\n", 1_000_000).matched);
        assert!(
            !re.search(b"HTTP/1.1 200 OK\r\nServer: x\r\n", 1_000_000)
                .matched
        );
        assert!(!re.search(b"SSH-2.0-OpenSSH_4.3\r\n", 1_000_000).matched);
        // A tab inside the printable run still matches; a NUL breaks it.
        assert!(re.search(b"http/1.0 404 \tx date:", 1_000_000).matched);
        assert!(!re.search(b"http/1.0 404 \0x date:", 1_000_000).matched);
    }

    #[test]
    fn budget_stops_search_and_reports_it() {
        let re = Regex::new("(a*)*b").unwrap();
        let s = re.search(&[b'a'; 40], 10_000);
        assert!(!s.matched && s.exhausted && s.steps > 10_000 - 100);
    }

    #[test]
    fn bad_patterns_are_errors() {
        for p in ["(ab", "ab)", "*a", "[a-", r"\x4", "a**", "[z-a]", r"\q"] {
            assert!(Regex::new(p).is_err(), "{p}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_patterns_and_texts_do_not_panic(p in "[ab()|*+?.\\[\\]^$\\\\x0-9-]{0,16}", t in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(re) = Regex::new(&p) {
                let s = re.search(&t, 20_000);
                prop_assert!(s.steps <= 20_000 + 64 || s.exhausted);
            }
        }
    }
}
