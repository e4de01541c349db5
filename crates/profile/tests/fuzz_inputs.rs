//! Fuzzing the inputs of a functional run end to end: trace files (arbitrary bytes, mutated
//! valid pcap and pcapng) and Click configurations (mutated built-in applications) given to
//! `profile`. Never a panic; an error is one line naming the file. Small case counts (a few
//! seconds in a debug build).
use pktflow_profile::app::load_app;
use pktflow_profile::run::{profile, write_synthetic, InputPort, Source};
use proptest::prelude::*;
use std::path::PathBuf;
use std::sync::OnceLock;

fn dir() -> &'static PathBuf {
    static D: OnceLock<PathBuf> = OnceLock::new();
    D.get_or_init(|| {
        let d = std::env::temp_dir().join(format!("pktflow-fuzz-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    })
}

/// A small valid trace of each format (bytes).
fn valid(pcapng: bool) -> &'static [u8] {
    static A: OnceLock<Vec<u8>> = OnceLock::new();
    static B: OnceLock<Vec<u8>> = OnceLock::new();
    let cell = if pcapng { &B } else { &A };
    cell.get_or_init(|| {
        let f = dir().join(if pcapng { "v.pcapng" } else { "v.pcap" });
        write_synthetic(f.to_str().unwrap(), 6, 1, "router", pcapng).unwrap();
        std::fs::read(f).unwrap()
    })
}

fn run_trace(bytes: &[u8], rule: InputPort) -> Result<(), TestCaseError> {
    let f = tempfile_in_dir();
    std::fs::write(&f, bytes).unwrap();
    let src = Source::Pcap {
        path: f.to_str().unwrap().into(),
        input_port: rule,
    };
    let r = profile("router", &src, dir(), |_| {});
    let _ = std::fs::remove_file(&f);
    if let Err(e) = r {
        prop_assert!(!e.is_empty() && !e.contains('\n'), "{}", e);
        prop_assert!(e.contains(f.to_str().unwrap()), "{}", e);
    }
    Ok(())
}

fn tempfile_in_dir() -> PathBuf {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let k = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    dir().join(format!("f{k}.cap"))
}

const RULES: [InputPort; 5] = [
    InputPort::Auto,
    InputPort::RoundRobin,
    InputPort::ByDstMac,
    InputPort::BySubnet,
    InputPort::Fixed(1),
];

const ROUTER: &str = include_str!("../../../apps/router.click");

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_trace_bytes(b in proptest::collection::vec(any::<u8>(), 0..300), r in 0usize..5) {
        run_trace(&b, RULES[r])?;
    }

    #[test]
    fn mutated_valid_traces(ng in any::<bool>(), muts in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..5),
                            cut in 0usize..200, r in 0usize..5) {
        let mut b = valid(ng).to_vec();
        for (pos, val) in muts {
            let p = pos % b.len();
            b[p] = val;
        }
        b.truncate(b.len() - cut.min(b.len()));
        run_trace(&b, RULES[r])?;
    }

    /// Mutated router configurations (a line deleted or duplicated, a word replaced): loading
    /// and validating them (element configuration parsers included) never panics.
    #[test]
    fn mutated_router_configurations(line in any::<usize>(), op in 0u8..3, word in "[A-Za-z0-9:./ -]{0,12}") {
        let mut lines: Vec<String> = ROUTER.lines().map(str::to_string).collect();
        let i = line % lines.len();
        match op {
            0 => { lines.remove(i); }
            1 => { let l = lines[i].clone(); lines.insert(i, l); }
            _ => {
                let l = &lines[i];
                if let Some(k) = l.find(|c: char| c.is_ascii_digit() || c == ',') {
                    lines[i] = format!("{}{}{}", &l[..k], word, &l[k + 1..]);
                }
            }
        }
        let f = tempfile_in_dir().with_extension("click");
        std::fs::write(&f, lines.join("\n")).unwrap();
        let r = load_app(f.to_str().unwrap()).and_then(|a| a.instantiate(dir()).map(|_| ()));
        let _ = std::fs::remove_file(&f);
        if let Err(e) = r {
            prop_assert!(!e.is_empty());
        }
    }
}
