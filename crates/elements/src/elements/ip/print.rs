//! `Print([LABEL, MAXLENGTH, keywords LABEL, MAXLENGTH, CONTENTS, TIMESTAMP, ...])` — shows
//! packets: the label, the length, and the first MAXLENGTH bytes (default 24) in hex.
//!
//! pktflow prints (to stderr) only when the environment variable `PKTFLOW_PRINT=1` is set when
//! the element is configured; otherwise it only counts packets (read handler `count`), so runs
//! stay quiet. The cost does not depend on that switch, so traces are the same either way.
//!
//! Ports: 1 agnostic input, 1 agnostic output.
//! Costs: 6 instructions + 4 per byte shown, a 2-byte meta-data read of the length, a
//! packet-data read of the bytes shown.
use crate::conf::{parse_uint, unquote, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "Print",
    summary: "print packets to stderr when PKTFLOW_PRINT=1, else count them",
    make,
};

struct Print {
    label: String,
    maxlen: usize,
    enabled: bool,
    count: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse(
        "Print",
        config,
        &[
            "LABEL",
            "MAXLENGTH",
            "CONTENTS",
            "TIMESTAMP",
            "PRINTANNO",
            "CPU",
            "HEADROOM",
            "ACTIVE",
            "AGGREGATE",
            "PAINT",
        ],
    );
    let label = a
        .keyword_or_positional("LABEL")
        .map(|s| unquote(&s))
        .unwrap_or_default();
    let maxlen = match a.keyword_or_positional("MAXLENGTH") {
        Some(s) => parse_uint(&s).map_err(|e| format!("Print: MAXLENGTH: {e}"))? as usize,
        None => 24,
    };
    for k in [
        "CONTENTS",
        "TIMESTAMP",
        "PRINTANNO",
        "CPU",
        "HEADROOM",
        "ACTIVE",
        "AGGREGATE",
        "PAINT",
    ] {
        a.keyword(k);
    }
    a.finish()?;
    Ok(Box::new(Print {
        label,
        maxlen,
        enabled: std::env::var("PKTFLOW_PRINT").is_ok_and(|v| v == "1"),
        count: 0,
    }))
}

impl Element for Print {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        let n = p.len().min(self.maxlen);
        cx.read_meta(2);
        cx.instr(6 + 4 * n as u32);
        if n > 0 {
            cx.read_pkt(n as u32);
        }
        self.count += 1;
        if self.enabled {
            let hex: Vec<String> = p.data()[..n].iter().map(|b| format!("{b:02x}")).collect();
            eprintln!(
                "{}{}{:4} | {}",
                self.label,
                if self.label.is_empty() { "" } else { ": " },
                p.len(),
                hex.join("")
            );
        }
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count})
    }
    fn code_size(&self) -> u32 {
        80
    }
}
