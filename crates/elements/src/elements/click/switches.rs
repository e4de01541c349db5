//! Output choosers. All have 1 push input and any number of push outputs (at least 1).
//!
//! - `Switch([K])`: every packet leaves on output K (default 0); K = -1 drops (reason
//!   `Switch`). Write handler `switch` changes K; read handler `switch`. A K beyond the
//!   outputs drops, as in Click.
//! - `StaticSwitch(K)`: the same, K fixed.
//! - `RandomSwitch`: each packet leaves on an output chosen uniformly at random (the
//!   configuration's seed, see RandomSeed: runs are reproducible).
//! - `RoundRobinSwitch`: outputs 0, 1, ..., N-1, 0, ... in turn.
//! - `HashSwitch(OFFSET, LENGTH)`: output = (hash of the LENGTH bytes at OFFSET) mod N; the
//!   hash is FNV-1a (32-bit) of those bytes, pktflow's choice (Click's hash function differs,
//!   so which output a given flow takes differs; packets of the same bytes always take the
//!   same output). A packet shorter than OFFSET+LENGTH is dropped (reason `too short`).
//! - `CheckPaint(COLOR)`: packets whose paint annotation is COLOR leave on output 0, other
//!   packets on output 1 if it is connected, else they are dropped (reason `wrong paint`).
//!   Ports: 1 agnostic input, 1 or 2 outputs (output 0 agnostic, 1 push).
//!
//! Costs: Switch/StaticSwitch 2 instructions; RoundRobinSwitch 4 instructions and a read and
//! write of its counter (dynamic state object 0, 4 B); RandomSwitch 8 instructions (the
//! generator's update, dynamic state object 0, 8 B read and write); HashSwitch 4 instructions
//! plus 2 per byte hashed and a packet-data read of LENGTH bytes; CheckPaint 2 instructions
//! and a 1 B meta-data read.
use crate::conf::{parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Processing};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;

pub const SWITCH: ClassInfo = ClassInfo {
    name: "Switch",
    summary: "send packets to output K (write handler 'switch')",
    make: make_switch,
};
pub const STATIC_SWITCH: ClassInfo = ClassInfo {
    name: "StaticSwitch",
    summary: "send packets to the fixed output K",
    make: make_static_switch,
};
pub const RANDOM_SWITCH: ClassInfo = ClassInfo {
    name: "RandomSwitch",
    summary: "send each packet to a random output",
    make: make_random,
};
pub const ROUND_ROBIN_SWITCH: ClassInfo = ClassInfo {
    name: "RoundRobinSwitch",
    summary: "send packets to the outputs in turn",
    make: make_rr,
};
pub const HASH_SWITCH: ClassInfo = ClassInfo {
    name: "HashSwitch",
    summary: "choose the output by a hash of packet bytes",
    make: make_hash,
};
pub const CHECK_PAINT: ClassInfo = ClassInfo {
    name: "CheckPaint",
    summary: "packets of paint COLOR to output 0, others to output 1",
    make: make_check_paint,
};

enum Mode {
    Fixed { k: i64, writable: bool },
    Random { state: u64 },
    RoundRobin { next: usize },
    Hash { off: usize, len: usize },
    Paint { color: u8 },
}

struct Chooser {
    mode: Mode,
    n: usize,
    counts: Vec<u64>,
}

fn parse_k(class: &str, s: Option<String>, default: Option<i64>) -> Result<i64, String> {
    match s {
        Some(s) => {
            let k: i64 = s
                .trim()
                .parse()
                .map_err(|_| format!("{class}: K: expected an output number or -1, found '{s}'"))?;
            if k < -1 {
                return Err(format!(
                    "{class}: K: expected an output number or -1, found {k}"
                ));
            }
            Ok(k)
        }
        None => default.ok_or_else(|| format!("{class}: missing argument K")),
    }
}

fn boxed(mode: Mode) -> Box<dyn Element> {
    Box::new(Chooser {
        mode,
        n: 1,
        counts: Vec::new(),
    })
}

