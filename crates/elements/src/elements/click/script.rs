//! `Script([TYPE ACTIVE|DRIVER,] INSTRUCTION, ...)` and `DriverManager(INSTRUCTION, ...)` —
//! the handler scripts a Click configuration uses to stop itself and print its counters.
//!
//! Ports: none. Instructions (one per configuration argument):
//! `wait`, `wait_stop`, `wait_time T`, `wait T`, `wait_for ...`, `pause` (all wait for the
//! end of the packets, see below); `print [TEXT | HANDLER]...` (each argument that names a
//! read handler `ELEMENT.HANDLER` prints its value, any other is printed as written, quotes
//! removed; arguments are separated by one space); `read HANDLER` (prints `ELEMENT.HANDLER:`
//! then the value) and `readq HANDLER` (the value only); `write HANDLER [VALUE]` /
//! `writeq`; `set VAR VALUE`, `init VAR VALUE`; `stop`, `end`, `exit`, `return`; `label`.
//! In every argument, `$VAR`/`${VAR}` is a variable and `$(ELEMENT.HANDLER)` a handler's
//! value; `$(add A B)`, `$(sub A B)`, `$(mul A B)`, `$(div A B)` compute integers (div
//! rounds toward zero; division by zero is an error).
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
//! `goto`, `loop`, `error` and the PACKET/PASSIVE/PROXY/SIGNAL script types are refused
//! with a message. A DriverManager without instructions is `wait_stop, stop`.
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
}

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
                    return Err(format!("{class}: '{a}': printing to a file is not supported"));
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
                Instr::Label
            }
            "goto" | "loop" | "error" => {
                return Err(format!(
                    "{class}: '{cmd}' is not supported (scripts run straight through; see docs/elements.md)"
                ))
            }
            other => {
                let _ = rest();
                return Err(format!("{class}: unknown instruction '{other}' in '{a}'"));
            }
        });
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
        while !self.ended && self.pc < self.instrs.len() {
            let i = self.instrs[self.pc].clone();
            self.pc += 1;
            match i {
                Instr::Wait => {
                    if !past_wait {
                        return Ok(stop);
                    }
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
            if w.len() != 3 {
                return Err(format!("$({inner}): expected two operands"));
            }
            f(int(&w[1])?, int(&w[2])?)
                .map(|v| v.to_string())
                .ok_or_else(|| format!("$({inner}): overflow or division by zero"))
        };
        match w.first().map(String::as_str) {
            Some("add") => op(i64::checked_add),
            Some("sub") => op(i64::checked_sub),
            Some("mul") => op(i64::checked_mul),
            Some("div") | Some("idiv") => op(i64::checked_div),
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
            .contains("not supported"));
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
}
