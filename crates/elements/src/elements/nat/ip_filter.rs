//! `IPFilter(ACTION PATTERN, ...)` — filters IP packets with IPClassifier's patterns (see
//! [`super::ipfilter`]); the first rule whose PATTERN matches decides. ACTION is `allow`
//! (output 0), `deny` or `drop` (the packet is dropped, reason `denied`), or an output
//! number N. Packets no rule matches are dropped (reason `no match`), as in Click.
//!
//! Ports: 1 push input; outputs: 1, or the largest N named plus one (`N` rules need them).
//! Input packets must have their IP header annotation set (CheckIPHeader / MarkIPHeader);
//! others are dropped with reason `no IP header`.
//! Costs: as IPClassifier: 4 instructions and a 4 B meta-data read, then per rule tried 1
//! instruction and per primitive tested 3 instructions plus the packet bytes it reads.
use super::ip_classifier::CxCost;
use super::ipfilter::{parse_pattern, Expr};
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "IPFilter",
    summary: "allow, deny or route IP packets by tcpdump-like rules",
    make,
};

struct IPFilter {
    /// (output, or None to drop; pattern)
    rules: Vec<(Option<usize>, Expr)>,
    noutputs: usize,
    counts: Vec<u64>,
    denied: u64,
    no_match: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "IPFilter";
    let mut a = Args::parse(c, config, &[]);
    let args = a.take_all_positional();
    if args.iter().all(|s| s.is_empty()) {
        return Err(format!("{c}: expected at least one 'ACTION PATTERN' rule"));
    }
    let mut rules = Vec::new();
    let mut noutputs = 1;
    for (i, arg) in args.iter().enumerate() {
        let arg = arg.trim();
        let (action, rest) = arg.split_once(char::is_whitespace).unwrap_or((arg, ""));
        let out = match action {
            "allow" => Some(0),
            "deny" | "drop" => None,
            n => match n.parse::<usize>() {
                Ok(n) if n < 1024 => Some(n),
                _ => {
                    return Err(format!(
                        "{c}: rule {i} '{arg}': expected an action (allow, deny, drop or an output number) first"
                    ))
                }
            },
        };
        if let Some(o) = out {
            noutputs = noutputs.max(o + 1);
        }
        let pat = if rest.trim().is_empty() {
            "-"
        } else {
            rest.trim()
        };
        let e = parse_pattern(pat).map_err(|e| format!("{c}: rule {i} '{arg}': {e}"))?;
        rules.push((out, e));
    }
    Ok(Box::new(IPFilter {
        rules,
        noutputs,
        counts: vec![0; noutputs],
        denied: 0,
        no_match: 0,
    }))
}

impl Element for IPFilter {
    fn ports(&self) -> Ports {
        Ports::push(1, self.noutputs).with_outputs(1, self.noutputs)
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(4);
        cx.read_meta(4);
        let Some(h) = p.ip_header() else {
            cx.drop_packet(p, "no IP header");
            return;
        };
        let mut decision = None;
        for (out, e) in &self.rules {
            cx.instr(1);
            if e.eval(h, &mut CxCost(cx)) {
                decision = Some(*out);
                break;
            }
        }
        match decision {
            Some(Some(o)) => {
                self.counts[o] += 1;
                cx.emit(o, p);
            }
            Some(None) => {
                self.denied += 1;
                cx.drop_packet(p, "denied");
            }
            None => {
                self.no_match += 1;
                cx.drop_packet(p, "no match");
            }
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"counts": self.counts, "denied": self.denied, "no_match": self.no_match})
    }
    fn code_size(&self) -> u32 {
        32 + 6 * self.rules.iter().map(|r| r.1.size()).sum::<usize>() as u32
    }
}
