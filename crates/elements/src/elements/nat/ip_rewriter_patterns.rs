//! `IPRewriterPatterns(NAME SADDR SPORT DADDR DPORT, ...)` — named rewriter patterns that
//! IPRewriter / IPAddrRewriter input specs refer to as `pattern NAME FOUTPUT ROUTPUT`.
//!
//! An information element: no ports, never sees a packet, no costs. Its configuration is
//! validated here (pattern syntax, distinct names across every IPRewriterPatterns element of
//! the configuration); the rewriters read it through `InitEnv::peers`. Address-rewriter
//! patterns may also be written `NAME SADDR DADDR`, with SADDR a range or prefix.
//! Each rewriter keeps its own allocator for a named pattern (pktflow elements do not share
//! state objects): two rewriters using one pattern do not see each other's ports.
use super::pattern::{named_patterns, parse_pattern_fields};
use crate::conf::{split_args, split_words, InitEnv};
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;

pub const CLASS: ClassInfo = ClassInfo {
    name: "IPRewriterPatterns",
    summary: "named patterns for IPRewriter/IPAddrRewriter (no ports)",
    make,
};

struct IPRewriterPatterns {
    n: usize,
}

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let args = split_args(config);
    if args.is_empty() {
        return Err(
            "IPRewriterPatterns: expected at least one 'NAME SADDR SPORT DADDR DPORT'".into(),
        );
    }
    let all = named_patterns(env);
    for arg in &args {
        let w = split_words(arg);
        let Some((name, rest)) = w.split_first() else {
            return Err("IPRewriterPatterns: empty argument".into());
        };
        if name.contains('.')
            || name == "-"
            || name.chars().next().is_some_and(|c| c.is_ascii_digit())
        {
            return Err(format!("IPRewriterPatterns: '{arg}': expected 'NAME SADDR SPORT DADDR DPORT' (the pattern needs a name)"));
        }
        if let Err(e) = parse_pattern_fields(name, rest, false) {
            parse_pattern_fields(name, rest, true)
                .map_err(|_| format!("IPRewriterPatterns: pattern '{name}': {e}"))?;
        }
        let uses = all.iter().filter(|(n, _)| n == name).count();
        if uses > 1 {
            return Err(format!(
                "IPRewriterPatterns: pattern name '{name}' is defined {uses} times (names must be distinct across all IPRewriterPatterns elements)"
            ));
        }
    }
    Ok(Box::new(IPRewriterPatterns { n: args.len() }))
}

impl Element for IPRewriterPatterns {
    fn ports(&self) -> Ports {
        Ports::agnostic(0, 0)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"patterns": self.n})
    }
    fn code_size(&self) -> u32 {
        0
    }
}
