//! The PPF graph of seed 001 (`001_50c9ec885c831f52.txt`, sections 2 and 3): "Applications
//! written in Baker are organized as a dataflow graph starting from a receiver (Rx) and ending
//! at a transmitter (Tx). Actors in the graph are packet processing functions (PPFs), which are
//! wired with communication channels." Each PPF carries its profile (section 4.2: "The input
//! packet arrival rate λ is computed from the input packet trace of the Profiler phase"): the
//! packets reaching it per input packet, instructions and memory references per visit by
//! memory level, lock use, and its static code size (the code-size model of section 4).
//!
//! The native graph file (TOML or JSON, documented in docs/tdpm.md) is [`GraphFile`]; the
//! reserved endpoint names `rx` and `tx` stand for the receiver and the transmitter.
use crate::error::TdpmError;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Memory references of one PPF visit to one memory level (a storage device of the
/// architecture, e.g. `sram`, `dram`, `scratchpad`, `local_memory`, `registers`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemUse {
    pub level: String,
    /// Read references per visit (one reference moves at most the level's access width).
    #[serde(default)]
    pub reads: f64,
    #[serde(default)]
    pub writes: f64,
}

/// Use of one lock by a PPF visit. PPFs naming the same lock share it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockUse {
    pub name: String,
    /// Acquisitions per visit.
    pub acquisitions: f64,
    /// Cycles the lock is held per acquisition (the critical section).
    pub cs_cycles: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Ppf {
    pub name: String,
    /// Element class (Click input) or a free label.
    #[serde(default)]
    pub class: String,
    /// λ_i: visits per packet entering the application (from the profile).
    pub rate: f64,
    /// Instructions executed per visit.
    pub instructions: f64,
    #[serde(default)]
    pub mem: Vec<MemUse>,
    #[serde(default)]
    pub locks: Vec<LockUse>,
    /// Static instructions of the PPF's code (code-size model).
    pub code_size: u32,
    /// Whether the PPF modifies the packet header (a task containing it must write the header
    /// back to DRAM before handing the packet on, seed 001 section 3).
    #[serde(default)]
    pub writes_packet: bool,
}

/// An endpoint of a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum End {
    Rx,
    Tx,
    Ppf(usize),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    pub from: End,
    pub to: End,
    /// Packets crossing the channel per packet entering the application.
    pub rate: f64,
    /// Packet bytes the receiving side loads (and the sending side stores when it modified
    /// them) when the channel crosses a task boundary.
    pub bytes: u32,
}

/// A validated PPF graph: acyclic, every PPF reachable from `rx` and reaching `tx`.
#[derive(Clone, Debug)]
pub struct PpfGraph {
    pub name: String,
    pub ppfs: Vec<Ppf>,
    pub channels: Vec<Channel>,
    /// Bytes of one input packet on the wire (converts packets/s to bits/s).
    pub packet_bytes: f64,
    /// Channels leaving / entering each PPF (indices into `channels`).
    pub out_ch: Vec<Vec<usize>>,
    pub in_ch: Vec<Vec<usize>>,
}

/// Channel as written in a graph file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChannelFile {
    pub from: String,
    pub to: String,
    pub rate: f64,
    #[serde(default = "default_bytes")]
    pub bytes: u32,
}

fn default_bytes() -> u32 {
    64
}

fn default_packet_bytes() -> f64 {
    64.0
}

/// The native graph file (TOML or JSON).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphFile {
    #[serde(default)]
    pub name: String,
    #[serde(default = "default_packet_bytes")]
    pub packet_bytes: f64,
    #[serde(default, rename = "ppf")]
    pub ppfs: Vec<Ppf>,
    #[serde(default, rename = "channel")]
    pub channels: Vec<ChannelFile>,
}

