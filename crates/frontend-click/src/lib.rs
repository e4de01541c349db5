//! Click configuration language front end: lexer, parser, elementclass flattening into the
//! application model.
//!
//! The language is the one the Click modular router's `click.5` manual defines: declarations,
//! connections (with `=>` and port lists), compound elements and `elementclass` (formal
//! parameters, keyword formals, overloads, synonyms), element groups, `define`, `require`,
//! comments and configuration strings. See `docs/click-language.md` for what is supported and
//! the exact error messages of the unsupported forms.
//!
//! The parser is hand-written recursive descent: no maintained Rust crate parses Click's
//! language, and its configuration strings (raw text up to the next unbalanced `)`, across
//! quotes, comments and `\<hex>` blocks) need a lexer that the parser drives on demand, which
//! parser generators handle poorly. Nesting is bounded, so arbitrary input cannot exhaust the
//! stack, and no input makes the parser panic (property- and fuzz-tested).
//!
//! Element classes are not checked here: the element registry validates classes and
//! configurations of the flattened graph.
//!
//! ```
//! let out = pktflow_click::parse_str("src :: FromDevice(eth0); src -> Queue(200) -> ToDevice(eth1);", "x.click").unwrap();
//! assert_eq!(out.graph.elements[1].name, "Queue@2");
//! assert_eq!(out.graph.connections.len(), 2);
//! ```
pub mod flatten;
pub mod gen;
pub mod lexer;
pub mod parser;

use pktflow_model::{AppGraph, Diagnostic, Span};
use std::path::Path;

/// A parsed and flattened configuration.
#[derive(Debug)]
pub struct ParseOutput {
    /// Every compound element expanded, `input`/`output` pseudo-elements spliced away.
    pub graph: AppGraph,
    /// Warnings (e.g. `require` of a package pktflow does not have).
    pub warnings: Vec<Diagnostic>,
    /// Package names from `require(...)` statements, in order.
    pub requires: Vec<String>,
}

/// Options for [`parse_str_with`].
#[derive(Clone, Debug, Default)]
pub struct ParseOptions {
    /// Packages `require(...)` may name without a warning.
    pub known_packages: Vec<String>,
    /// `(NAME, value)` definitions (with or without the leading `$`); they override the file's
    /// own `define` statements, like Click's command-line `NAME=value` arguments.
    pub defines: Vec<(String, String)>,
}

/// Parse and flatten a configuration with default options.
pub fn parse_str(text: &str, file: &str) -> Result<ParseOutput, Vec<Diagnostic>> {
    parse_str_with(text, file, &ParseOptions::default())
}

/// Read, parse and flatten a configuration file. An I/O error is reported as a diagnostic
/// naming the file.
pub fn parse_file(path: &Path) -> Result<ParseOutput, Vec<Diagnostic>> {
    let file = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| {
        vec![Diagnostic::error(
            Span::new(file.clone(), 0, 0),
            format!("cannot read {}: {}", file, e),
        )]
    })?;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let off = e.utf8_error().valid_up_to();
            let valid = std::str::from_utf8(&e.as_bytes()[..off]).unwrap_or("");
            let line = valid.matches('\n').count() as u32 + 1;
            let col = valid.rsplit('\n').next().map_or(0, |l| l.chars().count()) as u32 + 1;
            return Err(vec![Diagnostic::error(
                Span::new(file, line, col),
                format!("invalid UTF-8 at byte offset {}", off),
            )]);
        }
    };
    parse_str(&text, &file)
}

/// Parse and flatten a configuration.
pub fn parse_str_with(
    text: &str,
    file: &str,
    opts: &ParseOptions,
) -> Result<ParseOutput, Vec<Diagnostic>> {
    let parsed = parser::parse(text, file).map_err(|d| vec![d])?;
    let graph = flatten::flatten(&parsed.body, file, &opts.defines)?;
    let mut warnings = Vec::new();
    let mut requires = Vec::new();
    for (arg, span) in parsed.requires {
        let words: Vec<&str> = arg.split_whitespace().collect();
        let pkg = match words.as_slice() {
            ["package", name] => *name,
            [name] => *name,
            _ => {
                warnings.push(Diagnostic::warning(
                    span,
                    format!("unsupported requirement '{}' ignored", arg),
                ));
                continue;
            }
        };
        let pkg = pkg.trim_matches('"').to_string();
        if !opts.known_packages.contains(&pkg) {
            warnings.push(Diagnostic::warning(
                span,
                format!(
                    "required package '{}' is not available in pktflow; ignored",
                    pkg
                ),
            ));
        }
        requires.push(pkg);
    }
    Ok(ParseOutput {
        graph,
        warnings,
        requires,
    })
}
