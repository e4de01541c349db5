//! Pull-side elements.
//!
//! - `PullTee([N])`: 1 agnostic input, N outputs (default: as many as connected, at least 1):
//!   output 0 follows the input's processing (normally pull), outputs 1.. are push. A packet
//!   leaving on output 0 first has a copy pushed to each of outputs 1..N-1, in order (Click's
//!   pull order; pktflow uses the same order when PullTee is pushed). Cost: 2 instructions,
//!   plus per copy 6 instructions and a read of the packet (its length in bytes) and a
//!   16 B meta-data write.
//! - `Unqueue([BURST])`: 1 pull input, 1 push output: pulls packets and pushes them on.
//!   In a functional run it is pulled like an output interface: after every packet, until
//!   its input is empty (BURST is accepted, it only groups pulls in Click). 3 instructions.
//! - `TimedSink([INTERVAL])`: 1 pull input, no outputs: pulls and discards packets (reason
//!   `TimedSink`); like every sink it keeps up with its input (the interval is accepted; the
//!   functional run has no wall clock). 3 instructions.
//! - `RoundRobinSched`: any number of pull inputs, 1 pull output: each pull tries the inputs
//!   in turn starting after the one that last gave a packet. 4 instructions and a read and
//!   write of its pointer (dynamic state object 0, 4 B).
//! - `PrioSched`: the same, always trying input 0 first, then 1, ... 3 instructions.
use crate::conf::{parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Processing, Role};
use crate::elements::nat::flow::parse_seconds;
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;

pub const PULL_TEE: ClassInfo = ClassInfo {
    name: "PullTee",
    summary: "copy pulled packets to push outputs 1..N-1",
    make: make_pull_tee,
};
pub const UNQUEUE: ClassInfo = ClassInfo {
    name: "Unqueue",
    summary: "pull packets and push them on",
    make: make_unqueue,
};
pub const TIMED_SINK: ClassInfo = ClassInfo {
    name: "TimedSink",
    summary: "pull packets and discard them",
    make: make_timed_sink,
};
pub const ROUND_ROBIN_SCHED: ClassInfo = ClassInfo {
    name: "RoundRobinSched",
    summary: "pull from the inputs in turn",
    make: make_rr,
};
pub const PRIO_SCHED: ClassInfo = ClassInfo {
    name: "PrioSched",
    summary: "pull from the lowest-numbered input that has a packet",
    make: make_prio,
};

struct PullTee {
    max: usize,
    n: usize,
}

fn make_pull_tee(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("PullTee", config, &["N"]);
    let max = match a.keyword_or_positional("N") {
        Some(s) => parse_uint(&s).map_err(|e| format!("PullTee: N: {e}"))?,
        None => 64,
    };
    a.finish()?;
    if !(1..=64).contains(&max) {
        return Err(format!("PullTee: N must be 1 to 64, found {max}"));
    }
    Ok(Box::new(PullTee {
        max: max as usize,
        n: 1,
    }))
}

impl PullTee {
    fn copies(&self, p: &Packet, cx: &mut Cx) {
        cx.instr(2);
        for k in 1..self.n {
            cx.instr(6);
            cx.read_pkt(p.len() as u32);
            cx.write_meta(16);
            cx.emit(k, p.clone());
        }
    }
}

impl Element for PullTee {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1).with_outputs(1, self.max)
    }
    fn output_processing_of(&self, port: usize) -> Processing {
        if port == 0 {
            Processing::Agnostic
        } else {
            Processing::Push
        }
    }
    fn set_port_counts(&mut self, _i: usize, o: usize) {
        self.n = o.max(1);
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        self.copies(&p, cx);
        cx.emit(0, p);
    }
    #[inline(always)]
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        self.copies(&p, cx);
        Some(p)
    }
    fn code_size(&self) -> u32 {
        24
    }
}

struct Unqueue {
    sink: bool,
    count: u64,
}

fn make_unqueue(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("Unqueue", config, &["BURST", "ACTIVE", "LIMIT"]);
    if let Some(b) = a.keyword_or_positional("BURST") {
        let b: i64 = b
            .trim()
            .parse()
            .map_err(|_| format!("Unqueue: BURST: expected an integer, found '{b}'"))?;
        if b == 0 {
            return Err("Unqueue: BURST must not be 0".into());
        }
    }
    if a.keyword("LIMIT").is_some() {
        return Err("Unqueue: LIMIT is not supported".into());
    }
    a.keyword("ACTIVE");
    a.finish()?;
    Ok(Box::new(Unqueue {
        sink: false,
        count: 0,
    }))
}
fn make_timed_sink(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("TimedSink", config, &["INTERVAL"]);
    if let Some(s) = a.keyword_or_positional("INTERVAL") {
        parse_seconds(&s).map_err(|e| format!("TimedSink: INTERVAL: {e}"))?;
    }
    a.finish()?;
    Ok(Box::new(Unqueue {
        sink: true,
        count: 0,
    }))
}

impl Element for Unqueue {
    fn ports(&self) -> Ports {
        Ports {
            inputs: (1, 1),
            outputs: if self.sink { (0, 0) } else { (1, 1) },
            input_processing: Processing::Pull,
            output_processing: Processing::Push,
        }
    }
    fn role(&self) -> Role {
        if self.sink {
            Role::Sink
        } else {
            Role::Inner
        }
    }
    fn pulls_actively(&self) -> bool {
        true
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(3);
        self.count += 1;
        if self.sink {
            cx.drop_packet(p, "TimedSink");
        } else {
            cx.emit(0, p);
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count})
    }
    fn code_size(&self) -> u32 {
        16
    }
}

struct Sched {
    rr: bool,
    next: usize,
}

fn make_rr(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("RoundRobinSched", config, &[]).finish()?;
    Ok(Box::new(Sched { rr: true, next: 0 }))
}
fn make_prio(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("PrioSched", config, &[]).finish()?;
    Ok(Box::new(Sched { rr: false, next: 0 }))
}

impl Element for Sched {
    fn ports(&self) -> Ports {
        Ports {
            inputs: (1, 1024),
            outputs: (1, 1),
            input_processing: Processing::Pull,
            output_processing: Processing::Pull,
        }
    }
    fn pull_order(&mut self, inputs: usize) -> Option<Vec<usize>> {
        let n = inputs.max(1);
        let start = if self.rr { self.next % n } else { 0 };
        Some((0..n).map(|k| (start + k) % n).collect())
    }
    fn pulled(&mut self, port: usize, p: Packet, cx: &mut Cx) -> Option<Packet> {
        if self.rr {
            cx.instr(4);
            cx.dynamic_state(Read, 0, 0, 4);
            self.next = port + 1;
            cx.dynamic_state(Write, 0, 0, 4);
        } else {
            cx.instr(3);
        }
        Some(p)
    }
    fn code_size(&self) -> u32 {
        32
    }
}

#[cfg(test)]
mod tests {
    use crate::elements::ip::testutil::make;

    #[test]
    fn scheduler_orders() {
        let mut rr = make("RoundRobinSched", "");
        assert_eq!(rr.pull_order(3), Some(vec![0, 1, 2]));
        let mut cx = crate::cx::Cx::new();
        rr.pulled(1, pktflow_traffic::Packet::from_bytes(&[1]), &mut cx);
        assert_eq!(rr.pull_order(3), Some(vec![2, 0, 1]));
        let mut pr = make("PrioSched", "");
        pr.pulled(1, pktflow_traffic::Packet::from_bytes(&[1]), &mut cx);
        assert_eq!(pr.pull_order(3), Some(vec![0, 1, 2]));
    }
}
