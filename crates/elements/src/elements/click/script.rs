//! `Script([TYPE ACTIVE|DRIVER,] INSTRUCTION, ...)` and `DriverManager(INSTRUCTION, ...)` —
//! the handler scripts a Click configuration uses to compute, print its counters and stop.
//! They do what Click 2.1's Script does (elements/standard/script.{cc,hh}, read as
//! documentation; every expected value in the tests is Click's own output, recorded in
//! tests/data/click-ref/script/cases.jsonl).
//!
//! Ports: none. Instructions, one per configuration argument, as Click documents them:
//! - `set VAR TEXT` / `setq VAR TEXT` (q: one layer of quotes removed), `init`/`initq`
//!   (assigned once, before the script runs), `export`/`exportq` (as init, and VAR becomes
//!   a read handler of the element).
//! - `print [TEXT | HANDLER [ARGS]]`, `printq`, `printn` (no newline), `printnq`: text that
//!   starts with a letter, `@` or `_` is a read handler call (`print c.count`); other text is
//!   printed with one layer of quotes removed (`print "count $(c.count)"`).
//! - `read HANDLER [ARGS]` / `readq` (prints `NAME:` then the value), `write HANDLER [ARGS]`
//!   / `writeq` (`$?` is its status afterwards).
//! - `wait`, `wait TIME`, `wait_time`, `wait_for`, `wait_step`, `wait_stop`, `pause [N]`: all
//!   wait for the end of the packets, see below.
//! - `label L`, `goto L [CONDITION]` (the labels `begin`/`loop` are the first instruction;
//!   `end`, `exit`, `stop`, `error`, `errorq` act as those instructions), `loop`, `end`,
//!   `exit`, `stop`, `return [VALUE]`/`returnq`, `error [MSG]`/`errorq`.
//!
//! Substitutions happen when an instruction runs: `$VAR`, `${VAR}` and `$(HANDLER ARGS)`,
//! nested as deep as Click allows (ten levels). A variable no instruction sets is left as
//! written (`print $x` prints `$x`); one that a `set` later in the script assigns is empty
//! until then. `$?`, `$#`, `$0`, `$1`.., `$args`, `$write` and `$$` are Click's special
//! variables (an active script has no arguments: `$#` is 0, the others empty; `$$` is the
//! process id).
//!
//! The element's own read handlers, usable as `$(add 1 2)` or `$(NAME.add 1 2)`: `add`,
//! `sub`, `mul`, `div`, `idiv`, `min`, `max` (integers while every operand is one, wrapping
//! at 64 bits as Click's do on x86; else reals; `div` is always real, `idiv` truncates),
//! `mod` (integers), `rem` (reals too), `neg`, `abs`, `eq`, `ne`, `lt`, `gt`, `le`, `ge`
//! (numbers when both parse, else bytewise text), `not`, `and`, `or`, `nand`, `nor`, `if`,
//! `in`, `first`, `sprintf`, `random`, `now`, `readable`, `writable`, `length`, `unquote`,
//! `htons`, `htonl`, `ntohs`, `ntohl`, `cat`, `catq`, `get`, `shift`; the write handler
//! `set`. Reals print as C's `%.12g`; Booleans as `true`/`false`.
//!
//! Where pktflow differs from Click, and why:
//! - Errors end the run with one line (`s: 'print $(add x)': expected list of numbers`);
//!   Click prints the error, substitutes nothing and carries on. So do division or modulus
//!   of integers by zero (`mod 7 0`), which kill Click with SIGFPE.
//! - A functional run has no wall clock of its own: instructions before the first wait run
//!   when the configuration is set up (before the first packet); a wait completes when the
//!   packet sources are exhausted (or a `stop` was requested, e.g. by `Counter(COUNT_CALL N
//!   stop)`), and everything after it runs then. `$(now)` is the host's clock, in Click's
//!   format (`1700000000.123456789`), so `set t0 $(now), wait, set t1 $(now)` measures how
//!   long pktflow took to process the packets.
//! - `random` draws from a generator seeded by the configuration's RandomSeed (else 1), so
//!   runs repeat; its range is Click's.
//! - Not provided: the PACKET/PASSIVE/PROXY/SIGNAL types, printing to a file (`print >F`,
//!   `save`, `append`), the `kill` handler (it signals host processes), the `run`, `step`
//!   and `goto` write handlers, and other Script elements' handlers (`$(other.add 1 2)`).
//!   `writable` knows the write handlers pktflow's elements have.
//! - Every value is limited to 1 MiB and what one script prints to 16 MiB (an error line
//!   beyond), where Click would allocate until memory runs out.
//! - The script is disabled after 1000 jumps without waiting, as in Click, and that is
//!   an error line (`too many jumps, giving up: 1000 jumps without waiting, the script loops
//!   endlessly`).
//!
//! The printed lines are the element's `output` statistic (`pktflow profile` and `pktflow
//! run` print them). Costs: none (not on any packet's path).
use crate::conf::InitEnv;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use std::path::PathBuf;

mod cp;
mod printf;

use cp::{lossy, shift};

pub const SCRIPT: ClassInfo = ClassInfo {
    name: "Script",
    summary: "run handler instructions (compute, print counters, write handlers, stop)",
    make: make_script,
};
pub const DRIVER_MANAGER: ClassInfo = ClassInfo {
    name: "DriverManager",
    summary: "handler instructions that decide when the run stops",
    make: make_driver,
};

