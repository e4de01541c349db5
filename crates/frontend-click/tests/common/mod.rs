#![allow(dead_code)]
use pktflow_model::AppGraph;

/// Elements as `name :: Class(config)` in declaration order.
pub fn elements(g: &AppGraph) -> Vec<String> {
    g.elements
        .iter()
        .map(|e| format!("{} :: {}({})", e.name, e.class, e.config))
        .collect()
}

/// Connections as `from[p] -> [q]to`, sorted.
pub fn connections(g: &AppGraph) -> Vec<String> {
    let mut v: Vec<String> = g
        .connections
        .iter()
        .map(|c| {
            format!(
                "{}[{}] -> [{}]{}",
                g.elements[c.from].name, c.from_port, c.to_port, g.elements[c.to].name
            )
        })
        .collect();
    v.sort();
    v
}

pub fn parse(text: &str) -> AppGraph {
    match pktflow_click::parse_str(text, "test.click") {
        Ok(o) => o.graph,
        Err(e) => panic!(
            "parse failed:\n{}\n--- input ---\n{}",
            e.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
            text
        ),
    }
}

/// Assert the graph of `text`: its elements (in order) and its connections (any order).
pub fn check(text: &str, elems: &[&str], conns: &[&str]) {
    let g = parse(text);
    assert_eq!(elements(&g), elems, "elements of:\n{}", text);
    let mut want: Vec<String> = conns.iter().map(|s| s.to_string()).collect();
    want.sort();
    assert_eq!(connections(&g), want, "connections of:\n{}", text);
}

/// The first error message of `text` (panics if it parses).
pub fn error_of(text: &str) -> String {
    match pktflow_click::parse_str(text, "bad.click") {
        Ok(o) => panic!(
            "expected an error for:\n{}\ngot {} elements",
            text,
            o.graph.elements.len()
        ),
        Err(e) => e[0].to_string(),
    }
}
