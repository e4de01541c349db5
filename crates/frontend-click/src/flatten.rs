//! Flattening: instantiate the syntax tree into a flat [`AppGraph`].
//!
//! Every compound element instance and every element group becomes a pair of *tunnel* nodes
//! (its `input` and `output` pseudo-elements, as `click.5` describes them). Connections are
//! first recorded between real elements and tunnels; at the end each connection leaving a real
//! element is followed through any chain of tunnels to the real elements it reaches
//! ([`Flattener::finish`]). Tunnel ports nobody connects to from outside simply vanish, as
//! the manual specifies.
//!
//! Scoping follows the manual: element classes are lexically scoped and non-recursive (inside
//! `elementclass Q { ... }` the name `Q` means the *previous* class of that name), elements are
//! named `compound/component`, anonymous elements `Class@N` with `N` the 1-based position of
//! the declaration among the declarations of its scope (the file, or the compound body).
use crate::lexer::split_args;
use crate::parser::{
    Body, ClassDefSyntax, ClassRef, CompoundDef, Config, Connector, Endpoint, Primary, Stmt,
};
use pktflow_model::{AppGraph, Diagnostic, Span};
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Deepest nesting of compound element instances.
pub const MAX_EXPANSION_DEPTH: usize = 64;
/// Most nodes (elements plus tunnels) a configuration may expand to.
pub const MAX_NODES: usize = 250_000;
/// Longest configuration string (of an element or a `define` value) after substituting
/// variables: a `define` or compound argument that doubles at each level would otherwise grow
/// exponentially.
pub const MAX_SUBSTITUTED_BYTES: usize = 1 << 20;
const MAX_ERRORS: usize = 50;
/// Tunnel name of element groups (compound tunnels carry the instance name).
const GROUP: &str = "the element group";

type Vars = Rc<HashMap<String, String>>;

/// One alternative of a compound class, with the lexical environment of its definition.
struct OverloadRef {
    def: Rc<CompoundDef>,
    idx: usize,
    classes: Option<Rc<ClassNode>>,
    vars: Vars,
}

#[derive(Clone)]
enum Resolved {
    Primitive(String),
    Compound(Rc<Vec<OverloadRef>>),
}

/// Persistent list of element class bindings (newest first).
struct ClassNode {
    name: String,
    class: Resolved,
    parent: Option<Rc<ClassNode>>,
}

impl Drop for ClassNode {
    /// Unlink iteratively: a binding points to the previous bindings twice (its parent, and the
    /// environment its compound class was defined in), so the default drop would recurse once
    /// per `elementclass` and overflow the stack on a file with many of them.
    fn drop(&mut self) {
        fn detach(node: &mut ClassNode, work: &mut Vec<Rc<ClassNode>>) {
            work.extend(node.parent.take());
            if let Resolved::Compound(ovs) = &mut node.class {
                if let Some(v) = Rc::get_mut(ovs) {
                    work.extend(v.iter_mut().filter_map(|o| o.classes.take()));
                }
            }
        }
        let mut work = Vec::new();
        detach(self, &mut work);
        while let Some(rc) = work.pop() {
            if let Ok(mut node) = Rc::try_unwrap(rc) {
                detach(&mut node, &mut work);
            }
        }
    }
}

fn lookup_class(mut env: &Option<Rc<ClassNode>>, name: &str) -> Option<Resolved> {
    while let Some(n) = env {
        if n.name == name {
            return Some(n.class.clone());
        }
        env = &n.parent;
    }
    None
}

enum NodeKind {
    Real(usize),
    Tunnel {
        name: String,
        sealed: bool,
        src_ports: usize,
        dst_ports: usize,
        is_input: bool,
        /// Ports the body used (inputs for an `input` tunnel, outputs for an `output` one).
        used: Vec<bool>,
    },
}

struct Edge {
    from: usize,
    fport: usize,
    to: usize,
    tport: usize,
    span: Span,
}

/// An element as connections see it: the node that receives (`inn`) and the node that sends
/// (`out`); the same node for a primitive element, the two tunnels for a compound or group.
#[derive(Clone)]
struct Entry {
    inn: Option<usize>,
    out: Option<usize>,
    span: Span,
    /// An element group: without a port list it stands for all the ports its body uses.
    group: bool,
}

struct Scope {
    prefix: String,
    elems: HashMap<String, Entry>,
    counter: usize,
    classes: Option<Rc<ClassNode>>,
    vars: Vars,
}

