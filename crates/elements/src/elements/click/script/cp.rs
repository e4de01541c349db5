//! Click's conventions for the text a Script handles, written from the behaviour Click 2.1
//! documents and shows (lib/confparse.cc, lib/args.cc, lib/string.cc, lib/timestamp.cc read as
//! documentation; no code copied): words separated by spaces with quotes and comments, one
//! layer of quotes removed or added, integers with 0x/0/0b prefixes, reals as C's strtod reads
//! them, Booleans, and how Click prints a real (`%.12g`) and a timestamp.
//!
//! Text is handled as bytes (Click's strings are bytes); results become Rust strings with any
//! invalid UTF-8 replaced.

pub fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// C's isspace in the "C" locale.
pub fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Past a `//` or `/* */` comment starting at `i`.
fn skip_comment(s: &[u8], mut i: usize) -> usize {
    if s[i + 1] == b'/' {
        i += 2;
        while i + 1 < s.len() && s[i] != b'\n' && s[i] != b'\r' {
            i += 1;
        }
        if i + 1 < s.len() && s[i] == b'\r' && s[i + 1] == b'\n' {
            i += 1;
        }
        (i + 1).min(s.len())
    } else {
        i += 2;
        while i + 2 < s.len() && (s[i] != b'*' || s[i + 1] != b'/') {
            i += 1;
        }
        (i + 2).min(s.len())
    }
}

fn is_comment_at(s: &[u8], i: usize) -> bool {
    s[i] == b'/' && i + 1 < s.len() && (s[i + 1] == b'/' || s[i + 1] == b'*')
}

/// Past a backslash sequence at `i` (a `\<...>` hex string as a whole).
fn skip_backslash(s: &[u8], mut i: usize) -> usize {
    if i + 1 >= s.len() {
        return i + 1;
    }
    if s[i + 1] == b'<' {
        i += 2;
        while i < s.len() {
            if s[i] == b'>' {
                return i + 1;
            } else if is_comment_at(s, i) {
                i = skip_comment(s, i);
            } else {
                i += 1;
            }
        }
        i
    } else if s[i + 1] == b'\r' && i + 2 < s.len() && s[i + 2] == b'\n' {
        i + 3
    } else {
        i + 2
    }
}

/// Past a double-quoted string starting at `i` (to the end when unterminated).
fn skip_double_quote(s: &[u8], mut i: usize) -> usize {
    i += 1;
    while i < s.len() {
        if s[i] == b'\\' {
            i = skip_backslash(s, i);
        } else if s[i] == b'"' {
            return i + 1;
        } else {
            i += 1;
        }
    }
    s.len()
}

fn skip_single_quote(s: &[u8], i: usize) -> usize {
    match s[i + 1..].iter().position(|&c| c == b'\'') {
        Some(p) => i + 1 + p + 1,
        None => s.len(),
    }
}

/// Past spaces and comments.
pub fn skip_comment_space(s: &[u8], mut i: usize) -> usize {
    while i < s.len() {
        if is_space(s[i]) {
            i += 1;
        } else if is_comment_at(s, i) {
            i = skip_comment(s, i);
        } else {
            break;
        }
    }
    i
}

fn skip_spacevec_item(s: &[u8], mut i: usize) -> usize {
    while i < s.len() {
        match s[i] {
            b'/' if is_comment_at(s, i) => return i,
            b'"' => i = skip_double_quote(s, i),
            b'\'' => i = skip_single_quote(s, i),
            b'\\' if i + 1 < s.len() && s[i + 1] == b'<' => i = skip_backslash(s, i),
            c if is_space(c) => return i,
            _ => i += 1,
        }
    }
    i
}

/// Split off the first space-separated word (quotes keep spaces inside a word): the word and
/// the rest, spaces and comments around them removed.
pub fn shift(s: &[u8]) -> (&[u8], &[u8]) {
    let a = skip_comment_space(s, 0);
    let b = skip_spacevec_item(s, a);
    let c = skip_comment_space(s, b);
    (&s[a..b], &s[c..])
}

/// All the words.
pub fn words(s: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    let mut i = skip_comment_space(s, 0);
    while i < s.len() {
        let j = skip_spacevec_item(s, i);
        out.push(&s[i..j]);
        i = skip_comment_space(s, j);
    }
    out
}

/// Leading and trailing space removed, each comment (with the space around it) one space.
pub fn uncomment(s: &[u8]) -> Vec<u8> {
    uncomment_to(s, 0, false).0
}

