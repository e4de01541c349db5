//! Malformed inputs: each gives `file:line:col: error: ...` saying what was expected and what
//! was found.
mod common;
use common::error_of;

fn assert_err(text: &str, want: &str) {
    let got = error_of(text);
    assert_eq!(got, want, "input:\n{}", text);
}

#[test]
fn stray_double_colon_after_statement() {
    assert_err(
        "a :: A;\nb :: B;\nx :: X -> b :: Y :: Z;",
        "bad.click:3:18: error: expected '->' or ';', found '::'",
    );
}

#[test]
fn missing_class_after_double_colon() {
    assert_err(
        "a :: ;",
        "bad.click:1:6: error: expected an element class after '::', found ';'",
    );
}

#[test]
fn connection_to_nothing() {
    assert_err(
        "a :: A; a -> ;",
        "bad.click:1:14: error: expected an element name, class or '(', found ';'",
    );
}

#[test]
fn undefined_element() {
    assert_err(
        "a :: A;\na -> b;",
        "bad.click:2:6: error: undefined element 'b' (elements must be declared before use; class names start with an upper-case letter)",
    );
}

#[test]
fn redeclared_element() {
    assert_err(
        "a :: A;\n  a :: B;",
        "bad.click:2:3: error: redeclaration of element 'a' (first declared at 1:1)",
    );
}

#[test]
fn connection_to_undeclared_compound_port() {
    assert_err(
        "c :: { input -> X -> output };\nd :: D;\nd -> [1] c;",
        "bad.click:3:3: error: connection to undeclared input port 1 of compound 'c' (its body uses 1 input port)",
    );
    assert_err(
        "c :: { input -> X -> output };\nc [2] -> Discard;",
        "bad.click:2:7: error: connection from undeclared output port 2 of compound 'c' (its body uses 1 output port)",
    );
}

#[test]
fn unknown_variable() {
    assert_err(
        "Queue(\n  $SIZE);",
        "bad.click:2:3: error: unknown variable '$SIZE'",
    );
    assert_err(
        "elementclass Q { $n | input -> Queue($m) -> output }\nq :: Q(3);",
        "bad.click:1:38: error: unknown variable '$m'",
    );
}

#[test]
fn unterminated_comment() {
    assert_err(
        "a :: A;\n/* never closed",
        "bad.click:2:1: error: unterminated comment: '/*' without a matching '*/'",
    );
}

#[test]
fn unterminated_string() {
    assert_err(
        "Print(\"abc) -> Discard;",
        "bad.click:1:7: error: unterminated string: \" without a closing quote",
    );
}

#[test]
fn unterminated_config() {
    assert_err(
        "x :: Queue(200\n-> Discard;",
        "bad.click:1:11: error: unterminated configuration string: '(' without a matching ')'",
    );
}

#[test]
fn unterminated_hex_block() {
    assert_err(
        "InfiniteSource(\\<00 01",
        "bad.click:1:16: error: unterminated '\\<' hex block: missing '>'",
    );
}

#[test]
fn bad_hex_character() {
    assert_err(
        "InfiniteSource(\\<00 zz>)",
        "bad.click:1:21: error: bad character 'z' in '\\<' hex block: expected hex digits, spaces or '>'",
    );
}

#[test]
fn bad_port_numbers() {
    assert_err(
        "a :: A; b :: B; a [x] -> b;",
        "bad.click:1:20: error: bad port number 'x': expected a nonnegative integer up to 65535",
    );
    assert_err(
        "a :: A; b :: B; a [-1] -> b;",
        "bad.click:1:20: error: expected a port number, found '-'",
    );
    assert_err(
        "a :: A; b :: B; a -> [99999999] b;",
        "bad.click:1:23: error: bad port number '99999999': expected a nonnegative integer up to 65535",
    );
    assert_err(
        "a :: A; b :: B; a [] -> b;",
        "bad.click:1:20: error: expected a port number, found ']'",
    );
    assert_err(
        "a :: A; b :: B; a [1 -> b;",
        "bad.click:1:22: error: expected ',' or ']' in port list, found '->'",
    );
}

#[test]
fn unclosed_compound() {
    assert_err(
        "elementclass X { input -> Y -> output\n",
        "bad.click:2:1: error: expected '}' to close the compound element, found end of file",
    );
}

#[test]
fn unclosed_group() {
    assert_err(
        "a :: A; a -> ( input -> output",
        "bad.click:1:31: error: expected ')' to close the element group, found end of file",
    );
}

#[test]
fn unbalanced_closers() {
    assert_err(
        "a :: A; }",
        "bad.click:1:9: error: expected '->' or ';', found '}'",
    );
    assert_err(")", "bad.click:1:1: error: expected a statement, found ')'");
}

#[test]
fn unexpected_character() {
    assert_err(
        "a :: A; a -> % b;",
        "bad.click:1:14: error: expected an element name, class or '(', found '%'",
    );
}

#[test]
fn elementclass_without_name() {
    assert_err(
        "elementclass { input -> output }",
        "bad.click:1:14: error: expected element class name after 'elementclass', found '{'",
    );
}

#[test]
fn bad_formal_parameters() {
    assert_err(
        "elementclass X { $a $b | input -> output }",
        "bad.click:1:21: error: expected ',' or '|' after formal parameter, found '$b'",
    );
    assert_err(
        "elementclass X { $a, $a | input -> output }",
        "bad.click:1:22: error: formal parameter '$a' declared twice",
    );
}

