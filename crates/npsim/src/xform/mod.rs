//! The four task transformations of section 2 of the NPIRE paper (Labrecque & Steffan, "Scaling
//! Task Graphs for Network Processors"; `docs/sources.md`), applied to the compiled programs of
//! the timing simulator. See `docs/npsim-transforms.md` for the model, its conventions and what
//! the paper leaves open.
//!
//! - [`split`] (2.5): task splitting, a feedback loop over maximum-rate searches that halves the
//!   top bottleneck tasks (by queue time), pays the live-data communication between splits and
//!   migrates a held lock to the consumer split.
//! - [`early`] (2.6): early signalling of a post-dominating independent task, with the wait and
//!   resume signals of Figure 4.
//! - [`speculate`] (2.7): optimistic critical sections between replicas (checkpoint at entry,
//!   conflict detection on the traced persistent-heap locations, the earlier entrant wins,
//!   rollback and re-execution).
//! - [`locality`] (2.8): wide memory operations per data structure.
//!
//! Off (the default), none of this runs: the simulator takes the same path as without the
//! module (one `Option` test per packet and per lock operation).
pub mod early;
pub mod locality;
pub mod speculate;
pub mod split;

use serde::{Deserialize, Serialize};

/// Names accepted in a transformation list, in the order they are reported.
pub const NAMES: [&str; 4] = ["split", "early", "speculate", "locality"];

/// Which transformations a run applies, and their parameters (`sim.transform`; the command
/// line's `--transform split,early,speculate,locality`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Transforms {
    /// Task splitting (section 2.5).
    pub split: bool,
    /// Early signalling (section 2.6).
    pub early: bool,
    /// Speculative (optimistic) critical sections (section 2.7).
    pub speculate: bool,
    /// Wide memory operations (section 2.8).
    pub locality: bool,
    /// Splitting: tasks split per iteration, the top bottleneck tasks by mean queue time
    /// ("the top three bottleneck tasks").
    pub split_candidates: u32,
    /// Splitting: iterations at most ("no benefit to performing more than five iterations").
    pub split_iterations: u32,
    /// Locality: bytes one wide memory request moves (not given by the paper; 64 bytes, the
    /// largest DRAM transfer of one IXP2800 request, whose memory system Table 3 follows).
    pub wide_bytes: u32,
    /// Early signalling and splitting: packets of the functional run analysed before the
    /// simulation (dependences between tasks, the live data of splits).
    pub profile_packets: u64,
}

impl Default for Transforms {
    fn default() -> Self {
        Transforms {
            split: false,
            early: false,
            speculate: false,
            locality: false,
            split_candidates: 3,
            split_iterations: 5,
            wide_bytes: 64,
            profile_packets: 2000,
        }
    }
}

/// A request's `sim.transform`: a comma list (`"split,early"`), a list of names, or an object
/// with the fields of [`Transforms`] (what a result's `settings` records).
impl<'de> Deserialize<'de> for Transforms {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let v = serde_json::Value::deserialize(d)?;
        Transforms::from_value(&v).map_err(D::Error::custom)
    }
}

impl Transforms {
    fn from_value(v: &serde_json::Value) -> Result<Transforms, String> {
        use serde_json::Value;
        let t = match v {
            Value::Null => Transforms::default(),
            Value::String(s) => Transforms::parse(s)?,
            Value::Array(a) => {
                let mut names = Vec::with_capacity(a.len());
                for x in a {
                    names.push(
                        x.as_str()
                            .ok_or_else(|| format!("expected transformation names, got {x}"))?,
                    );
                }
                Transforms::parse(&names.join(","))?
            }
            Value::Object(o) => {
                let mut t = Transforms::default();
                for (k, x) in o {
                    let flag = |x: &Value| {
                        x.as_bool().ok_or_else(|| {
                            format!("transform.{k}: expected true or false, got {x}")
                        })
                    };
                    let int = |x: &Value| {
                        x.as_u64().ok_or_else(|| {
                            format!("transform.{k}: expected a non-negative integer, got {x}")
                        })
                    };
                    let small = |x: &Value| {
                        int(x).and_then(|n| {
                            u32::try_from(n).map_err(|_| format!("transform.{k}: {n} is too large"))
                        })
                    };
                    match k.as_str() {
                        "split" => t.split = flag(x)?,
                        "early" => t.early = flag(x)?,
                        "speculate" => t.speculate = flag(x)?,
                        "locality" => t.locality = flag(x)?,
                        "split_candidates" => t.split_candidates = small(x)?,
                        "split_iterations" => t.split_iterations = small(x)?,
                        "wide_bytes" => t.wide_bytes = small(x)?,
                        "profile_packets" => t.profile_packets = int(x)?,
                        _ => {
                            return Err(format!(
                                "transform: unknown key '{k}' (expected split, early, speculate, \
                                 locality, split_candidates, split_iterations, wide_bytes, \
                                 profile_packets)"
                            ))
                        }
                    }
                }
                t
            }
            other => {
                return Err(format!(
                    "expected a comma list of transformations, got {other}"
                ))
            }
        };
        t.validate()?;
        Ok(t)
    }
}