fn make_switch(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("Switch", config, &["K"]);
    let k = parse_k("Switch", a.keyword_or_positional("K"), Some(0))?;
    a.finish()?;
    Ok(boxed(Mode::Fixed { k, writable: true }))
}
fn make_static_switch(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("StaticSwitch", config, &["K"]);
    let k = parse_k("StaticSwitch", a.keyword_or_positional("K"), None)?;
    a.finish()?;
    Ok(boxed(Mode::Fixed { k, writable: false }))
}
fn make_random(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("RandomSwitch", config, &[]).finish()?;
    Ok(boxed(Mode::Random {
        state: splitmix(env.seed),
    }))
}
fn make_rr(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("RoundRobinSwitch", config, &[]).finish()?;
    Ok(boxed(Mode::RoundRobin { next: 0 }))
}
fn make_hash(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("HashSwitch", config, &["OFFSET", "LENGTH"]);
    let off = parse_uint(
        &a.keyword_or_positional("OFFSET")
            .ok_or("HashSwitch: missing argument OFFSET")?,
    )
    .map_err(|e| format!("HashSwitch: OFFSET: {e}"))?;
    let len = parse_uint(
        &a.keyword_or_positional("LENGTH")
            .ok_or("HashSwitch: missing argument LENGTH")?,
    )
    .map_err(|e| format!("HashSwitch: LENGTH: {e}"))?;
    a.finish()?;
    if len == 0 || len > 65535 || off > 65535 {
        return Err("HashSwitch: LENGTH must be 1 to 65535 and OFFSET at most 65535".into());
    }
    Ok(boxed(Mode::Hash {
        off: off as usize,
        len: len as usize,
    }))
}
fn make_check_paint(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("CheckPaint", config, &["COLOR", "ANNO"]);
    let c = parse_uint(
        &a.keyword_or_positional("COLOR")
            .ok_or("CheckPaint: missing argument COLOR")?,
    )
    .map_err(|e| format!("CheckPaint: COLOR: {e}"))?;
    if a.keyword("ANNO").is_some() {
        return Err("CheckPaint: ANNO is not supported (the paint annotation only)".into());
    }
    a.finish()?;
    if c > 255 {
        return Err(format!("CheckPaint: COLOR must be 0 to 255, found {c}"));
    }
    Ok(boxed(Mode::Paint { color: c as u8 }))
}

/// SplitMix64 step: the pseudo-random generator of RandomSwitch (and its seeding).
pub fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a, 32-bit.
pub fn fnv1a(b: &[u8]) -> u32 {
    b.iter().fold(0x811c_9dc5u32, |h, &x| {
        (h ^ x as u32).wrapping_mul(0x0100_0193)
    })
}

impl Element for Chooser {
    fn ports(&self) -> Ports {
        match self.mode {
            Mode::Paint { .. } => Ports::agnostic(1, 1).with_outputs(1, 2),
            _ => Ports::push(1, 1).with_outputs(1, 1024),
        }
    }
    fn output_processing_of(&self, port: usize) -> Processing {
        match (&self.mode, port) {
            (Mode::Paint { .. }, 0) => Processing::Agnostic,
            _ => Processing::Push,
        }
    }
    fn set_port_counts(&mut self, _i: usize, o: usize) {
        self.n = o.max(1);
        self.counts = vec![0; self.n];
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        let out = match &mut self.mode {
            Mode::Fixed { k, .. } => {
                cx.instr(2);
                *k
            }
            Mode::Random { state } => {
                cx.instr(8);
                cx.dynamic_state(Read, 0, 0, 8);
                *state = splitmix(*state);
                cx.dynamic_state(Write, 0, 0, 8);
                ((*state >> 11) % self.n as u64) as i64
            }
            Mode::RoundRobin { next } => {
                cx.instr(4);
                cx.dynamic_state(Read, 0, 0, 4);
                let k = *next;
                *next = (k + 1) % self.n;
                cx.dynamic_state(Write, 0, 0, 4);
                k as i64
            }
            Mode::Hash { off, len } => {
                cx.instr(4 + 2 * *len as u32);
                cx.read_pkt(*len as u32);
                match p.data().get(*off..*off + *len) {
                    Some(b) => (fnv1a(b) % self.n as u32) as i64,
                    None => {
                        cx.drop_packet(p, "too short");
                        return;
                    }
                }
            }
            Mode::Paint { color } => {
                cx.instr(2);
                cx.read_meta(1);
                if p.anno.paint == *color {
                    0
                } else if self.n > 1 {
                    1
                } else {
                    cx.drop_packet(p, "wrong paint");
                    return;
                }
            }
        };
        if out < 0 || out as usize >= self.n {
            cx.drop_packet(p, "Switch");
            return;
        }
        if let Some(c) = self.counts.get_mut(out as usize) {
            *c += 1;
        }
        cx.emit(out as usize, p);
    }
    #[inline(always)]
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        // Pull path (CheckPaint only): matching packets pass, others go to output 1 or drop.
        cx.instr(2);
        cx.read_meta(1);
        let Mode::Paint { color } = self.mode else {
            return Some(p);
        };
        if p.anno.paint == color {
            Some(p)
        } else if self.n > 1 {
            cx.emit(1, p);
            None
        } else {
            cx.drop_packet(p, "wrong paint");
            None
        }
    }
    fn write_handler(&mut self, name: &str, value: &str) -> Result<(), String> {
        match (&mut self.mode, name) {
            (Mode::Fixed { k, writable: true }, "switch") => {
                *k = parse_k("Switch", Some(value.to_string()), None)?;
                Ok(())
            }
            _ => Err(format!("no write handler '{name}'")),
        }
    }
    fn stats(&self) -> serde_json::Value {
        match self.mode {
            Mode::Fixed { k, .. } => serde_json::json!({"switch": k, "counts": self.counts}),
            _ => serde_json::json!({"counts": self.counts}),
        }
    }
    fn code_size(&self) -> u32 {
        24
    }
}