/// The arguments of a configuration string: split at commas outside quotes, each uncommented;
/// an empty last argument is dropped.
pub fn argvec(s: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < s.len() {
        let (a, end) = uncomment_to(s, pos, true);
        pos = end + 1;
        if !a.is_empty() || end < s.len() {
            out.push(a);
        }
    }
    out
}

/// [`uncomment`] from `start`, stopping at a comma when `at_comma`; also returns where it
/// stopped.
fn uncomment_to(s: &[u8], start: usize, at_comma: bool) -> (Vec<u8>, usize) {
    let mut i = skip_comment_space(s, start);
    let (mut left, mut right) = (i, i);
    let mut closed = false;
    let mut out = Vec::new();
    while i < s.len() {
        if is_space(s[i]) {
            i += 1;
        } else if is_comment_at(s, i) {
            i = skip_comment(s, i);
            closed = true;
        } else if at_comma && s[i] == b',' {
            break;
        } else {
            if closed {
                out.extend_from_slice(&s[left..right]);
                out.push(b' ');
                left = i;
                closed = false;
            }
            i = match s[i] {
                b'\'' => skip_single_quote(s, i),
                b'"' => skip_double_quote(s, i),
                b'\\' if i + 1 < s.len() && s[i + 1] == b'<' => skip_backslash(s, i),
                _ => i + 1,
            };
            right = i;
        }
    }
    out.extend_from_slice(&s[left..right.max(left)]);
    (out, i)
}

fn hex(c: u8) -> Option<u32> {
    (c as char).to_digit(16)
}

/// One backslash escape at `i` appended to `out`; returns the position after it.
fn backslash(s: &[u8], i: usize, out: &mut Vec<u8>) -> usize {
    if i + 1 == s.len() {
        out.push(b'\\');
        return s.len();
    }
    let simple = |c: u8| match c {
        b'a' => Some(7),
        b'b' => Some(8),
        b'f' => Some(12),
        b'n' => Some(b'\n'),
        b'r' => Some(b'\r'),
        b't' => Some(b'\t'),
        b'v' => Some(11),
        _ => None,
    };
    match s[i + 1] {
        b'\r' => {
            if i + 2 < s.len() && s[i + 2] == b'\n' {
                i + 3
            } else {
                i + 2
            }
        }
        b'\n' => i + 2,
        c if simple(c).is_some() => {
            out.push(simple(c).unwrap());
            i + 2
        }
        b'0'..=b'7' => {
            let (mut v, mut j) = (0u32, i + 1);
            while j < s.len() && (b'0'..=b'7').contains(&s[j]) && j < i + 4 {
                v = v * 8 + (s[j] - b'0') as u32;
                j += 1;
            }
            out.push(v as u8);
            j
        }
        b'x' => {
            let (mut v, mut j) = (0u32, i + 2);
            while j < s.len() {
                match hex(s[j]) {
                    Some(d) => v = v.wrapping_mul(16).wrapping_add(d),
                    None => break,
                }
                j += 1;
            }
            out.push(v as u8);
            j
        }
        b'<' => {
            let (mut v, mut d, mut j) = (0u32, 0, i + 2);
            while j < s.len() {
                if s[j] == b'>' {
                    return j + 1;
                } else if let Some(x) = hex(s[j]) {
                    v = v * 16 + x;
                    d += 1;
                    if d == 2 {
                        out.push(v as u8);
                        v = 0;
                        d = 0;
                    }
                } else if is_comment_at(s, j) {
                    j = skip_comment(s, j);
                    continue;
                }
                j += 1;
            }
            s.len()
        }
        c => {
            out.push(c);
            i + 2
        }
    }
}

