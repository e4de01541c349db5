//! Where the slow path runs (docs/protoproc.md section 6): the protocol-processing paper's
//! Single, Fixed and Floating policies ([`pktflow_protoproc::policy::Policy`]) applied to the
//! slow-path elements of a Click application on the NP simulator.
//!
//! Tasks are elements here, so a policy is a rewrite of the mapping plus a per-visit charge:
//!
//! * `fixed`: every slow-path task runs on one dedicated PE (the last processing PE), which
//!   runs nothing else; fast-path tasks mapped there move to the other PEs. Each slow-path
//!   visit costs the dedicated PE `message_cycles` to take the packet and `message_cycles` to
//!   hand it back (the handoff's cost each way). Needs at least 2 PEs.
//! * `single`: slow-path tasks stay where the mapper put them (on data-plane PEs, among
//!   fast-path tasks); each visit costs `interrupt_cycles` first (interrupt and context switch).
//! * `floating`: slow-path tasks go to one shared queue served by a free context of any PE;
//!   each visit costs `role_switch_cycles` first.
//!
//! Slow-path elements: the classes in [`DEFAULT_CLASSES`] plus every element named (by element
//! name or class) in `elements`.
use crate::config::Mapping;
use crate::prog::Op;
use pktflow_protoproc::policy::Policy;
use serde::{Deserialize, Serialize};

/// Element classes that are slow path by default: answering ARP queries and generating ICMP
/// errors. `ARPQuerier` is not among them: in a Click router every forwarded packet visits it
/// for its Ethernet header (the fast path); mark it (or one interface's instance) with
/// `elements` to treat its visits as slow path.
pub const DEFAULT_CLASSES: [&str; 2] = ["ARPResponder", "ICMPError"];

/// Largest per-visit cost, cycles.
pub const MAX_COST_CYCLES: u32 = 10_000_000;

/// The slow-path policy of a run (`sim.slow_path`). Costs are PE cycles. Defaults: the
/// protocol-processing paper's interrupt (60 us), Floating role switch (14 us, the mean
/// per-handler surcharge of Single over Fixed in its Table 2) and one-way network latency
/// (12 us) read at pktflow's chosen scale of 10 PE cycles per paper microsecond: the ratios are
/// the paper's, the scale is pktflow's choice (docs/protoproc.md section 6).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SlowPath {
    /// None: no slow-path handling (every element is an ordinary task).
    pub policy: Option<Policy>,
    /// Extra slow-path elements, by element name or class.
    pub elements: Vec<String>,
    pub interrupt_cycles: u32,
    pub role_switch_cycles: u32,
    pub message_cycles: u32,
    /// Resolved by [`apply`]: the per-element charges (cycles before, after each visit).
    #[serde(skip)]
    pub charge: Vec<(u32, u32)>,
}

impl Default for SlowPath {
    fn default() -> SlowPath {
        SlowPath {
            policy: None,
            elements: Vec::new(),
            interrupt_cycles: 600,
            role_switch_cycles: 140,
            message_cycles: 120,
            charge: Vec::new(),
        }
    }
}

impl SlowPath {
    pub fn validate(&self) -> Result<(), String> {
        for (k, v) in [
            ("interrupt_cycles", self.interrupt_cycles),
            ("role_switch_cycles", self.role_switch_cycles),
            ("message_cycles", self.message_cycles),
        ] {
            if v > MAX_COST_CYCLES {
                return Err(format!(
                    "slow_path.{k} = {v} is more than the {MAX_COST_CYCLES} cycles supported"
                ));
            }
        }
        if self.elements.len() > 1024 {
            return Err("slow_path.elements (--slow-path): at most 1024 names".into());
        }
        Ok(())
    }

    /// Is element `i` (name, class) slow path?
    fn is_slow(&self, name: &str, class: &str) -> bool {
        DEFAULT_CLASSES.contains(&class) || self.elements.iter().any(|e| e == name || e == class)
    }
}

/// The mapping and configuration a policy makes of `mapping` on `pes` processing PEs (PE
/// `pes`, the control core, is never used for slow-path work). Unchanged when no policy is set.
pub fn apply(
    sp: &SlowPath,
    names: &[String],
    classes: &[String],
    pes: u32,
    mapping: &Mapping,
) -> Result<(Mapping, SlowPath), String> {
    let mut out = sp.clone();
    let mut m = mapping.clone();
    let Some(policy) = sp.policy else {
        out.charge.clear();
        return Ok((m, out));
    };
    for e in &sp.elements {
        if !names.iter().chain(classes).any(|n| n == e) {
            return Err(format!(
                "slow_path.elements (--slow-path): no element or class named '{e}'"
            ));
        }
    }
    let slow: Vec<bool> = names
        .iter()
        .zip(classes)
        .map(|(n, c)| sp.is_slow(n, c))
        .collect();
    let (before, after) = match policy {
        Policy::Single => (sp.interrupt_cycles, 0),
        Policy::Floating => (sp.role_switch_cycles, 0),
        Policy::Fixed => (sp.message_cycles, sp.message_cycles),
    };
    out.charge = slow
        .iter()
        .map(|&s| if s { (before, after) } else { (0, 0) })
        .collect();
    match policy {
        Policy::Single => {}
        Policy::Floating => {
            for (t, _) in m.tasks.iter_mut().zip(&slow).filter(|(_, &s)| s) {
                t.pes = (0..pes).collect();
                t.max_concurrent = u32::MAX;
            }
        }
        Policy::Fixed => {
            if pes < 2 {
                return Err(format!(
                    "slow_path.policy: fixed dedicates one PE to the slow path and needs at least 2 PEs, got {pes}"
                ));
            }
            let dedicated = pes - 1;
            let mut k = 0u32;
            for (t, &s) in m.tasks.iter_mut().zip(&slow) {
                if s {
                    t.pes = vec![dedicated];
                    continue;
                }
                t.pes.retain(|&p| p != dedicated);
                if t.pes.is_empty() {
                    // Round-robin over the data-plane PEs.
                    t.pes = vec![k % dedicated];
                    k += 1;
                }
            }
        }
    }
    Ok((m, out))
}

