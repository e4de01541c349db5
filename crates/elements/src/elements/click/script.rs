//! `Script([TYPE ACTIVE|DRIVER,] INSTRUCTION, ...)` and `DriverManager(INSTRUCTION, ...)` —
//! the handler scripts a Click configuration uses to stop itself and print its counters.
//!
//! Ports: none. Instructions (one per configuration argument):
//! `wait`, `wait_stop`, `wait_time T`, `wait T`, `wait_for ...`, `pause` (all wait for the
//! end of the packets, see below); `print [TEXT | HANDLER]...` (each argument that names a
//! read handler `ELEMENT.HANDLER` prints its value, any other is printed as written, quotes
//! removed; arguments are separated by one space); `read HANDLER` (prints `ELEMENT.HANDLER:`
//! then the value) and `readq HANDLER` (the value only); `write HANDLER [VALUE]` /
//! `writeq`; `set VAR VALUE`, `init VAR VALUE`; `stop`, `end`, `exit`, `return [VALUE]`
//! (all end the script; a value is ignored, as for Click's active scripts).
//! Control instructions, as Click documents them: `label L` defines label L; `goto L [COND]`
//! jumps to it (only when COND, after expansion, is a true Boolean: `true`/`1`/`yes`; a
//! COND that is not a Boolean is an error); `goto begin` and `loop` jump to the first
//! instruction, `goto end` / `goto exit` end the script, `goto error` is `error`; `error
//! [MSG]` ends the script and the run with the error `script error: MSG`. A goto to a label
//! that is not defined is refused when the configuration is read. Click disables a script
//! that executes 1000 gotos without blocking; pktflow makes that one error line instead
//! (`1000 jumps without waiting: the script loops endlessly`), which also bounds the
//! instructions a script runs per phase (at most 1001 times its length).
//! In every argument, `$VAR`/`${VAR}` is a variable and `$(ELEMENT.HANDLER)` a handler's
//! value; `$(add A B)`, `$(sub A B)`, `$(mul A B)`, `$(div A B)` compute integers (div
//! rounds toward zero; division by zero is an error; more than two operands fold left, as
//! in Click), and the comparisons `$(eq A B)`, `ne`, `lt`, `gt`, `le`, `ge` (numeric when
//! both parse as integers, else bytewise string order) and `$(not BOOL)` give `true` or
//! `false`.
//! Read handlers are an element's counters (the keys of its `element_stats` entry, e.g.
//! `c.count`, `c.byte_count`, `q.drops`); the write handlers are `stop` (the router's, also
//! `ELEMENT.stop`), `Counter.reset`, `AverageCounter.reset`, `ACTIVE`-carrying sources'
//! `active` (`src.active false`).
//!
//! Timing convention (where pktflow differs from Click): a functional run has no wall clock.
//! Instructions before the first wait run when the configuration is set up (before the
//! first packet); a wait completes when the packet sources are exhausted (or a `stop` was
//! requested, e.g. by `Counter(COUNT_CALL N stop)`), and everything after it runs then. So a
//! `wait_time 5s` between two prints does not let 5 simulated seconds of packets pass.
//! The PACKET/PASSIVE/PROXY/SIGNAL script types are refused with a message. A DriverManager without instructions is `wait_stop, stop`.
//! The printed lines are the element's `output` statistic (and `pktflow profile` prints them).
//! Costs: none (not on any packet's path).
use crate::conf::{split_args, split_words, unquote, InitEnv};
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use std::collections::BTreeMap;

pub const SCRIPT: ClassInfo = ClassInfo {
    name: "Script",
    summary: "run handler instructions (print counters, write handlers, stop)",
    make: make_script,
};
pub const DRIVER_MANAGER: ClassInfo = ClassInfo {
    name: "DriverManager",
    summary: "handler instructions that decide when the run stops",
    make: make_driver,
};

#[derive(Clone, Debug, PartialEq)]
pub enum Instr {
    Wait,
    Print(Vec<String>),
    Read(String, bool),
    Write(String, String),
    Set(String, String, bool),
    Stop,
    End,
    Label,
    /// Jump to instruction index (or end, begin, error) when the condition (if any) holds.
    Goto(Target, Option<String>),
    Error(String),
}

/// Where a goto goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    At(usize),
    End,
    Error,
}

