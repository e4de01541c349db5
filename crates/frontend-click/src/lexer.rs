//! Lexer for the Click configuration language (`click.5`, "Lexical issues").
//!
//! Tokens are produced on demand: configuration strings do not follow the usual lexical rules
//! (they run from a `(` to the next unbalanced `)`, across quotes, comments and backslash
//! escapes), so the parser asks for one with [`Lexer::config_string`] right after it has seen
//! the opening parenthesis of a configuration.
//!
//! Skipped between tokens: whitespace, `// ...` and `/* ... */` comments, and lines whose first
//! non-blank character is `#` (C preprocessor line markers, which Click also skips).

/// A token kind. Identifiers include element names, class names, keywords and port numbers
/// (Click identifiers are letters, digits, `_`, `@` and `/`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    Ident(String),
    /// `$name` or `${name}` (name without the `$` and braces).
    Variable(String),
    /// `->`
    Arrow,
    /// `=>`
    DoubleArrow,
    /// `::`
    ColonColon,
    Semi,
    Comma,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    /// `|`
    Bar,
    /// `||`
    BarBar,
    /// `...`
    Ellipsis,
    /// A character that starts no Click token.
    Other(char),
    Eof,
}

impl Tok {
    /// How the token reads in an error message ("found ...").
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) => format!("'{}'", s),
            Tok::Variable(s) => format!("'${}'", s),
            Tok::Arrow => "'->'".into(),
            Tok::DoubleArrow => "'=>'".into(),
            Tok::ColonColon => "'::'".into(),
            Tok::Semi => "';'".into(),
            Tok::Comma => "','".into(),
            Tok::LParen => "'('".into(),
            Tok::RParen => "')'".into(),
            Tok::LBracket => "'['".into(),
            Tok::RBracket => "']'".into(),
            Tok::LBrace => "'{'".into(),
            Tok::RBrace => "'}'".into(),
            Tok::Bar => "'|'".into(),
            Tok::BarBar => "'||'".into(),
            Tok::Ellipsis => "'...'".into(),
            Tok::Other(c) => format!("'{}'", c.escape_default()),
            Tok::Eof => "end of file".into(),
        }
    }
}

/// A position in the text: byte offset plus 1-based line and column (columns count characters).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Pos {
    pub offset: usize,
    pub line: u32,
    pub col: u32,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub pos: Pos,
    /// Byte offset just after the token.
    pub end: usize,
}

/// A lexical error: position and message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    pub pos: Pos,
    pub message: String,
}

pub struct Lexer<'a> {
    src: &'a str,
    bytes: &'a [u8],
    pos: Pos,
    /// True while only blanks have been seen since the start of the current line.
    at_line_start: bool,
    /// Line markers met so far, in order (see [`LineMark`]).
    pub marks: Vec<LineMark>,
}

/// A C preprocessor line marker `# LINE "FILE"` (or `#line LINE "FILE"`): physical line
/// `phys_line` of the text is line `line` of `file` (`None`: the file being parsed).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LineMark {
    pub phys_line: u32,
    pub line: u32,
    pub file: Option<String>,
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'@' || b == b'/'
}