#[cfg(test)]
mod tests {
    use crate::elements::ip::testutil::{drop_reasons, make, push};
    use pktflow_traffic::Packet;

    fn outs(class: &str, conf: &str, n: usize, pkts: &[&[u8]]) -> Vec<usize> {
        let mut e = make(class, conf);
        e.set_port_counts(1, n);
        pkts.iter()
            .flat_map(|b| push(e.as_mut(), 0, Packet::from_bytes(b)).0)
            .map(|(o, _)| o)
            .collect()
    }

    #[test]
    fn switches_choose_outputs() {
        assert_eq!(outs("Switch", "1", 3, &[&[1], &[2]]), vec![1, 1]);
        assert_eq!(outs("Switch", "-1", 3, &[&[1]]), Vec::<usize>::new());
        assert_eq!(outs("StaticSwitch", "2", 3, &[&[1]]), vec![2]);
        assert_eq!(
            outs("RoundRobinSwitch", "", 3, &[&[1], &[1], &[1], &[1]]),
            vec![0, 1, 2, 0]
        );
        let one: &[u8] = &[1];
        let r = outs("RandomSwitch", "", 4, &[one; 200]);
        assert!(
            (0..4).all(|k| r.contains(&k)),
            "every output is used: {r:?}"
        );
        // FNV-1a of [0x01]: (0x811c9dc5 ^ 1) * 0x01000193 mod 2^32 = 0x040c5b8c -> mod 2 = 0.
        assert_eq!(super::fnv1a(&[1]), 0x040c_5b8c);
        assert_eq!(
            outs("HashSwitch", "1, 1", 2, &[&[9, 1], &[9, 1]]),
            vec![0, 0]
        );
        let mut s = make("Switch", "0");
        s.write_handler("switch", "2").unwrap();
        s.set_port_counts(1, 3);
        assert_eq!(push(s.as_mut(), 0, Packet::from_bytes(&[1])).0[0].0, 2);
        let mut h = make("HashSwitch", "4, 2");
        let (_, t) = push(h.as_mut(), 0, Packet::from_bytes(&[1, 2]));
        assert_eq!(drop_reasons(&t), vec!["too short"]);
    }

    #[test]
    fn check_paint() {
        let mut c = make("CheckPaint", "3");
        c.set_port_counts(1, 2);
        let mut p = Packet::from_bytes(&[1]);
        p.anno.paint = 3;
        assert_eq!(push(c.as_mut(), 0, p).0[0].0, 0);
        assert_eq!(push(c.as_mut(), 0, Packet::from_bytes(&[1])).0[0].0, 1);
        c.set_port_counts(1, 1);
        let (o, t) = push(c.as_mut(), 0, Packet::from_bytes(&[1]));
        assert!(o.is_empty());
        assert_eq!(drop_reasons(&t), vec!["wrong paint"]);
    }
}
