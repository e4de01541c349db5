//! Large and adversarial configurations: every graph pass is iterative (no stack overflow on a
//! 100,000-element chain, even on a test thread's small stack), and expansions that would blow
//! up are refused with the limit in the message, quickly.
use pktflow_profile::app::load_app;
use std::io::Write;
use std::path::PathBuf;

fn write_tmp(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pktflow-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::File::create(&p)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    p
}

/// A chain `FromDevice -> Null -> ... -> ToDevice` of `n` elements, one per line.
fn chain(n: usize) -> String {
    let mut s = String::from("src :: FromDevice(eth0);\n");
    for i in 0..n {
        s.push_str(&format!("n{i} :: Counter;\n"));
    }
    s.push_str("src -> n0;\n");
    for i in 1..n {
        s.push_str(&format!("n{} -> n{i};\n", i - 1));
    }
    s.push_str(&format!("n{} -> Queue -> ToDevice(eth0);\n", n - 1));
    s
}

/// The same chain written as one statement `a -> b -> c -> ...`.
fn one_statement_chain(n: usize) -> String {
    let mut s = String::from("FromDevice(eth0)");
    for _ in 0..n {
        s.push_str(" -> Counter");
    }
    s.push_str(" -> Queue -> ToDevice(eth0);\n");
    s
}

#[test]
fn hundred_thousand_element_chain_flattens_and_validates() {
    for (name, text) in [
        ("chain.click", chain(100_000)),
        ("stmt.click", one_statement_chain(100_000)),
    ] {
        let p = write_tmp(name, &text);
        let app = load_app(p.to_str().unwrap()).expect("parses");
        assert!(app.graph.elements.len() >= 100_000, "{name}");
        app.instantiate(&std::env::temp_dir()).expect("validates");
    }
}

#[test]
fn push_cycle_of_hundred_thousand_elements_is_reported_not_overflowed() {
    let n = 100_000;
    let mut s = String::from("src :: FromDevice(eth0); j :: Counter;\nsrc -> j;\nj");
    for _ in 0..n {
        s.push_str(" -> Counter");
    }
    s.push_str(" -> j;\n");
    let p = write_tmp("cycle.click", &s);
    let app = load_app(p.to_str().unwrap()).expect("parses");
    let Err(e) = app.instantiate(&std::env::temp_dir()) else {
        panic!("a push cycle must be refused")
    };
    assert!(e.contains("cycle") && e.contains("more"), "{e}");
    assert!(e.len() < 2000, "{e}");
}

#[test]
fn thousands_of_mistakes_give_a_short_message() {
    let mut s = String::new();
    for i in 0..5_000 {
        s.push_str(&format!("n{i} :: NoSuchClass;\n"));
    }
    let p = write_tmp("bad.click", &s);
    let msg = match load_app(p.to_str().unwrap()).and_then(|a| a.instantiate(&std::env::temp_dir()))
    {
        Ok(_) => panic!("must be refused"),
        Err(e) => e,
    };
    let n = pktflow_profile::app::MAX_SHOWN_DIAGNOSTICS;
    assert_eq!(
        msg.lines().count(),
        n + 1,
        "{}",
        &msg[..msg.len().min(2000)]
    );
    assert!(msg.ends_with(&format!("and {} more problems", 5_000 - n)));
}
