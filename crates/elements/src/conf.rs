//! Configuration-string parsing shared by all elements, following Click's conventions
//! (`click.5` / the Click element documentation): arguments are separated by commas at the top
//! level (not inside quotes, parentheses, brackets, braces or `\<hex>` blocks); an argument
//! whose first word is all capitals is a keyword argument (`INTERFACES 10.0.0.1/8`).
use std::path::PathBuf;

/// Blank out Click comments (`// ...` to the end of the line, `/* ... */`) in a configuration
/// string, outside double- and single-quoted strings; inside `\<...>` hex blocks they are
/// removed too (Click's own example configurations annotate hex packet data this way). Each
/// comment character becomes a space (newlines are kept), so columns stay where they were and
/// a comment still separates words.
pub fn strip_comments(s: &str) -> String {
    let b = s.as_bytes();
    let mut out: Vec<u8> = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'"' | b'\'') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    if b[i] == b'\\' && q == b'"' {
                        i += 1;
                    }
                    i += 1;
                }
                i += 1;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    out[i] = b' ';
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                let start = i;
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    i += 1;
                }
                i = (i + 2).min(b.len());
                for (k, o) in out[start..i].iter_mut().enumerate() {
                    if b[start + k] != b'\n' {
                        *o = b' ';
                    }
                }
            }
            _ => i += 1,
        }
    }
    // Only ASCII bytes were replaced by ASCII spaces (whole comments, multi-byte characters
    // inside them included), so the result is still UTF-8.
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// Split a configuration string into its top-level comma-separated arguments (trimmed).
/// Comments are removed first ([`strip_comments`]). An empty (or all-blank) configuration has
/// no arguments.
pub fn split_args(s: &str) -> Vec<String> {
    let stripped = strip_comments(s);
    let s = stripped.as_str();
    let mut args = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\'' => {
                cur.push(c);
                while let Some(d) = chars.next() {
                    cur.push(d);
                    if d == '\\' && c == '"' {
                        if let Some(e) = chars.next() {
                            cur.push(e);
                        }
                    } else if d == c {
                        break;
                    }
                }
            }
            '\\' if chars.peek() == Some(&'<') => {
                cur.push(c);
                for d in chars.by_ref() {
                    cur.push(d);
                    if d == '>' {
                        break;
                    }
                }
            }
            '(' | '[' | '{' => {
                depth += 1;
                cur.push(c);
            }
            ')' | ']' | '}' => {
                depth -= 1;
                cur.push(c);
            }
            ',' if depth <= 0 => {
                args.push(cur.trim().to_string());
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() || !args.is_empty() {
        args.push(cur.trim().to_string());
    }
    args
}

/// Split an argument into whitespace-separated words (quotes keep spaces).
pub fn split_words(s: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '"' {
            cur.push(c);
            while let Some(d) = chars.next() {
                cur.push(d);
                if d == '\\' {
                    if let Some(e) = chars.next() {
                        cur.push(e);
                    }
                } else if d == '"' {
                    break;
                }
            }
        } else if c.is_whitespace() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

fn is_keyword(w: &str) -> bool {
    !w.is_empty()
        && w.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && w.chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Parsed arguments: positional ones in order, keyword ones by name. Elements take what they
/// understand and call [`Args::finish`], which rejects anything left over.
#[derive(Debug, Clone, Default)]
pub struct Args {
    pub class: String,
    positional: Vec<String>,
    next_pos: usize,
    keywords: Vec<(String, String, bool)>,
}

impl Args {
    /// Parse `config`; `keywords` lists the keyword names the class accepts (others stay
    /// positional, which lets `Classifier` patterns like `12/0800` through untouched).
    pub fn parse(class: &str, config: &str, keywords: &[&str]) -> Args {
        let mut a = Args {
            class: class.to_string(),
            ..Default::default()
        };
        for arg in split_args(config) {
            let mut it = arg.splitn(2, char::is_whitespace);
            let first = it.next().unwrap_or("");
            if is_keyword(first) && keywords.contains(&first) {
                a.keywords.push((
                    first.to_string(),
                    it.next().unwrap_or("").trim().to_string(),
                    false,
                ));
            } else {
                a.positional.push(arg);
            }
        }
        a
    }

    pub fn len_positional(&self) -> usize {
        self.positional.len()
    }

    /// All positional arguments (for classes whose arguments are a list, e.g. Classifier).
    pub fn take_all_positional(&mut self) -> Vec<String> {
        let v = self.positional[self.next_pos..].to_vec();
        self.next_pos = self.positional.len();
        v
    }

    /// Next positional argument, or an error saying what was expected.
    pub fn required(&mut self, what: &str) -> Result<String, String> {
        self.optional()
            .ok_or_else(|| format!("{}: missing argument {}", self.class, what))
    }

    pub fn optional(&mut self) -> Option<String> {
        let v = self.positional.get(self.next_pos).cloned();
        if v.is_some() {
            self.next_pos += 1;
        }
        v
    }

    /// Keyword argument `name`, if given (the last one wins, as in Click).
    pub fn keyword(&mut self, name: &str) -> Option<String> {
        let mut found = None;
        for (k, v, used) in self.keywords.iter_mut() {
            if k == name {
                *used = true;
                found = Some(v.clone());
            }
        }
        found
    }

    /// Keyword if given, else the next positional argument (Click allows both for many args).
    pub fn keyword_or_positional(&mut self, name: &str) -> Option<String> {
        self.keyword(name).or_else(|| self.optional())
    }

    /// Reject leftover arguments.
    pub fn finish(&self) -> Result<(), String> {
        if self.next_pos < self.positional.len() {
            return Err(format!(
                "{}: too many arguments: unexpected '{}'",
                self.class, self.positional[self.next_pos]
            ));
        }
        Ok(())
    }
}

/// Parse a dotted-quad IPv4 address, or an `AddressInfo` name (`intern`, `intern:ip`).
pub fn parse_ip(s: &str) -> Result<[u8; 4], String> {
    let s = s.trim();
    if let Some(ip) = dotted_quad(s) {
        return Ok(ip);
    }
    if let Some(e) = lookup_name(s, &["ip", "addr"]) {
        if let Some(ip) = e.ip.or(e.net.map(|n| n.0)) {
            return Ok(ip);
        }
    }
    Err(format!("expected IP address, found '{s}'"))
}

fn dotted_quad(s: &str) -> Option<[u8; 4]> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut ip = [0u8; 4];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        ip[i] = p.parse::<u8>().ok()?;
    }
    Some(ip)
}

/// One `AddressInfo` entry: a name and the addresses it stands for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AddrEntry {
    pub name: String,
    pub ip: Option<[u8; 4]>,
    /// Network (address with host bits as written, prefix length).
    pub net: Option<([u8; 4], u8)>,
    pub eth: Option<[u8; 6]>,
}

