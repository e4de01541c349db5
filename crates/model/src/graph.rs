//! The application graph: element instances (name, class, configuration string) joined by
//! connections between numbered ports. Front ends (Click, graph files) produce it flattened;
//! the element registry validates it against each class's port counts and configuration.
use crate::diag::Span;
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write as _;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ElementDecl {
    /// Flattened name, e.g. `rt`, `Queue@3`, `nat/rw`.
    pub name: String,
    pub class: String,
    /// Configuration string after `$variable` substitution, without the outer parentheses.
    pub config: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Connection {
    pub from: usize,
    pub from_port: usize,
    pub to: usize,
    pub to_port: usize,
    #[serde(skip)]
    pub span: Span,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct AppGraph {
    /// File the graph was read from (or `<builtin:router>`).
    pub file: String,
    pub elements: Vec<ElementDecl>,
    pub connections: Vec<Connection>,
}

/// JSON shape of a connection with element names (what `pktflow graph --json` prints).
#[derive(Serialize)]
struct NamedConnection<'a> {
    from: &'a str,
    from_port: usize,
    to: &'a str,
    to_port: usize,
}

#[derive(Serialize)]
struct NamedElement<'a> {
    name: &'a str,
    class: &'a str,
    config: &'a str,
    line: u32,
    col: u32,
}

impl AppGraph {
    /// The elements' names, in declaration order (element index order).
    pub fn element_names(&self) -> Vec<String> {
        self.elements.iter().map(|e| e.name.clone()).collect()
    }

    pub fn new(file: impl Into<String>) -> Self {
        AppGraph {
            file: file.into(),
            ..Default::default()
        }
    }

    pub fn add_element(&mut self, name: &str, class: &str, config: &str, span: Span) -> usize {
        self.elements.push(ElementDecl {
            name: name.to_string(),
            class: class.to_string(),
            config: config.to_string(),
            span,
        });
        self.elements.len() - 1
    }

    pub fn connect(
        &mut self,
        from: usize,
        from_port: usize,
        to: usize,
        to_port: usize,
        span: Span,
    ) {
        self.connections.push(Connection {
            from,
            from_port,
            to,
            to_port,
            span,
        });
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.elements.iter().position(|e| e.name == name)
    }

    pub fn name_index(&self) -> HashMap<&str, usize> {
        self.elements
            .iter()
            .enumerate()
            .map(|(i, e)| (e.name.as_str(), i))
            .collect()
    }

    /// Connections leaving each element, indexed by element.
    pub fn outgoing(&self) -> Vec<Vec<&Connection>> {
        let mut out = vec![Vec::new(); self.elements.len()];
        for c in &self.connections {
            out[c.from].push(c);
        }
        out
    }

    /// Connections entering each element, indexed by element.
    pub fn incoming(&self) -> Vec<Vec<&Connection>> {
        let mut inc = vec![Vec::new(); self.elements.len()];
        for c in &self.connections {
            inc[c.to].push(c);
        }
        inc
    }

    /// The whole graph as one JSON document: `{"file", "elements": [...], "connections": [...]}`.
    pub fn to_json(&self) -> serde_json::Value {
        let elements: Vec<NamedElement> = self
            .elements
            .iter()
            .map(|e| NamedElement {
                name: &e.name,
                class: &e.class,
                config: &e.config,
                line: e.span.line,
                col: e.span.col,
            })
            .collect();
        let connections: Vec<NamedConnection> = self
            .connections
            .iter()
            .map(|c| NamedConnection {
                from: &self.elements[c.from].name,
                from_port: c.from_port,
                to: &self.elements[c.to].name,
                to_port: c.to_port,
            })
            .collect();
        serde_json::json!({ "file": self.file, "elements": elements, "connections": connections })
    }

    /// Graphviz DOT: one node per element (name and class), one edge per connection with ports.
    pub fn to_dot(&self) -> String {
        let mut s = String::from(
            "digraph pktflow {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n",
        );
        for (i, e) in self.elements.iter().enumerate() {
            let _ = writeln!(
                s,
                "  n{} [label=\"{}\\n:: {}\"];",
                i,
                dot_escape(&e.name),
                dot_escape(&e.class)
            );
        }
        for c in &self.connections {
            let _ = writeln!(
                s,
                "  n{} -> n{} [taillabel=\"{}\", headlabel=\"{}\"];",
                c.from, c.to, c.from_port, c.to_port
            );
        }
        s.push_str("}\n");
        s
    }
}

fn dot_escape(s: &str) -> String {
    s.replace('\\', "\\\\").replace('"', "\\\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_names_connections_by_element() {
        let mut g = AppGraph::new("t.click");
        let a = g.add_element("a", "Idle", "", Span::new("t.click", 1, 1));
        let b = g.add_element("b", "Discard", "", Span::new("t.click", 1, 10));
        g.connect(a, 0, b, 0, Span::default());
        let j = g.to_json();
        assert_eq!(j["connections"][0]["from"], "a");
        assert_eq!(j["connections"][0]["to"], "b");
        assert_eq!(j["elements"].as_array().unwrap().len(), 2);
        assert!(g.to_dot().contains("n0 -> n1"));
    }
}
