//! Size limits of the front end: configurations that would expand beyond what a run can hold are
//! refused quickly with the limit in the message, and long but valid inputs are handled without
//! deep recursion (the tests run on a test thread's small stack).
use pktflow_click::parse_str;

fn first_error(text: &str) -> String {
    match parse_str(text, "big.click") {
        Ok(_) => panic!("expected an error"),
        Err(d) => d[0].to_string(),
    }
}

#[test]
fn exponential_define_is_refused_with_the_limit_and_line() {
    // Each variable doubles the previous one: 2^40 bytes if expanded.
    let mut s = String::from("// doubling\ndefine($a0 xx");
    for i in 1..=40 {
        s.push_str(&format!(", $a{i} $a{}$a{}", i - 1, i - 1));
    }
    s.push_str(");\nIdle -> Queue($a40) -> Discard;\n");
    let e = first_error(&s);
    assert!(e.starts_with("big.click:2:"), "{e}");
    assert!(e.contains("limit") && e.contains("bytes"), "{e}");
}

#[test]
fn exponential_substitution_through_compound_arguments_is_refused() {
    // Each compound doubles its argument into the next level.
    let mut s = String::from("elementclass C0 { $x | input -> Queue($x) -> output }\n");
    for i in 1..=40 {
        s.push_str(&format!(
            "elementclass C{i} {{ $x | input -> C{}($x$x) -> output }}\n",
            i - 1
        ));
    }
    s.push_str("Idle -> C40(abcdefgh) -> Discard;\n");
    let e = first_error(&s);
    assert!(e.contains("limit"), "{e}");
}

#[test]
fn many_element_classes_and_defines_do_not_overflow() {
    let n = 100_000;
    let mut s = String::new();
    for i in 0..n {
        s.push_str(&format!("elementclass C{i} {{ input -> output }}\n"));
    }
    s.push_str("define($v0 1");
    for i in 1..n {
        s.push_str(&format!(", $v{i} {i}"));
    }
    s.push_str(");\nIdle -> C99999 -> Queue($v99999) -> Discard;\n");
    let out = parse_str(&s, "big.click").expect("valid");
    assert_eq!(out.graph.elements.len(), 3);
}

#[test]
fn too_many_elements_are_refused_with_the_limit() {
    // 2^20 Queue elements from a tree of compounds, far beyond the node limit.
    let mut s = String::from("elementclass T0 { input -> Queue -> output }\n");
    for i in 1..=20 {
        s.push_str(&format!(
            "elementclass T{i} {{ input -> T{p} -> T{p} -> output }}\n",
            p = i - 1
        ));
    }
    s.push_str("Idle -> T20 -> Discard;\n");
    let t = std::time::Instant::now();
    let e = first_error(&s);
    assert!(
        e.contains(&pktflow_click::flatten::MAX_NODES.to_string()),
        "{e}"
    );
    // Not a timing assertion on the result, only a guard against an unbounded expansion.
    assert!(t.elapsed().as_secs() < 120, "took {:?}", t.elapsed());
}