thread_local! {
    static ADDRESS_INFO: std::cell::RefCell<Vec<AddrEntry>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Run `f` with `table` as the `AddressInfo` names that address arguments may use (the
/// runtime installs the configuration's AddressInfo entries while it configures elements).
pub fn with_address_info<R>(table: Vec<AddrEntry>, f: impl FnOnce() -> R) -> R {
    let old = ADDRESS_INFO.with(|t| std::mem::replace(&mut *t.borrow_mut(), table));
    struct Restore(Option<Vec<AddrEntry>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(v) = self.0.take() {
                ADDRESS_INFO.with(|t| *t.borrow_mut() = v);
            }
        }
    }
    let _r = Restore(Some(old));
    f()
}

/// The AddressInfo entry `s` names: `NAME` alone, or `NAME:SUFFIX` with SUFFIX one of
/// `suffixes`. Later entries of the same name win (as in Click, where a name is defined once).
pub fn lookup_name(s: &str, suffixes: &[&str]) -> Option<AddrEntry> {
    let (name, suffix) = match s.split_once(':') {
        Some((n, x)) => (n, Some(x)),
        None => (s, None),
    };
    if let Some(x) = suffix {
        if !suffixes.contains(&x) {
            return None;
        }
    }
    if name.is_empty()
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'/' || b == b'@')
        || name.bytes().next().is_some_and(|b| b.is_ascii_digit())
    {
        return None;
    }
    ADDRESS_INFO.with(|t| t.borrow().iter().rev().find(|e| e.name == name).cloned())
}

/// Parse `addr/len`, `addr/mask` or a bare address (a /32). Returns (address, prefix length);
/// the address keeps its host bits (Click's `10.0.0.1/8` names an interface and its network).
pub fn parse_prefix(s: &str) -> Result<([u8; 4], u8), String> {
    let s = s.trim();
    if dotted_quad(s).is_none() && !s.contains('/') {
        if let Some(e) = lookup_name(s, &["net", "ipnet", "ip", "addr"]) {
            let want_ip = s.ends_with(":ip") || s.ends_with(":addr");
            match (want_ip, e.net, e.ip) {
                (false, Some(n), _) => return Ok(n),
                (_, _, Some(ip)) => return Ok((ip, 32)),
                (true, Some(n), None) => return Ok((n.0, 32)),
                _ => {}
            }
        }
    }
    match s.split_once('/') {
        None => Ok((parse_ip(s)?, 32)),
        Some((a, l)) => {
            // Click accepts a shortened network address before a prefix: `0/0`, `18.26/16`.
            let ip = match dotted_quad(a) {
                Some(ip) => ip,
                None => {
                    short_network(a).ok_or_else(|| format!("expected IP prefix, found '{s}'"))?
                }
            };
            if let Ok(len) = l.parse::<u8>() {
                if len > 32 {
                    return Err(format!("prefix length {len} is over 32 in '{s}'"));
                }
                return Ok((ip, len));
            }
            let m = u32::from_be_bytes(
                parse_ip(l).map_err(|_| format!("expected IP prefix, found '{s}'"))?,
            );
            let len = m.leading_ones();
            if m.checked_shl(len).unwrap_or(0) != 0 {
                return Err(format!("netmask in '{s}' is not contiguous"));
            }
            Ok((ip, len as u8))
        }
    }
}

