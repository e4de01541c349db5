//! `RED(MIN_THRESH, MAX_THRESH, MAX_P [, QUEUES, STABILITY])` — Random Early Detection
//! (Floyd and Jacobson, 1993) in front of a queue.
//!
//! The average queue length is an exponentially weighted moving average of the length of the
//! storage element (Queue) downstream of output 0, updated on every packet arrival with weight
//! 2^-STABILITY (STABILITY default 4). With `avg` at or below MIN_THRESH nothing is dropped;
//! between the thresholds the drop probability is p_b = MAX_P (avg - MIN) / (MAX - MIN),
//! spread by the count of packets since the last drop, p_a = p_b / (1 - count p_b); between
//! MAX_THRESH and 2 MAX_THRESH ("gentle" RED, as Click) p_b rises linearly from MAX_P to 1;
//! above 2 MAX_THRESH every packet is dropped. Dropped packets leave on output 1 if it is
//! connected, else they are dropped with reason `RED`. The random draws come from the
//! configuration's seed (RandomSeed), so runs are reproducible. QUEUES (naming the queues
//! to watch) is not supported: the queue is found downstream of output 0, and without one
//! the average stays 0. Read handlers `avg_queue_size` and `drops`.
//! Ports: 1 agnostic input; output 0 agnostic, output 1 (optional) push.
//! Costs: 20 instructions; the queue length read (4 B, dynamic state of the queue's
//! index object as seen by RED: object 0 here), the average read and written (dynamic state
//! object 1, 8 B), and the generator read and written (object 2, 8 B) when a draw is needed.
use crate::conf::{parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Processing};
use crate::elements::click::switches::splitmix;
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "RED",
    summary: "Random Early Detection dropping in front of a queue",
    make,
};

struct Red {
    min: f64,
    max: f64,
    max_p: f64,
    weight: f64,
    avg: f64,
    count: i64,
    rng: u64,
    nout: usize,
    drops: u64,
}

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "RED";
    let mut a = Args::parse(
        c,
        config,
        &["MIN_THRESH", "MAX_THRESH", "MAX_P", "QUEUES", "STABILITY"],
    );
    let num = |s: Option<String>, k: &str| -> Result<f64, String> {
        let s = s.ok_or_else(|| format!("{c}: missing argument {k}"))?;
        let v: f64 = s
            .trim()
            .parse()
            .map_err(|_| format!("{c}: {k}: expected a number, found '{s}'"))?;
        if !v.is_finite() || v < 0.0 {
            return Err(format!(
                "{c}: {k}: expected a non-negative number, found '{s}'"
            ));
        }
        Ok(v)
    };
    let min = num(a.keyword_or_positional("MIN_THRESH"), "MIN_THRESH")?;
    let max = num(a.keyword_or_positional("MAX_THRESH"), "MAX_THRESH")?;
    let max_p = num(a.keyword_or_positional("MAX_P"), "MAX_P")?;
    if a.keyword_or_positional("QUEUES").is_some() {
        return Err(format!(
            "{c}: QUEUES is not supported (the queue downstream of output 0 is used)"
        ));
    }
    let stability = match a.keyword("STABILITY") {
        Some(s) => parse_uint(&s).map_err(|e| format!("{c}: STABILITY: {e}"))?,
        None => 4,
    };
    a.finish()?;
    if min > max || max_p > 1.0 || max == 0.0 || min > 65535.0 || max > 65535.0 {
        return Err(format!(
            "{c}: need MIN_THRESH <= MAX_THRESH (at most 65535, MAX_THRESH > 0) and MAX_P <= 1"
        ));
    }
    if stability > 16 {
        return Err(format!("{c}: STABILITY must be at most 16"));
    }
    Ok(Box::new(Red {
        min,
        max,
        max_p,
        weight: 1.0 / (1u64 << stability) as f64,
        avg: 0.0,
        count: -1,
        rng: splitmix(env.seed),
        nout: 1,
        drops: 0,
    }))
}

impl Red {
    fn draw(&mut self, cx: &mut Cx) -> f64 {
        cx.dynamic_state(Read, 2, 0, 8);
        self.rng = splitmix(self.rng);
        cx.dynamic_state(Write, 2, 0, 8);
        (self.rng >> 11) as f64 / (1u64 << 53) as f64
    }
    /// True when the arriving packet is dropped.
    fn decide(&mut self, cx: &mut Cx) -> bool {
        cx.instr(20);
        cx.dynamic_state(Read, 0, 0, 4);
        cx.dynamic_state(Read, 1, 0, 8);
        let q = cx.downstream_queue_len as f64;
        self.avg += self.weight * (q - self.avg);
        cx.dynamic_state(Write, 1, 0, 8);
        let avg = self.avg;
        if avg <= self.min {
            self.count = -1;
            return false;
        }
        let p_b = if avg < self.max {
            self.max_p * (avg - self.min) / (self.max - self.min).max(f64::MIN_POSITIVE)
        } else if avg < 2.0 * self.max {
            self.max_p + (1.0 - self.max_p) * (avg - self.max) / self.max
        } else {
            self.count = 0;
            return true;
        };
        self.count += 1;
        let denom = 1.0 - self.count as f64 * p_b;
        let p_a = if denom <= 0.0 {
            1.0
        } else {
            (p_b / denom).min(1.0)
        };
        if self.draw(cx) < p_a {
            self.count = 0;
            true
        } else {
            false
        }
    }
}

impl Element for Red {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1).with_outputs(1, 2)
    }
    fn output_processing_of(&self, port: usize) -> Processing {
        if port == 0 {
            Processing::Agnostic
        } else {
            Processing::Push
        }
    }
    fn set_port_counts(&mut self, _i: usize, o: usize) {
        self.nout = o.max(1);
    }
    fn wants_downstream_queue(&self) -> bool {
        true
    }
    #[inline(always)]
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        if !self.decide(cx) {
            return Some(p);
        }
        self.drops += 1;
        if self.nout > 1 {
            cx.emit(1, p);
        } else {
            cx.drop_packet(p, "RED");
        }
        None
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"avg_queue_size": self.avg, "drops": self.drops})
    }
    fn code_size(&self) -> u32 {
        80
    }
}

#[cfg(test)]
mod tests {
    use crate::elements::ip::testutil::make;
    use pktflow_traffic::Packet;

    fn run(e: &mut dyn crate::element::Element, qlen: usize, n: usize) -> usize {
        let mut dropped = 0;
        for _ in 0..n {
            let mut cx = crate::cx::Cx::new();
            cx.downstream_queue_len = qlen;
            e.push(0, Packet::from_bytes(&[0]), &mut cx);
            if cx.emitted_count() == 0 {
                dropped += 1;
            }
        }
        dropped
    }

    #[test]
    fn thresholds() {
        let mut r = make("RED", "10, 100, .5");
        assert_eq!(run(r.as_mut(), 5, 200), 0, "below MIN_THRESH nothing drops");
        let mut r = make("RED", "10, 100, .5");
        assert!(
            run(r.as_mut(), 1000, 200) > 150,
            "far above 2 MAX every packet drops once avg has risen"
        );
        let mut r = make("RED", "10, 100, .1");
        let d = run(r.as_mut(), 55, 2000);
        assert!(d > 20 && d < 1000, "between the thresholds some drop: {d}");
        assert!(
            (crate::registry::find("RED").unwrap().make)("100, 10, .5", &Default::default())
                .is_err()
        );
        assert!(
            (crate::registry::find("RED").unwrap().make)("1, 10, 1.5", &Default::default())
                .is_err()
        );
    }
}
