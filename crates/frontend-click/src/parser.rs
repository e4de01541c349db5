//! Recursive-descent parser: tokens to a syntax tree of statements ([`Body`]).
//!
//! Grammar (the `click.5` manual's, with the newer shorthands):
//!
//! ```text
//! stmts       ::= { stmt [';'] }
//! stmt        ::= 'elementclass' IDENT ( compound | IDENT )
//!               | 'require' '(' config ')' | 'define' '(' config ')'
//!               | chain
//! chain       ::= endpoints { ('->' | '=>') endpoints }          (ends may be implied in groups)
//! endpoints   ::= endpoint { ',' endpoint }
//! endpoint    ::= [ports] primary [ports]
//! ports       ::= '[' INT { ',' INT } ']'
//! primary     ::= IDENT [ '::' class [config] ]                   (declaration inside a chain)
//!               | IDENT config                                    (anonymous element)
//!               | compound [config]                               (anonymous compound)
//!               | '(' stmts ')'                                   (element group)
//! class       ::= IDENT | compound
//! compound    ::= '{' [ '...' '||' ] body { '||' body } '}'
//! body        ::= [ formals '|' ] stmts
//! formals     ::= formal { ',' formal },  formal ::= [KEYWORD] VARIABLE
//! ```
//!
//! `a, b :: C(cfg)` declares several elements; `[p] -> x` / `x -> [p]` at the ends of a chain
//! inside a compound or group mean `input [p] -> x` / `x -> [p] output`.
//!
//! Nesting of `{}` and `()` is bounded by [`MAX_NESTING`] so that no input can exhaust the stack.
use crate::lexer::{LexError, Lexer, Pos, Tok, Token};
use pktflow_model::{Diagnostic, Span};
use std::collections::VecDeque;
use std::rc::Rc;

/// Deepest nesting of compound bodies and element groups the parser accepts.
pub const MAX_NESTING: usize = 64;
/// Largest port number accepted.
pub const MAX_PORT: usize = 65_535;

