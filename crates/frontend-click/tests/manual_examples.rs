//! Every example of the language section of Click's `click.5` manual (and of the newer
//! shorthands announced with it), written out with the graph it must flatten to.
mod common;
use common::{check, parse};

#[test]
fn declaration() {
    check("q :: Queue(200);", &["q :: Queue(200)"], &[]);
}

#[test]
fn declaration_without_config_and_several_names() {
    check("d :: Discard;", &["d :: Discard()"], &[]);
    check(
        "n1, n2, n3 :: Counter(x, y);",
        &[
            "n1 :: Counter(x, y)",
            "n2 :: Counter(x, y)",
            "n3 :: Counter(x, y)",
        ],
        &[],
    );
}

#[test]
fn connection_with_ports() {
    check(
        "a :: A; b :: B; a [1] -> [2] b;",
        &["a :: A()", "b :: B()"],
        &["a[1] -> [2]b"],
    );
}

#[test]
fn chained_connections_equal_separate_ones() {
    let decls = "n1 :: A; x :: X; n2 :: B;";
    let chained = parse(&format!("{} n1 [1] -> [2] x [3] -> [4] n2;", decls));
    let separate = parse(&format!("{} n1 [1] -> [2] x; x [3] -> [4] n2;", decls));
    assert_eq!(
        common::connections(&chained),
        common::connections(&separate)
    );
    assert_eq!(
        common::connections(&chained),
        vec!["n1[1] -> [2]x", "x[3] -> [4]n2"]
    );
}

#[test]
fn port_zero_may_be_omitted() {
    let a = parse("n1 :: A; n2 :: B; n1 [0] -> [0] n2;");
    let b = parse("n1 :: A; n2 :: B; n1 -> n2;");
    assert_eq!(common::connections(&a), common::connections(&b));
}

#[test]
fn declaration_inside_connection() {
    check(
        "a :: A; b :: B; a -> [1] name :: Class(config) [2] -> b;",
        &["a :: A()", "b :: B()", "name :: Class(config)"],
        &["a[0] -> [1]name", "name[2] -> [0]b"],
    );
}

#[test]
fn anonymous_elements_are_named_class_at_position() {
    check(
        "a :: A; b :: B; a -> Class(config) -> b; a -> [1] Other [1] -> b;",
        &[
            "a :: A()",
            "b :: B()",
            "Class@3 :: Class(config)",
            "Other@4 :: Other()",
        ],
        &[
            "a[0] -> [0]Class@3",
            "Class@3[0] -> [0]b",
            "a[0] -> [1]Other@4",
            "Other@4[1] -> [0]b",
        ],
    );
    // Same file, same names.
    let t = "FromDevice(eth0) -> Queue -> ToDevice(eth1);";
    assert_eq!(common::elements(&parse(t)), common::elements(&parse(t)));
}

#[test]
fn compound_element_in_connection() {
    // a -> { input -> X -> output } -> b  expands to  a -> X -> b
    check(
        "a :: A; b :: B; a -> { input -> X -> output } -> b;",
        &["a :: A()", "b :: B()", "@Anon3/X@1 :: X()"],
        &["a[0] -> [0]@Anon3/X@1", "@Anon3/X@1[0] -> [0]b"],
    );
}

#[test]
fn compound_with_multiple_ports() {
    check(
        "a :: A; b :: B; c :: C; d :: D;
         compound :: {
           input -> X -> output;
           input [1] -> Y -> [1] output;
         };
         a -> compound -> b;
         c -> [1] compound [1] -> d;",
        &[
            "a :: A()",
            "b :: B()",
            "c :: C()",
            "d :: D()",
            "compound/X@1 :: X()",
            "compound/Y@2 :: Y()",
        ],
        &[
            "a[0] -> [0]compound/X@1",
            "compound/X@1[0] -> [0]b",
            "c[0] -> [0]compound/Y@2",
            "compound/Y@2[0] -> [0]d",
        ],
    );
}

#[test]
fn unconnected_compound_ports_vanish() {
    check(
        "b :: B; { input -> X -> output } -> b;",
        &["b :: B()", "@Anon2/X@1 :: X()"],
        &["@Anon2/X@1[0] -> [0]b"],
    );
}