/// Click's limit: a script that jumps this many times without blocking is stopped.
pub const MAX_JUMPS: u32 = 1000;
/// Longest value (variable, substitution, handler result) a script makes.
pub const MAX_VALUE_BYTES: usize = 1 << 20;
/// Most a script prints in one run.
pub const MAX_OUTPUT_BYTES: usize = 16 << 20;
/// Deepest substitution Click expands (deeper `$` are left as written).
const MAX_DEPTH: u32 = 10;

#[derive(Clone, Debug, PartialEq)]
pub enum Instr {
    /// Any blocking instruction.
    Wait,
    Print {
        text: Vec<u8>,
        unquote_param: bool,
        newline: bool,
    },
    Read {
        text: Vec<u8>,
        unquote_param: bool,
    },
    Write {
        text: Vec<u8>,
        unquote_param: bool,
    },
    /// set/setq (run time) and return/returnq (variable `_`, then the script ends).
    Set {
        var: usize,
        text: Vec<u8>,
        unquote: bool,
        ret: bool,
    },
    /// init/initq/export/exportq: assigned once, before the script runs.
    Init {
        var: usize,
        text: Vec<u8>,
        unquote: bool,
    },
    Label,
    Goto {
        target: Target,
        cond: Vec<u8>,
    },
    End,
    Stop,
    Error {
        text: Vec<u8>,
        unquote: bool,
    },
}

/// Where a goto goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    At(usize),
    End,
    Stop,
    Error,
}

/// A parsed script and its state.
#[derive(Clone, Debug, Default)]
pub struct Script {
    pub instrs: Vec<Instr>,
    /// The configuration argument each instruction came from (for error lines).
    texts: Vec<String>,
    /// Next instruction to run.
    pub pc: usize,
    /// Variables (name, value): every variable an instruction assigns exists from the start.
    vars: Vec<(Vec<u8>, Vec<u8>)>,
    /// Exported variables (indices in `vars`): read handlers of the element.
    exports: Vec<usize>,
    pub output: Vec<String>,
    output_bytes: usize,
    /// Text printed without a newline yet (`printn`).
    partial: Vec<u8>,
    pub ended: bool,
    initialized: bool,
    write_status: i32,
    /// The element's name (its own handlers answer to `NAME.HANDLER`).
    name: String,
    /// Relative file names (`cat`) resolve against this folder.
    base_dir: PathBuf,
    rng: u64,
}

/// What a script needs from the router while it runs.
pub trait Handlers {
    fn read(&self, spec: &str) -> Result<String, String>;
    fn write(&mut self, spec: &str, value: &str) -> Result<(), String>;
    /// Whether `spec` names an existing write handler.
    fn writable(&self, _spec: &str) -> bool {
        false
    }
}

/// The element's own read handlers that take arguments.
const OWN_READ: &[&str] = &[
    "add", "sub", "min", "max", "mul", "div", "idiv", "mod", "rem", "neg", "abs", "eq", "ne", "gt",
    "ge", "lt", "le", "not", "sprintf", "first", "random", "and", "or", "nand", "nor", "if", "in",
    "readable", "writable", "length", "unquote", "htons", "htonl", "ntohs", "ntohl", "cat", "catq",
    "get", "shift",
];
/// Click's own write handlers (only `set` is provided).
const OWN_WRITE: &[&str] = &["set", "step", "goto", "run"];

/// Parse a Script (`driver`: a DriverManager or TYPE DRIVER script, which stops the router
/// when it runs off its end).
pub fn parse_script(class: &str, config: &str, driver: bool) -> Result<Script, String> {
    parse_script_in(class, config, driver, &InitEnv::default())
}

