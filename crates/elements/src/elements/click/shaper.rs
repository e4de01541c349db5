//! `BandwidthShaper(RATE)` — lets pulled packets through at most at RATE bytes per second.
//!
//! Ports: 1 pull input, 1 pull output (between a Queue and an output device). Timing is the
//! simulated time of the packet being processed (the functional run has no wall clock): a
//! packet of L bytes may leave at time t when the shaper is free at t; the shaper is then busy
//! for L / RATE seconds. While it is busy, pulls get nothing and the packets wait in the queue
//! upstream (they leave with later pulls, or are reported as held at the end of the run).
//! RATE is a number of bytes per second, or with a unit as Click writes bandwidths: `Bps`,
//! `kBps`, `MBps`, `GBps` (bytes) or `bps`, `kbps`, `Mbps`, `Gbps` (bits). Click's shaper
//! releases packets by its own rate-gap algorithm; pktflow's busy-period rule gives the same
//! long-run rate, not the same per-packet release times.
//! Costs: 6 instructions, a 2 B meta-data read (the length) and an 8 B read and write of the
//! busy-until time (dynamic state object 0) per packet let through.
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Processing};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "BandwidthShaper",
    summary: "let pulled packets through at most at RATE bytes per second",
    make,
};

struct Shaper {
    bytes_per_s: f64,
    free_at_ns: u64,
    passed: u64,
}

/// Parse a Click bandwidth (`10Mbps`, `1.5MBps`, `125000`) into bytes per second.
pub fn parse_bandwidth(s: &str) -> Result<f64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("expected a bandwidth, found '{s}'"))?;
    let mult = match unit.trim() {
        "" | "Bps" | "B/s" => 1.0,
        "kBps" | "KBps" => 1e3,
        "MBps" => 1e6,
        "GBps" => 1e9,
        "bps" | "b/s" => 1.0 / 8.0,
        "kbps" | "Kbps" => 1e3 / 8.0,
        "Mbps" => 1e6 / 8.0,
        "Gbps" => 1e9 / 8.0,
        u => return Err(format!("unknown bandwidth unit '{u}' in '{s}'")),
    };
    let r = v * mult;
    if !r.is_finite() || r <= 0.0 {
        return Err(format!("bandwidth must be positive, found '{s}'"));
    }
    Ok(r)
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("BandwidthShaper", config, &["RATE"]);
    let r = a
        .keyword_or_positional("RATE")
        .ok_or("BandwidthShaper: missing argument RATE")?;
    let bytes_per_s = parse_bandwidth(&r).map_err(|e| format!("BandwidthShaper: RATE: {e}"))?;
    a.finish()?;
    Ok(Box::new(Shaper {
        bytes_per_s,
        free_at_ns: 0,
        passed: 0,
    }))
}

impl Element for Shaper {
    fn ports(&self) -> Ports {
        Ports {
            inputs: (1, 1),
            outputs: (1, 1),
            input_processing: Processing::Pull,
            output_processing: Processing::Pull,
        }
    }
    fn pull_ready(&mut self, now_ns: u64) -> bool {
        self.free_at_ns <= now_ns
    }
    #[inline(always)]
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(6);
        cx.read_meta(2);
        cx.dynamic_state(Read, 0, 0, 8);
        let busy = (p.len() as f64 / self.bytes_per_s * 1e9).ceil() as u64;
        self.free_at_ns = self.free_at_ns.max(cx.now_ns).saturating_add(busy);
        cx.dynamic_state(Write, 0, 0, 8);
        self.passed += 1;
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.passed, "rate_bytes_per_s": self.bytes_per_s})
    }
    fn code_size(&self) -> u32 {
        24
    }
}

#[cfg(test)]
mod tests {
    use super::parse_bandwidth;

    #[test]
    fn bandwidths() {
        assert_eq!(parse_bandwidth("125000").unwrap(), 125000.0);
        assert_eq!(parse_bandwidth("1Mbps").unwrap(), 125000.0);
        assert_eq!(parse_bandwidth("2kBps").unwrap(), 2000.0);
        assert!(parse_bandwidth("0").is_err());
        assert!(parse_bandwidth("5 furlongs").is_err());
    }
}
