//! Bottleneck finding by idealized executions (seed 000 section 5, Figure 8): "idealizing
//! potential bottleneck sources" — I (infinite PEs), Z (zero-cycle instructions), S (no
//! synchronization), B (perfect bus pipelining), M (memories with 1-cycle unpipelined time) —
//! and comparing maximum sustainable rates.
//!
//! The ranking: every idealization alone against the baseline (its gain is how much that
//! resource alone limits throughput); then, with the largest one idealized, each of the others
//! added (which resource limits next, as the paper reads IZSB after *S*). Figure 8's cumulative
//! chain (I, IZ, IZS, IZSB, IZSBM) is also run unless disabled. Runs are cached by label.
use crate::config::Ideal;
use crate::maxrate::MaxRate;
use serde::{Deserialize, Serialize};

/// What to run besides the single idealizations and the pairs with the top one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BottleneckConfig {
    /// Figure 8's cumulative chain I, IZ, IZS, IZSB, IZSBM.
    pub chain: bool,
    /// More combinations to run and report, in Figure 8's letters (e.g. "SB").
    pub extra: Vec<String>,
    /// A gain below this factor (e.g. 1.05 = 5%) does not count as a limit.
    #[serde(deserialize_with = "crate::config::lenient_f64")]
    pub threshold: f64,
}

impl Default for BottleneckConfig {
    fn default() -> Self {
        BottleneckConfig {
            chain: true,
            extra: Vec::new(),
            threshold: 1.05,
        }
    }
}

/// One idealized execution's maximum rate.
#[derive(Clone, Debug, Serialize)]
pub struct IdealRun {
    /// Figure 8's letters ("none" for the baseline).
    pub ideal: String,
    pub packets_per_second: f64,
    pub gbps: f64,
    pub inter_arrival_cycles: f64,
    /// [largest failing, smallest sustainable] inter-arrival time.
    pub bracket_cycles: [f64; 2],
    /// Over the baseline.
    pub speedup: f64,
}

/// One resource in the ranking.
#[derive(Clone, Debug, Serialize)]
pub struct Factor {
    /// Its letter.
    pub ideal: String,
    pub resource: String,
    /// Maximum rate with this resource alone idealized, over the baseline.
    pub gain_alone: f64,
    /// Over the top resource's run, with both idealized (the top resource itself: its gain
    /// alone).
    pub gain_after_top: f64,
    /// Limits throughput (its gain reaches the threshold, alone or after the top one).
    pub limiting: bool,
}

#[derive(Clone, Debug, Serialize)]
pub struct Bottleneck {
    pub baseline_packets_per_second: f64,
    pub baseline_gbps: f64,
    /// Every run, baseline first, in the order made.
    pub runs: Vec<IdealRun>,
    /// Most limiting first: the top resource, then the others by their gain after it.
    pub ranking: Vec<Factor>,
    /// The ranking in words.
    pub summary: String,
    /// The binding resource of the baseline run, from its statistics (set by
    /// [`crate::app::Prepared::bottleneck`]).
    pub diagnosis: Option<crate::Diagnosis>,
}

pub fn resource_name(letter: char) -> &'static str {
    match letter {
        'I' => "processing (number of PEs)",
        'Z' => "instruction execution",
        'S' => "synchronization",
        'B' => "bus contention",
        'M' => "memory contention",
        _ => "?",
    }
}

fn what_removing_does(letter: char) -> &'static str {
    match letter {
        'I' => "giving every task PEs of its own",
        'Z' => "making instructions take no time",
        'S' => "removing critical sections",
        'B' => "perfect bus pipelining",
        'M' => "1-cycle memory occupancy",
        _ => "?",
    }
}

const LETTERS: [char; 5] = ['I', 'Z', 'S', 'B', 'M'];

