//! Click data strings for packet contents (InfiniteSource/RatedSource DATA): double-quoted
//! text with C escapes (`\n`, `\t`, `\r`, `\0`, `\\`, `\"`, `\'`, `\xHH`), and Click's
//! `\<hex bytes>` form (hex digits, spaces allowed between them), inside or outside quotes.
//! Unquoted text is taken as is (trimmed); single quotes keep their contents literally.

/// Decode a DATA argument to bytes; the error says where it went wrong.
pub fn parse_data(s: &str) -> Result<Vec<u8>, String> {
    let s = s.trim();
    let cs: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_dq = false;
    let mut in_sq = false;
    let mut buf = [0u8; 4];
    while i < cs.len() {
        let c = cs[i];
        if in_sq {
            if c == '\'' {
                in_sq = false;
            } else {
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
            }
            i += 1;
            continue;
        }
        match c {
            '"' => {
                in_dq = !in_dq;
                i += 1;
            }
            '\'' if !in_dq => {
                in_sq = true;
                i += 1;
            }
            '\\' if cs.get(i + 1) == Some(&'<') => {
                let start = i;
                i += 2;
                let mut digits = String::new();
                loop {
                    match cs.get(i) {
                        None => {
                            return Err(format!("unterminated '\\<' at character {}", start + 1))
                        }
                        Some('>') => {
                            i += 1;
                            break;
                        }
                        Some(d) if d.is_ascii_hexdigit() => digits.push(*d),
                        Some(d) if d.is_whitespace() => {}
                        Some(d) => {
                            return Err(format!(
                                "bad hex digit '{d}' in '\\<...>' at character {}",
                                i + 1
                            ))
                        }
                    }
                    i += 1;
                }
                if digits.len() & 1 == 1 {
                    return Err(format!(
                        "odd number of hex digits in '\\<...>' at character {}",
                        start + 1
                    ));
                }
                for k in (0..digits.len()).step_by(2) {
                    out.push(u8::from_str_radix(&digits[k..k + 2], 16).expect("hex checked"));
                }
            }
            '\\' if in_dq => {
                let e = cs.get(i + 1).copied();
                i += 2;
                match e {
                    Some('n') => out.push(b'\n'),
                    Some('t') => out.push(b'\t'),
                    Some('r') => out.push(b'\r'),
                    Some('0') => out.push(0),
                    Some('x') => {
                        let h: String = cs[i.min(cs.len())..(i + 2).min(cs.len())].iter().collect();
                        let v = u8::from_str_radix(&h, 16)
                            .map_err(|_| format!("bad '\\x' escape at character {}", i - 1))?;
                        out.push(v);
                        i += 2;
                    }
                    Some(o) => out.extend_from_slice(o.encode_utf8(&mut buf).as_bytes()),
                    None => return Err("a backslash ends the data string".into()),
                }
            }
            _ => {
                out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                i += 1;
            }
        }
    }
    if in_dq {
        return Err("unterminated double quote in data string".into());
    }
    if in_sq {
        return Err("unterminated single quote in data string".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        assert_eq!(parse_data("\\<00 01 ff>").unwrap(), vec![0, 1, 0xff]);
        assert_eq!(parse_data("\"a\\n\\<4142>b\"").unwrap(), b"a\nABb".to_vec());
        assert_eq!(parse_data("hello").unwrap(), b"hello".to_vec());
        assert_eq!(parse_data("'x\\y'").unwrap(), b"x\\y".to_vec());
        assert_eq!(parse_data("\"\\x41\\\"\"").unwrap(), b"A\"".to_vec());
        assert!(parse_data("\\<0>").unwrap_err().contains("odd"));
        assert!(parse_data("\\<zz>").unwrap_err().contains("bad hex"));
        assert!(parse_data("\\<00").unwrap_err().contains("unterminated"));
        assert!(parse_data("\"abc").unwrap_err().contains("unterminated"));
    }
}