#[test]
fn wrong_argument_count() {
    assert_err(
        "elementclass X { $a | input -> Queue($a) -> output }\nx :: X(1, 2);",
        "bad.click:2:1: error: bad arguments for compound element class 'X': takes 1 positional argument(s), more given",
    );
    assert_err(
        "elementclass X { $a, SIZE $s | input -> Queue($a) -> output }\nx :: X(1);",
        "bad.click:2:1: error: bad arguments for compound element class 'X': missing keyword argument SIZE",
    );
}

#[test]
fn runaway_elementclass_expansion() {
    // Element classes cannot recurse (a class name inside its own body means the previous
    // class of that name), but a long chain of nested classes is cut off.
    let mut t = String::from("elementclass C0 { input -> Null -> output }\n");
    for i in 1..80 {
        t.push_str(&format!(
            "elementclass C{} {{ input -> C{} -> output }}\n",
            i,
            i - 1
        ));
    }
    t.push_str("x :: C79;");
    let e = error_of(&t);
    assert!(
        e.contains("nested more than 64 levels deep (runaway elementclass expansion)"),
        "{}",
        e
    );
    assert!(e.starts_with("bad.click:"), "{}", e);
}

#[test]
fn nesting_too_deep() {
    let t = format!("a :: A; a -> {} Discard;", "(".repeat(100));
    let e = error_of(&t);
    assert!(e.contains("nesting too deep: more than 64 levels"), "{}", e);
}

#[test]
fn many_to_many_needs_matching_counts() {
    assert_err(
        "a :: A; b :: B; a [0, 1] -> [0, 1] b;",
        "bad.click:1:26: error: '->' cannot connect 2 outputs to 2 inputs; use '=>' to connect ports pairwise",
    );
    assert_err(
        "a :: A; b :: B; a [0, 1] => [0, 1, 2] b;",
        "bad.click:1:26: error: '=>' has 2 output port(s) on the left but 3 input port(s) on the right",
    );
}

#[test]
fn pseudo_elements_misused() {
    assert_err(
        "input -> Discard;",
        "bad.click:1:1: error: 'input' is only meaningful inside a compound element or element group",
    );
    assert_err(
        "c :: { Idle -> input; input -> output };",
        "bad.click:1:16: error: 'input' cannot be the target of a connection",
    );
}

#[test]
fn unsupported_connectiontunnel() {
    assert_err(
        "connectiontunnel p1 -> p2;",
        "bad.click:1:1: error: unsupported: 'connectiontunnel' (removed from the Click language; use compound elements or element groups)",
    );
}

#[test]
fn ellipsis_without_previous_class() {
    assert_err(
        "elementclass Z { ... || input -> output }",
        "bad.click:1:1: error: '...' extends no earlier compound element class named 'Z'",
    );
}

#[test]
fn bad_define() {
    assert_err(
        "define(NAME value);",
        "bad.click:1:8: error: expected '$NAME value' in define, found 'NAME value'",
    );
}

#[test]
fn identifier_ending_in_slash() {
    assert_err(
        "a/ :: A;",
        "bad.click:1:1: error: identifier 'a/' ends with '/'",
    );
}

#[test]
fn several_errors_are_reported() {
    let e = pktflow_click::parse_str("a -> b;\nc -> d;", "m.click").unwrap_err();
    assert_eq!(e.len(), 4);
    assert!(e
        .iter()
        .all(|d| d.severity == pktflow_model::Severity::Error));
}

#[test]
fn io_errors_name_the_file() {
    let e =
        pktflow_click::parse_file(std::path::Path::new("/nonexistent/router.click")).unwrap_err();
    assert!(
        e[0].to_string().starts_with(
            "/nonexistent/router.click:0:0: error: cannot read /nonexistent/router.click:"
        ),
        "{}",
        e[0]
    );
}

#[test]
fn invalid_utf8_is_reported_with_position() {
    let dir = std::env::temp_dir().join(format!("pktflow-click-utf8-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bad.click");
    std::fs::write(&p, b"a :: A;\nb :: \xff;").unwrap();
    let e = pktflow_click::parse_file(&p).unwrap_err();
    assert!(
        e[0].to_string()
            .ends_with(":2:6: error: invalid UTF-8 at byte offset 13"),
        "{}",
        e[0]
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn line_markers_renumber_diagnostics() {
    // Output of the C preprocessor: errors point into the original file.
    assert_err(
        "a :: A;\n# 120 \"orig.click\"\n\na -> b;",
        "orig.click:121:6: error: undefined element 'b' (elements must be declared before use; class names start with an upper-case letter)",
    );
    let g = common::parse("#!/usr/local/bin/click\n#line 10\nx :: X;");
    assert_eq!(
        (g.elements[0].span.file.as_str(), g.elements[0].span.line),
        ("test.click", 10)
    );
}

#[test]
fn unknown_preprocessor_directive() {
    assert_err(
        "a :: A;\n#include \"x.click\"\n",
        "bad.click:2:1: error: unknown preprocessor directive: expected a line marker '# LINE \"FILE\"'",
    );
}

#[test]
fn all_digit_element_names() {
    assert_err(
        "12 :: Queue;",
        "bad.click:1:1: error: element name '12' has an all-digit component",
    );
    assert_err(
        "c :: { input -> 3 :: Null -> output };",
        "bad.click:1:17: error: element name '3' has an all-digit component",
    );
}

#[test]
fn skipped_compound_ports() {
    assert_err(
        "a :: A;\nc :: { input [1] -> X -> output };",
        "bad.click:2:1: error: compound element 'c' input 0 unused (its body uses a higher input port)",
    );
    assert_err(
        "a :: A; a -> ( input -> [2] output ) -> Discard;",
        "bad.click:1:14: error: the element group output 0 unused (its body uses a higher output port)",
    );
}