/// Run the idealized executions; `run(ideal)` is one maximum-rate search. `progress(done,
/// label)` is called before each new search (for a progress display).
pub fn bottleneck(
    mut run: impl FnMut(&Ideal) -> Result<MaxRate, String>,
    cfg: &BottleneckConfig,
    mut progress: impl FnMut(usize, &str),
) -> Result<Bottleneck, String> {
    if !(cfg.threshold.is_finite() && cfg.threshold >= 1.0) {
        return Err(format!(
            "threshold must be a factor of at least 1, got {}",
            cfg.threshold
        ));
    }
    let extra: Vec<Ideal> = cfg
        .extra
        .iter()
        .map(|s| Ideal::parse(s))
        .collect::<Result<_, _>>()?;
    let mut runs: Vec<(Ideal, MaxRate)> = Vec::new();
    let mut get = |i: Ideal, runs: &mut Vec<(Ideal, MaxRate)>| -> Result<f64, String> {
        if let Some((_, m)) = runs.iter().find(|(x, _)| *x == i) {
            return Ok(m.packets_per_second);
        }
        progress(runs.len(), &i.label());
        let m = run(&i)?;
        let r = m.packets_per_second;
        runs.push((i, m));
        Ok(r)
    };
    let one = |c: char| Ideal::parse(&c.to_string()).expect("letter");
    let base = get(Ideal::default(), &mut runs)?;
    if base.is_nan() || base <= 0.0 {
        return Err("the baseline sustains no rate: nothing to compare".into());
    }
    let mut alone = Vec::new();
    for c in LETTERS {
        alone.push((c, get(one(c), &mut runs)? / base));
    }
    // The top: largest gain alone (ties: Figure 8's order).
    let top = alone
        .iter()
        .copied()
        .fold(None::<(char, f64)>, |b, x| match b {
            Some(b) if b.1 >= x.1 => Some(b),
            _ => Some(x),
        })
        .expect("five letters");
    let top_rate = base * top.1;
    let mut after = Vec::new();
    for &(c, g) in &alone {
        if c == top.0 {
            continue;
        }
        let both = one(c).union(&one(top.0));
        after.push((c, g, get(both, &mut runs)? / top_rate));
    }
    if cfg.chain {
        let mut acc = Ideal::default();
        for c in LETTERS {
            acc = acc.union(&one(c));
            get(acc, &mut runs)?;
        }
    }
    for e in extra {
        get(e, &mut runs)?;
    }
    after.sort_by(|a, b| b.2.total_cmp(&a.2).then(b.1.total_cmp(&a.1)));
    let th = cfg.threshold;
    let mut ranking = vec![Factor {
        ideal: top.0.to_string(),
        resource: resource_name(top.0).into(),
        gain_alone: top.1,
        gain_after_top: top.1,
        limiting: top.1 >= th,
    }];
    for &(c, g, a) in &after {
        ranking.push(Factor {
            ideal: c.to_string(),
            resource: resource_name(c).into(),
            gain_alone: g,
            gain_after_top: a,
            limiting: g >= th || a >= th,
        });
    }
    let combos: Vec<(String, f64)> = runs
        .iter()
        .map(|(i, m)| (i.label(), m.packets_per_second / base))
        .collect();
    let summary = words(&ranking, th, &combos);
    let base_gbps = runs[0].1.gbps;
    let runs = runs
        .into_iter()
        .map(|(i, m)| IdealRun {
            ideal: i.label(),
            packets_per_second: m.packets_per_second,
            gbps: m.gbps,
            inter_arrival_cycles: m.inter_arrival_cycles,
            bracket_cycles: m.bracket.inter_arrival_cycles,
            speedup: m.packets_per_second / base,
        })
        .collect();
    Ok(Bottleneck {
        baseline_packets_per_second: base,
        baseline_gbps: base_gbps,
        runs,
        ranking,
        summary,
        diagnosis: None,
    })
}

/// The ranking in words. `combos`: every run made (label, gain over the baseline), used when no
/// idealization alone moves the rate: the smallest combination that does is named instead.
fn words(r: &[Factor], th: f64, combos: &[(String, f64)]) -> String {
    let top = &r[0];
    let l = |f: &Factor| f.ideal.chars().next().unwrap_or('?');
    let mut s = if top.limiting {
        format!(
            "{} ({}): {} raises the maximum rate {:.2}x",
            top.resource,
            top.ideal,
            what_removing_does(l(top)),
            top.gain_alone
        )
    } else {
        // Combine, as Figure 8's chain does: the fewest letters that move it, best gain first.
        let best = combos
            .iter()
            .filter(|(l, g)| l.len() > 1 && l != "none" && *g >= th)
            .min_by(|a, b| a.0.len().cmp(&b.0.len()).then(b.1.total_cmp(&a.1)));
        match best {
            Some((l, g)) => {
                let names: Vec<&str> = l.chars().map(resource_name).collect();
                format!(
                    "{} together ({l}): idealizing them at once raises the maximum rate {g:.2}x, \
                     each alone less than {:.0}% (best alone: {} ({}), {:.2}x)",
                    names.join(" + "),
                    (th - 1.0) * 100.0,
                    top.resource,
                    top.ideal,
                    top.gain_alone
                )
            }
            None => format!(
                "idealizing I, Z, S, B and M, alone or combined, raises the maximum rate less \
                 than {:.0}% (best alone: {} ({}), {:.2}x): the binding resource is in the \
                 baseline run's diagnosis",
                (th - 1.0) * 100.0,
                top.resource,
                top.ideal,
                top.gain_alone
            ),
        }
    };
    if let Some(n) = r.get(1) {
        if n.gain_after_top >= th {
            s += &format!(
                "; next: {} ({}): with {} also idealized, {} adds {:.2}x",
                n.resource,
                n.ideal,
                top.ideal,
                what_removing_does(l(n)),
                n.gain_after_top
            );
        } else {
            s += &format!(
                "; with {} idealized nothing else adds {:.0}% or more (best next: {} ({}), {:.2}x)",
                top.ideal,
                (th - 1.0) * 100.0,
                n.resource,
                n.ideal,
                n.gain_after_top
            );
        }
    }
    let not: Vec<String> = r
        .iter()
        .filter(|f| !f.limiting)
        .map(|f| format!("{} ({}, {:.2}x)", f.resource, f.ideal, f.gain_alone))
        .collect();
    if !not.is_empty() {
        s += &format!("; not limiting: {}", not.join(", "));
    }
    s
}
