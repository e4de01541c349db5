//! Per-element costs that replace the elements' estimates in the traces the timing models read.
//!
//! The elements report estimated instruction counts (`cx.instr(n)`, docs/profile.md) and typed
//! memory accesses. For a machine whose costs were measured (the host: `pktflow run --predict
//! host`, docs/runtime.md "Prediction"), a [`CostTable`] gives each element's mean cost per
//! visit instead, and a per-packet cost for the work outside elements. [`CostOverride::apply`]
//! rewrites one packet's trace with it, before the simulator sees the trace; everything else
//! (visits, their order, elements, ports, fates, packet, timestamp, length) is kept.
//!
//! Rounding: a visit's instructions are a whole number, so each element carries the fraction
//! it rounded away to its next visit (and the per-packet cost to the next packet): over a run,
//! an element's instructions are its mean times its visits to within one instruction, and the
//! result is the same on every run.
use pktflow_model::PacketTrace;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Most instructions one visit may be given.
pub const MAX_INSTRUCTIONS_PER_VISIT: f64 = 1e9;

/// Measured costs, in the simulator's instructions (cycles = instructions x the architecture's
/// `cycles_per_instruction`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostTable {
    /// Instructions charged to every visit of the named element (its mean per visit). Elements
    /// not named keep their estimated instructions.
    pub instructions_per_visit: BTreeMap<String, f64>,
    /// Instructions added to the first visit of every packet (the source visit): the work done
    /// per packet outside the elements (reading the trace, delivering between elements,
    /// handling what leaves).
    #[serde(default)]
    pub per_packet_instructions: f64,
    /// Keep the elements' memory accesses (their `at_instr` scaled to the new instruction
    /// count). Default false: every access is dropped, because a measured time already
    /// includes the machine's caches and memory, and charging the accesses again counts them
    /// twice (and with them go the software locks the simulator derives from them).
    #[serde(default)]
    pub keep_accesses: bool,
}

fn check(what: &str, x: f64) -> Result<(), String> {
    if !x.is_finite() || !(0.0..=MAX_INSTRUCTIONS_PER_VISIT).contains(&x) {
        return Err(format!(
            "element costs: {what} must be a number of instructions from 0 to {MAX_INSTRUCTIONS_PER_VISIT:e}, got {x}"
        ));
    }
    Ok(())
}

impl CostTable {
    /// Every value in range and every element named in `names` (the application's elements).
    pub fn validate(&self, names: &[String]) -> Result<(), String> {
        for (name, &x) in &self.instructions_per_visit {
            if !names.iter().any(|n| n == name) {
                return Err(format!(
                    "element costs: unknown element '{name}' (not in the application)"
                ));
            }
            check(&format!("'{name}'"), x)?;
        }
        check("per_packet_instructions", self.per_packet_instructions)
    }
}

/// A [`CostTable`] resolved against an application's elements, applied packet by packet.
#[derive(Clone, Debug)]
pub struct CostOverride {
    per_element: Vec<Option<f64>>,
    per_packet: f64,
    keep_accesses: bool,
    /// Fractions carried to the next visit of each element, and to the next packet.
    carry: Vec<f64>,
    carry_packet: f64,
}

/// `x` plus what was carried, rounded; the fraction rounded away is carried on.
#[inline]
fn take(x: f64, carry: &mut f64) -> u32 {
    let want = x + *carry;
    let n = want.round().max(0.0);
    *carry = want - n;
    n as u32
}

impl CostOverride {
    /// `names`: the application's elements, in index order.
    pub fn new(table: &CostTable, names: &[String]) -> Result<CostOverride, String> {
        table.validate(names)?;
        Ok(CostOverride {
            per_element: names
                .iter()
                .map(|n| table.instructions_per_visit.get(n).copied())
                .collect(),
            per_packet: table.per_packet_instructions,
            keep_accesses: table.keep_accesses,
            carry: vec![0.0; names.len()],
            carry_packet: 0.0,
        })
    }