fn is_var_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Self {
        Lexer {
            src,
            bytes: src.as_bytes(),
            pos: Pos {
                offset: 0,
                line: 1,
                col: 1,
            },
            at_line_start: true,
            marks: Vec::new(),
        }
    }

    pub fn pos(&self) -> Pos {
        self.pos
    }

    pub fn src(&self) -> &'a str {
        self.src
    }

    fn peek_byte(&self, ahead: usize) -> Option<u8> {
        self.bytes.get(self.pos.offset + ahead).copied()
    }

    /// Advance over one byte, keeping line and column (in characters) up to date.
    fn bump(&mut self) {
        let b = self.bytes[self.pos.offset];
        self.pos.offset += 1;
        if b == b'\n' {
            self.pos.line += 1;
            self.pos.col = 1;
            self.at_line_start = true;
        } else if b & 0xC0 != 0x80 {
            // Count a column at the first byte of each UTF-8 character only.
            self.pos.col += 1;
        }
    }

    fn bump_n(&mut self, n: usize) {
        for _ in 0..n {
            self.bump();
        }
    }

    /// Move to `offset` (used by the parser to resume after a configuration string).
    fn advance_to(&mut self, offset: usize) {
        while self.pos.offset < offset {
            self.bump();
        }
    }

    /// Skip whitespace, comments and `#` lines.
    fn skip_trivia(&mut self) -> Result<(), LexError> {
        loop {
            match self.peek_byte(0) {
                Some(b'\n') => self.bump(),
                Some(b) if b.is_ascii_whitespace() => self.bump(),
                Some(b'#') if self.at_line_start => self.line_directive()?,
                Some(b'/') if self.peek_byte(1) == Some(b'/') => {
                    while let Some(b) = self.peek_byte(0) {
                        if b == b'\n' {
                            break;
                        }
                        self.bump();
                    }
                }
                Some(b'/') if self.peek_byte(1) == Some(b'*') => {
                    let start = self.pos;
                    self.bump_n(2);
                    loop {
                        match self.peek_byte(0) {
                            None => {
                                return Err(LexError {
                                    pos: start,
                                    message: "unterminated comment: '/*' without a matching '*/'"
                                        .into(),
                                })
                            }
                            Some(b'*') if self.peek_byte(1) == Some(b'/') => {
                                self.bump_n(2);
                                break;
                            }
                            Some(_) => self.bump(),
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    /// A line starting with `#`: a `#!` line at the very start is skipped; otherwise it must
    /// be a preprocessor line marker `# LINE ["FILE"]` or `#line LINE ["FILE"]`, as Click
    /// accepts, which renumbers the following lines.
    fn line_directive(&mut self) -> Result<(), LexError> {
        let start = self.pos;
        let line_end = self.src[start.offset..]
            .find('\n')
            .map_or(self.src.len(), |i| start.offset + i);
        let text = &self.src[start.offset..line_end];
        let skip_line = |l: &mut Self| l.advance_to(line_end);
        if start.offset == 0 && text.starts_with("#!") {
            skip_line(self);
            return Ok(());
        }
        let mut rest = text[1..].trim_start_matches([' ', '\t']);
        if let Some(r) = rest.strip_prefix("line") {
            if r.starts_with([' ', '\t']) {
                rest = r.trim_start_matches([' ', '\t']);
            }
        }
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        // Line numbers start at 1: a marker naming line 0 (or one too large) is not a marker.
        let line: Option<u32> = rest[..digits]
            .parse()
            .ok()
            .filter(|&l| (1..u32::MAX / 2).contains(&l));
        let Some(line) = line else {
            return Err(LexError {
                pos: start,
                message: "unknown preprocessor directive: expected a line marker '# LINE \"FILE\"'"
                    .into(),
            });
        };
        let after = rest[digits..].trim_start_matches([' ', '\t']);
        let file = after
            .strip_prefix('"')
            .and_then(|f| f.find('"').map(|e| f[..e].to_string()));
        skip_line(self);
        self.marks.push(LineMark {
            phys_line: start.line + 1,
            line,
            file: file.filter(|f| !f.is_empty()),
        });
        Ok(())
    }

    /// The next token.
    pub fn next_token(&mut self) -> Result<Token, LexError> {
        self.skip_trivia()?;
        let start = self.pos;
        self.at_line_start = false;
        let Some(b) = self.peek_byte(0) else {
            return Ok(Token {
                tok: Tok::Eof,
                pos: start,
                end: start.offset,
            });
        };
        let two = |l: &Self, c: u8| l.peek_byte(1) == Some(c);
        let tok = match b {
            b'-' if two(self, b'>') => {
                self.bump_n(2);
                Tok::Arrow
            }
            b'=' if two(self, b'>') => {
                self.bump_n(2);
                Tok::DoubleArrow
            }
            b':' if two(self, b':') => {
                self.bump_n(2);
                Tok::ColonColon
            }
            b'|' if two(self, b'|') => {
                self.bump_n(2);
                Tok::BarBar
            }
            b'.' if two(self, b'.') && self.peek_byte(2) == Some(b'.') => {
                self.bump_n(3);
                Tok::Ellipsis
            }
            b'|' => {
                self.bump();
                Tok::Bar
            }
            b';' => {
                self.bump();
                Tok::Semi
            }
            b',' => {
                self.bump();
                Tok::Comma
            }
            b'(' => {
                self.bump();
                Tok::LParen
            }
            b')' => {
                self.bump();
                Tok::RParen
            }
            b'[' => {
                self.bump();
                Tok::LBracket
            }
            b']' => {
                self.bump();
                Tok::RBracket
            }
            b'{' => {
                self.bump();
                Tok::LBrace
            }
            b'}' => {
                self.bump();
                Tok::RBrace
            }
            b'$' => return self.variable(start),
            b'/' => {
                // Identifiers may not begin with a slash; comments were skipped above.
                self.bump();
                Tok::Other('/')
            }
            b if is_ident_byte(b) => {
                while let Some(c) = self.peek_byte(0) {
                    if !is_ident_byte(c) {
                        break;
                    }
                    // `//` and `/*` end an identifier (they start comments).
                    if c == b'/' && matches!(self.peek_byte(1), Some(b'/') | Some(b'*')) {
                        break;
                    }
                    self.bump();
                }
                let text = &self.src[start.offset..self.pos.offset];
                if text.ends_with('/') {
                    return Err(LexError {
                        pos: start,
                        message: format!("identifier '{}' ends with '/'", text),
                    });
                }
                Tok::Ident(text.to_string())
            }
            _ => {
                let c = self.src[start.offset..]
                    .chars()
                    .next()
                    .unwrap_or('\u{FFFD}');
                self.bump_n(c.len_utf8());
                Tok::Other(c)
            }
        };
        Ok(Token {
            tok,
            pos: start,
            end: self.pos.offset,
        })
    }

    fn variable(&mut self, start: Pos) -> Result<Token, LexError> {
        self.bump(); // '$'
        let name = if self.peek_byte(0) == Some(b'{') {
            self.bump();
            let s = self.pos.offset;
            while self.peek_byte(0).is_some_and(is_var_byte) {
                self.bump();
            }
            let name = self.src[s..self.pos.offset].to_string();
            if self.peek_byte(0) != Some(b'}') || name.is_empty() {
                return Err(LexError {
                    pos: start,
                    message: "malformed variable: expected '${NAME}'".into(),
                });
            }
            self.bump();
            name
        } else {
            let s = self.pos.offset;
            while self.peek_byte(0).is_some_and(is_var_byte) {
                self.bump();
            }
            let name = self.src[s..self.pos.offset].to_string();
            if name.is_empty() {
                return Err(LexError {
                    pos: start,
                    message: "malformed variable: expected a name after '$'".into(),
                });
            }
            name
        };
        Ok(Token {
            tok: Tok::Variable(name),
            pos: start,
            end: self.pos.offset,
        })
    }

    /// Read a configuration string starting at byte `from` (just after its opening `(` at
    /// `open`) up to the next unbalanced `)`, which is consumed. Nested parentheses, quoted
    /// strings, comments, backslash escapes and `\<hex>` blocks are skipped over, so a `)`
    /// inside them does not end the string. Returns the raw text (untrimmed) and the position
    /// of its first character.
    pub fn config_string(&mut self, open: Pos, from: usize) -> Result<(String, Pos), LexError> {
        self.advance_to(from);
        let text_start = self.pos;
        let mut depth = 0usize;
        let unterminated = |what: &str, at: Pos| LexError {
            pos: at,
            message: what.to_string(),
        };
        loop {
            let Some(b) = self.peek_byte(0) else {
                return Err(unterminated(
                    "unterminated configuration string: '(' without a matching ')'",
                    open,
                ));
            };
            match b {
                b'(' => {
                    depth += 1;
                    self.bump();
                }
                b')' => {
                    if depth == 0 {
                        let text = self.src[text_start.offset..self.pos.offset].to_string();
                        self.bump();
                        self.at_line_start = false;
                        return Ok((text, text_start));
                    }
                    depth -= 1;
                    self.bump();
                }
                b'"' | b'\'' => {
                    let q = b;
                    let qpos = self.pos;
                    self.bump();
                    loop {
                        match self.peek_byte(0) {
                            None => {
                                return Err(unterminated(
                                    &format!(
                                        "unterminated string: {} without a closing quote",
                                        q as char
                                    ),
                                    qpos,
                                ))
                            }
                            Some(b'\\') if q == b'"' && self.peek_byte(1).is_some() => {
                                self.bump_n(2)
                            }
                            Some(c) if c == q => {
                                self.bump();
                                break;
                            }
                            Some(_) => self.bump(),
                        }
                    }
                }
                b'\\' if self.peek_byte(1) == Some(b'<') => {
                    let hpos = self.pos;
                    self.bump_n(2);
                    loop {
                        match self.peek_byte(0) {
                            None => {
                                return Err(unterminated(
                                    "unterminated '\\<' hex block: missing '>'",
                                    hpos,
                                ))
                            }
                            Some(b'>') => {
                                self.bump();
                                break;
                            }
                            // Comments may appear inside hex blocks (Click's own examples do this).
                            Some(b'/') if self.peek_byte(1) == Some(b'/') => {
                                while self.peek_byte(0).is_some_and(|c| c != b'\n') {
                                    self.bump();
                                }
                            }
                            Some(b'/') if self.peek_byte(1) == Some(b'*') => {
                                self.skip_config_block_comment(hpos)?
                            }
                            Some(c) if c.is_ascii_hexdigit() || c.is_ascii_whitespace() => {
                                self.bump()
                            }
                            Some(_) => {
                                let c = self.src[self.pos.offset..].chars().next().unwrap_or('?');
                                return Err(LexError {
                                    pos: self.pos,
                                    message: format!(
                                        "bad character '{}' in '\\<' hex block: expected hex digits, spaces or '>'",
                                        c.escape_default()
                                    ),
                                });
                            }
                        }
                    }
                }
                b'\\' => {
                    // The backslash quotes the next character (kept in the string).
                    self.bump();
                    if self.peek_byte(0).is_some() {
                        let c = self.src[self.pos.offset..]
                            .chars()
                            .next()
                            .map_or(1, char::len_utf8);
                        self.bump_n(c);
                    }
                }
                b'/' if self.peek_byte(1) == Some(b'/') => {
                    while self.peek_byte(0).is_some_and(|c| c != b'\n') {
                        self.bump();
                    }
                }
                b'/' if self.peek_byte(1) == Some(b'*') => {
                    let cpos = self.pos;
                    self.skip_config_block_comment(cpos)?;
                }
                _ => self.bump(),
            }
        }
    }

    fn skip_config_block_comment(&mut self, start: Pos) -> Result<(), LexError> {
        self.bump_n(2);
        loop {
            match self.peek_byte(0) {
                None => {
                    return Err(LexError {
                        pos: start,
                        message: "unterminated comment: '/*' without a matching '*/'".into(),
                    })
                }
                Some(b'*') if self.peek_byte(1) == Some(b'/') => {
                    self.bump_n(2);
                    return Ok(());
                }
                Some(_) => self.bump(),
            }
        }
    }
}

/// Split a configuration string into arguments at top-level commas (outside parentheses,
/// quotes, comments and `\<...>` blocks); each argument is trimmed. An empty string has no
/// arguments.
pub fn split_args(s: &str) -> Vec<String> {
    let b = s.as_bytes();
    let mut args = Vec::new();
    let mut depth = 0usize;
    let mut start = 0usize;
    let mut i = 0usize;
    while i < b.len() {
        match b[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'"' | b'\'' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q {
                    if q == b'"' && b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            b'\\' if b.get(i + 1) == Some(&b'<') => {
                while i < b.len() && b[i] != b'>' {
                    i += 1;
                }
            }
            b'\\' => i += 1,
            b'/' if b.get(i + 1) == Some(&b'/') => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                i += 2;
                while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                    i += 1;
                }
                i += 1;
            }
            b',' if depth == 0 => {
                args.push(s[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let last = s.get(start..).unwrap_or("").trim();
    if !(args.is_empty() && last.is_empty()) {
        args.push(last.to_string());
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        let mut l = Lexer::new(s);
        let mut v = Vec::new();
        loop {
            let t = l.next_token().unwrap();
            if t.tok == Tok::Eof {
                return v;
            }
            v.push(t.tok);
        }
    }

    #[test]
    fn punctuation_and_identifiers() {
        assert_eq!(
            toks("a/b :: C@1 -> => || | ... $x ${y} [0]"),
            vec![
                Tok::Ident("a/b".into()),
                Tok::ColonColon,
                Tok::Ident("C@1".into()),
                Tok::Arrow,
                Tok::DoubleArrow,
                Tok::BarBar,
                Tok::Bar,
                Tok::Ellipsis,
                Tok::Variable("x".into()),
                Tok::Variable("y".into()),
                Tok::LBracket,
                Tok::Ident("0".into()),
                Tok::RBracket
            ]
        );
    }

    #[test]
    fn comments_end_identifiers_and_hash_lines_are_skipped() {
        // The manual's example: `an/identifier/with/slashes//too/many`.
        assert_eq!(
            toks("an/identifier/with/slashes//too/many"),
            vec![Tok::Ident("an/identifier/with/slashes".into())]
        );
        assert_eq!(
            toks("# 1 \"x.click\"\na /* c */ b"),
            vec![Tok::Ident("a".into()), Tok::Ident("b".into())]
        );
        // `#` in the middle of a line is not a preprocessor line.
        assert_eq!(toks("a #"), vec![Tok::Ident("a".into()), Tok::Other('#')]);
    }

    #[test]
    fn line_marker_zero_is_rejected_not_renumbered() {
        // Regression: `# 0 "f"` renumbered following lines to 0 (found by the fuzz proptest).
        let mut l = Lexer::new("# 0 \"f\"\n,");
        assert!(l.next_token().is_err());
    }

    #[test]
    fn line_markers_are_recorded_and_other_directives_rejected() {
        let mut l = Lexer::new("a\n# 40 \"orig.click\"\nb\n  #line 7\nc");
        while l.next_token().unwrap().tok != Tok::Eof {}
        assert_eq!(
            l.marks,
            vec![
                LineMark {
                    phys_line: 3,
                    line: 40,
                    file: Some("orig.click".into())
                },
                LineMark {
                    phys_line: 5,
                    line: 7,
                    file: None
                }
            ]
        );
        let mut l = Lexer::new("a\n#define X 1\n");
        l.next_token().unwrap();
        let e = l.next_token().unwrap_err();
        assert_eq!((e.pos.line, e.pos.col), (2, 1));
        assert!(e.message.starts_with("unknown preprocessor directive"));
    }

    #[test]
    fn positions_count_lines_and_characters() {
        let mut l = Lexer::new("é\n  ab");
        let t = l.next_token().unwrap();
        assert_eq!(t.tok, Tok::Other('é'));
        let t = l.next_token().unwrap();
        assert_eq!((t.pos.line, t.pos.col), (2, 3));
    }

    fn config(s: &str) -> Result<String, LexError> {
        let mut l = Lexer::new(s);
        let t = l.next_token().unwrap();
        assert_eq!(t.tok, Tok::LParen);
        l.config_string(t.pos, t.end).map(|(s, _)| s)
    }

    #[test]
    fn config_strings_follow_the_manual_examples() {
        assert_eq!(config("(simple string)").unwrap(), "simple string");
        assert_eq!(
            config("(string with (balanced parens))").unwrap(),
            "string with (balanced parens)"
        );
        assert_eq!(
            config("(string with \\(escaped paren)").unwrap(),
            "string with \\(escaped paren"
        );
        assert_eq!(
            config("(// end-of-line comment)\n still going!)").unwrap(),
            "// end-of-line comment)\n still going!"
        );
        assert_eq!(
            config("(/* slash-star comment) */ and backslash \\\\)").unwrap(),
            "/* slash-star comment) */ and backslash \\\\"
        );
        assert_eq!(
            config("(\"a)\" 'b)' \\<0800 45>)").unwrap(),
            "\"a)\" 'b)' \\<0800 45>"
        );
        assert_eq!(
            config("(DATA \\<00 // c)\n 01>)").unwrap(),
            "DATA \\<00 // c)\n 01>"
        );
    }

    #[test]
    fn unterminated_forms_are_errors() {
        assert!(config("(abc")
            .unwrap_err()
            .message
            .contains("unterminated configuration"));
        assert!(config("(\"abc)")
            .unwrap_err()
            .message
            .contains("unterminated string"));
        assert!(config("(\\<00 11")
            .unwrap_err()
            .message
            .contains("hex block"));
        assert!(config("(\\<0g>)")
            .unwrap_err()
            .message
            .contains("bad character 'g'"));
        let mut l = Lexer::new("a /* b");
        l.next_token().unwrap();
        assert!(l
            .next_token()
            .unwrap_err()
            .message
            .contains("unterminated comment"));
    }

    #[test]
    fn split_args_respects_nesting() {
        assert_eq!(split_args(""), Vec::<String>::new());
        assert_eq!(split_args("  "), Vec::<String>::new());
        assert_eq!(
            split_args("a, b(c, d), \"e, f\", \\<0a 0b>"),
            vec!["a", "b(c, d)", "\"e, f\"", "\\<0a 0b>"]
        );
        assert_eq!(split_args("a,"), vec!["a", ""]);
    }
}