fn parse_script_in(
    class: &str,
    config: &str,
    mut driver: bool,
    env: &InitEnv,
) -> Result<Script, String> {
    let mut s = Script {
        name: env.name.clone(),
        base_dir: env.base_dir.clone(),
        rng: env.seed ^ 0x9e37_79b9_7f4a_7c15,
        ..Default::default()
    };
    let mut args = cp::argvec(config.as_bytes());
    // The TYPE keyword, in any position.
    let mut i = 0;
    while i < args.len() {
        let (w, rest) = shift(&args[i]);
        if w == b"TYPE" {
            let (t, more) = shift(rest);
            match (t, more.is_empty()) {
                (b"ACTIVE", true) => {}
                (b"DRIVER", true) => driver = true,
                (b"PASSIVE" | b"PACKET" | b"PUSH" | b"PROXY" | b"SIGNAL", _) => {
                    return Err(format!(
                        "{class}: TYPE {} is not supported (ACTIVE or DRIVER only)",
                        lossy(t)
                    ))
                }
                _ => return Err(format!("{class}: bad TYPE '{}'", lossy(rest))),
            }
            args.remove(i);
        } else {
            i += 1;
        }
    }
    let syntax = |a: &[u8], what: &str| -> String {
        format!("{class}: syntax error at '{what}' in '{}'", lossy(a))
    };
    let mut gotos = Vec::new();
    for a in &args {
        let (cmd, rest) = shift(a);
        if cmd.is_empty() {
            continue;
        }
        let cmd_s = lossy(cmd);
        let text = rest.to_vec();
        let instr = match cmd {
            b"wait" if rest.is_empty() => Instr::Wait,
            b"wait" | b"wait_time" | b"wait_for" => Instr::Wait,
            b"pause" | b"wait_step" | b"wait_stop" => {
                if !rest.is_empty() && cp::int_u32(rest).is_none() {
                    return Err(syntax(a, &cmd_s));
                }
                Instr::Wait
            }
            b"print" | b"printq" | b"printn" | b"printnq" => {
                if rest.starts_with(b">") {
                    return Err(format!(
                        "{class}: '{}': printing to a file is not supported",
                        lossy(a)
                    ));
                }
                Instr::Print {
                    text,
                    unquote_param: cmd.ends_with(b"q"),
                    newline: !cmd.starts_with(b"printn"),
                }
            }
            b"save" | b"append" => {
                return Err(format!(
                    "{class}: '{}': writing to a file is not supported",
                    lossy(a)
                ))
            }
            b"read" | b"readq" => Instr::Read {
                text,
                unquote_param: cmd == b"readq",
            },
            b"write" | b"writeq" => Instr::Write {
                text,
                unquote_param: cmd == b"writeq",
            },
            b"set" | b"setq" | b"init" | b"initq" | b"export" | b"exportq" => {
                let (var, value) = shift(rest);
                if var.is_empty() || (cmd.starts_with(b"set") && value.is_empty()) {
                    return Err(syntax(a, &cmd_s));
                }
                let v = s.var_index(var);
                let q = cmd.ends_with(b"q");
                if cmd.starts_with(b"set") {
                    Instr::Set {
                        var: v,
                        text: value.to_vec(),
                        unquote: q,
                        ret: false,
                    }
                } else {
                    if cmd.starts_with(b"export") && !s.exports.contains(&v) {
                        s.exports.push(v);
                    }
                    Instr::Init {
                        var: v,
                        text: value.to_vec(),
                        unquote: q,
                    }
                }
            }
            b"return" | b"returnq" => Instr::Set {
                var: s.var_index(b"_"),
                text,
                unquote: cmd == b"returnq",
                ret: true,
            },
            b"label" => {
                let (l, more) = shift(rest);
                if l.is_empty() || !more.is_empty() {
                    return Err(syntax(a, &cmd_s));
                }
                Instr::Label
            }
            b"goto" => {
                let (l, cond) = shift(rest);
                gotos.push((s.instrs.len(), l.to_vec(), a.clone()));
                Instr::Goto {
                    target: Target::At(0),
                    cond: cond.to_vec(),
                }
            }
            b"loop" | b"end" | b"exit" | b"stop" if !rest.is_empty() => {
                return Err(syntax(a, &cmd_s))
            }
            b"loop" => Instr::Goto {
                target: Target::At(0),
                cond: Vec::new(),
            },
            b"end" | b"exit" => Instr::End,
            b"stop" => Instr::Stop,
            b"error" | b"errorq" => Instr::Error {
                text,
                unquote: cmd == b"errorq",
            },
            _ => {
                return Err(format!(
                    "{class}: syntax error at '{cmd_s}' (not an instruction) in '{}'",
                    lossy(a)
                ))
            }
        };
        s.instrs.push(instr);
        s.texts.push(lossy(a));
    }
    for (at, label, text) in gotos {
        let target = s
            .instrs
            .iter()
            .zip(&s.texts)
            .position(|(i, t)| {
                *i == Instr::Label && shift(shift(t.as_bytes()).1).0 == label.as_slice()
            })
            .map(Target::At)
            .or(match label.as_slice() {
                b"end" | b"exit" => Some(Target::End),
                b"stop" => Some(Target::Stop),
                b"error" | b"errorq" => Some(Target::Error),
                b"begin" | b"loop" => Some(Target::At(0)),
                _ => None,
            })
            .ok_or_else(|| {
                format!(
                    "{class}: '{}': no such label '{}' (define it with 'label {}')",
                    lossy(&text),
                    lossy(&label),
                    lossy(&label)
                )
            })?;
        if let Instr::Goto { target: t, .. } = &mut s.instrs[at] {
            *t = target;
        }
    }
    if driver {
        if s.instrs.is_empty() {
            s.instrs.push(Instr::Wait);
            s.texts.push("wait_stop".into());
        }
        s.instrs.push(Instr::Stop);
        s.texts.push("stop".into());
    }
    Ok(s)
}

fn too_long() -> String {
    format!("the value would be longer than the limit of {MAX_VALUE_BYTES} bytes")
}

/// An error line: newlines and other control characters shown as escapes.
fn one_line(m: &str) -> String {
    m.chars()
        .flat_map(|c| match c {
            '\n' => vec!['\\', 'n'],
            c if c.is_control() => c.escape_default().collect(),
            c => vec![c],
        })
        .collect()
}

impl Script {
    fn var_index(&mut self, name: &[u8]) -> usize {
        match self.vars.iter().position(|(n, _)| n == name) {
            Some(i) => i,
            None => {
                self.vars.push((name.to_vec(), Vec::new()));
                self.vars.len() - 1
            }
        }
    }

    /// A variable's value, by name.
    pub fn var(&self, name: &str) -> Option<String> {
        self.vars
            .iter()
            .find(|(n, _)| n == name.as_bytes())
            .map(|(_, v)| lossy(v))
    }

    fn emit(&mut self, text: &[u8]) -> Result<(), String> {
        self.output_bytes += text.len();
        if self.output_bytes > MAX_OUTPUT_BYTES {
            return Err(format!(
                "the script printed more than the limit of {MAX_OUTPUT_BYTES} bytes"
            ));
        }
        self.partial.extend_from_slice(text);
        while let Some(p) = self.partial.iter().position(|&c| c == b'\n') {
            let line: Vec<u8> = self.partial.drain(..=p).collect();
            self.output.push(lossy(&line[..p]));
        }
        Ok(())
    }