#[test]
fn component_names_are_prefixed() {
    check(
        "a :: A; b :: B; compound :: { input -> x :: X -> output }; a -> compound -> b;",
        &["a :: A()", "b :: B()", "compound/x :: X()"],
        &["a[0] -> [0]compound/x", "compound/x[0] -> [0]b"],
    );
}

#[test]
fn elementclass_statement() {
    check(
        "elementclass MyQueue {
           input -> Queue -> Shaper(1000) -> output;
         }
         a :: A; b :: B;
         q :: MyQueue;
         a -> q -> b;",
        &[
            "a :: A()",
            "b :: B()",
            "q/Queue@1 :: Queue()",
            "q/Shaper@2 :: Shaper(1000)",
        ],
        &[
            "a[0] -> [0]q/Queue@1",
            "q/Queue@1[0] -> [0]q/Shaper@2",
            "q/Shaper@2[0] -> [0]b",
        ],
    );
}

#[test]
fn elementclass_may_reuse_a_primitive_name() {
    // Element classes are nonrecursive and lexically scoped: the inner Queue is the original.
    check(
        "elementclass Queue { input -> Queue -> Shaper(1000) -> output; }
         a :: A; b :: B; a -> Queue -> b;",
        &[
            "a :: A()",
            "b :: B()",
            "Queue@3/Queue@1 :: Queue()",
            "Queue@3/Shaper@2 :: Shaper(1000)",
        ],
        &[
            "a[0] -> [0]Queue@3/Queue@1",
            "Queue@3/Queue@1[0] -> [0]Queue@3/Shaper@2",
            "Queue@3/Shaper@2[0] -> [0]b",
        ],
    );
}

#[test]
fn elementclass_does_not_affect_earlier_definitions() {
    // `... -> A -> ...` expands to `... -> B -> ...`, not `... -> C -> ...`.
    check(
        "elementclass A { input -> B -> output; }
         elementclass B { input -> C -> output; }
         s :: S; t :: T; s -> A -> t;",
        &["s :: S()", "t :: T()", "A@3/B@1 :: B()"],
        &["s[0] -> [0]A@3/B@1", "A@3/B@1[0] -> [0]t"],
    );
}

#[test]
fn elementclass_synonym() {
    check(
        "elementclass MyQ Queue; q :: MyQ(10);",
        &["q :: Queue(10)"],
        &[],
    );
    // A synonym of a compound class expands like it.
    check(
        "elementclass P { input -> Print(x) -> output } elementclass P2 P; a :: A; a -> p :: P2 -> Discard;",
        &["a :: A()", "p/Print@1 :: Print(x)", "Discard@3 :: Discard()"],
        &["a[0] -> [0]p/Print@1", "p/Print@1[0] -> [0]Discard@3"],
    );
}

#[test]
fn formal_parameters() {
    check(
        "elementclass Shaped { $cap, $rate | input -> Queue($cap) -> Shaper($rate) -> output }
         s :: Shaped(100, 2000);",
        &["s/Queue@1 :: Queue(100)", "s/Shaper@2 :: Shaper(2000)"],
        &["s/Queue@1[0] -> [0]s/Shaper@2"],
    );
}

#[test]
fn keyword_formal_parameters() {
    check(
        "elementclass Src { $data, LIMIT $n | InfiniteSource(DATA $data, LIMIT $n) -> output }
         s :: Src(LIMIT 5, \\<0800>) -> Discard;",
        &[
            "s/InfiniteSource@1 :: InfiniteSource(DATA \\<0800>, LIMIT 5)",
            "Discard@2 :: Discard()",
        ],
        &["s/InfiniteSource@1[0] -> [0]Discard@2"],
    );
}

#[test]
fn overloaded_compound() {
    check(
        "elementclass Q { input -> Queue -> output || $n | input -> Queue($n) -> output }
         elementclass Q { ... || $n, $m | input -> Queue($n) -> Queue($m) -> output }
         a :: Q; b :: Q(5); c :: Q(1, 2);",
        &[
            "a/Queue@1 :: Queue()",
            "b/Queue@1 :: Queue(5)",
            "c/Queue@1 :: Queue(1)",
            "c/Queue@2 :: Queue(2)",
        ],
        &["c/Queue@1[0] -> [0]c/Queue@2"],
    );
}