impl PpfGraph {
    /// Build and validate from PPFs and named channels.
    pub fn new(
        name: &str,
        ppfs: Vec<Ppf>,
        channels: &[ChannelFile],
        packet_bytes: f64,
    ) -> Result<PpfGraph, TdpmError> {
        let mut idx: HashMap<&str, usize> = HashMap::new();
        for (i, p) in ppfs.iter().enumerate() {
            if p.name == "rx" || p.name == "tx" {
                return Err(TdpmError::Graph(format!(
                    "PPF name '{}' is reserved for the receiver/transmitter",
                    p.name
                )));
            }
            if idx.insert(p.name.as_str(), i).is_some() {
                return Err(TdpmError::Graph(format!("duplicate PPF name '{}'", p.name)));
            }
            for (what, v) in [("rate", p.rate), ("instructions", p.instructions)] {
                if !(v.is_finite() && v >= 0.0) {
                    return Err(TdpmError::Graph(format!(
                        "PPF '{}': {what} must be a finite number >= 0 (got {v})",
                        p.name
                    )));
                }
            }
            for m in &p.mem {
                if !(m.reads.is_finite()
                    && m.reads >= 0.0
                    && m.writes.is_finite()
                    && m.writes >= 0.0)
                {
                    return Err(TdpmError::Graph(format!(
                        "PPF '{}': memory references on '{}' must be finite and >= 0",
                        p.name, m.level
                    )));
                }
            }
            for l in &p.locks {
                if !(l.acquisitions.is_finite()
                    && l.acquisitions >= 0.0
                    && l.cs_cycles.is_finite()
                    && l.cs_cycles >= 0.0)
                {
                    return Err(TdpmError::Graph(format!(
                        "PPF '{}': lock '{}' needs finite acquisitions and cs_cycles >= 0",
                        p.name, l.name
                    )));
                }
            }
        }
        if !ppfs.is_empty() && ppfs.iter().all(|p| p.rate == 0.0) {
            // Nothing is ever processed: the cost model's rate is unbounded (the CLI used to
            // fail on it with a traceback).
            return Err(TdpmError::Graph(
                "every PPF's rate is 0 (rate = visits per input packet): no packet is processed"
                    .into(),
            ));
        }
        if !(packet_bytes.is_finite() && packet_bytes > 0.0) {
            return Err(TdpmError::Graph(format!(
                "packet_bytes must be positive (got {packet_bytes})"
            )));
        }
        let end = |s: &str| -> Result<End, TdpmError> {
            match s {
                "rx" => Ok(End::Rx),
                "tx" => Ok(End::Tx),
                _ => idx
                    .get(s)
                    .map(|&i| End::Ppf(i))
                    .ok_or_else(|| TdpmError::Graph(format!("channel names unknown PPF '{s}'"))),
            }
        };
        let mut chans = Vec::with_capacity(channels.len());
        for c in channels {
            let (from, to) = (end(&c.from)?, end(&c.to)?);
            if from == End::Tx || to == End::Rx {
                return Err(TdpmError::Graph(format!(
                    "channel {} -> {}: channels run from rx towards tx",
                    c.from, c.to
                )));
            }
            if from == to {
                return Err(TdpmError::Graph(format!(
                    "channel {} -> {} is a self-loop (the PPF graph must be acyclic)",
                    c.from, c.to
                )));
            }
            if !(c.rate.is_finite() && c.rate >= 0.0) {
                return Err(TdpmError::Graph(format!(
                    "channel {} -> {}: rate must be finite and >= 0",
                    c.from, c.to
                )));
            }
            chans.push(Channel {
                from,
                to,
                rate: c.rate,
                bytes: c.bytes,
            });
        }
        let n = ppfs.len();
        let mut out_ch = vec![Vec::new(); n];
        let mut in_ch = vec![Vec::new(); n];
        for (k, c) in chans.iter().enumerate() {
            if let End::Ppf(i) = c.from {
                out_ch[i].push(k);
            }
            if let End::Ppf(j) = c.to {
                in_ch[j].push(k);
            }
        }
        let g = PpfGraph {
            name: name.to_string(),
            ppfs,
            channels: chans,
            packet_bytes,
            out_ch,
            in_ch,
        };
        g.check_structure()?;
        Ok(g)
    }

    pub fn len(&self) -> usize {
        self.ppfs.len()
    }
    pub fn is_empty(&self) -> bool {
        self.ppfs.is_empty()
    }