/// `18.26` -> 18.26.0.0 (1 to 3 dotted decimal parts), as Click reads a network before `/`.
fn short_network(a: &str) -> Option<[u8; 4]> {
    let parts: Vec<&str> = a.split('.').collect();
    if parts.is_empty() || parts.len() > 3 {
        return None;
    }
    let mut ip = [0u8; 4];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        ip[i] = p.parse::<u8>().ok()?;
    }
    Some(ip)
}

/// Network mask of a prefix length.
pub fn mask(len: u8) -> u32 {
    if len == 0 {
        0
    } else {
        u32::MAX << (32 - len as u32)
    }
}

/// Parse an Ethernet address `00:00:c0:ae:67:ef` (or with `-`), or an `AddressInfo` name
/// (`intern`, `intern:eth`).
pub fn parse_ether(s: &str) -> Result<[u8; 6], String> {
    let s = s.trim();
    if let Some(e) = lookup_name(s, &["eth", "ether"]).and_then(|e| e.eth) {
        return Ok(e);
    }
    let parts: Vec<&str> = s.split([':', '-']).collect();
    if parts.len() != 6 {
        return Err(format!("expected Ethernet address, found '{s}'"));
    }
    let mut e = [0u8; 6];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 2 {
            return Err(format!("expected Ethernet address, found '{s}'"));
        }
        e[i] = u8::from_str_radix(p, 16)
            .map_err(|_| format!("expected Ethernet address, found '{s}'"))?;
    }
    Ok(e)
}

/// Parse an unsigned integer (decimal, or 0x hex).
pub fn parse_uint(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let r = if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(h, 16)
    } else {
        s.parse::<u64>()
    };
    r.map_err(|_| format!("expected unsigned integer, found '{s}'"))
}

pub fn parse_bool(s: &str) -> Result<bool, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "1" => Ok(true),
        "false" | "no" | "0" => Ok(false),
        other => Err(format!("expected true or false, found '{other}'")),
    }
}

/// Remove surrounding double quotes and resolve backslash escapes; bare words pass through.
pub fn unquote(s: &str) -> String {
    let s = s.trim();
    if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
        let inner = &s[1..s.len() - 1];
        let mut out = String::new();
        let mut it = inner.chars();
        while let Some(c) = it.next() {
            if c == '\\' {
                match it.next() {
                    Some('n') => out.push('\n'),
                    Some('t') => out.push('\t'),
                    Some(o) => out.push(o),
                    None => {}
                }
            } else {
                out.push(c);
            }
        }
        out
    } else if s.len() >= 2 && s.starts_with('\'') && s.ends_with('\'') {
        s[1..s.len() - 1].to_string()
    } else {
        s.to_string()
    }
}

/// What elements may need from their surroundings at configuration time.
#[derive(Clone, Debug, Default)]
pub struct InitEnv {
    /// Index of the element in the graph (state object ids derive from it).
    pub index: u32,
    /// Flattened element name.
    pub name: String,
    /// Directory relative file names in configurations resolve against (the config's folder).
    pub base_dir: PathBuf,
    /// Directory output files (ToDump) are written to when their names are relative.
    pub out_dir: PathBuf,
    /// Other elements' (name, class, config), for elements that refer to one another
    /// (IPRewriter naming an IPRewriterPatterns pattern, ARPQuerier, ...).
    /// Shared by every element of a graph (one allocation per graph, not per element).
    pub peers: std::sync::Arc<Vec<(String, String, String)>>,
    /// Seed of pseudo-random elements: the configuration's `RandomSeed`, else 1.
    pub seed: u64,
    /// State shared by all elements of one router (one allocation per graph).
    pub shared: std::sync::Arc<Shared>,
}