#[derive(Clone, Debug)]
pub struct Config {
    /// Raw text between the parentheses (not yet substituted, untrimmed).
    pub text: String,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct Formal {
    pub keyword: Option<String>,
    pub var: String,
    pub span: Span,
}

/// One alternative of a (possibly overloaded) compound element class.
#[derive(Clone, Debug)]
pub struct Overload {
    pub formals: Vec<Formal>,
    pub body: Body,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub struct CompoundDef {
    /// `{ ... || ... }`: the overloads of the class named before this definition are kept.
    pub extends_previous: bool,
    pub overloads: Vec<Overload>,
    pub span: Span,
}

#[derive(Clone, Debug)]
pub enum ClassRef {
    Named(String, Span),
    Compound(Rc<CompoundDef>),
}

impl ClassRef {
    pub fn span(&self) -> &Span {
        match self {
            ClassRef::Named(_, s) => s,
            ClassRef::Compound(c) => &c.span,
        }
    }
}

#[derive(Clone, Debug)]
pub enum Primary {
    /// A bare identifier: a declared element, `input`/`output`, or an anonymous element of
    /// that class (resolved during flattening).
    Name(String),
    /// `name :: Class(config)` inside a chain.
    Decl {
        name: String,
        class: ClassRef,
        config: Option<Config>,
    },
    /// `Class(config)` or `{ ... }(config)`.
    Anon {
        class: ClassRef,
        config: Option<Config>,
    },
    /// `( stmts )`.
    Group(Body),
    /// Nothing: the implied `input`/`output` at the ends of a chain inside a group/compound.
    Implied,
}

#[derive(Clone, Debug)]
pub struct Endpoint {
    pub in_ports: Option<Vec<usize>>,
    pub primary: Primary,
    pub out_ports: Option<Vec<usize>>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connector {
    /// `->`: one-to-many or many-to-one.
    Arrow,
    /// `=>`: ports matched pairwise.
    Parallel,
}

#[derive(Clone, Debug)]
pub enum Stmt {
    /// `a, b :: Class(config)`.
    Decl {
        names: Vec<(String, Span)>,
        class: ClassRef,
        config: Option<Config>,
    },
    /// A chain of endpoint lists joined by connectors (a lone endpoint list declares anonymous
    /// elements or does nothing).
    Chain {
        items: Vec<Vec<Endpoint>>,
        ops: Vec<(Connector, Span)>,
    },
    ElementClass {
        name: String,
        span: Span,
        def: ClassDefSyntax,
    },
    Define {
        config: Config,
    },
}

#[derive(Clone, Debug)]
pub enum ClassDefSyntax {
    Compound(Rc<CompoundDef>),
    /// `elementclass A B;`
    Synonym(String, Span),
}

#[derive(Clone, Debug, Default)]
pub struct Body {
    pub stmts: Vec<Stmt>,
}

/// What [`parse`] returns: the top-level statements and the `require` arguments met anywhere.
pub struct Parsed {
    pub body: Body,
    pub requires: Vec<(String, Span)>,
}

/// Where a statement list ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Top,
    Compound,
    Group,
}

pub struct Parser<'a> {
    lx: Lexer<'a>,
    file: &'a str,
    buf: VecDeque<Token>,
    depth: usize,
    requires: Vec<(String, Span)>,
}

type PResult<T> = Result<T, Diagnostic>;

/// Parse `text` (named `file` in diagnostics) into a syntax tree. Stops at the first error.
pub fn parse(text: &str, file: &str) -> Result<Parsed, Diagnostic> {
    let mut p = Parser {
        lx: Lexer::new(text),
        file,
        buf: VecDeque::new(),
        depth: 0,
        requires: Vec::new(),
    };
    let body = p.stmts(Ctx::Top)?;
    Ok(Parsed {
        body,
        requires: p.requires,
    })
}

impl<'a> Parser<'a> {
    /// The diagnostic position of `pos`, following `# LINE "FILE"` markers.
    fn span(&self, pos: Pos) -> Span {
        let marks = &self.lx.marks;
        let k = marks.partition_point(|m| m.phys_line <= pos.line);
        if k == 0 {
            return Span::new(self.file, pos.line, pos.col);
        }
        let m = &marks[k - 1];
        let line = m.line.saturating_add(pos.line - m.phys_line);
        Span::new(m.file.as_deref().unwrap_or(self.file), line, pos.col)
    }

    fn lex_err(&self, e: LexError) -> Diagnostic {
        Diagnostic::error(self.span(e.pos), e.message)
    }

    fn fill(&mut self, n: usize) -> PResult<()> {
        while self.buf.len() < n {
            let t = self.lx.next_token().map_err(|e| self.lex_err(e))?;
            self.buf.push_back(t);
        }
        Ok(())
    }

    fn peek(&mut self) -> PResult<&Token> {
        self.fill(1)?;
        Ok(&self.buf[0])
    }

    /// The kind of the next token. Identifier and variable names are left out (empty) so that
    /// peeking never allocates; use [`Parser::peek`] for them.
    fn peek_tok(&mut self) -> PResult<Tok> {
        Ok(shallow(&self.peek()?.tok))
    }

    fn peek2_tok(&mut self) -> PResult<Tok> {
        self.fill(2)?;
        Ok(shallow(&self.buf[1].tok))
    }

    fn next(&mut self) -> PResult<Token> {
        self.fill(1)?;
        Ok(self.buf.pop_front().expect("filled"))
    }

    fn expected(&mut self, what: &str) -> Diagnostic {
        match self.peek() {
            Ok(t) => {
                let (pos, found) = (t.pos, t.tok.describe());
                Diagnostic::error(
                    self.span(pos),
                    format!("expected {}, found {}", what, found),
                )
            }
            Err(d) => d,
        }
    }

