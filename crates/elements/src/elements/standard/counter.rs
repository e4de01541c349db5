//! `Counter([COUNT_CALL N HANDLER [VALUE], BYTE_COUNT_CALL N HANDLER [VALUE]])` — counts
//! packets and bytes passing through.
//!
//! Ports: 1 agnostic input, 1 agnostic output. Read handlers `count`, `byte_count`; write
//! handlers `reset` and `reset_counts` (zero both counters). COUNT_CALL: when the packet count
//! reaches N, write handler HANDLER is called once (with VALUE), after the current packet is
//! processed (e.g. `COUNT_CALL 1000 stop` ends the run, `COUNT_CALL 10 src.active false`
//! stops a source); BYTE_COUNT_CALL the same for the byte count. A configured call adds 1
//! instruction per packet (the comparison).
//! Costs: 8 instructions; reads the packet length from meta-data (4 B); reads and writes its
//! two counters (persistent static state object 0, keys 0 and 8, 8 B each) — shared state
//! written by every packet, so replicas of a Counter need a critical section.
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "Counter",
    summary: "count packets and bytes",
    make,
};

struct Counter {
    count: u64,
    bytes: u64,
    /// (threshold, handler call, already called)
    count_call: Option<(u64, String, bool)>,
    byte_count_call: Option<(u64, String, bool)>,
}

fn parse_call(k: &str, s: &str) -> Result<(u64, String, bool), String> {
    let s = s.trim();
    let (n, rest) = s
        .split_once(char::is_whitespace)
        .ok_or_else(|| format!("Counter: {k}: expected 'N HANDLER [VALUE]', found '{s}'"))?;
    let n = crate::conf::parse_uint(n).map_err(|e| format!("Counter: {k}: {e}"))?;
    Ok((n, rest.trim().to_string(), false))
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("Counter", config, &["COUNT_CALL", "BYTE_COUNT_CALL"]);
    let count_call = a
        .keyword("COUNT_CALL")
        .map(|s| parse_call("COUNT_CALL", &s))
        .transpose()?;
    let byte_count_call = a
        .keyword("BYTE_COUNT_CALL")
        .map(|s| parse_call("BYTE_COUNT_CALL", &s))
        .transpose()?;
    a.finish()?;
    Ok(Box::new(Counter {
        count: 0,
        bytes: 0,
        count_call,
        byte_count_call,
    }))
}

impl Element for Counter {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(2);
        cx.read_meta(4);
        cx.static_state(Read, 0, 0, 8);
        cx.static_state(Read, 0, 8, 8);
        cx.instr(6);
        cx.static_state(Write, 0, 0, 8);
        cx.static_state(Write, 0, 8, 8);
        self.count += 1;
        self.bytes += p.len() as u64;
        for (call, v) in [
            (&mut self.count_call, self.count),
            (&mut self.byte_count_call, self.bytes),
        ] {
            if let Some((n, h, done)) = call {
                cx.instr(1);
                if !*done && v >= *n {
                    *done = true;
                    cx.call_handler(h);
                }
            }
        }
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count, "byte_count": self.bytes})
    }
    fn write_handler(&mut self, name: &str, _value: &str) -> Result<(), String> {
        match name {
            "reset" | "reset_counts" => {
                self.count = 0;
                self.bytes = 0;
                for (_, _, done) in [&mut self.count_call, &mut self.byte_count_call]
                    .into_iter()
                    .flatten()
                {
                    *done = false;
                }
                Ok(())
            }
            _ => Err(format!("no write handler '{name}'")),
        }
    }
    fn code_size(&self) -> u32 {
        24
    }
}
