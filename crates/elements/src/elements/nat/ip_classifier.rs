//! `IPClassifier(PATTERN_1, ..., PATTERN_N)` — classifies IP packets with tcpdump-like
//! patterns (see [`super::ipfilter`] for the syntax); the packet leaves on the output of the
//! first pattern that matches.
//!
//! Ports: 1 push input, N push outputs (one per pattern). The input packets must have their IP
//! header annotation set (CheckIPHeader / MarkIPHeader); a packet without one is dropped with
//! reason `no IP header`, a packet no pattern matches with reason `no match`.
//! Patterns are parsed once, at configuration time; errors name the pattern, the column and
//! what was expected.
//!
//! Costs: 4 instructions and a 4 B meta-data read (the network header annotation), then per
//! pattern tried 1 instruction, and per primitive tested (short-circuit evaluation) 3
//! instructions plus the packet bytes it reads (protocol 1 B, fragment field 2 B, address 4 B,
//! port 2 B; a port, ICMP type or TCP flag test first reads protocol and fragment field, 3 B).
//! No persistent state.
use super::ipfilter::{parse_pattern, EvalCost, Expr};
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "IPClassifier",
    summary: "classify IP packets by tcpdump-like patterns",
    make,
};

struct IPClassifier {
    patterns: Vec<Expr>,
    counts: Vec<u64>,
    no_match: u64,
}

/// Records primitive tests as instructions and packet-data reads.
pub(crate) struct CxCost<'a>(pub &'a mut Cx);

impl EvalCost for CxCost<'_> {
    #[inline]
    fn prim(&mut self, instr: u32, bytes: u32) {
        self.0.instr(instr);
        self.0.read_pkt(bytes);
    }
}

/// Parse the patterns of an IPClassifier-like configuration.
pub(crate) fn parse_patterns(class: &str, config: &str) -> Result<Vec<Expr>, String> {
    let mut a = Args::parse(class, config, &[]);
    let pats = a.take_all_positional();
    if pats.is_empty() {
        return Err(format!("{class}: expected at least one pattern"));
    }
    pats.iter()
        .enumerate()
        .map(|(i, s)| parse_pattern(s).map_err(|e| format!("{class}: pattern {i} '{s}': {e}")))
        .collect()
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let patterns = parse_patterns("IPClassifier", config)?;
    let n = patterns.len();
    Ok(Box::new(IPClassifier {
        patterns,
        counts: vec![0; n],
        no_match: 0,
    }))
}

impl Element for IPClassifier {
    fn ports(&self) -> Ports {
        Ports::push(1, self.patterns.len())
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(4);
        cx.read_meta(4);
        let Some(h) = p.ip_header() else {
            cx.drop_packet(p, "no IP header");
            return;
        };
        let mut out = None;
        for (i, e) in self.patterns.iter().enumerate() {
            cx.instr(1);
            if e.eval(h, &mut CxCost(cx)) {
                out = Some(i);
                break;
            }
        }
        match out {
            Some(i) => {
                self.counts[i] += 1;
                cx.emit(i, p);
            }
            None => {
                self.no_match += 1;
                cx.drop_packet(p, "no match");
            }
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"counts": self.counts, "no_match": self.no_match})
    }
    fn code_size(&self) -> u32 {
        32 + 6 * self.patterns.iter().map(Expr::size).sum::<usize>() as u32
    }
}