pub struct Flattener<'a> {
    file: &'a str,
    graph: AppGraph,
    nodes: Vec<NodeKind>,
    edges: Vec<Edge>,
    names: HashSet<String>,
    pub errors: Vec<Diagnostic>,
    fatal: bool,
}

/// Flatten a parsed file. `overrides` are `define`s given by the caller; they win over the
/// file's own `define` statements.
pub fn flatten(
    body: &Body,
    file: &str,
    overrides: &[(String, String)],
) -> Result<AppGraph, Vec<Diagnostic>> {
    let mut f = Flattener {
        file,
        graph: AppGraph::new(file),
        nodes: Vec::new(),
        edges: Vec::new(),
        names: HashSet::new(),
        errors: Vec::new(),
        fatal: false,
    };
    let mut scope = Scope {
        prefix: String::new(),
        elems: HashMap::new(),
        counter: 0,
        classes: None,
        vars: Rc::new(HashMap::new()),
    };
    f.defines(&body.stmts, &mut scope);
    if !overrides.is_empty() {
        let mut v = (*scope.vars).clone();
        for (k, val) in overrides {
            v.insert(k.trim_start_matches('$').to_string(), val.clone());
        }
        scope.vars = Rc::new(v);
    }
    f.body(&body.stmts, &mut scope, None, 0);
    if f.errors.is_empty() {
        Ok(f.finish())
    } else {
        Err(f.errors)
    }
}

/// Position of byte `off` of a configuration string that starts at `span`.
fn span_at(span: &Span, text: &str, off: usize) -> Span {
    let before = &text[..off.min(text.len())];
    match before.rfind('\n') {
        Some(nl) => Span::new(
            span.file.clone(),
            span.line + before.matches('\n').count() as u32,
            1 + before[nl + 1..].chars().count() as u32,
        ),
        None => Span::new(
            span.file.clone(),
            span.line,
            span.col + before.chars().count() as u32,
        ),
    }
}

/// Substitute `$name` and `${name}` in a configuration string (not inside single quotes,
/// comments or after a backslash) and trim it. A variable that is not defined is an error.
pub fn substitute(
    text: &str,
    vars: &HashMap<String, String>,
    span: &Span,
) -> Result<String, Diagnostic> {
    substitute_in(text, vars, span, false)
}