/// Largest `wide_bytes` (a request of more than 64 KiB is no memory operation).
pub const MAX_WIDE_BYTES: u32 = 65_536;
/// Largest `split_candidates` / `split_iterations`.
pub const MAX_SPLIT_STEPS: u32 = 64;
/// Largest `profile_packets`.
pub const MAX_PROFILE_PACKETS: u64 = 1_000_000;

impl Transforms {
    /// A comma list of names (`split,early,speculate,locality`, any subset; `none` or an empty
    /// string for none). Unknown or repeated names are refused.
    pub fn parse(s: &str) -> Result<Transforms, String> {
        let mut t = Transforms::default();
        let s = s.trim();
        if s.is_empty() || s.eq_ignore_ascii_case("none") {
            return Ok(t);
        }
        for name in s.split(',') {
            let name = name.trim();
            let f = match name {
                "split" => &mut t.split,
                "early" => &mut t.early,
                "speculate" => &mut t.speculate,
                "locality" => &mut t.locality,
                _ => {
                    return Err(format!(
                        "unknown transformation '{name}' (expected a comma list of {})",
                        NAMES.join(", ")
                    ))
                }
            };
            if *f {
                return Err(format!("transformation '{name}' repeated in '{s}'"));
            }
            *f = true;
        }
        Ok(t)
    }

    pub fn validate(&self) -> Result<(), String> {
        if self.wide_bytes == 0 || self.wide_bytes > MAX_WIDE_BYTES {
            return Err(format!(
                "transform.wide_bytes must be 1 to {MAX_WIDE_BYTES}, got {}",
                self.wide_bytes
            ));
        }
        if self.split_candidates == 0 || self.split_candidates > MAX_SPLIT_STEPS {
            return Err(format!(
                "transform.split_candidates must be 1 to {MAX_SPLIT_STEPS}, got {}",
                self.split_candidates
            ));
        }
        if self.split_iterations > MAX_SPLIT_STEPS {
            return Err(format!(
                "transform.split_iterations must be 0 to {MAX_SPLIT_STEPS}, got {}",
                self.split_iterations
            ));
        }
        if self.profile_packets == 0 || self.profile_packets > MAX_PROFILE_PACKETS {
            return Err(format!(
                "transform.profile_packets must be 1 to {MAX_PROFILE_PACKETS}, got {}",
                self.profile_packets
            ));
        }
        Ok(())
    }

    /// Any transformation on.
    pub fn any(&self) -> bool {
        self.split || self.early || self.speculate || self.locality
    }

    /// The names on, comma-separated (`"none"` when none).
    pub fn label(&self) -> String {
        let on = [self.split, self.early, self.speculate, self.locality];
        let v: Vec<&str> = NAMES
            .iter()
            .zip(on)
            .filter(|(_, o)| *o)
            .map(|(n, _)| *n)
            .collect();
        if v.is_empty() {
            "none".into()
        } else {
            v.join(",")
        }
    }
}

/// The program-level decisions the transformations took before a run (what the paper's
/// compiler decides): the splits of each task and the analysis early signalling uses.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub split: split::SplitPlan,
    pub early: Option<Arc<early::EarlyPlan>>,
}