    fn flush(&mut self) {
        if !self.partial.is_empty() {
            let line = std::mem::take(&mut self.partial);
            self.output.push(lossy(&line));
        }
    }

    /// Run instructions until the next wait (`past_wait` false) or to the end. Returns true
    /// when the script asked the router to stop.
    pub fn run(&mut self, h: &mut dyn Handlers, past_wait: bool) -> Result<bool, String> {
        let r = self.run_inner(h, past_wait);
        if past_wait || self.ended || r.is_err() {
            self.flush();
        }
        r.map_err(|(at, m)| {
            self.ended = true;
            match at {
                Some(i) => one_line(&format!("'{}': {m}", self.texts[i])),
                None => one_line(&m),
            }
        })
    }

    fn run_inner(
        &mut self,
        h: &mut dyn Handlers,
        past_wait: bool,
    ) -> Result<bool, (Option<usize>, String)> {
        if !self.initialized {
            self.initialized = true;
            for k in 0..self.instrs.len() {
                if let Instr::Init { var, text, unquote } = self.instrs[k].clone() {
                    let mut v = self.expand(h, &text, false, 0).map_err(|m| (Some(k), m))?;
                    if unquote {
                        v = cp::unquote(&v);
                    }
                    self.vars[var].1 = v;
                }
            }
        }
        let mut stop = false;
        let mut jumps = 0u32;
        while !self.ended && self.pc < self.instrs.len() {
            let at = self.pc;
            self.pc += 1;
            let i = self.instrs[at].clone();
            let step = self.step(h, i, past_wait, &mut stop);
            match step {
                Ok(true) => {}
                Ok(false) => {
                    self.pc = at;
                    return Ok(stop);
                }
                Err(m) => return Err((Some(at), m)),
            }
            if self.pc != at + 1 && !self.ended {
                jumps += 1;
                if jumps >= MAX_JUMPS {
                    return Err((
                        None,
                        format!(
                            "too many jumps, giving up: {MAX_JUMPS} jumps without waiting, the script loops endlessly"
                        ),
                    ));
                }
            }
        }
        Ok(stop)
    }

    /// Run one instruction; false when it blocks.
    fn step(
        &mut self,
        h: &mut dyn Handlers,
        i: Instr,
        past_wait: bool,
        stop: &mut bool,
    ) -> Result<bool, String> {
        match i {
            Instr::Wait => return Ok(past_wait),
            Instr::Goto { target, cond } => {
                if !cond.is_empty() {
                    let c = self.expand(h, &cond, false, 0)?;
                    match cp::boolean(&c) {
                        Some(true) => {}
                        Some(false) => return Ok(true),
                        None if c.is_empty() => {}
                        None => return Err(format!("bad condition '{}'", lossy(&c))),
                    }
                }
                match target {
                    Target::At(i) => self.pc = i,
                    Target::End => self.ended = true,
                    Target::Stop => {
                        *stop = true;
                        self.ended = true;
                    }
                    Target::Error => {
                        self.ended = true;
                        return Err("script error".into());
                    }
                }
            }
            Instr::Error { text, unquote } => {
                self.ended = true;
                let mut m = self.expand(h, &text, false, 0)?;
                if unquote {
                    m = cp::unquote(&m);
                }
                return Err(if m.is_empty() {
                    "script error".into()
                } else {
                    format!("script error: {}", lossy(&m))
                });
            }
            Instr::Print {
                text,
                unquote_param,
                newline,
            } => {
                let mut r = if text
                    .first()
                    .is_some_and(|&c| c.is_ascii_alphabetic() || c == b'@' || c == b'_')
                {
                    let e = self.expand(h, &text, false, 0)?;
                    self.call_read(h, &e, unquote_param)?.1
                } else {
                    cp::unquote(&self.expand(h, &text, true, 0)?)
                };
                if newline && r.last() != Some(&b'\n') {
                    r.push(b'\n');
                }
                self.emit(&r)?;
            }
            Instr::Read {
                text,
                unquote_param,
            } => {
                let e = self.expand(h, &text, false, 0)?;
                let (name, mut v) = self.call_read(h, &e, unquote_param)?;
                let mut line = format!("{name}:\n").into_bytes();
                line.append(&mut v);
                line.push(b'\n');
                self.emit(&line)?;
            }
            Instr::Write {
                text,
                unquote_param,
            } => {
                let e = self.expand(h, &text, false, 0)?;
                let (hw, value) = shift(&e);
                let value = if unquote_param {
                    cp::unquote(value)
                } else {
                    value.to_vec()
                };
                let name = lossy(&cp::string(hw).ok_or("syntax error")?);
                let own = self.own_name(&name);
                if own == Some("set") {
                    self.write_set(&value)?;
                } else if let Some(o) = own.filter(|o| OWN_WRITE.contains(o)) {
                    return Err(format!("the '{o}' write handler is not supported"));
                } else if name == "stop" {
                    *stop = true;
                } else if let Some(el) = name.strip_suffix(".stop") {
                    // pktflow lets `ELEMENT.stop` stop the router too, for an element that exists.
                    if h.read(&format!("{el}.name")).is_err() {
                        return Err(format!("no element named '{el}'"));
                    }
                    *stop = true;
                } else {
                    let name = self.resolve(h, &name);
                    h.write(&name, &lossy(&value))?;
                }
                self.write_status = 0;
            }
            Instr::Set {
                var,
                text,
                unquote,
                ret,
            } => {
                let mut v = self.expand(h, &text, false, 0)?;
                if unquote {
                    v = cp::unquote(&v);
                }
                self.vars[var].1 = v;
                if ret {
                    self.ended = true;
                }
            }
            Instr::Init { .. } | Instr::Label => {}
            Instr::Stop => {
                *stop = true;
                self.ended = true;
            }
            Instr::End => self.ended = true,
        }
        Ok(true)
    }

