//! Rewriter patterns (`SADDR SPORT DADDR DPORT`) and input specifications (`drop`, `pass N`,
//! `keep F R`, `pattern ... F R`), shared by IPRewriter, IPAddrRewriter and
//! IPRewriterPatterns, following Click's IPRewriter documentation.
//!
//! Source-port allocation from a range `L-H` (Click: "IPRewriter will choose a source port in
//! that range so that the resulting mappings don't conflict with any existing mappings. The
//! input packet's source port is preferred, if it is available"), as Click's IPRewriterPattern
//! does: `L-H` first tries the input packet's source port when it lies in the range, then
//! scans the range (wrapping) from a pseudo-random starting port; `L-H?` does the same without
//! the source-port preference; `L-H#` (sequential) scans from a cursor one past the last port
//! allocated, without the preference. The random starting ports come from the
//! configuration's seed (RandomSeed; runs are reproducible) and so differ from the ones
//! Click's own generator draws. A port is free when no live mapping of this
//! rewriter already uses the resulting reply flow id (same new source address, destination
//! address, destination port and protocol): a port is never reused for the same
//! (saddr', daddr', dport', proto) while its mapping lives, and may be reused for different
//! destinations, as in Click.
use crate::conf::{parse_ip, parse_uint, split_args, split_words, InitEnv};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AddrSpec {
    Keep,
    Fixed(u32),
    /// Inclusive range (IPAddrRewriter allocation).
    Range {
        lo: u32,
        hi: u32,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PortSpec {
    Keep,
    Fixed(u16),
    /// Inclusive range; `prefer_source`: try the packet's own source port first;
    /// `sequential` (`#`): scan from the cursor, else from a pseudo-random port.
    Range {
        lo: u16,
        hi: u16,
        prefer_source: bool,
        sequential: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub name: String,
    pub saddr: AddrSpec,
    pub sport: PortSpec,
    pub daddr: Option<u32>,
    pub dport: Option<u16>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputSpec {
    Drop,
    Pass(u16),
    Keep(u16, u16),
    /// Index into the rewriter's pattern list, forward and reply outputs.
    Pattern(usize, u16, u16),
}

impl InputSpec {
    pub fn max_output(&self) -> Option<u16> {
        match *self {
            InputSpec::Drop => None,
            InputSpec::Pass(o) => Some(o),
            InputSpec::Keep(f, r) | InputSpec::Pattern(_, f, r) => Some(f.max(r)),
        }
    }
}

/// (body, prefer the source port, sequential): '#' (sequential) and '?' (random) both
/// disable the source-port preference.
fn strip_mode(s: &str) -> (&str, bool, bool) {
    if let Some(r) = s.strip_suffix('#') {
        (r, false, true)
    } else if let Some(r) = s.strip_suffix('?') {
        (r, false, false)
    } else {
        (s, true, false)
    }
}

fn parse_addr_spec(s: &str, allow_range: bool) -> Result<AddrSpec, String> {
    if s == "-" {
        return Ok(AddrSpec::Keep);
    }
    let (body, _, _) = strip_mode(s);
    if let Some((a, l)) = body.split_once('/') {
        if !allow_range {
            return Err(format!("expected IP address or '-', found '{s}'"));
        }
        let a = u32::from_be_bytes(parse_ip(a)?);
        let len: u8 = l
            .parse()
            .ok()
            .filter(|&n| n <= 32)
            .ok_or_else(|| format!("bad prefix length in '{s}'"))?;
        let m = crate::conf::mask(len);
        let (lo, hi) = (a & m, (a & m) | !m);
        // Skip the network and broadcast addresses of prefixes shorter than /31.
        return Ok(if len < 31 {
            AddrSpec::Range {
                lo: lo + 1,
                hi: hi - 1,
            }
        } else {
            AddrSpec::Range { lo, hi }
        });
    }
    if let Some((a, b)) = body.split_once('-') {
        if !allow_range {
            return Err(format!(
                "address ranges are for IPAddrRewriter; expected IP address or '-', found '{s}'"
            ));
        }
        let lo = u32::from_be_bytes(parse_ip(a)?);
        let hi = u32::from_be_bytes(parse_ip(b)?);
        if lo > hi {
            return Err(format!("empty address range '{s}'"));
        }
        return Ok(AddrSpec::Range { lo, hi });
    }
    Ok(AddrSpec::Fixed(u32::from_be_bytes(parse_ip(body)?)))
}

fn parse_port(s: &str) -> Result<u16, String> {
    let v = parse_uint(s).map_err(|_| format!("expected port number, found '{s}'"))?;
    u16::try_from(v).map_err(|_| format!("port {v} is out of range (0-65535)"))
}

fn parse_sport(s: &str) -> Result<PortSpec, String> {
    if s == "-" {
        return Ok(PortSpec::Keep);
    }
    let (body, prefer_source, sequential) = strip_mode(s);
    if let Some((a, b)) = body.split_once('-') {
        let (lo, hi) = (parse_port(a)?, parse_port(b)?);
        if lo > hi || lo == 0 {
            return Err(format!(
                "bad source port range '{s}' (expected L-H with 1 <= L <= H)"
            ));
        }
        return Ok(PortSpec::Range {
            lo,
            hi,
            prefer_source,
            sequential,
        });
    }
    Ok(PortSpec::Fixed(parse_port(body)?))
}

/// Parse `SADDR SPORT DADDR DPORT` (4 words) or, for address rewriters, `SADDR DADDR`.
pub fn parse_pattern_fields(name: &str, w: &[String], addr_only: bool) -> Result<Pattern, String> {
    let (sa, sp, da, dp) = match w.len() {
        4 => (&w[0], w[1].as_str(), &w[2], w[3].as_str()),
        2 if addr_only => (&w[0], "-", &w[1], "-"),
        _ => {
            return Err(format!(
                "expected pattern '{}', found '{}'",
                if addr_only {
                    "SADDR DADDR"
                } else {
                    "SADDR SPORT DADDR DPORT"
                },
                w.join(" ")
            ))
        }
    };
    let p = Pattern {
        name: name.to_string(),
        saddr: parse_addr_spec(sa, addr_only)?,
        sport: parse_sport(sp)?,
        daddr: match parse_addr_spec(da, false)? {
            AddrSpec::Fixed(a) => Some(a),
            _ => None,
        },
        dport: if dp == "-" {
            None
        } else {
            Some(parse_port(dp)?)
        },
    };
    if addr_only && (p.sport != PortSpec::Keep || p.dport.is_some() || p.daddr.is_some()) {
        return Err(format!(
            "an IPAddrRewriter pattern rewrites source addresses only (SPORT, DADDR and DPORT must be '-'), found '{}'",
            w.join(" ")
        ));
    }
    Ok(p)
}

/// Every pattern defined by IPRewriterPatterns elements among `peers`: (name, fields).
pub fn named_patterns(env: &InitEnv) -> Vec<(String, Vec<String>)> {
    let mut v = Vec::new();
    for (_, class, config) in env.peers.iter() {
        if class != "IPRewriterPatterns" {
            continue;
        }
        for arg in split_args(config) {
            let w = split_words(&arg);
            if let Some((n, rest)) = w.split_first() {
                v.push((n.clone(), rest.to_vec()));
            }
        }
    }
    v
}

fn parse_out(s: &str, what: &str) -> Result<u16, String> {
    parse_uint(s)
        .ok()
        .and_then(|v| u16::try_from(v).ok())
        .ok_or_else(|| format!("expected {what} output port number, found '{s}'"))
}

/// Parse one INPUTSPEC; patterns it defines (inline or named) are appended to `patterns`
/// (a named pattern used twice is shared, as its port allocator is).
pub fn parse_input_spec(
    s: &str,
    env: &InitEnv,
    patterns: &mut Vec<Pattern>,
    addr_only: bool,
) -> Result<InputSpec, String> {
    let w = split_words(s);
    let kw = w.first().map(String::as_str).unwrap_or("");
    let n = w.len();
    match (kw, n) {
        ("drop" | "discard", 1) => Ok(InputSpec::Drop),
        ("pass" | "nochange", 2) => Ok(InputSpec::Pass(parse_out(&w[1], "the")?)),
        // Click: 'nochange [OUTPUT]', output 0 by default.
        ("pass" | "nochange", 1) => Ok(InputSpec::Pass(0)),
        ("keep", 3) => Ok(InputSpec::Keep(
            parse_out(&w[1], "forward")?,
            parse_out(&w[2], "reply")?,
        )),
        ("pattern", 4) => {
            let name = &w[1];
            let named = named_patterns(env);
            let Some((_, fields)) = named.iter().find(|(n, _)| n == name) else {
                let known: Vec<&str> = named.iter().map(|(n, _)| n.as_str()).collect();
                return Err(format!(
                    "no pattern named '{name}' ({})",
                    if known.is_empty() {
                        "the configuration has no IPRewriterPatterns element".to_string()
                    } else {
                        format!("IPRewriterPatterns define: {}", known.join(", "))
                    }
                ));
            };
            let idx = match patterns.iter().position(|p| p.name == *name) {
                Some(i) => i,
                None => {
                    patterns.push(parse_pattern_fields(name, fields, addr_only).map_err(
                        |e| format!("pattern '{name}': {e}"),
                    )?);
                    patterns.len() - 1
                }
            };
            Ok(InputSpec::Pattern(
                idx,
                parse_out(&w[2], "forward")?,
                parse_out(&w[3], "reply")?,
            ))
        }
        ("pattern", 5) if addr_only => {
            let p = parse_pattern_fields("", &w[1..3], true)?;
            patterns.push(p);
            Ok(InputSpec::Pattern(
                patterns.len() - 1,
                parse_out(&w[3], "forward")?,
                parse_out(&w[4], "reply")?,
            ))
        }
        ("pattern", 7) => {
            let p = parse_pattern_fields("", &w[1..5], addr_only)?;
            patterns.push(p);
            Ok(InputSpec::Pattern(
                patterns.len() - 1,
                parse_out(&w[5], "forward")?,
                parse_out(&w[6], "reply")?,
            ))
        }
        ("drop" | "discard" | "pass" | "nochange" | "keep" | "pattern", _) => Err(format!(
            "bad input spec '{s}': expected 'drop', 'pass OUTPUT', 'keep FOUTPUT ROUTPUT', 'pattern {} FOUTPUT ROUTPUT' or 'pattern NAME FOUTPUT ROUTPUT'",
            if addr_only { "SADDR DADDR" } else { "SADDR SPORT DADDR DPORT" }
        )),
        (name, 1) if env.peers.iter().any(|(n, _, _)| n == name) => Err(format!(
            "input spec '{name}' names an element: mapper elements (IPMapper) are not supported by pktflow"
        )),
        _ => Err(format!(
            "unknown input spec '{s}': expected 'drop', 'pass OUTPUT', 'keep FOUTPUT ROUTPUT' or 'pattern ...'"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(patterns: &str) -> InitEnv {
        InitEnv {
            peers: std::sync::Arc::new(vec![(
                "pats".into(),
                "IPRewriterPatterns".into(),
                patterns.into(),
            )]),
            ..Default::default()
        }
    }

    #[test]
    fn specs_parse() {
        let env = env_with("NAT 1.0.0.1 50000-65535# - -, WEB - - 10.0.0.5 80");
        let mut pats = Vec::new();
        assert_eq!(
            parse_input_spec("drop", &env, &mut pats, false),
            Ok(InputSpec::Drop)
        );
        assert_eq!(
            parse_input_spec("pass 2", &env, &mut pats, false),
            Ok(InputSpec::Pass(2))
        );
        assert_eq!(
            parse_input_spec("keep 0 1", &env, &mut pats, false),
            Ok(InputSpec::Keep(0, 1))
        );
        assert_eq!(
            parse_input_spec("pattern NAT 0 1", &env, &mut pats, false),
            Ok(InputSpec::Pattern(0, 0, 1))
        );
        assert_eq!(
            pats[0].sport,
            PortSpec::Range {
                lo: 50000,
                hi: 65535,
                prefer_source: false,
                sequential: true
            }
        );
        assert_eq!(pats[0].saddr, AddrSpec::Fixed(0x0100_0001));
        assert_eq!(
            parse_input_spec("pattern NAT 1 0", &env, &mut pats, false),
            Ok(InputSpec::Pattern(0, 1, 0)),
            "a named pattern is shared"
        );
        assert_eq!(
            parse_input_spec("pattern 2.0.0.1 1024-2047 - - 0 1", &env, &mut pats, false),
            Ok(InputSpec::Pattern(1, 0, 1))
        );
        let e = parse_input_spec("pattern NOPE 0 1", &env, &mut pats, false).unwrap_err();
        assert!(
            e.contains("no pattern named 'NOPE'") && e.contains("NAT, WEB"),
            "{e}"
        );
        let e =
            parse_input_spec("pattern 1.0.0.1 70000 - - 0 1", &env, &mut pats, false).unwrap_err();
        assert!(e.contains("out of range"), "{e}");
        let e = parse_input_spec("pats", &env, &mut pats, false).unwrap_err();
        assert!(e.contains("not supported"), "{e}");
        let e = parse_input_spec("keep 0", &env, &mut pats, false).unwrap_err();
        assert!(e.contains("bad input spec"), "{e}");
    }

    #[test]
    fn addr_patterns() {
        let env = InitEnv::default();
        let mut pats = Vec::new();
        assert_eq!(
            parse_input_spec("pattern 1.0.0.1 - 0 1", &env, &mut pats, true),
            Ok(InputSpec::Pattern(0, 0, 1))
        );
        assert_eq!(pats[0].saddr, AddrSpec::Fixed(0x0100_0001));
        parse_input_spec("pattern 1.0.0.0/30 - 0 1", &env, &mut pats, true).unwrap();
        assert_eq!(
            pats[1].saddr,
            AddrSpec::Range {
                lo: 0x0100_0001,
                hi: 0x0100_0002
            }
        );
        let e =
            parse_input_spec("pattern 1.0.0.1 - 2.0.0.2 - 0 1", &env, &mut pats, true).unwrap_err();
        assert!(e.contains("source addresses only"), "{e}");
    }
}
