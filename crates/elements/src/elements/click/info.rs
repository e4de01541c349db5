//! Configuration-only elements: `ScheduleInfo(ELEMENT PARAM, ...)`,
//! `StaticThreadSched(ELEMENT THREAD, ...)`, `RandomSeed([SEED])`.
//!
//! Ports: none; costs: none. ScheduleInfo's tickets and StaticThreadSched's thread numbers
//! are kept (read handlers `params` / `threads`, and [`crate::Router::thread_hints`]) for the
//! mappers; they do not change the functional run. ELEMENT names are checked when the
//! router is built. RandomSeed sets the seed of every pseudo-random element of the
//! configuration (RandomSwitch, SetRandIPAddress, RED's drop decisions); pktflow's runs are
//! deterministic: without RandomSeed the seed is 1, so the same configuration gives the
//! same packets every run (Click seeds from the clock: a deliberate difference).
use crate::conf::{parse_uint, split_words, Args, InitEnv};
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;

pub const SCHEDULE_INFO: ClassInfo = ClassInfo {
    name: "ScheduleInfo",
    summary: "scheduling tickets of elements (kept for the mappers)",
    make: make_sched_info,
};
pub const STATIC_THREAD_SCHED: ClassInfo = ClassInfo {
    name: "StaticThreadSched",
    summary: "thread assignment hints (kept for the mappers)",
    make: make_thread_sched,
};
pub const RANDOM_SEED: ClassInfo = ClassInfo {
    name: "RandomSeed",
    summary: "seed of the configuration's pseudo-random elements",
    make: make_seed,
};

struct Info {
    key: &'static str,
    pairs: Vec<(String, String)>,
}

/// Parse `ELEMENT VALUE` pairs; `VALUE` is checked by `check`.
pub fn parse_pairs(
    class: &str,
    config: &str,
    check: fn(&str) -> bool,
    what: &str,
) -> Result<Vec<(String, String)>, String> {
    let mut a = Args::parse(class, config, &[]);
    let mut out = Vec::new();
    for arg in a.take_all_positional() {
        if arg.is_empty() {
            continue;
        }
        let w = split_words(&arg);
        if w.len() != 2 || !check(&w[1]) {
            return Err(format!("{class}: expected 'ELEMENT {what}', found '{arg}'"));
        }
        out.push((w[0].clone(), w[1].clone()));
    }
    Ok(out)
}

fn make_sched_info(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let pairs = parse_pairs(
        "ScheduleInfo",
        config,
        |v| v.parse::<f64>().is_ok_and(|x| x.is_finite() && x >= 0.0),
        "TICKETS (a non-negative number)",
    )?;
    Ok(Box::new(Info {
        key: "params",
        pairs,
    }))
}
fn make_thread_sched(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let pairs = parse_pairs(
        "StaticThreadSched",
        config,
        |v| v.parse::<i32>().is_ok_and(|x| (-1..=4096).contains(&x)),
        "THREAD (an integer from -1 to 4096)",
    )?;
    Ok(Box::new(Info {
        key: "threads",
        pairs,
    }))
}
fn make_seed(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("RandomSeed", config, &["SEED"]);
    let seed = a
        .keyword_or_positional("SEED")
        .map(|s| parse_uint(&s).map_err(|e| format!("RandomSeed: SEED: {e}")))
        .transpose()?;
    a.finish()?;
    Ok(Box::new(Info {
        key: "seed",
        pairs: vec![("seed".into(), seed.unwrap_or(1).to_string())],
    }))
}

/// The seed a RandomSeed configuration sets (1 when it gives none).
pub fn seed_of(config: &str) -> Option<u64> {
    let mut a = Args::parse("RandomSeed", config, &["SEED"]);
    match a.keyword_or_positional("SEED") {
        Some(s) => parse_uint(&s).ok(),
        None => Some(1),
    }
}

impl Element for Info {
    fn ports(&self) -> Ports {
        Ports::agnostic(0, 0)
    }
    fn stats(&self) -> serde_json::Value {
        let m: serde_json::Map<_, _> = self
            .pairs
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::json!(v)))
            .collect();
        serde_json::json!({ self.key: m })
    }
    fn code_size(&self) -> u32 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_are_checked() {
        assert!(make_sched_info("from .1, to 1", &InitEnv::default()).is_ok());
        assert!(make_sched_info("from x", &InitEnv::default()).is_err());
        let e = make_thread_sched("a 0, b 1", &InitEnv::default()).unwrap();
        assert_eq!(e.stats()["threads"]["b"], "1");
        assert!(make_thread_sched("a 0 1", &InitEnv::default()).is_err());
        assert_eq!(seed_of("42"), Some(42));
        assert_eq!(seed_of(""), Some(1));
    }
}