#[test]
fn nested_compounds() {
    check(
        "elementclass Inner { $x | input -> i :: Counter($x) -> output }
         elementclass Outer { $y | input -> in1 :: Inner($y) -> in2 :: Inner(2) -> output }
         a :: A; a -> o :: Outer(7) -> Discard;",
        &[
            "a :: A()",
            "o/in1/i :: Counter(7)",
            "o/in2/i :: Counter(2)",
            "Discard@3 :: Discard()",
        ],
        &[
            "a[0] -> [0]o/in1/i",
            "o/in1/i[0] -> [0]o/in2/i",
            "o/in2/i[0] -> [0]Discard@3",
        ],
    );
}

#[test]
fn requirements() {
    let out = pktflow_click::parse_str(
        "require(fastclassifier, specialcode); Idle -> Discard;",
        "r.click",
    )
    .unwrap();
    assert_eq!(out.requires, vec!["fastclassifier", "specialcode"]);
    assert_eq!(out.warnings.len(), 2);
    assert!(out.warnings[0]
        .to_string()
        .starts_with("r.click:1:9: warning: required package 'fastclassifier'"));
    let opts = pktflow_click::ParseOptions {
        known_packages: vec!["fastclassifier".into()],
        ..Default::default()
    };
    let out =
        pktflow_click::parse_str_with("require(package fastclassifier)", "r.click", &opts).unwrap();
    assert_eq!(out.requires, vec!["fastclassifier"]);
    assert!(out.warnings.is_empty());
}

#[test]
fn configuration_string_examples() {
    check(
        "C1(simple string)\nC2(string with (balanced parens))\nC3(string with \\(escaped paren)\n\
         C4(// end-of-line comment)\n   still going!)\nC5(/* slash-star comment) */ and backslash \\\\)",
        &[
            "C1@1 :: C1(simple string)",
            "C2@2 :: C2(string with (balanced parens))",
            "C3@3 :: C3(string with \\(escaped paren)",
            "C4@4 :: C4(// end-of-line comment)\n   still going!)",
            "C5@5 :: C5(/* slash-star comment) */ and backslash \\\\)",
        ],
        &[],
    );
}

#[test]
fn element_groups_five_equivalent_lines() {
    for t in [
        "x -> y;",
        "x -> ( input -> output ) -> y;",
        "x -> ( [0] -> [0] ) -> y;",
        "x -> (->) -> y;",
        "x -> ( [0] -> [0]; [1] -> [1] ) -> y;",
    ] {
        check(
            &format!("x :: X; y :: Y; {}", t),
            &["x :: X()", "y :: Y()"],
            &["x[0] -> [0]y"],
        );
    }
}

#[test]
fn many_to_many_connections() {
    let d = "a :: A; b :: B;";
    let want = ["a[0] -> [0]b", "a[1] -> [1]b", "a[2] -> [2]b"];
    check(
        &format!("{} a [0, 1, 2] => [0, 1, 2] b;", d),
        &["a :: A()", "b :: B()"],
        &want,
    );
    check(
        &format!("{} a[0], a[1], a[2] => [0]b, [1]b, [2]b;", d),
        &["a :: A()", "b :: B()"],
        &want,
    );
    check(
        &format!("{} a => [0, 1, 2] b;", d),
        &["a :: A()", "b :: B()"],
        &want,
    );
    check(
        "c :: C; next :: N; c => Paint(0), Paint(1), Paint(2) -> next;",
        &[
            "c :: C()",
            "next :: N()",
            "Paint@3 :: Paint(0)",
            "Paint@4 :: Paint(1)",
            "Paint@5 :: Paint(2)",
        ],
        &[
            "c[0] -> [0]Paint@3",
            "c[1] -> [0]Paint@4",
            "c[2] -> [0]Paint@5",
            "Paint@3[0] -> [0]next",
            "Paint@4[0] -> [0]next",
            "Paint@5[0] -> [0]next",
        ],
    );
}