/// What the transformations did in one run (in the report under `"transform"`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct TransformReport {
    /// The transformations on (`split,early,...`).
    pub applied: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split: Option<split::SplitStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early: Option<early::EarlyStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speculate: Option<speculate::SpecStats>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locality: Option<locality::LocalityStats>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_parse_validate_and_label() {
        let t = Transforms::parse("split, locality").unwrap();
        assert!(t.split && t.locality && !t.early && !t.speculate);
        assert_eq!(t.label(), "split,locality");
        assert_eq!(Transforms::parse("none").unwrap(), Transforms::default());
        assert!(Transforms::parse("split,split")
            .unwrap_err()
            .contains("repeated"));
        let e = Transforms::parse("spilt").unwrap_err();
        assert!(e.contains("'spilt'") && e.contains("split, early"), "{e}");
        let v: Transforms = serde_json::from_str(r#""early,speculate""#).unwrap();
        assert!(v.early && v.speculate);
        let v: Transforms = serde_json::from_str(r#"["locality"]"#).unwrap();
        assert!(v.locality);
        let v: Transforms = serde_json::from_str(r#"{"split": true, "wide_bytes": 32}"#).unwrap();
        assert!(v.split && v.wide_bytes == 32 && v.split_iterations == 5);
        assert!(serde_json::from_str::<Transforms>(r#"{"wide_bytes": 0}"#).is_err());
        assert!(serde_json::from_str::<Transforms>(r#""bogus""#).is_err());
        // The resolved settings round-trip.
        let s = serde_json::to_string(&v).unwrap();
        assert_eq!(serde_json::from_str::<Transforms>(&s).unwrap(), v);
    }
}

// ---- running a prepared application with its transformations --------------------------------

use crate::app::Prepared;
use crate::config::{Mapping, SimConfig};
use crate::maxrate::{MaxRate, MaxRateConfig};
use crate::stats::SimReport;
use std::sync::{Arc, OnceLock};

/// What a [`Prepared`] application keeps of its transformations: the splits the feedback loop
/// kept, the early-signalling analysis (made once, on first use) and the loop's log.
#[derive(Debug, Default)]
pub struct XformState {
    pub split: split::SplitPlan,
    pub log: Option<split::SplitLog>,
    early: OnceLock<Result<Arc<early::EarlyPlan>, String>>,
}

/// The early-signalling analysis of `p`'s application: element graph and `profile_packets`
/// packets of its traffic.
pub fn analyse_early(p: &Prepared, profile_packets: u64) -> Result<early::EarlyPlan, String> {
    let app = pktflow_profile::app::load_app(&p.spec.app)?;
    let n = app.graph.elements.len();
    let mut succ = vec![Vec::new(); n];
    for c in &app.graph.connections {
        if c.from < n && c.to < n && !succ[c.from].contains(&c.to) {
            succ[c.from].push(c.to);
        }
    }
    let excluded: Vec<bool> = app
        .graph
        .elements
        .iter()
        .zip(&p.iface)
        .map(|(e, &i)| i || e.class.contains("Queue"))
        .collect();
    let mut plan = early::EarlyPlan::new(&succ, &excluded);
    p.with_run(|run: &mut pktflow_profile::run::Run| {
        let mut k = 0;
        while k < profile_packets {
            match run.next_trace()? {
                Some(t) => plan.observe(t),
                None => break,
            }
            k += 1;
        }
        Ok(())
    })?;
    Ok(plan)
}

fn early_plan(p: &Prepared, tf: &Transforms) -> Result<Option<Arc<early::EarlyPlan>>, String> {
    if !tf.early {
        return Ok(None);
    }
    p.xform
        .early
        .get_or_init(|| analyse_early(p, tf.profile_packets).map(Arc::new))
        .clone()
        .map(Some)
}

/// One simulation of `p` on `pes` PEs with `mapping` (already the machine's: idealization I
/// applied), the splits `sp` and the transformations of `cfg.transform`.
pub fn simulate_planned(
    p: &Prepared,
    pes: u32,
    mapping: &Mapping,
    sp: &split::SplitPlan,
    cfg: &SimConfig,
    progress: &mut dyn FnMut(u64),
) -> Result<SimReport, String> {
    let tf = &cfg.transform;
    let plan = Arc::new(Plan {
        split: if tf.split {
            sp.clone()
        } else {
            Default::default()
        },
        early: early_plan(p, tf)?,
    });
    let (names, m) = plan.split.extend(&p.names, mapping);
    let np = &p.arch.np;
    let sim = crate::Sim::new(&p.arch, pes, &m, names, cfg)?.with_transforms(
        plan.clone(),
        tf,
        np.rollback_on_failed_speculation_cycles,
        if cfg.wide_accesses {
            0
        } else {
            np.memory_word_bytes
        },
    );
    p.with_run(|run| sim.run_with(run, progress))
}

/// Maximum sustainable rate of `p`'s mapping with the splits `sp`.
pub fn max_rate_split(
    p: &Prepared,
    sp: &split::SplitPlan,
    cfg: &SimConfig,
    m: &MaxRateConfig,
) -> Result<MaxRate, String> {
    crate::maxrate::max_rate_with(
        |ia| {
            let c = SimConfig {
                inter_arrival_cycles: ia,
                ..cfg.clone()
            };
            let (pes, mapping) = p.machine(&c.ideal);
            simulate_planned(p, pes, &mapping, sp, &c, &mut |_| {})
        },
        m,
        &mut |_, _, _| {},
    )
}

/// [`max_rate_split`] with the splits of `plan`.
pub fn max_rate_planned(
    p: &Prepared,
    plan: &Plan,
    cfg: &SimConfig,
    m: &MaxRateConfig,
) -> Result<MaxRate, String> {
    max_rate_split(p, &plan.split, cfg, m)
}

/// The compiler's decisions before the runs of a prepared application (after its mapper):
/// with splitting on, the feedback loop of section 2.5, whose final maximum rate is returned.
pub fn plan(
    p: &mut Prepared,
    cfg: &SimConfig,
    m: &MaxRateConfig,
) -> Result<Option<MaxRate>, String> {
    let tf = &cfg.transform;
    if !tf.split {
        return Ok(None);
    }
    let base = Plan::default();
    let (sp, best, log) =
        split::iterate(p, &base, cfg, m, tf.split_candidates, tf.split_iterations)?;
    p.xform.split = sp;
    p.xform.log = Some(log);
    Ok(Some(best))
}
