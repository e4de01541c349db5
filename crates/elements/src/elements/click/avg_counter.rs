//! `AverageCounter([IGNORE])` — counts packets and bytes and their average rate.
//!
//! Ports: 1 agnostic input, 1 agnostic output. Read handlers `count`, `byte_count`, `rate`
//! (packets per second) and `byte_rate`, over the simulated time from the first counted
//! packet to the last (the packets' timestamps; 0 while that span is 0); packets arriving
//! within IGNORE seconds (default 0) of the first packet are not counted, as in Click. Write
//! handler `reset`.
//! Costs: as Counter (8 instructions, 4 B meta-data read of the length, counters read and
//! written: static state object 0, keys 0 and 8) plus 2 instructions and an 8 B meta-data
//! read of the timestamp and an 8 B write of the last time (key 16).
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::elements::nat::flow::parse_seconds;
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "AverageCounter",
    summary: "count packets and bytes and their average rate",
    make,
};

struct AverageCounter {
    ignore_ns: u64,
    first: Option<u64>,
    last: u64,
    count: u64,
    bytes: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("AverageCounter", config, &["IGNORE"]);
    let ignore_ns = match a.keyword_or_positional("IGNORE") {
        Some(s) => parse_seconds(&s).map_err(|e| format!("AverageCounter: IGNORE: {e}"))?,
        None => 0,
    };
    a.finish()?;
    Ok(Box::new(AverageCounter {
        ignore_ns,
        first: None,
        last: 0,
        count: 0,
        bytes: 0,
    }))
}

impl AverageCounter {
    fn span_s(&self) -> f64 {
        match self.first {
            Some(f) => (self.last.saturating_sub(f + self.ignore_ns)) as f64 / 1e9,
            None => 0.0,
        }
    }
}

impl Element for AverageCounter {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(10);
        cx.read_meta(4);
        cx.read_meta(8);
        cx.static_state(Read, 0, 0, 8);
        cx.static_state(Read, 0, 8, 8);
        let t = p.anno.timestamp_ns;
        let first = *self.first.get_or_insert(t);
        if t >= first + self.ignore_ns {
            self.count += 1;
            self.bytes += p.len() as u64;
        }
        self.last = self.last.max(t);
        cx.static_state(Write, 0, 0, 8);
        cx.static_state(Write, 0, 8, 8);
        cx.static_state(Write, 0, 16, 8);
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        let s = self.span_s();
        let rate = |n: u64| if s > 0.0 { n as f64 / s } else { 0.0 };
        serde_json::json!({"count": self.count, "byte_count": self.bytes,
            "rate": rate(self.count), "byte_rate": rate(self.bytes)})
    }
    fn write_handler(&mut self, name: &str, _value: &str) -> Result<(), String> {
        if name != "reset" {
            return Err(format!("no write handler '{name}'"));
        }
        self.first = None;
        self.last = 0;
        self.count = 0;
        self.bytes = 0;
        Ok(())
    }
    fn code_size(&self) -> u32 {
        32
    }
}

#[cfg(test)]
mod tests {
    use crate::elements::ip::testutil::{make, push};
    use pktflow_traffic::Packet;

    #[test]
    fn rate_over_simulated_time() {
        let mut c = make("AverageCounter", "");
        for k in 0..5u64 {
            let mut p = Packet::from_bytes(&[0; 100]);
            p.anno.timestamp_ns = k * 250_000_000; // 4 packets per second
            push(c.as_mut(), 0, p);
        }
        let s = c.stats();
        assert_eq!(s["count"], 5);
        // 5 packets over 1 s (first at 0, last at 1 s): 5 packets per second, 500 B/s.
        assert_eq!(s["rate"], 5.0);
        assert_eq!(s["byte_rate"], 500.0);
        c.write_handler("reset", "").unwrap();
        assert_eq!(c.stats()["count"], 0);
    }
}