#[test]
fn port_lists_with_one_to_many_arrow() {
    check(
        "a :: A; b :: B; a [0, 1] -> b;",
        &["a :: A()", "b :: B()"],
        &["a[0] -> [0]b", "a[1] -> [0]b"],
    );
    check(
        "a :: A; b :: B; a -> [0, 1] b;",
        &["a :: A()", "b :: B()"],
        &["a[0] -> [0]b", "a[0] -> [1]b"],
    );
}

#[test]
fn many_to_one_declaration() {
    check(
        "n3 :: Sink; n1, n2 :: Src -> n3;",
        &["n3 :: Sink()", "n1 :: Src()", "n2 :: Src()"],
        &["n1[0] -> [0]n3", "n2[0] -> [0]n3"],
    );
}

#[test]
fn classify_split_rejoin_with_groups() {
    // The example that introduced '=>' and element groups.
    check(
        "analyzer :: TrafficAnalyzer;
         c :: Classifier(10/01, -) => (
             [0] -> [1] analyzer [1] -> [0];
             [1] -> c2 :: Classifier(12/02, -) => (
                  [0] -> [0]; [1] -> Paint(1) -> [1]
             ) -> [0]
         ) -> post_classification :: ARPQuerier(1.0.0.1, 1:1:1:1:1:1);",
        &[
            "analyzer :: TrafficAnalyzer()",
            "c :: Classifier(10/01, -)",
            "c2 :: Classifier(12/02, -)",
            "Paint@4 :: Paint(1)",
            "post_classification :: ARPQuerier(1.0.0.1, 1:1:1:1:1:1)",
        ],
        &[
            "c[0] -> [1]analyzer",
            "analyzer[1] -> [0]post_classification",
            "c[1] -> [0]c2",
            "c2[0] -> [0]post_classification",
            "c2[1] -> [0]Paint@4",
            "Paint@4[0] -> [0]post_classification",
        ],
    );
}

#[test]
fn define_and_substitution() {
    check(
        "define($DEV eth0, $Q 200);
         FromDevice($DEV) -> Queue(${Q}) -> ToDevice(${DEV}, '$literal');",
        &[
            "FromDevice@1 :: FromDevice(eth0)",
            "Queue@2 :: Queue(200)",
            "ToDevice@3 :: ToDevice(eth0, '$literal')",
        ],
        &[
            "FromDevice@1[0] -> [0]Queue@2",
            "Queue@2[0] -> [0]ToDevice@3",
        ],
    );
    // Caller definitions override the file's.
    let opts = pktflow_click::ParseOptions {
        defines: vec![("DEV".into(), "eth9".into())],
        ..Default::default()
    };
    let out = pktflow_click::parse_str_with(
        "define($DEV eth0); FromDevice($DEV) -> Discard",
        "d.click",
        &opts,
    )
    .unwrap();
    assert_eq!(out.graph.elements[0].config, "eth9");
}

#[test]
fn comments_and_preprocessor_lines() {
    check(
        "# 1 \"router.click\"\n// comment\na :: A; /* multi\nline */ b :: B; a -> b // tail\n",
        &["a :: A()", "b :: B()"],
        &["a[0] -> [0]b"],
    );
}

#[test]
fn hex_data_in_configs() {
    check(
        "InfiniteSource(DATA \\<00 00 c0 ae 67 ef  // dst\n 08 00>, LIMIT 5) -> Discard;",
        &["InfiniteSource@1 :: InfiniteSource(DATA \\<00 00 c0 ae 67 ef  // dst\n 08 00>, LIMIT 5)", "Discard@2 :: Discard()"],
        &["InfiniteSource@1[0] -> [0]Discard@2"],
    );
}

#[test]
fn spans_point_at_declarations() {
    let g = parse("a :: A;\n  b :: B(1);");
    assert_eq!((g.elements[1].span.line, g.elements[1].span.col), (2, 3));
    assert_eq!(g.elements[1].span.file, "test.click");
}
