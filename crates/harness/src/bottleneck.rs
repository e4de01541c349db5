//! The bottleneck vocabulary: which resource binds a run, with its evidence, in words an
//! engineer can act on ("lock of out0 (Queue) held 98.6% of the time; shorten the critical
//! section ..."). Every engine names its binding resource with a [`Finding`], so the reports of
//! the NP simulator, the run-to-completion engine and the mesh read the same way.
use serde::Serialize;

/// A resource that can bind throughput.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Resource {
    /// A processing element / core, by index.
    Pe { index: u32 },
    /// A task (all its instances), with its element class.
    Task { name: String, class: String },
    /// The lock guarding shared state, named after the task or data structure it protects.
    Lock { name: String, class: String },
    /// A shared bus.
    Bus { name: String },
    /// A memory (all its channels).
    Memory { name: String },
    /// The packet input buffer of the machine (slots full: arrivals are dropped).
    InputBuffer { slots: u32 },
    /// Issue slots of the cores (every thread context busy or stalled).
    IssueSlots,
    /// A directed network link, between two named routers or tiles.
    Link { from: String, to: String },
    /// Transactions that abort and re-execute, on a named data structure.
    Aborts { structure: String },
    /// The protocol/slow-path processor (or whichever core plays its role).
    ProtocolProcessor,
    /// The machine's network ports (it keeps up with their line rate: nothing inside binds).
    Ports { count: u32, gbps_each: f64 },
}

impl Resource {
    /// The resource in words.
    pub fn describe(&self) -> String {
        match self {
            Resource::Pe { index } => format!("PE {index}"),
            Resource::Task { name, class } if class.is_empty() => format!("task {name}"),
            Resource::Task { name, class } => format!("task {name} ({class})"),
            Resource::Lock { name, class } if class.is_empty() => format!("lock of {name}"),
            Resource::Lock { name, class } => format!("lock of {name} ({class})"),
            Resource::Bus { name } => format!("bus {name}"),
            Resource::Memory { name } => format!("memory {name}"),
            Resource::InputBuffer { slots } => format!("input buffer ({slots} slots)"),
            Resource::IssueSlots => "issue slots of the cores".to_string(),
            Resource::Link { from, to } => format!("link {from} -> {to}"),
            Resource::Aborts { structure } => format!("transactions on {structure}"),
            Resource::ProtocolProcessor => "protocol processor".to_string(),
            Resource::Ports { count, gbps_each } => {
                format!("the ports ({count} x {gbps_each} Gb/s)")
            }
        }
    }

    /// How its share reads ("busy", "held", "full", "aborting").
    pub fn verb(&self) -> &'static str {
        match self {
            Resource::Lock { .. } => "held",
            Resource::InputBuffer { .. } => "full",
            Resource::Aborts { .. } => "re-executing",
            _ => "busy",
        }
    }

    /// What usually relieves it.
    pub fn default_advice(&self) -> &'static str {
        match self {
            Resource::Pe { .. } => "spread its tasks over more PEs",
            Resource::Task { .. } => "replicate the task or split it",
            Resource::Lock { .. } => {
                "shorten the critical section (release the lock early, split the task) or run it optimistically (speculation, transactions)"
            }
            Resource::Bus { .. } | Resource::Memory { .. } => {
                "make fewer or wider memory operations (locality) or add channels"
            }
            Resource::InputBuffer { .. } => {
                "more input slots only absorb bursts; the processing behind them is too slow"
            }
            Resource::IssueSlots => "add threads or cores",
            Resource::Link { .. } => "route around the link or place its endpoints closer",
            Resource::Aborts { .. } => {
                "use a lock for this structure, or a contention manager that backs off"
            }
            Resource::ProtocolProcessor => "add a protocol processor or let idle cores take its work",
            Resource::Ports { .. } => "nothing inside the machine binds: only a faster link would show its limit",
        }
    }
}

/// A binding resource with its evidence.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Finding {
    pub resource: Resource,
    /// The resource in words ([`Resource::describe`]: "lock of out0 (Queue)", "PE 3").
    pub what: String,
    /// Share of the measured time the resource was busy / held / full, 0..1.
    pub share: f64,
    /// Further evidence in words ("232 cycles per acquisition, 13 of them instructions").
    pub evidence: Vec<String>,
    /// What to do about it.
    pub advice: String,
    /// The finding as one sentence (filled by [`Finding::new`]).
    pub sentence: String,
}

impl Finding {
    pub fn new(resource: Resource, share: f64, evidence: Vec<String>) -> Finding {
        let advice = resource.default_advice().to_string();
        Finding::with_advice(resource, share, evidence, advice)
    }

    pub fn with_advice(
        resource: Resource,
        share: f64,
        evidence: Vec<String>,
        advice: String,
    ) -> Finding {
        let mut f = Finding {
            what: resource.describe(),
            resource,
            share,
            evidence,
            advice,
            sentence: String::new(),
        };
        f.sentence = f.render();
        f
    }

    fn render(&self) -> String {
        let mut s = format!(
            "{} {} {:.1}% of the time",
            self.resource.describe(),
            self.resource.verb(),
            100.0 * self.share
        );
        if !self.evidence.is_empty() {
            s.push_str(" (");
            s.push_str(&self.evidence.join("; "));
            s.push(')');
        }
        s.push_str("; ");
        s.push_str(&self.advice);
        s
    }
}

/// The most binding of several candidate findings: the highest share, ties to the first.
pub fn binding(findings: &[Finding]) -> Option<&Finding> {
    findings
        .iter()
        .fold(None, |best: Option<&Finding>, f| match best {
            Some(b) if b.share >= f.share => Some(b),
            _ => Some(f),
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_reads_like_an_engineer_would_say_it() {
        let f = Finding::new(
            Resource::Lock {
                name: "out0".into(),
                class: "Queue".into(),
            },
            0.986,
            vec!["232 cycles per acquisition".into()],
        );
        assert!(f.sentence.starts_with(
            "lock of out0 (Queue) held 98.6% of the time (232 cycles per acquisition); shorten"
        ));
    }

    #[test]
    fn the_binding_finding_has_the_highest_share() {
        let a = Finding::new(Resource::Pe { index: 1 }, 0.5, vec![]);
        let b = Finding::new(
            Resource::Bus {
                name: "sram".into(),
            },
            0.9,
            vec![],
        );
        assert_eq!(binding(&[a.clone(), b.clone()]), Some(&b));
        assert_eq!(binding(&[]), None);
        assert_eq!(serde_json_like(&b.resource), "bus sram busy".to_string());
    }

    fn serde_json_like(r: &Resource) -> String {
        format!("{} {}", r.describe(), r.verb())
    }
}