/// Click's limit: a script that jumps this many times without blocking is stopped.
pub const MAX_JUMPS: u32 = 1000;

/// A parsed script and its state.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub instrs: Vec<Instr>,
    /// Next instruction to run.
    pub pc: usize,
    pub vars: BTreeMap<String, String>,
    pub output: Vec<String>,
    pub ended: bool,
}

/// What a script needs from the router while it runs.
pub trait Handlers {
    fn read(&self, spec: &str) -> Result<String, String>;
    fn write(&mut self, spec: &str, value: &str) -> Result<(), String>;
}

/// Split an instruction into words: whitespace separates them, except inside quotes and
/// `$(...)` / `${...}` expansions.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let (mut depth, mut quote) = (0i32, None::<char>);
    for c in s.chars() {
        match (quote, c) {
            (Some(q), _) => {
                cur.push(c);
                if c == q {
                    quote = None;
                }
            }
            (None, '"' | '\'') => {
                quote = Some(c);
                cur.push(c);
            }
            (None, '(' | '{') => {
                depth += 1;
                cur.push(c);
            }
            (None, ')' | '}') => {
                depth -= 1;
                cur.push(c);
            }
            (None, c) if c.is_whitespace() && depth <= 0 => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

pub fn parse_script(class: &str, config: &str, driver: bool) -> Result<Script, String> {
    let mut args = split_args(config);
    args.retain(|a| !a.is_empty());
    if let Some(first) = args.first() {
        let w = split_words(first);
        if w.first().map(String::as_str) == Some("TYPE") {
            match w.get(1).map(String::as_str) {
                Some("ACTIVE") | Some("DRIVER") if w.len() == 2 => {}
                Some(t) => {
                    return Err(format!(
                        "{class}: TYPE {t} is not supported (ACTIVE or DRIVER only)"
                    ))
                }
                None => return Err(format!("{class}: TYPE needs a value")),
            }
            args.remove(0);
        }
    }
    let mut instrs = Vec::new();
    // Labels: name -> index of the instruction after the label.
    let mut labels = BTreeMap::new();
    let mut gotos: Vec<(usize, String, Option<String>, String)> = Vec::new();
    for a in &args {
        let w = words(a);
        let cmd = w[0].as_str();
        let rest = || w[1..].join(" ");
        let need = |n: usize| -> Result<(), String> {
            if w.len() - 1 < n {
                Err(format!("{class}: '{a}': {cmd} needs {n} argument(s)"))
            } else {
                Ok(())
            }
        };
        instrs.push(match cmd {
            "wait" | "wait_stop" | "wait_time" | "wait_for" | "pause" => Instr::Wait,
            "print" => {
                let mut ws = w[1..].to_vec();
                if ws.first().is_some_and(|x| x.starts_with('>')) {
                    return Err(format!(
                        "{class}: '{a}': printing to a file is not supported"
                    ));
                }
                ws.retain(|_| true);
                Instr::Print(ws)
            }
            "read" | "readq" => {
                need(1)?;
                Instr::Read(w[1].clone(), cmd == "readq")
            }
            "write" | "writeq" => {
                need(1)?;
                Instr::Write(w[1].clone(), w[2..].join(" "))
            }
            "set" | "init" => {
                need(1)?;
                let v = w[1].trim_start_matches('$').to_string();
                Instr::Set(v, w[2..].join(" "), cmd == "init")
            }
            "stop" => Instr::Stop,
            "end" | "exit" | "return" => Instr::End,
            "label" => {
                need(1)?;
                labels.entry(w[1].clone()).or_insert(instrs.len());
                Instr::Label
            }
            "goto" => {
                need(1)?;
                if w.len() > 3 {
                    return Err(format!("{class}: '{a}': expected 'goto LABEL [CONDITION]'"));
                }
                gotos.push((instrs.len(), w[1].clone(), w.get(2).cloned(), a.clone()));
                Instr::Goto(Target::At(0), None)
            }
            "loop" => Instr::Goto(Target::At(0), None),
            "error" | "errorq" => Instr::Error(rest()),
            other => {
                return Err(format!("{class}: unknown instruction '{other}' in '{a}'"));
            }
        });
    }
    for (at, label, cond, text) in gotos {
        let t = match label.as_str() {
            "begin" => Target::At(0),
            "end" | "exit" => Target::End,
            "error" => Target::Error,
            l => match labels.get(l) {
                Some(&i) => Target::At(i),
                None => {
                    return Err(format!(
                        "{class}: '{text}': no label '{l}' (define it with 'label {l}')"
                    ))
                }
            },
        };
        instrs[at] = Instr::Goto(t, cond);
    }
    if driver && instrs.is_empty() {
        instrs = vec![Instr::Wait, Instr::Stop];
    }
    Ok(Script {
        instrs,
        ..Default::default()
    })
}

impl Script {
    /// Run instructions until the next wait (`past_wait` false) or to the end. Returns true
    /// when the script asked the router to stop.
    pub fn run(&mut self, h: &mut dyn Handlers, past_wait: bool) -> Result<bool, String> {
        let mut stop = false;
        let mut jumps = 0u32;
        while !self.ended && self.pc < self.instrs.len() {
            let i = self.instrs[self.pc].clone();
            self.pc += 1;
            match i {
                Instr::Wait => {
                    if !past_wait {
                        return Ok(stop);
                    }
                }
                Instr::Goto(t, cond) => {
                    if let Some(c) = cond {
                        let v = unquote(&self.expand(&c, h)?);
                        let yes = crate::conf::parse_bool(v.trim()).map_err(|_| {
                            format!("goto condition '{c}' is '{v}', not true or false")
                        })?;
                        if !yes {
                            continue;
                        }
                    }
                    jumps += 1;
                    if jumps >= MAX_JUMPS {
                        self.ended = true;
                        return Err(format!(
                            "{MAX_JUMPS} jumps without waiting: the script loops endlessly"
                        ));
                    }
                    match t {
                        Target::At(i) => self.pc = i,
                        Target::End => self.ended = true,
                        Target::Error => {
                            self.ended = true;
                            return Err("script error".into());
                        }
                    }
                }
                Instr::Error(msg) => {
                    self.ended = true;
                    let m = unquote(&self.expand(&msg, h)?);
                    return Err(if m.is_empty() {
                        "script error".into()
                    } else {
                        format!("script error: {m}")
                    });
                }
                Instr::Print(ws) => {
                    let mut parts = Vec::new();
                    for w in &ws {
                        let x = self.expand(w, h)?;
                        let is_quoted = w.starts_with('"') || w.starts_with('\'');
                        parts.push(match (is_quoted, h.read(&x)) {
                            (false, Ok(v)) if x.contains('.') => v,
                            _ => unquote(&x),
                        });
                    }
                    self.output.push(parts.join(" "));
                }
                Instr::Read(spec, quiet) => {
                    let spec = self.expand(&spec, h)?;
                    let v = h.read(&spec)?;
                    if !quiet {
                        self.output.push(format!("{spec}:"));
                    }
                    self.output.push(v);
                }
                Instr::Write(spec, v) => {
                    let spec = self.expand(&spec, h)?;
                    let v = unquote(&self.expand(&v, h)?);
                    if spec == "stop" || spec.ends_with(".stop") {
                        stop = true;
                    } else {
                        h.write(&spec, &v)?;
                    }
                }
                Instr::Set(name, v, init) => {
                    if !(init && self.vars.contains_key(&name)) {
                        let v = unquote(&self.expand(&v, h)?);
                        self.vars.insert(name, v);
                    }
                }
                Instr::Stop => {
                    stop = true;
                    self.ended = true;
                }
                Instr::End => self.ended = true,
                Instr::Label => {}
            }
        }
        Ok(stop)
    }

    /// Expand `$VAR`, `${VAR}` and `$(...)` in `s`.
    pub fn expand(&self, s: &str, h: &dyn Handlers) -> Result<String, String> {
        let mut out = String::new();
        let mut it = s.char_indices().peekable();
        while let Some((i, c)) = it.next() {
            if c != '$' {
                out.push(c);
                continue;
            }
            match it.peek().map(|x| x.1) {
                Some('(') | Some('{') => {
                    let (open, close) = if it.peek().unwrap().1 == '(' {
                        ('(', ')')
                    } else {
                        ('{', '}')
                    };
                    let mut depth = 0;
                    let mut end = None;
                    for (j, d) in s[i + 1..].char_indices() {
                        if d == open {
                            depth += 1;
                        } else if d == close {
                            depth -= 1;
                            if depth == 0 {
                                end = Some(i + 1 + j);
                                break;
                            }
                        }
                    }
                    let end = end.ok_or_else(|| format!("unbalanced '$' expansion in '{s}'"))?;
                    let inner = self.expand(&s[i + 2..end], h)?;
                    out.push_str(&if open == '{' {
                        self.var(&inner)?
                    } else {
                        self.call(&inner, h)?
                    });
                    while it.peek().is_some_and(|x| x.0 <= end) {
                        it.next();
                    }
                }
                _ => {
                    let mut name = String::new();
                    while let Some(&(_, d)) = it.peek() {
                        if d.is_ascii_alphanumeric() || d == '_' {
                            name.push(d);
                            it.next();
                        } else {
                            break;
                        }
                    }
                    if name.is_empty() {
                        out.push('$');
                    } else {
                        out.push_str(&self.var(&name)?);
                    }
                }
            }
        }
        Ok(out)
    }

    fn var(&self, name: &str) -> Result<String, String> {
        self.vars
            .get(name)
            .cloned()
            .ok_or_else(|| format!("variable ${name} is not set"))
    }

    fn call(&self, inner: &str, h: &dyn Handlers) -> Result<String, String> {
        let w = split_words(inner);
        let int = |x: &str| -> Result<i64, String> {
            x.trim()
                .parse::<i64>()
                .map_err(|_| format!("'{x}' is not an integer in $({inner})"))
        };
        let op = |f: fn(i64, i64) -> Option<i64>| -> Result<String, String> {
            if w.len() < 3 {
                return Err(format!("$({inner}): expected at least two operands"));
            }
            let mut acc = int(&w[1])?;
            for x in &w[2..] {
                acc = f(acc, int(x)?)
                    .ok_or_else(|| format!("$({inner}): overflow or division by zero"))?;
            }
            Ok(acc.to_string())
        };
        let cmp = |f: fn(std::cmp::Ordering) -> bool| -> Result<String, String> {
            if w.len() != 3 {
                return Err(format!("$({inner}): expected two operands"));
            }
            let (a, b) = (unquote(&w[1]), unquote(&w[2]));
            let o = match (a.trim().parse::<i64>(), b.trim().parse::<i64>()) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                _ => a.as_bytes().cmp(b.as_bytes()),
            };
            Ok(f(o).to_string())
        };
        match w.first().map(String::as_str) {
            Some("add") => op(i64::checked_add),
            Some("sub") => op(i64::checked_sub),
            Some("mul") => op(i64::checked_mul),
            Some("div") | Some("idiv") => op(i64::checked_div),
            Some("eq") => cmp(|o| o.is_eq()),
            Some("ne") => cmp(|o| o.is_ne()),
            Some("lt") => cmp(|o| o.is_lt()),
            Some("gt") => cmp(|o| o.is_gt()),
            Some("le") => cmp(|o| o.is_le()),
            Some("ge") => cmp(|o| o.is_ge()),
            Some("not") if w.len() == 2 => crate::conf::parse_bool(unquote(&w[1]).trim())
                .map(|b| (!b).to_string())
                .map_err(|_| format!("$({inner}): '{}' is not true or false", w[1])),
            Some(_) if w.len() == 1 => h.read(&w[0]),
            _ => Err(format!("$({inner}): unknown expression")),
        }
    }
}

struct ScriptElement {
    script: Option<Script>,
    output: Vec<String>,
}

fn make_script(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Ok(Box::new(ScriptElement {
        script: Some(parse_script("Script", config, false)?),
        output: Vec::new(),
    }))
}
fn make_driver(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Ok(Box::new(ScriptElement {
        script: Some(parse_script("DriverManager", config, true)?),
        output: Vec::new(),
    }))
}

impl Element for ScriptElement {
    fn ports(&self) -> Ports {
        Ports::agnostic(0, 0)
    }
    fn take_script(&mut self) -> Option<Script> {
        self.script.take()
    }
    fn put_script(&mut self, s: Script) {
        self.output = s.output.clone();
        self.script = Some(s);
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"output": self.output})
    }
    fn code_size(&self) -> u32 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct H(BTreeMap<String, String>, Vec<(String, String)>);
    impl Handlers for H {
        fn read(&self, spec: &str) -> Result<String, String> {
            self.0
                .get(spec)
                .cloned()
                .ok_or_else(|| format!("no handler {spec}"))
        }
        fn write(&mut self, spec: &str, value: &str) -> Result<(), String> {
            self.1.push((spec.into(), value.into()));
            Ok(())
        }
    }

    #[test]
    fn runs_in_two_phases_with_variables_and_handlers() {
        let mut s = parse_script(
            "DriverManager",
            "set n 3, write c.reset, wait, print \"count:\" c.count $n, set m $(add $n 4), readq c.count, print $(mul $m 2), stop, print never",
            true,
        )
        .unwrap();
        let mut h = H([("c.count".to_string(), "12".to_string())].into(), vec![]);
        assert!(!s.run(&mut h, false).unwrap());
        assert_eq!(h.1, vec![("c.reset".to_string(), String::new())]);
        assert!(s.output.is_empty());
        assert!(s.run(&mut h, true).unwrap());
        assert_eq!(s.output, vec!["count: 12 3", "12", "14"]);
    }

    #[test]
    fn defaults_and_refusals() {
        let s = parse_script("DriverManager", "", true).unwrap();
        assert_eq!(s.instrs, vec![Instr::Wait, Instr::Stop]);
        assert!(parse_script("Script", "goto x", false)
            .unwrap_err()
            .contains("no label 'x'"));
        assert!(parse_script("Script", "TYPE PACKET, print x", false)
            .unwrap_err()
            .contains("PACKET"));
        assert!(parse_script("Script", "frobnicate", false)
            .unwrap_err()
            .contains("unknown"));
        let mut s = parse_script("Script", "print $x", false).unwrap();
        let mut h = H(BTreeMap::new(), vec![]);
        assert!(s.run(&mut h, true).unwrap_err().contains("$x"));
        let mut s = parse_script("Script", "print $(div 1 0)", false).unwrap();
        assert!(s.run(&mut h, true).is_err());
    }

    /// Click's documented example: prints 0, 1, 2, 3, 4, then stops.
    #[test]
    fn labels_conditional_goto_and_loop_limit() {
        let mut h = H(BTreeMap::new(), vec![]);
        let mut s = parse_script(
            "Script",
            "set x 0, label begin_loop, print $x, set x $(add $x 1), goto begin_loop $(lt $x 5), stop",
            false,
        )
        .unwrap();
        assert!(s.run(&mut h, false).unwrap());
        assert_eq!(s.output, vec!["0", "1", "2", "3", "4"]);
        // goto end / exit end the script; a false condition falls through.
        let mut s = parse_script(
            "Script",
            "goto end $(eq a b), print one, goto exit, print two",
            false,
        )
        .unwrap();
        assert!(!s.run(&mut h, true).unwrap());
        assert_eq!(s.output, vec!["one"]);
        // error ends the run with its message; goto error without one.
        let mut s = parse_script(
            "Script",
            "print a, error \"bad $(sub 3 1)\", print b",
            false,
        )
        .unwrap();
        assert_eq!(s.run(&mut h, true).unwrap_err(), "script error: bad 2");
        assert_eq!(s.output, vec!["a"]);
        let mut s = parse_script("Script", "goto error $(not false)", false).unwrap();
        assert_eq!(s.run(&mut h, true).unwrap_err(), "script error");
        // An endless loop is one error, after Click's 1000 jumps; so is loop without a wait
        // once the packets are over.
        for conf in ["label a, goto a", "print x, wait, loop"] {
            let mut s = parse_script("Script", conf, false).unwrap();
            let e = s
                .run(&mut h, false)
                .and_then(|_| s.run(&mut h, true))
                .unwrap_err();
            assert!(e.contains("1000 jumps"), "{conf}: {e}");
        }
        // Before the packets end, a wait in the loop blocks: no error.
        let mut s = parse_script("Script", "label a, wait, goto a", false).unwrap();
        assert!(!s.run(&mut h, false).unwrap());
        let mut s = parse_script("Script", "goto a maybe, label a", false).unwrap();
        assert!(s
            .run(&mut h, true)
            .unwrap_err()
            .contains("not true or false"));
        assert!(parse_script("Script", "goto a b c, label a", false).is_err());
        assert_eq!(
            parse_script(
                "Script",
                "print $(ge 10 9) $(le b a) $(ne 1 1) $(mul 2 3 4)",
                false
            )
            .and_then(|mut s| s.run(&mut h, true).map(|_| s.output))
            .unwrap(),
            vec!["true false false 24"]
        );
    }
}