    fn check_structure(&self) -> Result<(), TdpmError> {
        let n = self.len();
        if n == 0 {
            return Err(TdpmError::Graph("the PPF graph has no PPF".into()));
        }
        // Reachability from rx (forward) and to tx (backward).
        let mut seen = vec![false; n];
        let mut stack: Vec<usize> = self
            .channels
            .iter()
            .filter(|c| c.from == End::Rx)
            .filter_map(|c| match c.to {
                End::Ppf(j) => Some(j),
                _ => None,
            })
            .collect();
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut seen[i], true) {
                continue;
            }
            for &k in &self.out_ch[i] {
                if let End::Ppf(j) = self.channels[k].to {
                    stack.push(j);
                }
            }
        }
        if let Some(i) = seen.iter().position(|s| !s) {
            return Err(TdpmError::Graph(format!(
                "disconnected PPF graph: '{}' is not reachable from rx",
                self.ppfs[i].name
            )));
        }
        let mut back = vec![false; n];
        let mut stack: Vec<usize> = self
            .channels
            .iter()
            .filter(|c| c.to == End::Tx)
            .filter_map(|c| match c.from {
                End::Ppf(j) => Some(j),
                _ => None,
            })
            .collect();
        while let Some(i) = stack.pop() {
            if std::mem::replace(&mut back[i], true) {
                continue;
            }
            for &k in &self.in_ch[i] {
                if let End::Ppf(j) = self.channels[k].from {
                    stack.push(j);
                }
            }
        }
        if let Some(i) = back.iter().position(|s| !s) {
            return Err(TdpmError::Graph(format!(
                "disconnected PPF graph: tx is not reachable from '{}'",
                self.ppfs[i].name
            )));
        }
        if let Some(cycle) = self.find_cycle() {
            let names: Vec<&str> = cycle.iter().map(|&i| self.ppfs[i].name.as_str()).collect();
            return Err(TdpmError::Graph(format!(
                "the PPF graph has a cycle: {} -> {} (Baker graphs are acyclic from rx to tx)",
                names.join(" -> "),
                names[0]
            )));
        }
        Ok(())
    }

    /// A cycle of PPFs, if any (iterative DFS with colors).
    fn find_cycle(&self) -> Option<Vec<usize>> {
        let n = self.len();
        let mut color = vec![0u8; n];
        let mut parent = vec![usize::MAX; n];
        for s in 0..n {
            if color[s] != 0 {
                continue;
            }
            let mut stack = vec![(s, 0usize)];
            color[s] = 1;
            while let Some(&mut (v, ref mut it)) = stack.last_mut() {
                if *it < self.out_ch[v].len() {
                    let k = self.out_ch[v][*it];
                    *it += 1;
                    if let End::Ppf(w) = self.channels[k].to {
                        if color[w] == 1 {
                            let mut cyc = vec![v];
                            let mut x = v;
                            while x != w {
                                x = parent[x];
                                cyc.push(x);
                            }
                            cyc.reverse();
                            return Some(cyc);
                        }
                        if color[w] == 0 {
                            color[w] = 1;
                            parent[w] = v;
                            stack.push((w, 0));
                        }
                    }
                } else {
                    color[v] = 2;
                    stack.pop();
                }
            }
        }
        None
    }

    /// Parse a graph file: JSON when the text starts with `{`, else TOML.
    pub fn from_text(text: &str, file: &str) -> Result<PpfGraph, TdpmError> {
        let f: GraphFile = if text.trim_start().starts_with('{') {
            serde_json::from_str(text).map_err(|e| {
                TdpmError::Parse(if e.line() > 0 {
                    let msg = e.to_string();
                    let msg = msg
                        .rsplit_once(" at line ")
                        .map_or(msg.as_str(), |(m, _)| m)
                        .to_string();
                    format!("{file}:{}: {msg}", e.line())
                } else {
                    format!("{file}: {e}")
                })
            })?
        } else {
            toml::from_str(text).map_err(|e| {
                let msg = one_line(e.message());
                let at = e
                    .span()
                    .map(|sp| {
                        let line = text[..sp.start.min(text.len())].matches('\n').count() + 1;
                        // The key on that line, unless the message names it already.
                        let key = text
                            .lines()
                            .nth(line - 1)
                            .and_then(|l| l.split_once('='))
                            .map(|(k, _)| k.trim().to_string())
                            .filter(|k| !k.is_empty() && !msg.contains(&format!("`{k}`")))
                            .map(|k| format!(" {k}:"))
                            .unwrap_or_default();
                        format!(":{line}:{key}")
                    })
                    .unwrap_or_else(|| ":".into());
                TdpmError::Parse(format!("{file}{at} {msg}"))
            })?
        };
        let name = if f.name.is_empty() { file } else { &f.name };
        PpfGraph::new(name, f.ppfs, &f.channels, f.packet_bytes)
            .map_err(|e| TdpmError::Graph(format!("{file}: {e}")))
    }

    pub fn load(path: &std::path::Path) -> Result<PpfGraph, TdpmError> {
        const MAX_BYTES: u64 = 16 << 20;
        if let Ok(m) = std::fs::metadata(path) {
            if m.len() > MAX_BYTES {
                return Err(TdpmError::Parse(format!(
                    "{}: {} bytes is too large for a PPF graph file (at most {MAX_BYTES})",
                    path.display(),
                    m.len()
                )));
            }
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| TdpmError::Parse(format!("{}: {e}", path.display())))?;
        PpfGraph::from_text(&text, &path.display().to_string())
    }

    /// Back to the file form (for `--dump` and round trips).
    pub fn to_file(&self) -> GraphFile {
        let name = |e: End| match e {
            End::Rx => "rx".to_string(),
            End::Tx => "tx".to_string(),
            End::Ppf(i) => self.ppfs[i].name.clone(),
        };
        GraphFile {
            name: self.name.clone(),
            packet_bytes: self.packet_bytes,
            ppfs: self.ppfs.clone(),
            channels: self
                .channels
                .iter()
                .map(|c| ChannelFile {
                    from: name(c.from),
                    to: name(c.to),
                    rate: c.rate,
                    bytes: c.bytes,
                })
                .collect(),
        }
    }

    /// PPFs in a topological order (the graph is acyclic).
    pub fn topo_order(&self) -> Vec<usize> {
        let n = self.len();
        let mut indeg = vec![0usize; n];
        for c in &self.channels {
            if let (End::Ppf(_), End::Ppf(j)) = (c.from, c.to) {
                indeg[j] += 1;
            }
        }
        let mut q: Vec<usize> = (0..n).filter(|&i| indeg[i] == 0).collect();
        let mut order = Vec::with_capacity(n);
        let mut h = 0;
        while h < q.len() {
            let v = q[h];
            h += 1;
            order.push(v);
            for &k in &self.out_ch[v] {
                if let End::Ppf(w) = self.channels[k].to {
                    indeg[w] -= 1;
                    if indeg[w] == 0 {
                        q.push(w);
                    }
                }
            }
        }
        order
    }
}