/// Remove one layer of quotes (and comments), expanding backslash escapes inside double
/// quotes and `\<hex>` outside quotes.
pub fn unquote(s: &[u8]) -> Vec<u8> {
    let x = uncomment(s);
    let mut out = Vec::with_capacity(x.len());
    let (mut start, mut quote, mut i) = (0usize, 0u8, 0usize);
    let mut changed = false;
    while i < x.len() {
        match x[i] {
            q @ (b'"' | b'\'') => {
                if quote == 0 {
                    out.extend_from_slice(&x[start..i]);
                    start = i + 1;
                    quote = q;
                    changed = true;
                } else if quote == q {
                    out.extend_from_slice(&x[start..i]);
                    start = i + 1;
                    quote = 0;
                }
            }
            b'\\' if i + 1 < x.len() && (quote == b'"' || (quote == 0 && x[i + 1] == b'<')) => {
                out.extend_from_slice(&x[start..i]);
                start = backslash(&x, i, &mut out);
                changed = true;
                i = start;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    if !changed {
        return x;
    }
    out.extend_from_slice(&x[start.min(x.len())..]);
    out
}

/// A double-quoted string that [`unquote`] turns back into `s`.
pub fn quote(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len() + 2);
    out.push(b'"');
    for &c in s {
        match c {
            b'\\' | b'"' | b'$' => out.extend_from_slice(&[b'\\', c]),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\n' => out.extend_from_slice(b"\\n"),
            c if !(32..127).contains(&c) => out.extend_from_slice(&[
                b'\\',
                b'0' + (c >> 6),
                b'0' + ((c >> 3) & 7),
                b'0' + (c & 7),
            ]),
            c => out.push(c),
        }
    }
    out.push(b'"');
    out
}

/// A word as one string: the text up to the first unquoted space must be all of `s`, and
/// not empty; its quotes are removed.
pub fn string(s: &[u8]) -> Option<Vec<u8>> {
    let mut i = 0;
    while i < s.len() {
        match s[i] {
            c if is_space(c) => return None,
            b'"' => i = skip_double_quote(s, i),
            b'\'' => i = skip_single_quote(s, i),
            b'\\' if i + 1 < s.len() && s[i + 1] == b'<' => i = skip_backslash(s, i),
            _ => i += 1,
        }
    }
    (!s.is_empty()).then(|| unquote(s))
}

/// An integer as Click reads one: optional sign (`-` only when signed), `0x`/`0b`/`0`
/// prefixes for hexadecimal, binary and octal, single underscores between digits. The whole
/// text must be the number and it must fit: magnitude and sign are returned.
fn int_parts(s: &[u8], signed: bool) -> Option<(bool, u128)> {
    let mut i = 0;
    let neg = signed && s.first() == Some(&b'-');
    if s.first()
        .is_some_and(|&c| (signed && c == b'-') || c == b'+')
    {
        i = 1;
    }
    let base: u32 = if i + 2 < s.len() && s[i] == b'0' && (s[i + 1] | 0x20) == b'x' {
        i += 2;
        16
    } else if i + 2 < s.len() && s[i] == b'0' && (s[i + 1] | 0x20) == b'b' {
        i += 2;
        2
    } else if i < s.len() && s[i] == b'0' {
        8
    } else {
        10
    };
    let (mut v, mut any, mut last_digit) = (0u128, false, false);
    for &c in &s[i..] {
        if c == b'_' && last_digit {
            last_digit = false;
            continue;
        }
        let d = (c as char).to_digit(base)?;
        v = v.saturating_mul(base as u128).saturating_add(d as u128);
        any = true;
        last_digit = true;
    }
    (any && last_digit).then_some((neg, v))
}

pub fn int_i64(s: &[u8]) -> Option<i64> {
    let (neg, v) = int_parts(s, true)?;
    if neg {
        (v <= 1u128 << 63).then(|| (v as i128).wrapping_neg() as i64)
    } else {
        i64::try_from(v).ok()
    }
}

pub fn int_u64(s: &[u8]) -> Option<u64> {
    let (_, v) = int_parts(s, false)?;
    u64::try_from(v).ok()
}

pub fn int_i32(s: &[u8]) -> Option<i32> {
    int_i64(s).and_then(|v| i32::try_from(v).ok())
}

pub fn int_u32(s: &[u8]) -> Option<u32> {
    int_u64(s).and_then(|v| u32::try_from(v).ok())
}

/// A real as C's strtod reads all of `s` (no leading space, nothing after the number), and
/// refused when out of range (`1e400`) or underflowing to zero (`1e-400`).
pub fn double(s: &[u8]) -> Option<f64> {
    let t = std::str::from_utf8(s).ok()?;
    if t.is_empty() || is_space(s[0]) {
        return None;
    }
    let (neg, body) = match t.as_bytes()[0] {
        b'-' => (true, &t[1..]),
        b'+' => (false, &t[1..]),
        _ => (false, t),
    };
    let lower = body.to_ascii_lowercase();
    let v = if lower == "inf" || lower == "infinity" {
        return Some(if neg {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        });
    } else if lower == "nan" {
        return Some(if neg { -f64::NAN } else { f64::NAN });
    } else if let Some(h) = lower.strip_prefix("0x") {
        hex_float(h)?
    } else {
        // Rust reads the same decimal forms as strtod (digits, point, exponent), but also
        // words strtod reads differently ("infinity" forms are handled above).
        if !body.starts_with(|c: char| c.is_ascii_digit() || c == '.')
            || !body
                .bytes()
                .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
        {
            return None;
        }
        body.parse::<f64>().ok()?
    };
    if v.is_infinite() {
        return None;
    }
    if v == 0.0
        && body
            .bytes()
            .take_while(|&c| c != b'e' && c != b'E')
            .any(|c| (b'1'..=b'9').contains(&c))
    {
        return None;
    }
    Some(if neg { -v } else { v })
}

fn hex_float(h: &str) -> Option<f64> {
    let (mant, exp) = match h.find('p') {
        Some(p) => (&h[..p], h[p + 1..].parse::<i32>().ok()?),
        None => (h, 0),
    };
    let (ip, fp) = mant.split_once('.').unwrap_or((mant, ""));
    if ip.is_empty() && fp.is_empty() {
        return None;
    }
    let mut v = 0f64;
    for c in ip.chars() {
        v = v * 16.0 + c.to_digit(16)? as f64;
    }
    let mut scale = 1.0 / 16.0;
    for c in fp.chars() {
        v += c.to_digit(16)? as f64 * scale;
        scale /= 16.0;
    }
    Some(v * 2f64.powi(exp.clamp(-2000, 2000)))
}

/// Click's Booleans: `true`/`false`, `yes`/`no`, `1`/`0`, `t`/`f`, `y`/`n`, exactly.
pub fn boolean(s: &[u8]) -> Option<bool> {
    match s {
        b"0" | b"n" | b"f" | b"false" | b"no" => Some(false),
        b"1" | b"y" | b"t" | b"true" | b"yes" => Some(true),
        _ => None,
    }
}

pub fn unparse_bool(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

/// A real as Click prints one: C's `%.12g` (`-nan` for a NaN with its sign bit set, as glibc).
pub fn unparse_double(x: f64) -> String {
    if x.is_nan() {
        return if x.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if x.is_infinite() {
        return if x < 0.0 { "-inf" } else { "inf" }.into();
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0" } else { "0" }.into();
    }
    const P: i32 = 12;
    let e = format!("{:.*e}", (P - 1) as usize, x);
    let (mant, exp) = e.split_once('e').unwrap();
    let exp: i32 = exp.parse().unwrap();
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if (-4..P).contains(&exp) {
        trim(&format!("{:.*}", (P - 1 - exp) as usize, x))
    } else {
        format!(
            "{}e{}{:02}",
            trim(mant),
            if exp < 0 { '-' } else { '+' },
            exp.abs()
        )
    }
}

/// A timestamp as Click prints one: seconds, a point, then microseconds (6 digits) when the
/// nanoseconds are a whole number of microseconds, else nanoseconds (9 digits).
pub fn unparse_timestamp(sec: i64, nsec: u32) -> String {
    if nsec.is_multiple_of(1000) {
        format!("{sec}.{:06}", nsec / 1000)
    } else {
        format!("{sec}.{nsec:09}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_quotes_and_numbers() {
        assert_eq!(shift(b"  a \"b c\" d"), (&b"a"[..], &b"\"b c\" d"[..]));
        assert_eq!(
            words(b"a /* x */ 'b c'  d"),
            vec![&b"a"[..], b"'b c'", b"d"]
        );
        assert_eq!(
            unquote(b"\"\\n\" abc /* 123 */ '/* def */'"),
            b"\n abc /* def */"
        );
        assert_eq!(unquote(b"\\<41 42>"), b"AB");
        assert_eq!(
            unquote(quote(b"a\"b$\\\n\x01").as_slice()),
            b"a\"b$\\\n\x01"
        );
        assert_eq!(int_i64(b"0x10"), Some(16));
        assert_eq!(int_i64(b"010"), Some(8));
        assert_eq!(int_i64(b"08"), None);
        assert_eq!(int_i64(b"1_000"), Some(1000));
        assert_eq!(int_i64(b"1__0"), None);
        assert_eq!(int_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(int_i64(b"9223372036854775808"), None);
        assert_eq!(int_u64(b"-1"), None);
        assert_eq!(double(b"08"), Some(8.0));
        assert_eq!(double(b"0x10"), Some(16.0));
        assert_eq!(double(b"1e400"), None);
        assert_eq!(double(b" 1"), None);
        assert_eq!(unparse_double(1.0 / 3.0), "0.333333333333");
        assert_eq!(unparse_double(1e20), "1e+20");
        assert_eq!(unparse_double(1e-5), "1e-05");
        assert_eq!(unparse_double(1234567890123.5), "1.23456789012e+12");
        assert_eq!(unparse_double(123456789012.5), "123456789012");
        assert_eq!(
            unparse_timestamp(1700000000, 123456789),
            "1700000000.123456789"
        );
        assert_eq!(unparse_timestamp(1700000000, 5000), "1700000000.000005");
    }
}