    /// The handler name `name` as one of this element's own handlers (`add`, `NAME.add`).
    fn own_name<'a>(&self, name: &'a str) -> Option<&'a str> {
        match name.split_once('.') {
            None => Some(name),
            Some((e, hname)) if !self.name.is_empty() && e == self.name => Some(hname),
            _ => None,
        }
    }

    /// `ELEMENT.HANDLER` as Click looks it up from inside a compound element: the element
    /// name relative to the script's own compound first (`a/b/s` tries `a/b/ELEMENT`, then
    /// `a/ELEMENT`), then as written.
    fn resolve(&self, h: &dyn Handlers, name: &str) -> String {
        let Some((el, _)) = name.split_once('.') else {
            return name.to_string();
        };
        let mut prefix = self.name.as_str();
        while let Some((p, _)) = prefix.rsplit_once('/') {
            let full = format!("{p}/{name}");
            if h.read(&format!("{p}/{el}.name")).is_ok() {
                return full;
            }
            prefix = p;
        }
        name.to_string()
    }

    fn own_readable(&self, h: &str) -> bool {
        OWN_READ.contains(&h) || h == "now" || self.export_index(h).is_some()
    }

    fn export_index(&self, h: &str) -> Option<usize> {
        self.exports
            .iter()
            .copied()
            .find(|&v| self.vars[v].0 == h.as_bytes())
    }

    /// Call the read handler `desc` (`[ELEMENT.]HANDLER [ARGS]`): its full name and value.
    fn call_read(
        &mut self,
        h: &mut dyn Handlers,
        desc: &[u8],
        unquote_param: bool,
    ) -> Result<(String, Vec<u8>), String> {
        let (hw, param) = shift(desc);
        let param = if unquote_param {
            cp::unquote(param)
        } else {
            param.to_vec()
        };
        let name = lossy(&cp::string(hw).ok_or("syntax error")?);
        if name.ends_with('.') {
            return Err("syntax error".into());
        }
        if let Some(own) = self.own_name(&name).filter(|o| self.own_readable(o)) {
            let full = if self.name.is_empty() {
                own.to_string()
            } else {
                format!("{}.{own}", self.name)
            };
            let own = own.to_string();
            if let Some(v) = self.export_index(&own) {
                if !param.is_empty() {
                    return Err(format!("read handler '{full}' does not take parameters"));
                }
                return Ok((full, self.vars[v].1.clone()));
            }
            if own == "now" && !param.is_empty() {
                return Err(format!("read handler '{full}' does not take parameters"));
            }
            let v = self.expression(h, &own, &param)?;
            if v.len() > MAX_VALUE_BYTES {
                return Err(too_long());
            }
            return Ok((full, v));
        }
        if !name.contains('.') {
            return Err(format!("no '{name}' read handler"));
        }
        let name = self.resolve(h, &name);
        let v = h.read(&name)?;
        if !param.is_empty() {
            return Err(format!("read handler '{name}' does not take parameters"));
        }
        if v.len() > MAX_VALUE_BYTES {
            return Err(too_long());
        }
        Ok((name, v.into_bytes()))
    }

    fn readable(&mut self, h: &mut dyn Handlers, name: &[u8]) -> bool {
        let Some(name) = cp::string(name).map(|n| lossy(&n)) else {
            return false;
        };
        match self.own_name(&name) {
            Some(o) if self.own_readable(o) => true,
            _ => {
                name.contains('.')
                    && !name.ends_with('.')
                    && h.read(&self.resolve(h, &name)).is_ok()
            }
        }
    }

    fn writable(&self, h: &dyn Handlers, name: &[u8]) -> bool {
        let Some(name) = cp::string(name).map(|n| lossy(&n)) else {
            return false;
        };
        match self.own_name(&name) {
            Some(o) if OWN_WRITE.contains(&o) => true,
            _ => name == "stop" || (name.contains('.') && h.writable(&self.resolve(h, &name))),
        }
    }

    /// The `set` write handler: `VAR VALUE`.
    fn write_set(&mut self, value: &[u8]) -> Result<(), String> {
        let (var, v) = shift(value);
        if var.is_empty() {
            return Err("no variable".into());
        }
        let i = self.var_index(var);
        self.vars[i].1 = v.to_vec();
        Ok(())
    }

    fn next_random(&mut self) -> u32 {
        // splitmix64
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 33) as u32
    }

    /// One of the element's own read handlers, called with `arg`.
    fn expression(
        &mut self,
        h: &mut dyn Handlers,
        name: &str,
        arg: &[u8],
    ) -> Result<Vec<u8>, String> {
        const SYNTAX: &str = "syntax error";
        let two = |arg: &[u8]| -> Result<(Vec<u8>, Vec<u8>), String> {
            let (a, rest) = shift(arg);
            let (b, rest) = shift(rest);
            if !rest.is_empty() || a.is_empty() || b.is_empty() {
                return Err("expected two numbers".into());
            }
            Ok((a.to_vec(), b.to_vec()))
        };
        let s = |x: &str| x.as_bytes().to_vec();
        Ok(match name {
            "add" | "sub" | "min" | "max" | "mul" | "div" | "idiv" => arithmetic(name, arg)?,
            "mod" | "rem" => {
                let (a, b) = two(arg)?;
                match (cp::int_i64(&a), cp::int_i64(&b)) {
                    (Some(x), Some(y)) => s(&x
                        .checked_rem(y)
                        .ok_or_else(|| format!("{name} {x} {y}: division by zero or overflow"))?
                        .to_string()),
                    _ if name == "mod" => return Err("expected two numbers".into()),
                    _ => match (cp::double(&a), cp::double(&b)) {
                        (Some(x), Some(y)) => s(&cp::unparse_double(x % y)),
                        _ => return Err("expected two numbers".into()),
                    },
                }
            }
            "neg" | "abs" => match cp::int_i64(arg) {
                Some(x) => s(&if name == "neg" || x < 0 {
                    x.wrapping_neg()
                } else {
                    x
                }
                .to_string()),
                None => match cp::double(arg) {
                    Some(d) => s(&cp::unparse_double(if name == "neg" {
                        -d
                    } else {
                        d.abs()
                    })),
                    None => return Err("expected one number".into()),
                },
            },
            "eq" | "ne" | "lt" | "gt" | "le" | "ge" => {
                use std::cmp::Ordering::*;
                let (a, b) = two(arg)?;
                let o = match (cp::int_i64(&a), cp::int_i64(&b)) {
                    (Some(x), Some(y)) => x.cmp(&y),
                    _ => match (cp::double(&a), cp::double(&b)) {
                        // Click: less, else equal, else greater (NaN compares greater).
                        (Some(x), Some(y)) => {
                            if x < y {
                                Less
                            } else if x == y {
                                Equal
                            } else {
                                Greater
                            }
                        }
                        _ => cp::unquote(&a).cmp(&cp::unquote(&b)),
                    },
                };
                let r = match name {
                    "eq" => o == Equal,
                    "ne" => o != Equal,
                    "lt" => o == Less,
                    "gt" => o == Greater,
                    "le" => o != Greater,
                    _ => o != Less,
                };
                s(cp::unparse_bool(r))
            }
            "not" => s(cp::unparse_bool(!cp::boolean(arg).ok_or(SYNTAX)?)),
            "and" | "or" | "nand" | "nor" => {
                let zero = name == "and" || name == "nand";
                let (mut v, mut rest) = (zero, arg);
                while v == zero && !rest.is_empty() {
                    let (w, r) = shift(rest);
                    rest = r;
                    let x = cp::boolean(w).ok_or(SYNTAX)?;
                    // As Click 2.1: only `and` conjoins; `nand` starts true and disjoins, so
                    // it is false whatever its arguments.
                    v = if name == "and" { v && x } else { v || x };
                }
                if name.starts_with('n') {
                    v = !v;
                }
                s(cp::unparse_bool(v))
            }
            "if" => {
                let (c, rest) = shift(arg);
                let (a, rest) = shift(rest);
                if cp::boolean(c).ok_or(SYNTAX)? {
                    a.to_vec()
                } else {
                    shift(rest).0.to_vec()
                }
            }
            "in" => {
                let (w, mut rest) = shift(arg);
                let w = cp::unquote(w);
                let mut yes = false;
                while !w.is_empty() && !rest.is_empty() && !yes {
                    let (x, r) = shift(rest);
                    rest = r;
                    yes = w == cp::unquote(x);
                }
                s(cp::unparse_bool(yes))
            }
            "first" => shift(arg).0.to_vec(),
            "sprintf" => printf::sprintf(arg, MAX_VALUE_BYTES)?,
            "random" => {
                let w = cp::words(arg);
                if w.is_empty() {
                    // Click's click_random(): 0 to RAND_MAX (2^31 - 1).
                    return Ok(s(&(self.next_random() & 0x7fff_ffff).to_string()));
                }
                if w.len() > 2 {
                    return Err("too many arguments".into());
                }
                let n1 = cp::int_u32(w[0]);
                let mut errs = Vec::new();
                if n1.is_none() {
                    errs.push("N1: invalid number");
                }
                let n2 = match w.get(1) {
                    None => {
                        errs.push("N2: required argument missing");
                        None
                    }
                    Some(x) => {
                        let v = cp::int_u32(x);
                        if v.is_none() {
                            errs.push("N2: invalid number");
                        }
                        v
                    }
                };
                if !errs.is_empty() {
                    return Err(errs.join("; "));
                }
                let (n1, n2) = (n1.unwrap() as u64, n2.unwrap() as u64);
                if n2 < n1 {
                    return Err("bad N".into());
                }
                let r = n1 + (self.next_random() as u64) % (n2 - n1 + 1);
                s(&r.to_string())
            }
            "now" => {
                let t = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap_or_default();
                s(&cp::unparse_timestamp(t.as_secs() as i64, t.subsec_nanos()))
            }
            "readable" => {
                let mut all = true;
                for w in cp::words(arg) {
                    all &= self.readable(h, w);
                }
                s(cp::unparse_bool(all))
            }
            "writable" => {
                let all = cp::words(arg).iter().all(|w| self.writable(h, w));
                s(cp::unparse_bool(all))
            }
            "length" => s(&arg.len().to_string()),
            "unquote" => cp::unquote(arg),
            "htons" | "ntohs" => {
                let x = cp::int_i32(arg).ok_or(SYNTAX)?;
                s(&(x as u16).swap_bytes().to_string())
            }
            "htonl" | "ntohl" => {
                let x = cp::int_i32(arg).ok_or(SYNTAX)?;
                s(&(x as u32).swap_bytes().to_string())
            }
            "cat" | "catq" => {
                let f = cp::string(arg).ok_or("bad FILE")?;
                let f = lossy(&f);
                let mut v = self.read_file(&f)?;
                if name == "catq" {
                    v = cp::quote(&v);
                }
                v
            }
            "get" | "shift" => {
                let (var, rest) = shift(arg);
                let var = if var.is_empty() && name == "shift" {
                    &b"args"[..]
                } else {
                    var
                };
                if var.is_empty() {
                    return Err("no variable".into());
                }
                if !rest.is_empty() {
                    return Err("too many arguments".into());
                }
                if var == b"args" {
                    return Ok(Vec::new());
                }
                let i = self
                    .vars
                    .iter()
                    .position(|(n, _)| n == var)
                    .ok_or_else(|| format!("undefined variable '{}'", lossy(var)))?;
                if name == "get" {
                    self.vars[i].1.clone()
                } else {
                    let v = std::mem::take(&mut self.vars[i].1);
                    let (w, r) = shift(&v);
                    self.vars[i].1 = r.to_vec();
                    w.to_vec()
                }
            }
            other => return Err(format!("no '{other}' read handler")),
        })
    }

    fn read_file(&self, f: &str) -> Result<Vec<u8>, String> {
        use std::io::Read;
        let path = if let Some(rest) = f.strip_prefix("~/") {
            std::env::var_os("HOME")
                .map(|h| PathBuf::from(h).join(rest))
                .unwrap_or_else(|| PathBuf::from(f))
        } else {
            self.base_dir.join(f)
        };
        let err = |e: std::io::Error| {
            let m = e.to_string();
            let m = m.split(" (os error").next().unwrap_or(&m).to_string();
            format!("{f}: {m}")
        };
        let file = std::fs::File::open(&path).map_err(err)?;
        let mut v = Vec::new();
        file.take(MAX_VALUE_BYTES as u64 + 1)
            .read_to_end(&mut v)
            .map_err(err)?;
        if v.len() > MAX_VALUE_BYTES {
            return Err(format!("{f}: {}", too_long()));
        }
        Ok(v)
    }

    /// A variable's value for a `$NAME`/`${NAME}` substitution; None when Click leaves the
    /// text as written.
    fn lookup(&self, name: &[u8]) -> Option<Vec<u8>> {
        if let Some((_, v)) = self.vars.iter().find(|(n, _)| n == name) {
            return Some(v.clone());
        }
        Some(match name {
            b"?" => self.write_status.to_string().into_bytes(),
            b"args" | b"0" => Vec::new(),
            b"$" => std::process::id().to_string().into_bytes(),
            b"#" => b"0".to_vec(),
            b"write" => b"false".to_vec(),
            n if n.first().is_some_and(|c| (b'1'..=b'9').contains(c))
                && cp::int_i32(n).is_some() =>
            {
                Vec::new()
            }
            _ => return None,
        })
    }

    /// Substitute `$VAR`, `${VAR}` and `$(HANDLER ARGS)` in `s` as Click does: not inside
    /// single quotes nor comments; inside double quotes (and, with `expand_quote`, outside
    /// any quotes) the value is quoted so that removing one layer of quotes gives it back.
    pub fn expand(
        &mut self,
        h: &mut dyn Handlers,
        s: &[u8],
        expand_quote: bool,
        depth: u32,
    ) -> Result<Vec<u8>, String> {
        if !s.contains(&b'$') {
            return Ok(s.to_vec());
        }
        let end = s.len();
        let mut out: Vec<u8> = Vec::new();
        let mut copied = 0usize;
        let mut quote = 0u8;
        let mut i = 0usize;
        'scan: while i < end {
            match s[i] {
                b'\\' if i + 1 < end && quote == b'"' => i += 1,
                q @ (b'\'' | b'"') => {
                    if quote == 0 {
                        quote = q;
                    } else if quote == q {
                        quote = 0;
                    }
                }
                b'/' if quote == 0 && i + 1 < end && (s[i + 1] == b'/' || s[i + 1] == b'*') => {
                    i = cp::skip_comment_space(s, i);
                    continue;
                }
                b'$' if i + 1 < end && quote != b'\'' && depth <= MAX_DEPTH => {
                    let dollar = i;
                    let mut expand_name = false;
                    let (kind, name, after) = match s[i + 1] {
                        b'{' => {
                            let start = i + 2;
                            let Some(p) = s[start..].iter().position(|&c| c == b'}') else {
                                break 'scan;
                            };
                            expand_name = s[start..start + p].contains(&b'$');
                            (b'{', &s[start..start + p], start + p + 1)
                        }
                        b'(' => {
                            let start = i + 2;
                            let (mut level, mut nq, mut j) = (1, 0u8, start);
                            while j < end && level > 0 {
                                match s[j] {
                                    b'(' if nq == 0 => level += 1,
                                    b')' if nq == 0 => level -= 1,
                                    q @ (b'"' | b'\'') => {
                                        if nq == 0 {
                                            nq = q;
                                        } else if nq == q {
                                            nq = 0;
                                        }
                                    }
                                    b'\\' if j + 1 < end && nq != b'\'' => j += 1,
                                    b'$' if nq != b'\'' => expand_name = true,
                                    _ => {}
                                }
                                j += 1;
                            }
                            if level > 0 || j == start {
                                break 'scan;
                            }
                            (b'(', &s[start..j - 1], j)
                        }
                        c if c.is_ascii_alphanumeric() || c == b'_' => {
                            let start = i + 1;
                            let mut j = start;
                            while j < end && (s[j].is_ascii_alphanumeric() || s[j] == b'_') {
                                j += 1;
                            }
                            (b'a', &s[start..j], j)
                        }
                        b'?' | b'#' | b'$' => (b'a', &s[i + 1..i + 2], i + 2),
                        _ => {
                            i += 1;
                            continue;
                        }
                    };
                    out.extend_from_slice(&s[copied..dollar]);
                    let name = if expand_name {
                        self.expand(h, name, false, depth + 1)?
                    } else {
                        name.to_vec()
                    };
                    let value = if kind == b'(' {
                        Some(self.call_read(h, &name, false)?.1)
                    } else {
                        self.lookup(&name)
                    };
                    copied = after;
                    match value {
                        None if expand_name => {
                            out.extend_from_slice(&s[dollar..dollar + 2]);
                            out.extend_from_slice(&name);
                            out.push(s[after - 1]);
                        }
                        None => copied = dollar,
                        Some(v) if quote == b'"' || (expand_quote && quote == 0) => {
                            let q = cp::quote(&v);
                            let inner = &q[1..q.len() - 1];
                            if quote == b'"' {
                                out.extend_from_slice(inner);
                            } else {
                                out.push(b'"');
                                out.extend_from_slice(inner);
                                out.push(b'"');
                            }
                        }
                        Some(v) => out.extend_from_slice(&v),
                    }
                    if out.len() > MAX_VALUE_BYTES {
                        return Err(too_long());
                    }
                    i = after;
                    continue;
                }
                _ => {}
            }
            i += 1;
        }
        // Click returns the text unchanged when nothing was written before its rest: so
        // `set c $a` with `a` empty sets c to `$a` (Click 2.1 does this).
        if out.is_empty() {
            return Ok(s.to_vec());
        }
        out.extend_from_slice(&s[copied.min(end)..]);
        if out.len() > MAX_VALUE_BYTES {
            return Err(too_long());
        }
        Ok(out)
    }
}