/// State Click keeps per process and pktflow per router: shared by every element of a graph.
#[derive(Debug)]
pub struct Shared {
    /// The IP id of the next ICMP error: Click's ICMPError numbers its packets from one
    /// counter for all ICMPError elements, starting at 1.
    pub icmp_error_id: std::sync::atomic::AtomicU32,
    /// The rewriters' mapping tables, by element name (FTPPortMapper, ICMPRewriter and
    /// TCPRewriter's sequence-number shifts use them).
    pub rewriters:
        crate::elements::nat::shared::Registry<crate::elements::nat::shared::RewriterState>,
    /// ICMPPingRewriters' mapping tables, by element name (ICMPRewriter uses them).
    pub ping_rewriters: crate::elements::nat::shared::Registry<
        crate::elements::click::icmp_ping_rewriter::PingState,
    >,
    /// ARPTable elements' tables, by element name (ARPQuerier's TABLE keyword names one).
    pub arp_tables:
        crate::elements::nat::shared::Registry<crate::elements::ip::arp_table::ArpTableState>,
    /// The files elements read and write, as they resolve them ([`InitEnv::resolve_input`],
    /// [`InitEnv::resolve_output`]): the router refuses an output that is an input or another
    /// output (`Router::new`).
    pub files: std::sync::Mutex<Vec<FileUse>>,
}

/// A file an element reads or writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileUse {
    /// The element's index in the graph.
    pub element: u32,
    /// Whether the element writes it (ToDump) rather than reads it (FromDump, a routing table).
    pub output: bool,
    /// The name as written in the configuration.
    pub name: String,
    /// The name resolved against the configuration's folder or the output folder.
    pub path: PathBuf,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            icmp_error_id: std::sync::atomic::AtomicU32::new(1),
            rewriters: Default::default(),
            arp_tables: Default::default(),
            ping_rewriters: Default::default(),
            files: Default::default(),
        }
    }
}

impl InitEnv {
    pub fn resolve_input(&self, f: &str) -> PathBuf {
        let p = PathBuf::from(f);
        let p = if p.is_absolute() {
            p
        } else {
            self.base_dir.join(p)
        };
        self.note_file(false, f, &p);
        p
    }
    pub fn resolve_output(&self, f: &str) -> PathBuf {
        let p = PathBuf::from(f);
        let p = if p.is_absolute() {
            p
        } else {
            self.out_dir.join(p)
        };
        self.note_file(true, f, &p);
        p
    }
    fn note_file(&self, output: bool, name: &str, path: &std::path::Path) {
        let u = FileUse {
            element: self.index,
            output,
            name: name.to_string(),
            path: path.to_path_buf(),
        };
        let mut files = self.shared.files.lock().unwrap_or_else(|e| e.into_inner());
        // Copies of one graph (one router per thread) share `shared`: one entry per element.
        if !files.contains(&u) {
            files.push(u);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_respects_nesting_quotes_and_hex() {
        assert_eq!(split_args(""), Vec::<String>::new());
        assert_eq!(
            split_args("a, b(c, d), \"e,f\""),
            vec!["a", "b(c, d)", "\"e,f\""]
        );
        assert_eq!(
            split_args("12/0800 \\<45,00>, -"),
            vec!["12/0800 \\<45,00>", "-"]
        );
        assert_eq!(split_args("a,"), vec!["a", ""]);
    }

    #[test]
    fn keywords_and_positionals() {
        let mut a = Args::parse(
            "X",
            "10.0.0.1, INTERFACES 1.2.3.4/8 5.6.7.8/24, 3",
            &["INTERFACES"],
        );
        assert_eq!(a.required("addr").unwrap(), "10.0.0.1");
        assert_eq!(a.keyword("INTERFACES").unwrap(), "1.2.3.4/8 5.6.7.8/24");
        assert_eq!(a.optional().unwrap(), "3");
        assert!(a.finish().is_ok());
        let mut b = Args::parse("X", "1, 2", &[]);
        b.required("a").unwrap();
        assert!(b.finish().unwrap_err().contains("unexpected '2'"));
    }

    #[test]
    fn addresses() {
        assert_eq!(parse_ip("10.0.0.1").unwrap(), [10, 0, 0, 1]);
        assert!(parse_ip("10.0.0").is_err());
        assert!(parse_ip("10.0.0.256").is_err());
        assert_eq!(parse_prefix("10.0.0.1/8").unwrap(), ([10, 0, 0, 1], 8));
        assert_eq!(parse_prefix("18.26.4.0/255.255.255.0").unwrap().1, 24);
        assert!(parse_prefix("1.2.3.4/255.0.255.0").is_err());
        assert_eq!(
            parse_ether("00:00:c0:ae:67:ef").unwrap(),
            [0, 0, 0xc0, 0xae, 0x67, 0xef]
        );
        assert!(parse_ether("00:00:c0:ae:67").is_err());
        assert_eq!(mask(8), 0xff00_0000);
        assert_eq!(mask(0), 0);
        assert_eq!(unquote("\"a\\\"b\""), "a\"b");
    }
}
