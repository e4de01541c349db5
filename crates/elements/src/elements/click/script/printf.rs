//! Script's `sprintf` handler: a format string and its arguments, as Click 2.1 formats them
//! (elements/standard/script.cc's sprintf handler hands each conversion to Click's own
//! formatter, lib/error.cc; both read as documentation). Conversions: `d i o u x X s %`, with
//! the flags `0 # - space +`, a field width, a precision and the size prefixes `h l ll L q`
//! (only `h` changes anything: the number is cut to 16 bits). `*` widths, `c`, `f` and
//! other conversions are syntax errors, as in Click. Where Click's formatter differs from C's
//! printf, Click is followed: a number's field width stops at 128 characters and its
//! precision at 124, `%#o` adds its `0` only when the second digit is not one, `-` with `0`
//! still pads with zeros, and `0` pads strings too.
use super::cp::{int_i64, int_u64, shift, string, unquote};

const SYNTAX: &str = "syntax error";

/// Click's formatter's buffer for one number.
const NUMBUF: usize = 128;

#[derive(Default, Clone, Copy)]
struct Flags {
    alt: bool,
    zero: bool,
    left: bool,
    space: bool,
    plus: bool,
}

fn digits(mut v: u64, base: u64, upper: bool) -> Vec<u8> {
    let set: &[u8] = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    let mut d = Vec::new();
    loop {
        d.push(set[(v % base) as usize]);
        v /= base;
        if v == 0 {
            break;
        }
    }
    d.reverse();
    d
}

/// A number's text before the field is padded (Click's number flags).
fn number(
    mag: u64,
    negative: bool,
    base: u64,
    upper: bool,
    mut f: Flags,
    precision: Option<usize>,
    width: usize,
) -> Vec<u8> {
    let mut d = digits(mag, base, upper);
    if f.alt && base == 16 && d[0] == b'0' {
        f.alt = false;
    }
    let pad_to = |d: &mut Vec<u8>, n: usize| {
        if d.len() < n {
            let mut p = vec![b'0'; n - d.len()];
            p.append(d);
            *d = p;
        }
    };
    if let Some(p) = precision {
        pad_to(&mut d, p.min(NUMBUF - 4));
    } else if f.zero {
        let mut fw = width as i64;
        if f.alt && base == 16 {
            fw -= 2;
        }
        if negative || f.plus || f.space {
            fw -= 1;
        }
        pad_to(&mut d, fw.max(0) as usize);
    }
    let mut pre: Vec<u8> = Vec::new();
    if f.alt && base == 8 && d.get(1) != Some(&b'0') {
        pre.push(b'0');
    } else if f.alt && base == 16 {
        pre.extend_from_slice(if upper { b"0X" } else { b"0x" });
    }
    let sign = if negative {
        Some(b'-')
    } else if f.plus {
        Some(b'+')
    } else if f.space {
        Some(b' ')
    } else {
        None
    };
    let mut out: Vec<u8> = sign.into_iter().collect();
    out.extend(pre);
    out.extend(d);
    out
}

/// Format `args` (a format word, then one word per conversion). `max` bounds the result.
pub fn sprintf(args: &[u8], max: usize) -> Result<Vec<u8>, String> {
    let (fw, mut rest) = shift(args);
    let format = unquote(fw);
    let n = format.len();
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = format[i..].iter().position(|&c| c == b'%') {
        let pct = i + p;
        out.extend_from_slice(&format[i..pct]);
        let mut j = pct + 1;
        let mut f = Flags::default();
        while j < n {
            match format[j] {
                b'0' => f.zero = true,
                b'#' => f.alt = true,
                b'-' => f.left = true,
                b' ' => f.space = true,
                b'+' => f.plus = true,
                _ => break,
            }
            j += 1;
        }
        // `*` takes its width from an argument in Click, but the `*` is then read as the
        // conversion, which no conversion matches: a syntax error either way.
        let mut width = 0usize;
        while j < n && format[j].is_ascii_digit() {
            width = width
                .saturating_mul(10)
                .saturating_add((format[j] - b'0') as usize);
            j += 1;
        }
        let mut precision = None;
        if j < n && format[j] == b'.' {
            j += 1;
            if j < n && format[j].is_ascii_digit() {
                let mut p = 0usize;
                while j < n && format[j].is_ascii_digit() {
                    p = p
                        .saturating_mul(10)
                        .saturating_add((format[j] - b'0') as usize);
                    j += 1;
                }
                precision = Some(p);
            }
        }
        let mut short = false;
        while j < n && matches!(format[j], b'h' | b'l' | b'L' | b'q') {
            short = format[j] == b'h';
            j += 1;
        }
        let conv = format.get(j).copied();
        let mut arg = || {
            let (w, r) = shift(rest);
            rest = r;
            w
        };
        let text = match conv {
            Some(c @ (b'o' | b'x' | b'X' | b'u')) => {
                let mut v = int_u64(arg()).ok_or(SYNTAX)?;
                if short {
                    v = v as u16 as u64;
                }
                let base = match c {
                    b'o' => 8,
                    b'u' => 10,
                    _ => 16,
                };
                width = width.min(NUMBUF);
                number(v, false, base, c == b'X', f, precision, width)
            }
            Some(b'd' | b'i') => {
                let mut v = int_i64(arg()).ok_or(SYNTAX)?;
                if short {
                    v = v as i16 as i64;
                }
                width = width.min(NUMBUF);
                number(v.unsigned_abs(), v < 0, 10, false, f, precision, width)
            }
            Some(b'%') => b"%".to_vec(),
            Some(b's') => {
                let mut s = string(arg()).ok_or(SYNTAX)?;
                if let Some(z) = s.iter().position(|&c| c == 0) {
                    s.truncate(z);
                }
                if let Some(p) = precision {
                    s.truncate(p);
                }
                s
            }
            _ => return Err(SYNTAX.into()),
        };
        let field = width.max(text.len());
        if out.len() + field > max {
            return Err(format!(
                "sprintf: the result would be longer than the limit of {max} bytes"
            ));
        }
        let pad = field - text.len();
        if f.left {
            out.extend_from_slice(&text);
            out.resize(out.len() + pad, b' ');
        } else {
            out.resize(out.len() + pad, if f.zero { b'0' } else { b' ' });
            out.extend_from_slice(&text);
        }
        i = j + 1;
    }
    if !rest.is_empty() {
        return Err(SYNTAX.into());
    }
    out.extend_from_slice(&format[i..]);
    if out.len() > max {
        return Err(format!(
            "sprintf: the result would be longer than the limit of {max} bytes"
        ));
    }
    Ok(out)
}
