//! Fuzzing of the architecture loader: arbitrary bytes and mutated presets never panic, and
//! every refusal is one message that names its source (256 cases each, a few seconds).
use pktflow_arch::{Arch, PRESETS};
use proptest::prelude::*;

fn check(r: Result<Arch, String>) {
    if let Err(e) = r {
        assert!(!e.is_empty());
        assert!(
            e.starts_with("f.toml") || e.starts_with("--set") || e.starts_with("presets/"),
            "{e}"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,400}") {
        check(Arch::from_toml(&text, "f.toml"));
    }

    #[test]
    fn mutated_presets_never_panic(
        which in 0usize..4,
        line in 0usize..200,
        value in prop_oneof![
            Just("0".to_string()), Just("-1".to_string()), Just("4294967296".to_string()),
            Just("1e308".to_string()), Just("nan".to_string()), Just("\"x\"".to_string()),
            Just("true".to_string()), Just("[1, 2]".to_string()), Just("{a = 1}".to_string()),
            any::<u32>().prop_map(|v| v.to_string()),
        ],
        drop in any::<bool>(),
    ) {
        let text = PRESETS[which].1;
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        let i = line % lines.len();
        if drop {
            lines.remove(i);
        } else if let Some((k, _)) = lines[i].split_once('=') {
            lines[i] = format!("{k}= {value}");
        }
        check(Arch::from_toml(&lines.join("\n"), "f.toml"));
    }

    #[test]
    fn arbitrary_overrides_never_panic(key in "[a-z_.]{0,30}", value in "\\PC{0,20}") {
        check(Arch::load_with("npire", &[format!("{key}={value}")]));
    }
}