    fn expect(&mut self, tok: Tok, what: &str) -> PResult<Token> {
        if self.peek_tok()? == tok {
            self.next()
        } else {
            Err(self.expected(what))
        }
    }

    fn enter(&mut self, pos: Pos) -> PResult<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Diagnostic::error(
                self.span(pos),
                format!(
                    "nesting too deep: more than {} levels of '{{}}' or '()'",
                    MAX_NESTING
                ),
            ));
        }
        Ok(())
    }

    /// After the peeked `(`: read the configuration string it opens.
    fn config(&mut self) -> PResult<Config> {
        debug_assert_eq!(self.buf.len(), 1);
        let open = self.next()?;
        let (text, start) = self
            .lx
            .config_string(open.pos, open.end)
            .map_err(|e| self.lex_err(e))?;
        Ok(Config {
            text,
            span: self.span(start),
        })
    }

    fn opt_config(&mut self) -> PResult<Option<Config>> {
        if self.peek_tok()? == Tok::LParen {
            Ok(Some(self.config()?))
        } else {
            Ok(None)
        }
    }

    fn stmts(&mut self, ctx: Ctx) -> PResult<Body> {
        let mut body = Body::default();
        loop {
            let t = self.peek()?.clone();
            match &t.tok {
                Tok::Semi => {
                    self.next()?;
                    continue;
                }
                Tok::Eof if ctx == Ctx::Top => return Ok(body),
                Tok::RBrace | Tok::BarBar if ctx == Ctx::Compound => return Ok(body),
                Tok::RParen if ctx == Ctx::Group => return Ok(body),
                Tok::Eof => {
                    let want = if ctx == Ctx::Compound { "'}'" } else { "')'" };
                    return Err(self.expected(&format!(
                        "{} to close the {}",
                        want,
                        if ctx == Ctx::Compound {
                            "compound element"
                        } else {
                            "element group"
                        }
                    )));
                }
                Tok::Ident(k) if k == "elementclass" => {
                    self.next()?;
                    body.stmts.push(self.elementclass(t.pos)?);
                }
                Tok::Ident(k) if k == "connectiontunnel" => {
                    return Err(Diagnostic::error(
                        self.span(t.pos),
                        "unsupported: 'connectiontunnel' (removed from the Click language; use compound elements or element groups)",
                    ));
                }
                Tok::Ident(k)
                    if (k == "require" || k == "define") && self.peek2_tok()? == Tok::LParen =>
                {
                    let k = k.clone();
                    self.next()?;
                    let cfg = self.config()?;
                    if k == "require" {
                        self.require(&cfg);
                    } else {
                        body.stmts.push(Stmt::Define { config: cfg });
                    }
                }
                Tok::Ident(_) | Tok::LBracket | Tok::LBrace | Tok::LParen | Tok::Variable(_) => {
                    body.stmts.extend(self.chain(ctx)?);
                }
                Tok::Arrow | Tok::DoubleArrow if ctx != Ctx::Top => {
                    body.stmts.extend(self.chain(ctx)?);
                }
                _ => {
                    let what = if body.stmts.is_empty() {
                        "a statement"
                    } else {
                        "'->' or ';'"
                    };
                    return Err(self.expected(what));
                }
            }
            // A statement ends at ';' or where the next one begins; report a stray token
            // right after a statement as "expected '->' or ';'".
            match self.peek_tok()? {
                Tok::ColonColon
                | Tok::RBracket
                | Tok::Comma
                | Tok::Bar
                | Tok::Ellipsis
                | Tok::Other(_) => {
                    return Err(self.expected("'->' or ';'"));
                }
                Tok::RParen if ctx != Ctx::Group => return Err(self.expected("'->' or ';'")),
                Tok::RBrace | Tok::BarBar if ctx != Ctx::Compound => {
                    return Err(self.expected("'->' or ';'"))
                }
                _ => {}
            }
        }
    }

    fn require(&mut self, cfg: &Config) {
        for arg in crate::lexer::split_args(&cfg.text) {
            self.requires.push((arg, cfg.span.clone()));
        }
    }

    fn elementclass(&mut self, kw: Pos) -> PResult<Stmt> {
        let name_tok = self.next()?;
        let name = match name_tok.tok {
            Tok::Ident(n) if !is_keyword(&n) => n,
            other => {
                return Err(Diagnostic::error(
                    self.span(name_tok.pos),
                    format!(
                        "expected element class name after 'elementclass', found {}",
                        other.describe()
                    ),
                ))
            }
        };
        let t = self.peek()?.clone();
        let def = match t.tok {
            Tok::LBrace => ClassDefSyntax::Compound(Rc::new(self.compound()?)),
            Tok::Ident(ref s) if !is_keyword(s) => {
                self.next()?;
                ClassDefSyntax::Synonym(s.clone(), self.span(t.pos))
            }
            _ => {
                return Err(self.expected("'{' or an element class name after 'elementclass NAME'"))
            }
        };
        Ok(Stmt::ElementClass {
            name,
            span: self.span(kw),
            def,
        })
    }

    /// `{ [... ||] [formals |] stmts { || [formals |] stmts } }`
    fn compound(&mut self) -> PResult<CompoundDef> {
        let open = self.expect(Tok::LBrace, "'{'")?;
        self.enter(open.pos)?;
        let mut def = CompoundDef {
            extends_previous: false,
            overloads: Vec::new(),
            span: self.span(open.pos),
        };
        if self.peek_tok()? == Tok::Ellipsis {
            self.next()?;
            def.extends_previous = true;
            self.expect(Tok::BarBar, "'||' after '...'")?;
        }
        loop {
            let start = self.peek()?.pos;
            let formals = self.formals()?;
            let body = self.stmts(Ctx::Compound)?;
            def.overloads.push(Overload {
                formals,
                body,
                span: self.span(start),
            });
            let t = self.next()?;
            match t.tok {
                Tok::BarBar => continue,
                Tok::RBrace => break,
                other => {
                    return Err(Diagnostic::error(
                        self.span(t.pos),
                        format!(
                            "expected '}}' to close the compound element, found {}",
                            other.describe()
                        ),
                    ))
                }
            }
        }
        self.depth -= 1;
        Ok(def)
    }

    /// Formal parameters `$a, $b, KEYWORD $c |`, if present.
    fn formals(&mut self) -> PResult<Vec<Formal>> {
        let starts = match self.peek_tok()? {
            Tok::Variable(_) => true,
            Tok::Ident(_) => matches!(self.peek2_tok()?, Tok::Variable(_)),
            Tok::Bar => true,
            _ => false,
        };
        let mut formals: Vec<Formal> = Vec::new();
        if !starts {
            return Ok(formals);
        }
        if self.peek_tok()? == Tok::Bar {
            self.next()?;
            return Ok(formals);
        }
        loop {
            let t = self.next()?;
            let (keyword, var, pos) = match t.tok {
                Tok::Variable(v) => (None, v, t.pos),
                Tok::Ident(k) => {
                    let v = self.next()?;
                    match v.tok {
                        Tok::Variable(var) => (Some(k), var, t.pos),
                        other => {
                            return Err(Diagnostic::error(
                                self.span(v.pos),
                                format!("expected a '$variable' after keyword {} in formal parameters, found {}", k, other.describe()),
                            ))
                        }
                    }
                }
                other => {
                    return Err(Diagnostic::error(
                        self.span(t.pos),
                        format!(
                            "expected a formal parameter ('$name' or 'KEYWORD $name'), found {}",
                            other.describe()
                        ),
                    ))
                }
            };
            if formals.iter().any(|f| f.var == var) {
                return Err(Diagnostic::error(
                    self.span(pos),
                    format!("formal parameter '${}' declared twice", var),
                ));
            }
            if keyword.is_none() && formals.iter().any(|f| f.keyword.is_some()) {
                return Err(Diagnostic::error(
                    self.span(pos),
                    format!(
                        "positional formal parameter '${}' after a keyword parameter",
                        var
                    ),
                ));
            }
            formals.push(Formal {
                keyword,
                var,
                span: self.span(pos),
            });
            let sep = self.next()?;
            match sep.tok {
                Tok::Comma => continue,
                Tok::Bar => return Ok(formals),
                other => {
                    return Err(Diagnostic::error(
                        self.span(sep.pos),
                        format!(
                            "expected ',' or '|' after formal parameter, found {}",
                            other.describe()
                        ),
                    ))
                }
            }
        }
    }

    fn ports(&mut self) -> PResult<Option<Vec<usize>>> {
        if self.peek_tok()? != Tok::LBracket {
            return Ok(None);
        }
        self.next()?;
        let mut ports = Vec::new();
        loop {
            let t = self.next()?;
            match t.tok {
                Tok::Ident(s) => match parse_port(&s) {
                    Some(p) => ports.push(p),
                    None => {
                        return Err(Diagnostic::error(
                            self.span(t.pos),
                            format!(
                                "bad port number '{}': expected a nonnegative integer up to {}",
                                s, MAX_PORT
                            ),
                        ))
                    }
                },
                Tok::RBracket if ports.is_empty() => {
                    return Err(Diagnostic::error(
                        self.span(t.pos),
                        "expected a port number, found ']'",
                    ));
                }
                other => {
                    return Err(Diagnostic::error(
                        self.span(t.pos),
                        format!("expected a port number, found {}", other.describe()),
                    ))
                }
            }
            let sep = self.next()?;
            match sep.tok {
                Tok::Comma => continue,
                Tok::RBracket => return Ok(Some(ports)),
                other => {
                    return Err(Diagnostic::error(
                        self.span(sep.pos),
                        format!(
                            "expected ',' or ']' in port list, found {}",
                            other.describe()
                        ),
                    ))
                }
            }
        }
    }

    fn class_ref(&mut self) -> PResult<ClassRef> {
        let t = self.peek()?.clone();
        match t.tok {
            Tok::Ident(s) if !is_keyword(&s) => {
                self.next()?;
                Ok(ClassRef::Named(s, self.span(t.pos)))
            }
            Tok::LBrace => Ok(ClassRef::Compound(Rc::new(self.compound()?))),
            _ => Err(self.expected("an element class after '::'")),
        }
    }

    /// An endpoint; `first` is true at the start of a chain (where `[p] ->` may imply `input`).
    fn endpoint(&mut self, ctx: Ctx, first: bool) -> PResult<Endpoint> {
        let start = self.peek()?.pos;
        let span = self.span(start);
        let in_ports = self.ports()?;
        let t = self.peek()?.clone();
        let primary = match t.tok {
            Tok::Ident(ref s) if !is_keyword(s) => {
                self.next()?;
                match self.peek_tok()? {
                    Tok::ColonColon => {
                        self.next()?;
                        let class = self.class_ref()?;
                        let config = self.opt_config()?;
                        Primary::Decl {
                            name: s.clone(),
                            class,
                            config,
                        }
                    }
                    Tok::LParen => {
                        let config = Some(self.config()?);
                        Primary::Anon {
                            class: ClassRef::Named(s.clone(), self.span(t.pos)),
                            config,
                        }
                    }
                    _ => Primary::Name(s.clone()),
                }
            }
            Tok::LBrace => {
                let class = ClassRef::Compound(Rc::new(self.compound()?));
                let config = self.opt_config()?;
                Primary::Anon { class, config }
            }
            Tok::LParen => {
                let open = self.next()?;
                self.enter(open.pos)?;
                let body = self.stmts(Ctx::Group)?;
                self.expect(Tok::RParen, "')' to close the element group")?;
                self.depth -= 1;
                Primary::Group(body)
            }
            Tok::Arrow | Tok::DoubleArrow if ctx != Ctx::Top && first => {
                // `[p] -> x` or `-> x` at the start of a chain: implied `input`.
                return Ok(Endpoint {
                    in_ports: None,
                    primary: Primary::Implied,
                    out_ports: in_ports,
                    span,
                });
            }
            Tok::Semi | Tok::RBrace | Tok::RParen | Tok::BarBar | Tok::Eof | Tok::Comma
                if ctx != Ctx::Top && !first =>
            {
                // `x -> [p]` at the end of a chain: implied `output`.
                return Ok(Endpoint {
                    in_ports,
                    primary: Primary::Implied,
                    out_ports: None,
                    span,
                });
            }
            Tok::Variable(ref v) => {
                return Err(Diagnostic::error(
                    self.span(t.pos),
                    format!(
                        "unsupported: variable '${}' used as an element or class name",
                        v
                    ),
                ))
            }
            _ => return Err(self.expected("an element name, class or '('")),
        };
        let out_ports = self.ports()?;
        Ok(Endpoint {
            in_ports,
            primary,
            out_ports,
            span,
        })
    }

    fn endpoint_list(&mut self, ctx: Ctx, first: bool) -> PResult<Vec<Endpoint>> {
        let mut list = vec![self.endpoint(ctx, first)?];
        while self.peek_tok()? == Tok::Comma {
            self.next()?;
            list.push(self.endpoint(ctx, false)?);
        }
        Ok(list)
    }

    fn chain(&mut self, ctx: Ctx) -> PResult<Vec<Stmt>> {
        let first = self.endpoint_list(ctx, true)?;
        // `a, b, c :: Class(config)`: a multi-name declaration.
        if first.len() > 1 {
            if let Some(Endpoint {
                primary: Primary::Decl { .. },
                in_ports: None,
                out_ports: None,
                ..
            }) = first.last()
            {
                let plain = first[..first.len() - 1].iter().all(|e| {
                    matches!(e.primary, Primary::Name(_))
                        && e.in_ports.is_none()
                        && e.out_ports.is_none()
                });
                if plain {
                    let mut names = Vec::new();
                    let mut class = None;
                    let mut config = None;
                    for e in first {
                        match e.primary {
                            Primary::Name(n) => names.push((n, e.span)),
                            Primary::Decl {
                                name,
                                class: c,
                                config: cfg,
                            } => {
                                names.push((name, e.span));
                                class = Some(c);
                                config = cfg;
                            }
                            _ => unreachable!(),
                        }
                    }
                    let decl = Stmt::Decl {
                        names: names.clone(),
                        class: class.expect("last is a Decl"),
                        config,
                    };
                    if matches!(self.peek_tok()?, Tok::Arrow | Tok::DoubleArrow) {
                        // `a, b :: C -> x`: declare, then connect the declared elements.
                        let ends: Vec<Endpoint> = names
                            .into_iter()
                            .map(|(n, s)| Endpoint {
                                in_ports: None,
                                primary: Primary::Name(n),
                                out_ports: None,
                                span: s,
                            })
                            .collect();
                        let rest = self.chain_tail(ctx, ends)?;
                        return Ok(vec![decl, rest]);
                    }
                    return Ok(vec![decl]);
                }
            }
        }
        Ok(vec![self.chain_tail(ctx, first)?])
    }

    fn chain_tail(&mut self, ctx: Ctx, first: Vec<Endpoint>) -> PResult<Stmt> {
        let mut items = vec![first];
        let mut ops = Vec::new();
        loop {
            let t = self.peek()?.clone();
            let op = match t.tok {
                Tok::Arrow => Connector::Arrow,
                Tok::DoubleArrow => Connector::Parallel,
                _ => break,
            };
            self.next()?;
            ops.push((op, self.span(t.pos)));
            items.push(self.endpoint_list(ctx, false)?);
        }
        Ok(Stmt::Chain { items, ops })
    }
}