/// Add the policy's per-visit charges to a compiled packet program (`vstart[k]`: where visit k
/// starts; `vtask[k]`: its task). Called once per packet right after it is compiled.
pub fn charge(sp: &SlowPath, ops: &mut Vec<Op>, vstart: &mut [u32], vtask: &[u32]) {
    if sp.charge.is_empty() || !vtask.iter().any(|&t| sp.charge[t as usize] != (0, 0)) {
        return;
    }
    let old = std::mem::take(ops);
    let n = vstart.len();
    for k in 0..n {
        let s = vstart[k] as usize;
        let e = if k + 1 < n {
            vstart[k + 1] as usize
        } else {
            old.len()
        };
        vstart[k] = ops.len() as u32;
        let (before, after) = sp.charge[vtask[k] as usize];
        if before > 0 {
            ops.push(Op::Compute(before));
        }
        let body = &old[s..e];
        // The visit's program ends with `Op::End`; the hand-back goes just before it.
        let (last, rest) = body.split_last().expect("a visit has at least Op::End");
        ops.extend_from_slice(rest);
        if after > 0 {
            ops.push(Op::Compute(after));
        }
        ops.push(*last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TaskMap;

    fn app() -> (Vec<String>, Vec<String>, Mapping) {
        let names = vec!["c".into(), "arpr".into(), "out".into()];
        let classes = vec!["Classifier".into(), "ARPResponder".into(), "Queue".into()];
        let m = Mapping {
            tasks: vec![
                TaskMap::new(vec![0], 1),
                TaskMap::new(vec![1], 1),
                TaskMap::new(vec![2], 1),
            ],
        };
        (names, classes, m)
    }

    fn with(p: Policy) -> SlowPath {
        SlowPath {
            policy: Some(p),
            ..SlowPath::default()
        }
    }

    #[test]
    fn fixed_dedicates_the_last_pe_to_slow_path_tasks_only() {
        let (n, c, m) = app();
        let (m2, sp) = apply(&with(Policy::Fixed), &n, &c, 3, &m).unwrap();
        assert_eq!(m2.tasks[1].pes, vec![2]);
        assert!(!m2.tasks[0].pes.contains(&2) && !m2.tasks[2].pes.contains(&2));
        assert_eq!(sp.charge, vec![(0, 0), (120, 120), (0, 0)]);
        let e = apply(&with(Policy::Fixed), &n, &c, 1, &m).unwrap_err();
        assert!(e.contains("at least 2 PEs"), "{e}");
    }

    #[test]
    fn floating_shares_slow_path_tasks_over_all_pes_and_single_keeps_them() {
        let (n, c, m) = app();
        let (m2, sp) = apply(&with(Policy::Floating), &n, &c, 3, &m).unwrap();
        assert_eq!(m2.tasks[1].pes, vec![0, 1, 2]);
        assert_eq!(m2.tasks[0].pes, vec![0]);
        assert_eq!(sp.charge[1], (140, 0));
        let (m3, sp) = apply(&with(Policy::Single), &n, &c, 3, &m).unwrap();
        assert_eq!(m3, m);
        assert_eq!(sp.charge[1], (600, 0));
    }

    #[test]
    fn named_elements_join_and_unknown_names_are_refused() {
        let (n, c, m) = app();
        let mut sp = with(Policy::Single);
        sp.elements = vec!["out".into()];
        let (_, r) = apply(&sp, &n, &c, 3, &m).unwrap();
        assert_eq!(r.charge[2], (600, 0));
        sp.elements = vec!["nope".into()];
        assert!(apply(&sp, &n, &c, 3, &m).unwrap_err().contains("'nope'"));
    }

    #[test]
    fn charges_go_around_slow_visits_only() {
        let (n, c, m) = app();
        let (_, sp) = apply(&with(Policy::Fixed), &n, &c, 3, &m).unwrap();
        let mut ops = vec![Op::Compute(5), Op::End, Op::Compute(7), Op::End, Op::End];
        let mut vstart = vec![0, 2, 4];
        charge(&sp, &mut ops, &mut vstart, &[0, 1, 2]);
        assert_eq!(
            ops,
            vec![
                Op::Compute(5),
                Op::End,
                Op::Compute(120),
                Op::Compute(7),
                Op::Compute(120),
                Op::End,
                Op::End
            ]
        );
        assert_eq!(vstart, vec![0, 2, 6]);
    }
}