/// add, sub, min, max, mul, div, idiv over a space-separated list of numbers.
fn arithmetic(what: &str, arg: &[u8]) -> Result<Vec<u8>, String> {
    let unit = if what == "add" || what == "sub" { 0 } else { 1 };
    let (mut acc, mut dacc) = (unit as i64, unit as f64);
    let mut real = what == "div" || what == "idiv";
    let mut first = true;
    let mut rest = arg;
    loop {
        let (w, r) = shift(rest);
        rest = r;
        if w.is_empty() {
            break;
        }
        if !real {
            if let Some(x) = cp::int_i64(w) {
                acc = if first {
                    x
                } else {
                    match what {
                        "add" => acc.wrapping_add(x),
                        "sub" => acc.wrapping_sub(x),
                        "min" => acc.min(x),
                        "max" => acc.max(x),
                        _ => acc.wrapping_mul(x),
                    }
                };
                first = false;
                continue;
            }
            real = true;
            dacc = acc as f64;
        }
        let x = cp::double(w).ok_or("expected list of numbers")?;
        dacc = if first {
            x
        } else {
            match what {
                "add" => dacc + x,
                "sub" => dacc - x,
                "min" => {
                    if dacc < x {
                        dacc
                    } else {
                        x
                    }
                }
                "max" => {
                    if dacc > x {
                        dacc
                    } else {
                        x
                    }
                }
                "mul" => dacc * x,
                _ => dacc / x,
            }
        };
        first = false;
    }
    if what == "idiv" {
        // C's conversion on x86: NaN and values out of range become the least integer.
        const LIMIT: f64 = 9.223_372_036_854_776e18;
        let v = if dacc.is_nan() || !(-LIMIT..LIMIT).contains(&dacc) {
            i64::MIN
        } else {
            dacc as i64
        };
        return Ok(v.to_string().into_bytes());
    }
    Ok(if real {
        cp::unparse_double(dacc)
    } else {
        acc.to_string()
    }
    .into_bytes())
}

struct ScriptElement {
    script: Option<Script>,
    output: Vec<String>,
}

fn make_script(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Ok(Box::new(ScriptElement {
        script: Some(parse_script_in("Script", config, false, env)?),
        output: Vec::new(),
    }))
}
fn make_driver(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Ok(Box::new(ScriptElement {
        script: Some(parse_script_in("DriverManager", config, true, env)?),
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
        let mut m = serde_json::Map::new();
        m.insert("output".into(), serde_json::json!(self.output));
        // Exported variables are read handlers.
        if let Some(s) = &self.script {
            for &v in &s.exports {
                let (n, val) = &s.vars[v];
                m.insert(lossy(n), serde_json::json!(lossy(val)));
            }
        }
        serde_json::Value::Object(m)
    }
    fn code_size(&self) -> u32 {
        0
    }
}

#[cfg(test)]
mod tests;