    /// Rewrite `t` in place: each visit of a named element gets its measured instructions, the
    /// first visit gets the per-packet instructions on top, and the accesses are dropped
    /// (unless kept).
    pub fn apply(&mut self, t: &mut PacketTrace) {
        let extra = if t.visits.is_empty() {
            0
        } else {
            take(self.per_packet, &mut self.carry_packet)
        };
        for (k, v) in t.visits.iter_mut().enumerate() {
            let old = v.instructions;
            let e = v.element as usize;
            let mut new = match self.per_element.get(e).copied().flatten() {
                Some(x) => take(x, &mut self.carry[e]),
                None => old,
            };
            if k == 0 {
                new = new.saturating_add(extra);
            }
            if self.keep_accesses && new != old {
                for a in &mut t.accesses[v.access_start as usize..v.access_end as usize] {
                    a.at_instr = if old == 0 {
                        0
                    } else {
                        (a.at_instr as u64 * new as u64 / old as u64) as u32
                    };
                }
            }
            v.instructions = new;
            if !self.keep_accesses {
                v.access_start = 0;
                v.access_end = 0;
            }
        }
        if !self.keep_accesses {
            t.accesses.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktflow_model::{AccessKind, Fate, MemAccess, MemType, Visit};

    fn names() -> Vec<String> {
        ["src", "cl", "rt", "out"].map(String::from).to_vec()
    }

    fn access(at: u32) -> MemAccess {
        MemAccess {
            mem: MemType::StaticState,
            kind: AccessKind::Read,
            bytes: 4,
            at_instr: at,
            object: 2 << 8,
            key: 7,
            lock: Default::default(),
        }
    }

    fn trace() -> PacketTrace {
        let v = |element, port, instructions, a: u32, b: u32| Visit {
            element,
            port,
            instructions,
            access_start: a,
            access_end: b,
        };
        PacketTrace {
            packet: 9,
            timestamp_ns: 1234,
            wire_bytes: 60,
            visits: vec![
                v(0, 0, 4, 0, 1),
                v(1, 0, 20, 1, 2),
                v(2, 1, 40, 2, 4),
                v(3, 0, 10, 4, 4),
            ],
            accesses: vec![access(0), access(10), access(0), access(30)],
            fates: vec![Fate::Output { element: 3 }],
        }
    }

    fn table(pairs: &[(&str, f64)], per_packet: f64, keep: bool) -> CostTable {
        CostTable {
            instructions_per_visit: pairs.iter().map(|(n, x)| (n.to_string(), *x)).collect(),
            per_packet_instructions: per_packet,
            keep_accesses: keep,
        }
    }

    #[test]
    fn visits_get_the_measured_instructions_and_the_rest_is_kept() {
        let mut o = CostOverride::new(
            &table(&[("src", 0.0), ("cl", 100.0), ("rt", 300.0)], 500.0, false),
            &names(),
        )
        .unwrap();
        let before = trace();
        let mut t = before.clone();
        o.apply(&mut t);
        let instr: Vec<u32> = t.visits.iter().map(|v| v.instructions).collect();
        // The source visit: its element's cost (0) plus the per-packet cost; `out` is not in
        // the table and keeps its estimate.
        assert_eq!(instr, vec![500, 100, 300, 10]);
        // Conserved: packet, timestamp, length, fates, and each visit's element and port.
        assert_eq!(
            (t.packet, t.timestamp_ns, t.wire_bytes, &t.fates),
            (
                before.packet,
                before.timestamp_ns,
                before.wire_bytes,
                &before.fates
            )
        );
        let ep = |t: &PacketTrace| {
            t.visits
                .iter()
                .map(|v| (v.element, v.port))
                .collect::<Vec<_>>()
        };
        assert_eq!(ep(&t), ep(&before));
        // Accesses dropped by default.
        assert!(t.accesses.is_empty());
        assert!(t
            .visits
            .iter()
            .all(|v| v.access_start == 0 && v.access_end == 0));
        assert_eq!(t.instructions(), 910);
    }

    #[test]
    fn kept_accesses_are_placed_at_the_same_fraction_of_the_visit() {
        let mut o = CostOverride::new(&table(&[("rt", 400.0)], 0.0, true), &names()).unwrap();
        let before = trace();
        let mut t = before.clone();
        o.apply(&mut t);
        assert_eq!(t.accesses.len(), before.accesses.len());
        assert_eq!(t.visits[2].instructions, 400);
        assert_eq!((t.visits[2].access_start, t.visits[2].access_end), (2, 4));
        // rt's accesses were at 0 and 30 of 40 instructions: now at 0 and 300 of 400.
        assert_eq!((t.accesses[2].at_instr, t.accesses[3].at_instr), (0, 300));
        // Other visits untouched.
        assert_eq!(t.accesses[1].at_instr, 10);
        assert_eq!(t.visits[1].instructions, 20);
    }

    #[test]
    fn fractions_are_carried_so_the_mean_is_kept() {
        let mut o =
            CostOverride::new(&table(&[("cl", 2.25), ("rt", 0.5)], 10.4, false), &names()).unwrap();
        let (mut cl, mut rt, mut first) = (0u64, 0u64, 0u64);
        for _ in 0..1000 {
            let mut t = trace();
            o.apply(&mut t);
            cl += t.visits[1].instructions as u64;
            rt += t.visits[2].instructions as u64;
            first += t.visits[0].instructions as u64;
        }
        // The source element is not in the table: its estimate (4) plus the per-packet 10.4.
        assert_eq!((cl, rt, first), (2250, 500, 14_400));
        // Deterministic: a second override gives the same sequence.
        let mut a = CostOverride::new(&table(&[("cl", 2.25)], 0.3, false), &names()).unwrap();
        let mut b = a.clone();
        for _ in 0..10 {
            let (mut x, mut y) = (trace(), trace());
            a.apply(&mut x);
            b.apply(&mut y);
            let json = |t: &PacketTrace| serde_json::to_string(t).unwrap();
            assert_eq!(json(&x), json(&y));
        }
    }

    #[test]
    fn a_run_hands_out_its_traces_with_the_measured_costs() {
        use crate::run::{Run, Source};
        let dir = std::env::temp_dir();
        let src = Source::from_args(None, Some(200), 3);
        let mut plain = Run::start("router", &src, &dir).unwrap();
        let mut costed = Run::start("router", &src, &dir).unwrap();
        let all: BTreeMap<String, f64> = plain
            .app
            .graph
            .elements
            .iter()
            .map(|e| (e.name.clone(), 7.0))
            .collect();
        let t = CostTable {
            instructions_per_visit: all,
            per_packet_instructions: 100.0,
            keep_accesses: false,
        };
        costed.set_costs(&t).unwrap();
        let mut n = 0;
        while let Some(a) = plain.next_trace().unwrap().cloned() {
            let b = costed
                .next_trace()
                .unwrap()
                .expect("as many traces")
                .clone();
            let ep = |t: &PacketTrace| {
                t.visits
                    .iter()
                    .map(|v| (v.element, v.port))
                    .collect::<Vec<_>>()
            };
            assert_eq!(ep(&a), ep(&b));
            assert_eq!(
                (a.packet, a.timestamp_ns, a.wire_bytes),
                (b.packet, b.timestamp_ns, b.wire_bytes)
            );
            assert_eq!(b.instructions(), 7 * b.visits.len() as u64 + 100);
            assert!(b.accesses.is_empty() && !a.accesses.is_empty());
            n += 1;
        }
        assert!(costed.next_trace().unwrap().is_none());
        assert!(n >= 200);
        // A table naming an element the application does not have is refused.
        let mut bad = t.clone();
        bad.instructions_per_visit.insert("nosuch".into(), 1.0);
        assert!(Run::start("router", &src, &dir)
            .unwrap()
            .set_costs(&bad)
            .is_err());
    }

    #[test]
    fn bad_tables_are_refused_with_one_line() {
        let e = |t: CostTable| CostOverride::new(&t, &names()).unwrap_err();
        let m = e(table(&[("nosuch", 1.0)], 0.0, false));
        assert!(m.contains("unknown element 'nosuch'"), "{m}");
        for bad in [-1.0, f64::NAN, f64::INFINITY, 2e9] {
            let m = e(table(&[("rt", bad)], 0.0, false));
            assert!(m.contains("'rt' must be a number of instructions"), "{m}");
            let m = e(table(&[], bad, false));
            assert!(m.contains("per_packet_instructions"), "{m}");
            assert!(!m.contains('\n'));
        }
        // Unknown keys are refused by the parser.
        assert!(
            serde_json::from_str::<CostTable>(r#"{"instructions_per_visit": {}, "x": 1}"#).is_err()
        );
    }
}
