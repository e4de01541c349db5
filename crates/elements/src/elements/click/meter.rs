//! `Meter(RATE1, ..., RATEn)` — sends packets to output 0 while the measured arrival rate is
//! below RATE1, to output 1 while it is between RATE1 and RATE2, ..., to output n when it is at
//! or above RATEn (rates increasing; numbers in bytes per second, or Click bandwidths such as
//! `10Mbps`, as BandwidthShaper reads them).
//!
//! The rate is measured in simulated time (packet timestamps) with an exponentially weighted
//! moving average over 1 ms epochs, weight 1/16 per epoch (the design of Click's RateEWMA
//! with stability 4): each finished epoch moves the average 1/16 of the way to that epoch's
//! byte count times 1000, empty epochs decay it, and a packet is classified by the average of
//! the epochs finished before it. The constants are pktflow's: Click's own estimator uses its
//! kernel's tick and scaling, so the switching instants differ in detail, not in kind.
//! Ports: 1 push input, n+1 push outputs. Read handler `rate` (bytes per second).
//! Costs: 8 instructions, a 2 B meta-data read (length) and an 8 B one (timestamp), and a
//! 16 B read and write of the estimator (dynamic state object 0), plus 2 instructions per
//! threshold compared.
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::elements::click::shaper::parse_bandwidth;
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "Meter",
    summary: "classify packets by their measured arrival rate (bytes per second)",
    make,
};

const EPOCH_NS: u64 = 1_000_000;
const WEIGHT: f64 = 1.0 / 16.0;

struct Meter {
    rates: Vec<f64>,
    avg: f64,
    epoch: Option<u64>,
    epoch_bytes: u64,
    counts: Vec<u64>,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("Meter", config, &[]);
    let rates: Vec<f64> = a
        .take_all_positional()
        .iter()
        .filter(|s| !s.is_empty())
        .map(|s| parse_bandwidth(s).map_err(|e| format!("Meter: {e}")))
        .collect::<Result<_, _>>()?;
    if rates.is_empty() {
        return Err("Meter: expected at least one RATE".into());
    }
    if rates.len() > 1023 {
        return Err("Meter: at most 1023 rates".into());
    }
    if rates.windows(2).any(|w| w[0] >= w[1]) {
        return Err("Meter: RATEs must increase".into());
    }
    let n = rates.len() + 1;
    Ok(Box::new(Meter {
        rates,
        avg: 0.0,
        epoch: None,
        epoch_bytes: 0,
        counts: vec![0; n],
    }))
}

impl Meter {
    fn update(&mut self, t: u64, bytes: usize) {
        let e = t / EPOCH_NS;
        match self.epoch {
            None => self.epoch = Some(e),
            Some(last) if e > last => {
                let per_s = self.epoch_bytes as f64 * (1e9 / EPOCH_NS as f64);
                self.avg += WEIGHT * (per_s - self.avg);
                let empty = (e - last - 1).min(10_000) as i32;
                self.avg *= (1.0 - WEIGHT).powi(empty);
                self.epoch = Some(e);
                self.epoch_bytes = 0;
            }
            _ => {}
        }
        self.epoch_bytes += bytes as u64;
    }
}

impl Element for Meter {
    fn ports(&self) -> Ports {
        Ports::push(1, self.rates.len() + 1)
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(8);
        cx.read_meta(2);
        cx.read_meta(8);
        cx.dynamic_state(Read, 0, 0, 16);
        self.update(p.anno.timestamp_ns, p.len());
        cx.dynamic_state(Write, 0, 0, 16);
        let k = self.rates.iter().take_while(|&&r| self.avg >= r).count();
        cx.instr(2 * (k as u32 + 1).min(self.rates.len() as u32));
        self.counts[k] += 1;
        cx.emit(k, p);
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"rate": self.avg, "counts": self.counts})
    }
    fn code_size(&self) -> u32 {
        40
    }
}

#[cfg(test)]
mod tests {
    use crate::elements::ip::testutil::{make, push};
    use pktflow_traffic::Packet;

    #[test]
    fn slow_traffic_stays_on_output_0_fast_traffic_moves_up() {
        // 100-byte packets: one per 10 ms is 10,000 B/s; one per 0.1 ms is 1,000,000 B/s.
        let run = |gap_ns: u64| {
            let mut m = make("Meter", "50000, 500000");
            let mut last = 0;
            for k in 0..2000u64 {
                let mut p = Packet::from_bytes(&[0; 100]);
                p.anno.timestamp_ns = k * gap_ns;
                last = push(m.as_mut(), 0, p).0[0].0;
            }
            last
        };
        assert_eq!(run(10_000_000), 0);
        assert_eq!(run(100_000), 2);
        assert_eq!(run(1_000_000), 1, "100,000 B/s lies between the rates");
        assert!(
            (crate::registry::find("Meter").unwrap().make)("5, 3", &Default::default()).is_err()
        );
    }
}