/// A multi-line parser message as one line.
fn one_line(msg: &str) -> String {
    msg.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn ppf(name: &str, rate: f64, instr: f64, code: u32) -> Ppf {
        Ppf {
            name: name.into(),
            class: String::new(),
            rate,
            instructions: instr,
            mem: vec![],
            locks: vec![],
            code_size: code,
            writes_packet: false,
        }
    }
    pub fn ch(from: &str, to: &str, rate: f64) -> ChannelFile {
        ChannelFile {
            from: from.into(),
            to: to.into(),
            rate,
            bytes: 64,
        }
    }

    #[test]
    fn a_graph_whose_every_rate_is_zero_is_refused() {
        let e = PpfGraph::new(
            "t",
            vec![ppf("a", 0.0, 10.0, 10)],
            &[ch("rx", "a", 0.0), ch("a", "tx", 0.0)],
            64.0,
        )
        .unwrap_err();
        assert!(e.to_string().contains("every PPF's rate is 0"), "{e}");
    }

    #[test]
    fn rejects_cycles_and_disconnection() {
        let p = vec![ppf("a", 1.0, 10.0, 10), ppf("b", 1.0, 10.0, 10)];
        let e = PpfGraph::new(
            "t",
            p.clone(),
            &[
                ch("rx", "a", 1.0),
                ch("a", "b", 1.0),
                ch("b", "a", 1.0),
                ch("b", "tx", 1.0),
            ],
            64.0,
        )
        .unwrap_err();
        assert!(e.to_string().contains("cycle: a -> b -> a"), "{e}");
        let e = PpfGraph::new(
            "t",
            p.clone(),
            &[ch("rx", "a", 1.0), ch("a", "tx", 1.0)],
            64.0,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("'b' is not reachable from rx"),
            "{e}"
        );
        let e = PpfGraph::new(
            "t",
            p.clone(),
            &[ch("rx", "a", 1.0), ch("a", "b", 1.0), ch("a", "tx", 1.0)],
            64.0,
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("tx is not reachable from 'b'"),
            "{e}"
        );
        let e = PpfGraph::new("t", p, &[ch("rx", "zz", 1.0)], 64.0).unwrap_err();
        assert!(e.to_string().contains("unknown PPF 'zz'"), "{e}");
    }

    #[test]
    fn toml_and_json_round_trip() {
        let text = r#"
name = "demo"
[[ppf]]
name = "cls"
rate = 1.0
instructions = 100
code_size = 300
writes_packet = true
mem = [{ level = "sram", reads = 2 }]
locks = [{ name = "tbl", acquisitions = 1, cs_cycles = 50 }]
[[channel]]
from = "rx"
to = "cls"
rate = 1.0
[[channel]]
from = "cls"
to = "tx"
rate = 0.9
bytes = 32
"#;
        let g = PpfGraph::from_text(text, "demo.toml").unwrap();
        assert_eq!(g.name, "demo");
        assert_eq!(g.channels[1].bytes, 32);
        assert_eq!(g.channels[0].bytes, 64);
        let json = serde_json::to_string(&g.to_file()).unwrap();
        let g2 = PpfGraph::from_text(&json, "demo.json").unwrap();
        assert_eq!(g2.ppfs, g.ppfs);
        assert_eq!(g2.channels, g.channels);
        let bad = PpfGraph::from_text("[[ppf]]\nname = 3\n", "bad.toml").unwrap_err();
        assert!(bad.to_string().starts_with("bad.toml:"), "{bad}");
    }
}
