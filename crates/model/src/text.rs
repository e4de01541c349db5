//! Text from files, made safe to print.
use std::borrow::Cow;

/// `s` with every control character but newline and tab (C0, DEL and C1) written as `\xNN`
/// (`\u{NNNN}` above 0xff cannot be a control), so a name or value quoted from a file cannot
/// move the cursor, recolour or retitle the user's terminal. Borrowed when there is nothing to
/// escape. The Python front applies the same rule to every message it prints (`pktflow._ui`).
pub fn escape_controls(s: &str) -> Cow<'_, str> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if bad(c) {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_sequences_and_keeps_plain_text() {
        assert!(matches!(
            escape_controls("plain ünïcode\tand\nlines"),
            Cow::Borrowed(_)
        ));
        assert_eq!(escape_controls("\x1b[31mred\x07"), "\\x1b[31mred\\x07");
        assert_eq!(escape_controls("a\rb\u{9b}c\x7f"), "a\\x0db\\x9bc\\x7f");
    }
}