fn shallow(t: &Tok) -> Tok {
    match t {
        Tok::Ident(_) => Tok::Ident(String::new()),
        Tok::Variable(_) => Tok::Variable(String::new()),
        other => other.clone(),
    }
}

fn is_keyword(s: &str) -> bool {
    s == "elementclass" || s == "connectiontunnel"
}

fn parse_port(s: &str) -> Option<usize> {
    if s.is_empty() || s.len() > 6 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<usize>().ok().filter(|&p| p <= MAX_PORT)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stmts(s: &str) -> Vec<Stmt> {
        parse(s, "t.click")
            .unwrap_or_else(|d| panic!("{}", d))
            .body
            .stmts
    }

    #[test]
    fn multi_name_declaration_becomes_one_decl() {
        let s = stmts("a, b, c :: Queue(5)");
        assert_eq!(s.len(), 1);
        let Stmt::Decl {
            names,
            class: ClassRef::Named(cls, _),
            config: Some(cfg),
        } = &s[0]
        else {
            panic!("{:?}", s)
        };
        assert_eq!(
            names.iter().map(|n| n.0.as_str()).collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert_eq!((cls.as_str(), cfg.text.as_str()), ("Queue", "5"));
    }

    #[test]
    fn chain_records_ports_and_connectors() {
        let s = stmts("a [1, 2] => [3, 4] b -> c");
        let Stmt::Chain { items, ops } = &s[0] else {
            panic!()
        };
        assert_eq!(items.len(), 3);
        assert_eq!(items[0][0].out_ports, Some(vec![1, 2]));
        assert_eq!(items[1][0].in_ports, Some(vec![3, 4]));
        assert_eq!(
            ops.iter().map(|o| o.0).collect::<Vec<_>>(),
            [Connector::Parallel, Connector::Arrow]
        );
    }

    #[test]
    fn compound_formals_and_overloads() {
        let s = stmts("elementclass X { $a, KW $b | input -> output || input -> output }");
        let Stmt::ElementClass {
            name,
            def: ClassDefSyntax::Compound(c),
            ..
        } = &s[0]
        else {
            panic!()
        };
        assert_eq!(name, "X");
        assert_eq!(c.overloads.len(), 2);
        let f = &c.overloads[0].formals;
        assert_eq!((f[0].keyword.as_deref(), f[0].var.as_str()), (None, "a"));
        assert_eq!(
            (f[1].keyword.as_deref(), f[1].var.as_str()),
            (Some("KW"), "b")
        );
        assert!(c.overloads[1].formals.is_empty());
    }

    #[test]
    fn keywords_need_parentheses() {
        // `define` and `require` are ordinary names unless a configuration follows.
        let s = stmts("define :: Idle; require -> define");
        assert_eq!(s.len(), 2);
        assert!(matches!(&s[1], Stmt::Chain { .. }));
        let p = parse("require(a, package b)", "t").unwrap();
        assert_eq!(
            p.requires.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
            ["a", "package b"]
        );
    }

    #[test]
    fn implied_endpoints_only_inside_groups() {
        let s = stmts("x :: X; x -> ([0] -> [1]) -> x");
        let Stmt::Chain { items, .. } = &s[1] else {
            panic!()
        };
        let Primary::Group(g) = &items[1][0].primary else {
            panic!()
        };
        let Stmt::Chain { items: inner, .. } = &g.stmts[0] else {
            panic!()
        };
        assert!(matches!(inner[0][0].primary, Primary::Implied));
        assert_eq!(inner[0][0].out_ports, Some(vec![0]));
        assert!(matches!(inner[1][0].primary, Primary::Implied));
        assert_eq!(inner[1][0].in_ports, Some(vec![1]));
        assert!(parse("[0] -> x", "t").is_err());
    }

    #[test]
    fn port_parsing() {
        assert_eq!(parse_port("0"), Some(0));
        assert_eq!(parse_port("65535"), Some(65535));
        assert_eq!(parse_port("65536"), None);
        assert_eq!(parse_port("1a"), None);
        assert_eq!(parse_port(""), None);
    }
}
