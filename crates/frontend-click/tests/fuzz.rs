//! The parser never panics and never recurses without bound: property tests on arbitrary bytes
//! and strings, mutations of valid configurations, and a seeded fuzz loop over token soup.
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const ROUTER: &str = include_str!("../../../apps/router.click");

const VALID: &[&str] = &[
    ROUTER,
    "elementclass Q { $n | input -> Queue($n) -> output || input -> Queue -> output }\nq :: Q(5); Idle -> q -> Discard;",
    "c :: Classifier(10/01, -) => ( [0] -> [0]; [1] -> Paint(1) -> [0] ) -> Discard;",
    "define($D eth0); FromDevice($D) -> c :: { input -> x :: Counter -> output } -> ToDevice(${D});",
    "a, b :: Idle; a, b -> Discard; x :: Tee(2); x [0, 1] => [0, 1] y :: Null2;",
    "InfiniteSource(DATA \\<00 11 // c\n 22>, LIMIT 2) -> Print(\"a)b\", 'c(') -> Discard; require(package foo)",
];

/// Tokens for the fuzz loop: Click punctuation, keywords, names and config fragments.
const VOCAB: &[&str] = &[
    "a",
    "b",
    "c",
    "Q",
    "Queue",
    "Discard",
    "input",
    "output",
    "elementclass",
    "define",
    "require",
    "connectiontunnel",
    "::",
    "->",
    "=>",
    ";",
    ",",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "|",
    "||",
    "...",
    "$x",
    "${x}",
    "$",
    "0",
    "1",
    "70000",
    "/*",
    "*/",
    "//",
    "\n",
    "#",
    "\"",
    "'",
    "\\",
    "\\<",
    ">",
    "@",
    "/",
    "a/b",
    " ",
    "X(1)",
    "-",
    "%",
    "é",
];

fn parse_any(s: &str) {
    // Only the absence of panics matters here; the result may be Ok or Err.
    match pktflow_click::parse_str(s, "fuzz.click") {
        Ok(out) => {
            // A successful parse yields a consistent graph.
            let n = out.graph.elements.len();
            for c in &out.graph.connections {
                assert!(c.from < n && c.to < n);
            }
        }
        Err(errs) => {
            assert!(!errs.is_empty());
            for e in &errs {
                assert!(e.span.line >= 1 && e.span.col >= 1, "{}", e);
            }
        }
    }
}

fn mutate(base: &str, rng: &mut ChaCha8Rng, steps: usize) -> String {
    let mut b: Vec<u8> = base.as_bytes().to_vec();
    for _ in 0..steps {
        let len = b.len();
        match rng.gen_range(0..5) {
            0 if len > 0 => {
                let i = rng.gen_range(0..len);
                let j = (i + rng.gen_range(1..20)).min(len);
                b.drain(i..j);
            }
            1 => {
                let i = rng.gen_range(0..=len);
                let t = VOCAB[rng.gen_range(0..VOCAB.len())].as_bytes();
                b.splice(i..i, t.iter().copied());
            }
            2 if len > 0 => {
                let i = rng.gen_range(0..len);
                b[i] = rng.gen();
            }
            3 if len > 1 => {
                let i = rng.gen_range(0..len);
                let j = (i + rng.gen_range(1..40)).min(len);
                let chunk: Vec<u8> = b[i..j].to_vec();
                let k = rng.gen_range(0..=len);
                b.splice(k..k, chunk);
            }
            _ => {
                if len > 1 {
                    let i = rng.gen_range(0..len);
                    let j = rng.gen_range(0..len);
                    b.swap(i, j);
                }
            }
        }
    }
    String::from_utf8_lossy(&b).into_owned()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
        parse_any(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn arbitrary_strings_never_panic(s in "\\PC{0,300}") {
        parse_any(&s);
    }

    #[test]
    fn click_like_strings_never_panic(s in "[a-cQ:;,()\\[\\]{}|$.>=/*\\\\<\"' \n0-9#-]{0,200}") {
        parse_any(&s);
    }

    #[test]
    fn mutated_valid_configs_never_panic(which in 0..VALID.len(), seed in any::<u64>(), steps in 1usize..12) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        parse_any(&mutate(VALID[which], &mut rng, steps));
    }
}

#[test]
fn valid_bases_parse() {
    for v in VALID {
        if let Err(e) = pktflow_click::parse_str(v, "v.click") {
            panic!("{}\n{:?}", v, e);
        }
    }
}

#[test]
fn seeded_token_soup_never_panics() {
    for seed in 0..3000u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let n = rng.gen_range(0..60);
        let mut s = String::new();
        for _ in 0..n {
            s.push_str(VOCAB[rng.gen_range(0..VOCAB.len())]);
            if rng.gen_bool(0.6) {
                s.push(' ');
            }
        }
        parse_any(&s);
    }
}

#[test]
fn seeded_mutations_of_the_router_never_panic() {
    for seed in 0..400u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let steps = rng.gen_range(1..30);
        parse_any(&mutate(ROUTER, &mut rng, steps));
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    for open in ["{", "(", "a -> (", "elementclass A { x :: {"] {
        let s = open.repeat(100_000);
        let e = pktflow_click::parse_str(&s, "deep.click").unwrap_err();
        assert!(
            e[0].message.contains("nesting too deep"),
            "{}: {}",
            open,
            e[0]
        );
    }
}

#[test]
fn long_inputs_are_fine() {
    // A long chain and many statements are handled iteratively.
    let chain = format!("Idle{}", " -> Null".repeat(20_000));
    let out = pktflow_click::parse_str(&chain, "long.click").unwrap();
    assert_eq!(out.graph.elements.len(), 20_001);
    assert_eq!(out.graph.connections.len(), 20_000);
}

#[test]
fn exponential_expansion_is_cut_off() {
    let mut t = String::from("elementclass A0 { input -> Null -> output }\n");
    for i in 1..40 {
        t.push_str(&format!(
            "elementclass A{} {{ input -> A{} -> A{} -> output }}\n",
            i,
            i - 1,
            i - 1
        ));
    }
    t.push_str("Idle -> A39 -> Discard;");
    let e = pktflow_click::parse_str(&t, "exp.click").unwrap_err();
    assert!(
        e[0].message.contains("configuration expands to more than"),
        "{}",
        e[0]
    );
}