/// [`substitute`]; with `keep_unknown`, a variable that is not defined stays as written, as
/// Click leaves it: Script and DriverManager set their own variables when they run
/// (`set a 5, print $a`), so their configurations keep the `$a` the script needs.
pub fn substitute_in(
    text: &str,
    vars: &HashMap<String, String>,
    span: &Span,
    keep_unknown: bool,
) -> Result<String, Diagnostic> {
    if !text.contains('$') {
        return Ok(text.trim().to_string());
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut copied = 0;
    while i < b.len() {
        match b[i] {
            b'\'' => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            }
            b'\\' => i += 2,
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
                i += 2;
            }
            b'$' => {
                let braced = b.get(i + 1) == Some(&b'{');
                let s = i + 1 + braced as usize;
                let mut e = s;
                while e < b.len() && (b[e].is_ascii_alphanumeric() || b[e] == b'_') {
                    e += 1;
                }
                if e == s || (braced && b.get(e) != Some(&b'}')) {
                    // A lone '$' is ordinary text.
                    i += 1;
                    continue;
                }
                let name = &text[s..e];
                let Some(val) = vars.get(name) else {
                    if keep_unknown {
                        i = e + braced as usize;
                        continue;
                    }
                    return Err(Diagnostic::error(
                        span_at(span, text, i),
                        format!("unknown variable '${}'", name),
                    ));
                };
                if out.len() + (i - copied) + val.len() > MAX_SUBSTITUTED_BYTES {
                    return Err(Diagnostic::error(
                        span_at(span, text, i),
                        format!(
                            "substituting '${name}' makes this configuration string longer than the limit of {MAX_SUBSTITUTED_BYTES} bytes (do variables expand into each other repeatedly?)"
                        ),
                    ));
                }
                out.push_str(&text[copied..i]);
                out.push_str(val);
                i = e + braced as usize;
                copied = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[copied.min(text.len())..]);
    Ok(out.trim().to_string())
}

fn looks_like_class(name: &str) -> bool {
    name.as_bytes()
        .first()
        .is_some_and(|b| b.is_ascii_uppercase())
}

impl<'a> Flattener<'a> {
    fn error(&mut self, span: Span, msg: impl Into<String>) {
        self.errors.push(Diagnostic::error(span, msg));
        if self.errors.len() >= MAX_ERRORS {
            self.fatal = true;
        }
    }

    fn new_node(&mut self, kind: NodeKind, span: &Span) -> usize {
        if self.nodes.len() >= MAX_NODES && !self.fatal {
            self.error(
                span.clone(),
                format!("configuration expands to more than {} elements", MAX_NODES),
            );
            self.fatal = true;
        }
        self.nodes.push(kind);
        self.nodes.len() - 1
    }

    /// Process the `define` statements of a body (they apply to the whole body).
    fn defines(&mut self, stmts: &[Stmt], scope: &mut Scope) {
        let mut vars: Option<HashMap<String, String>> = None;
        for st in stmts {
            let Stmt::Define { config } = st else {
                continue;
            };
            let v = vars.get_or_insert_with(|| (*scope.vars).clone());
            for arg in split_args(&config.text) {
                let rest = arg.strip_prefix('$').unwrap_or("");
                let n = rest
                    .bytes()
                    .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
                    .count();
                if n == 0 {
                    self.error(
                        config.span.clone(),
                        format!("expected '$NAME value' in define, found '{}'", arg),
                    );
                    continue;
                }
                let (name, value) = rest.split_at(n);
                match substitute(value, v, &config.span) {
                    Ok(val) => {
                        v.insert(name.to_string(), val);
                    }
                    Err(d) => self.errors.push(d),
                }
            }
        }
        if let Some(v) = vars {
            scope.vars = Rc::new(v);
        }
    }

    fn body(
        &mut self,
        stmts: &[Stmt],
        scope: &mut Scope,
        io: Option<(usize, usize)>,
        depth: usize,
    ) {
        for st in stmts {
            if self.fatal {
                return;
            }
            match st {
                Stmt::Define { .. } => {}
                Stmt::ElementClass { name, span, def } => self.elementclass(name, span, def, scope),
                Stmt::Decl {
                    names,
                    class,
                    config,
                } => {
                    let resolved = self.resolve_class(class, scope);
                    let Some(resolved) = resolved else { continue };
                    for (n, s) in names {
                        self.declare(
                            Some(n),
                            class_name(class),
                            &resolved,
                            config.as_ref(),
                            s,
                            scope,
                            depth,
                        );
                    }
                }
                Stmt::Chain { items, ops } => self.chain(items, ops, scope, io, depth),
            }
        }
    }

    fn elementclass(&mut self, name: &str, span: &Span, def: &ClassDefSyntax, scope: &mut Scope) {
        let class = match def {
            ClassDefSyntax::Synonym(target, _) => lookup_class(&scope.classes, target)
                .unwrap_or_else(|| Resolved::Primitive(target.clone())),
            ClassDefSyntax::Compound(c) => {
                let mut list = Vec::new();
                if c.extends_previous {
                    match lookup_class(&scope.classes, name) {
                        Some(Resolved::Compound(prev)) => {
                            for o in prev.iter() {
                                list.push(OverloadRef {
                                    def: o.def.clone(),
                                    idx: o.idx,
                                    classes: o.classes.clone(),
                                    vars: o.vars.clone(),
                                });
                            }
                        }
                        _ => {
                            self.error(
                                span.clone(),
                                format!(
                                    "'...' extends no earlier compound element class named '{}'",
                                    name
                                ),
                            );
                            return;
                        }
                    }
                }
                for idx in 0..c.overloads.len() {
                    list.push(OverloadRef {
                        def: c.clone(),
                        idx,
                        classes: scope.classes.clone(),
                        vars: scope.vars.clone(),
                    });
                }
                Resolved::Compound(Rc::new(list))
            }
        };
        scope.classes = Some(Rc::new(ClassNode {
            name: name.to_string(),
            class,
            parent: scope.classes.take(),
        }));
    }

    fn resolve_class(&mut self, class: &ClassRef, scope: &Scope) -> Option<Resolved> {
        match class {
            ClassRef::Named(n, _) => Some(
                lookup_class(&scope.classes, n).unwrap_or_else(|| Resolved::Primitive(n.clone())),
            ),
            ClassRef::Compound(c) => {
                if c.extends_previous {
                    self.error(
                        c.span.clone(),
                        "'...' is only allowed in an 'elementclass' definition",
                    );
                    return None;
                }
                Some(Resolved::Compound(Rc::new(
                    (0..c.overloads.len())
                        .map(|idx| OverloadRef {
                            def: c.clone(),
                            idx,
                            classes: scope.classes.clone(),
                            vars: scope.vars.clone(),
                        })
                        .collect(),
                )))
            }
        }
    }

    /// Declare one element (named, or anonymous when `name` is `None`) in `scope`.
    #[allow(clippy::too_many_arguments)]
    fn declare(
        &mut self,
        name: Option<&str>,
        written_class: &str,
        class: &Resolved,
        config: Option<&Config>,
        span: &Span,
        scope: &mut Scope,
        depth: usize,
    ) -> Option<Entry> {
        scope.counter += 1;
        let local = match name {
            Some(n) => {
                if n.split('/').any(|c| c.bytes().all(|b| b.is_ascii_digit())) {
                    self.error(
                        span.clone(),
                        format!("element name '{}' has an all-digit component", n),
                    );
                    return None;
                }
                if let Some(prev) = scope.elems.get(n) {
                    let ps = prev.span.clone();
                    self.error(
                        span.clone(),
                        format!(
                            "redeclaration of element '{}' (first declared at {}:{})",
                            n, ps.line, ps.col
                        ),
                    );
                    return None;
                }
                n.to_string()
            }
            None if written_class == "@Anon" => format!("@Anon{}", scope.counter),
            None => format!("{}@{}", written_class, scope.counter),
        };
        let full = format!("{}{}", scope.prefix, local);
        if !self.names.insert(full.clone()) {
            self.error(
                span.clone(),
                format!(
                    "element name '{}' is already used in this configuration",
                    full
                ),
            );
            return None;
        }
        // Scripts keep the variables they set themselves (Click expands them at run time).
        let script =
            matches!(&class, Resolved::Primitive(c) if *c == "Script" || *c == "DriverManager");
        let cfg_text = match config {
            Some(c) => match substitute_in(&c.text, &scope.vars, &c.span, script) {
                Ok(t) => t,
                Err(d) => {
                    self.errors.push(d);
                    return None;
                }
            },
            None => String::new(),
        };
        let entry = match class {
            Resolved::Primitive(cls) => {
                let idx = self.graph.add_element(&full, cls, &cfg_text, span.clone());
                let node = self.new_node(NodeKind::Real(idx), span);
                Entry {
                    inn: Some(node),
                    out: Some(node),
                    span: span.clone(),
                    group: false,
                }
            }
            Resolved::Compound(overloads) => {
                self.instantiate(&full, written_class, overloads, &cfg_text, span, depth)?
            }
        };
        if name.is_some() {
            scope.elems.insert(local, entry.clone());
        }
        Some(entry)
    }

    /// Expand one compound element instance named `full`.
    fn instantiate(
        &mut self,
        full: &str,
        class_name: &str,
        overloads: &Rc<Vec<OverloadRef>>,
        cfg: &str,
        span: &Span,
        depth: usize,
    ) -> Option<Entry> {
        if depth + 1 > MAX_EXPANSION_DEPTH {
            self.error(
                span.clone(),
                format!(
                    "compound element '{}' nested more than {} levels deep (runaway elementclass expansion)",
                    full, MAX_EXPANSION_DEPTH
                ),
            );
            self.fatal = true;
            return None;
        }
        let args = split_args(cfg);
        let mut chosen = None;
        let mut first_err = None;
        for o in overloads.iter() {
            match bind(&o.def.overloads[o.idx].formals, &args) {
                Ok(b) => {
                    chosen = Some((o, b));
                    break;
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        let Some((o, bound)) = chosen else {
            let msg = if overloads.len() == 1 {
                format!(
                    "bad arguments for compound element class '{}': {}",
                    class_name,
                    first_err.unwrap_or_default()
                )
            } else {
                format!(
                    "no overload of compound element class '{}' accepts {} argument(s)",
                    class_name,
                    args.len()
                )
            };
            self.error(span.clone(), msg);
            return None;
        };
        let tin = self.new_node(
            NodeKind::Tunnel {
                name: full.to_string(),
                sealed: false,
                src_ports: 0,
                dst_ports: 0,
                is_input: true,
                used: Vec::new(),
            },
            span,
        );
        let tout = self.new_node(
            NodeKind::Tunnel {
                name: full.to_string(),
                sealed: false,
                src_ports: 0,
                dst_ports: 0,
                is_input: false,
                used: Vec::new(),
            },
            span,
        );
        let vars = if bound.is_empty() {
            o.vars.clone()
        } else {
            let mut v = (*o.vars).clone();
            v.extend(bound);
            Rc::new(v)
        };
        let mut inner = Scope {
            prefix: format!("{}/", full),
            elems: HashMap::new(),
            counter: 0,
            classes: o.classes.clone(),
            vars,
        };
        let body = &o.def.overloads[o.idx].body;
        self.defines(&body.stmts, &mut inner);
        self.body(&body.stmts, &mut inner, Some((tin, tout)), depth + 1);
        self.seal(tin, span);
        self.seal(tout, span);
        Some(Entry {
            inn: Some(tin),
            out: Some(tout),
            span: span.clone(),
            group: false,
        })
    }

    /// Ports a sealed tunnel offers to the outside.
    fn tunnel_ports(&self, node: usize) -> usize {
        match &self.nodes[node] {
            NodeKind::Tunnel {
                is_input: true,
                src_ports,
                ..
            } => *src_ports,
            NodeKind::Tunnel {
                is_input: false,
                dst_ports,
                ..
            } => *dst_ports,
            NodeKind::Real(_) => 1,
        }
    }

    /// The body of a compound or group is complete: fix its ports. A port number skipped by
    /// the body (`input [1]` used, `input [0]` not) is an error, as in Click.
    fn seal(&mut self, node: usize, span: &Span) {
        let mut gap = None;
        if let NodeKind::Tunnel {
            sealed,
            used,
            name,
            is_input,
            ..
        } = &mut self.nodes[node]
        {
            *sealed = true;
            if let Some(p) = used.iter().position(|u| !u) {
                gap = Some((name.clone(), *is_input, p));
            }
            *used = Vec::new();
        }
        if let Some((name, is_input, p)) = gap {
            let what = if name == GROUP {
                GROUP.to_string()
            } else {
                format!("compound element '{}'", name)
            };
            let dir = if is_input { "input" } else { "output" };
            self.error(
                span.clone(),
                format!(
                    "{} {} {} unused (its body uses a higher {} port)",
                    what, dir, p, dir
                ),
            );
        }
    }

    fn resolve_endpoint(
        &mut self,
        ep: &Endpoint,
        is_first: bool,
        scope: &mut Scope,
        io: Option<(usize, usize)>,
        depth: usize,
    ) -> Option<Entry> {
        match &ep.primary {
            Primary::Name(n) => {
                if let Some(e) = scope.elems.get(n) {
                    return Some(e.clone());
                }
                if n == "input" || n == "output" {
                    let Some((tin, tout)) = io else {
                        self.error(
                            ep.span.clone(),
                            format!("'{}' is only meaningful inside a compound element or element group", n),
                        );
                        return None;
                    };
                    return Some(if n == "input" {
                        Entry {
                            inn: None,
                            out: Some(tin),
                            span: ep.span.clone(),
                            group: false,
                        }
                    } else {
                        Entry {
                            inn: Some(tout),
                            out: None,
                            span: ep.span.clone(),
                            group: false,
                        }
                    });
                }
                match lookup_class(&scope.classes, n) {
                    Some(class) => self.declare(None, n, &class, None, &ep.span, scope, depth),
                    None if looks_like_class(n) => self.declare(
                        None,
                        n,
                        &Resolved::Primitive(n.clone()),
                        None,
                        &ep.span,
                        scope,
                        depth,
                    ),
                    None => {
                        self.error(
                            ep.span.clone(),
                            format!(
                                "undefined element '{}' (elements must be declared before use; class names start with an upper-case letter)",
                                n
                            ),
                        );
                        None
                    }
                }
            }
            Primary::Decl {
                name,
                class,
                config,
            } => {
                if io.is_some() && (name == "input" || name == "output") {
                    self.error(
                        ep.span.clone(),
                        format!(
                            "cannot declare '{}' inside a compound element or group",
                            name
                        ),
                    );
                    return None;
                }
                let resolved = self.resolve_class(class, scope)?;
                self.declare(
                    Some(name),
                    class_name(class),
                    &resolved,
                    config.as_ref(),
                    &ep.span,
                    scope,
                    depth,
                )
            }
            Primary::Anon { class, config } => {
                let resolved = self.resolve_class(class, scope)?;
                self.declare(
                    None,
                    class_name(class),
                    &resolved,
                    config.as_ref(),
                    &ep.span,
                    scope,
                    depth,
                )
            }
            Primary::Group(body) => {
                let tin = self.new_node(
                    NodeKind::Tunnel {
                        name: GROUP.into(),
                        sealed: false,
                        src_ports: 0,
                        dst_ports: 0,
                        is_input: true,
                        used: Vec::new(),
                    },
                    &ep.span,
                );
                let tout = self.new_node(
                    NodeKind::Tunnel {
                        name: GROUP.into(),
                        sealed: false,
                        src_ports: 0,
                        dst_ports: 0,
                        is_input: false,
                        used: Vec::new(),
                    },
                    &ep.span,
                );
                self.defines(&body.stmts, scope);
                self.body(&body.stmts, scope, Some((tin, tout)), depth);
                self.seal(tin, &ep.span);
                self.seal(tout, &ep.span);
                Some(Entry {
                    inn: Some(tin),
                    out: Some(tout),
                    span: ep.span.clone(),
                    group: true,
                })
            }
            Primary::Implied => {
                let (tin, tout) = io?;
                Some(if is_first {
                    Entry {
                        inn: None,
                        out: Some(tin),
                        span: ep.span.clone(),
                        group: false,
                    }
                } else {
                    Entry {
                        inn: Some(tout),
                        out: None,
                        span: ep.span.clone(),
                        group: false,
                    }
                })
            }
        }
    }

    fn chain(
        &mut self,
        items: &[Vec<Endpoint>],
        ops: &[(Connector, Span)],
        scope: &mut Scope,
        io: Option<(usize, usize)>,
        depth: usize,
    ) {
        // Resolve every endpoint in textual order (this declares inline and anonymous elements).
        let mut resolved: Vec<Vec<Option<Entry>>> = Vec::with_capacity(items.len());
        for (i, list) in items.iter().enumerate() {
            let mut r = Vec::with_capacity(list.len());
            for ep in list {
                r.push(self.resolve_endpoint(ep, i == 0, scope, io, depth));
            }
            resolved.push(r);
        }
        for (k, (op, span)) in ops.iter().enumerate() {
            let (l_eps, r_eps) = (&items[k], &items[k + 1]);
            let (l_res, r_res) = (&resolved[k], &resolved[k + 1]);
            if l_res.iter().chain(r_res.iter()).any(Option::is_none) {
                continue; // already reported
            }
            let mut outs: Vec<(usize, usize, &Span)> = Vec::new();
            for (ep, e) in l_eps.iter().zip(l_res) {
                let e = e.as_ref().expect("checked");
                let Some(node) = e.out else {
                    self.error(
                        ep.span.clone(),
                        "'output' cannot be the source of a connection",
                    );
                    return;
                };
                let default = || {
                    if e.group {
                        (0..self.tunnel_ports(node).max(1)).collect()
                    } else {
                        vec![0]
                    }
                };
                for p in ep.out_ports.clone().unwrap_or_else(default) {
                    outs.push((node, p, &ep.span));
                }
            }
            let mut ins: Vec<(usize, usize, &Span)> = Vec::new();
            for (ep, e) in r_eps.iter().zip(r_res) {
                let e = e.as_ref().expect("checked");
                let Some(node) = e.inn else {
                    self.error(
                        ep.span.clone(),
                        "'input' cannot be the target of a connection",
                    );
                    return;
                };
                let default = || {
                    if e.group {
                        (0..self.tunnel_ports(node).max(1)).collect()
                    } else {
                        vec![0]
                    }
                };
                for p in ep.in_ports.clone().unwrap_or_else(default) {
                    ins.push((node, p, &ep.span));
                }
            }
            match op {
                Connector::Arrow => {
                    if outs.len() > 1 && ins.len() > 1 {
                        self.error(
                            span.clone(),
                            format!(
                                "'->' cannot connect {} outputs to {} inputs; use '=>' to connect ports pairwise",
                                outs.len(),
                                ins.len()
                            ),
                        );
                        continue;
                    }
                    for &(f, fp, _) in &outs {
                        for &(t, tp, _) in &ins {
                            self.edge(f, fp, t, tp, span);
                        }
                    }
                }
                Connector::Parallel => {
                    // A single endpoint without a port list stands for ports 0, 1, ... as many
                    // as the other side has.
                    if l_eps.len() == 1
                        && l_eps[0].out_ports.is_none()
                        && outs.len() == 1
                        && ins.len() > 1
                    {
                        let (n, _, _) = outs[0];
                        outs = (0..ins.len()).map(|p| (n, p, &l_eps[0].span)).collect();
                    }
                    if r_eps.len() == 1
                        && r_eps[0].in_ports.is_none()
                        && ins.len() == 1
                        && outs.len() > 1
                    {
                        let (n, _, _) = ins[0];
                        ins = (0..outs.len()).map(|p| (n, p, &r_eps[0].span)).collect();
                    }
                    if outs.len() != ins.len() {
                        self.error(
                            span.clone(),
                            format!(
                                "'=>' has {} output port(s) on the left but {} input port(s) on the right",
                                outs.len(),
                                ins.len()
                            ),
                        );
                        continue;
                    }
                    for (&(f, fp, _), &(t, tp, _)) in outs.iter().zip(ins.iter()) {
                        self.edge(f, fp, t, tp, span);
                    }
                }
            }
        }
    }

    fn edge(&mut self, from: usize, fport: usize, to: usize, tport: usize, span: &Span) {
        // A sealed tunnel's ports were fixed by its body: check uses from outside.
        if let NodeKind::Tunnel {
            name,
            sealed,
            src_ports,
            dst_ports,
            is_input,
            used,
        } = &mut self.nodes[to]
        {
            if *sealed {
                if tport >= *src_ports {
                    let (name, n, inp) = (name.clone(), *src_ports, *is_input);
                    self.port_error(span, &name, "input", tport, n, inp);
                    return;
                }
            } else {
                *dst_ports = (*dst_ports).max(tport + 1);
                mark(used, tport);
            }
        }
        if let NodeKind::Tunnel {
            name,
            sealed,
            src_ports,
            dst_ports,
            is_input,
            used,
        } = &mut self.nodes[from]
        {
            if *sealed {
                if fport >= *dst_ports {
                    let (name, n, inp) = (name.clone(), *dst_ports, *is_input);
                    self.port_error(span, &name, "output", fport, n, inp);
                    return;
                }
            } else {
                *src_ports = (*src_ports).max(fport + 1);
                mark(used, fport);
            }
        }
        self.edges.push(Edge {
            from,
            fport,
            to,
            tport,
            span: span.clone(),
        });
    }

    fn port_error(
        &mut self,
        span: &Span,
        name: &str,
        dir: &str,
        port: usize,
        n: usize,
        _is_input: bool,
    ) {
        self.error(
            span.clone(),
            format!(
                "connection {} undeclared {} port {} of {} (its body uses {} {} port{})",
                if dir == "input" { "to" } else { "from" },
                dir,
                port,
                if name == GROUP {
                    GROUP.to_string()
                } else {
                    format!("compound '{}'", name)
                },
                n,
                dir,
                if n == 1 { "" } else { "s" }
            ),
        );
    }

    /// Splice connections through tunnels and build the final graph.
    fn finish(mut self) -> AppGraph {
        let mut from_tunnel: HashMap<(usize, usize), Vec<usize>> = HashMap::new();
        for (i, e) in self.edges.iter().enumerate() {
            if matches!(self.nodes[e.from], NodeKind::Tunnel { .. }) {
                from_tunnel.entry((e.from, e.fport)).or_default().push(i);
            }
        }
        let mut seen: HashSet<(usize, usize, usize, usize)> = HashSet::new();
        let mut visited: HashSet<(usize, usize)> = HashSet::new();
        let mut stack: Vec<(usize, usize)> = Vec::new();
        for e in &self.edges {
            let NodeKind::Real(src) = self.nodes[e.from] else {
                continue;
            };
            visited.clear();
            stack.clear();
            stack.push((e.to, e.tport));
            while let Some((n, p)) = stack.pop() {
                match self.nodes[n] {
                    NodeKind::Real(dst) => {
                        if seen.insert((src, e.fport, dst, p)) {
                            self.graph.connect(src, e.fport, dst, p, e.span.clone());
                        }
                    }
                    NodeKind::Tunnel { .. } => {
                        if !visited.insert((n, p)) {
                            continue; // circular tunnels are ignored, as in Click
                        }
                        if let Some(next) = from_tunnel.get(&(n, p)) {
                            for &j in next.iter().rev() {
                                let e2 = &self.edges[j];
                                stack.push((e2.to, e2.tport));
                            }
                        }
                    }
                }
            }
        }
        let _ = self.file;
        self.graph
    }
}

fn mark(used: &mut Vec<bool>, port: usize) {
    if used.len() <= port {
        used.resize(port + 1, false);
    }
    used[port] = true;
}

fn class_name(c: &ClassRef) -> &str {
    match c {
        ClassRef::Named(n, _) => n,
        ClassRef::Compound(_) => "@Anon",
    }
}

/// Bind compound arguments to formal parameters: positional formals take the arguments in
/// order; an argument whose first word is a keyword formal's keyword binds that formal.
fn bind(
    formals: &[crate::parser::Formal],
    args: &[String],
) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    let positional: Vec<_> = formals.iter().filter(|f| f.keyword.is_none()).collect();
    let mut next_pos = 0;
    let mut got_kw: HashSet<&str> = HashSet::new();
    for a in args {
        let first = a.split_whitespace().next().unwrap_or("");
        if let Some(f) = formals
            .iter()
            .find(|f| f.keyword.as_deref() == Some(first) && !first.is_empty())
        {
            let kw = f.keyword.as_deref().unwrap_or("");
            if !got_kw.insert(kw) {
                return Err(format!("keyword argument {} given twice", kw));
            }
            out.push((f.var.clone(), a[first.len()..].trim().to_string()));
            continue;
        }
        if next_pos >= positional.len() {
            return Err(format!(
                "takes {} positional argument(s), more given",
                positional.len()
            ));
        }
        out.push((positional[next_pos].var.clone(), a.clone()));
        next_pos += 1;
    }
    if next_pos < positional.len() {
        return Err(format!(
            "missing argument for '${}'",
            positional[next_pos].var
        ));
    }
    for f in formals {
        if let Some(k) = &f.keyword {
            if !got_kw.contains(k.as_str()) {
                return Err(format!("missing keyword argument {}", k));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parser::Formal;

    fn vars(kv: &[(&str, &str)]) -> HashMap<String, String> {
        kv.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn substitution_forms() {
        let v = vars(&[("a", "X"), ("long_name", "Y")]);
        let sp = Span::new("f", 3, 5);
        assert_eq!(substitute(" $a ${long_name}$a ", &v, &sp).unwrap(), "X YX");
        assert_eq!(
            substitute("'$nope' \\$nope /* $nope */ $ $5x", &v, &sp)
                .unwrap_err()
                .message,
            "unknown variable '$5x'"
        );
        assert_eq!(
            substitute("'$nope' \\$nope /* $nope */ $ cost", &v, &sp).unwrap(),
            "'$nope' \\$nope /* $nope */ $ cost"
        );
        let e = substitute("ab\n  cd $zz", &v, &sp).unwrap_err();
        assert_eq!((e.span.line, e.span.col), (4, 6));
        let e = substitute("ab $zz", &v, &sp).unwrap_err();
        assert_eq!((e.span.line, e.span.col), (3, 8));
        // Scripts' configurations keep the variables they set at run time, as Click does.
        assert_eq!(
            substitute_in("set t $(now), print $t ${t} $a", &v, &sp, true).unwrap(),
            "set t $(now), print $t ${t} X"
        );
    }

    fn formal(kw: Option<&str>, v: &str) -> Formal {
        Formal {
            keyword: kw.map(str::to_string),
            var: v.to_string(),
            span: Span::default(),
        }
    }

    #[test]
    fn binding_positional_and_keyword_arguments() {
        let f = [formal(None, "a"), formal(Some("SIZE"), "s")];
        let args = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            bind(&f, &args(&["SIZE 10", "x"])).unwrap(),
            vec![
                ("s".to_string(), "10".to_string()),
                ("a".to_string(), "x".to_string())
            ]
        );
        assert!(bind(&f, &args(&["x"]))
            .unwrap_err()
            .contains("missing keyword argument SIZE"));
        assert!(bind(&f, &args(&["SIZE 1", "SIZE 2", "x"]))
            .unwrap_err()
            .contains("given twice"));
        assert!(bind(&f, &args(&["SIZE 1"]))
            .unwrap_err()
            .contains("missing argument for '$a'"));
        assert!(bind(&[], &args(&["x"])).is_err());
        assert!(bind(&[], &[]).unwrap().is_empty());
    }

    #[test]
    fn tunnels_splice_through_nested_groups_and_ignore_cycles() {
        let p = crate::parser::parse(
            "a :: A; b :: B; a -> (input -> (input -> output) -> (->) -> output) -> b;",
            "t",
        )
        .unwrap();
        let g = flatten(&p.body, "t", &[]).unwrap();
        assert_eq!(g.connections.len(), 1);
        assert_eq!((g.connections[0].from, g.connections[0].to), (0, 1));
        // A group without an input cannot be connected to.
        let p = crate::parser::parse("a :: A; a -> ((->) -> Idle);", "t").unwrap();
        let e = flatten(&p.body, "t", &[]).unwrap_err();
        assert_eq!(
            e[0].message,
            "connection to undeclared input port 0 of the element group (its body uses 0 input ports)"
        );
        // A compound whose output feeds its own input: no infinite loop.
        let p =
            crate::parser::parse("a :: A; g :: { input -> output }; a -> g; g -> g;", "t").unwrap();
        let g = flatten(&p.body, "t", &[]).unwrap();
        assert!(g.connections.is_empty());
    }
}
