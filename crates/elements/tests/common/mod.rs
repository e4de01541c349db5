//! Helpers shared by the element integration tests (each test file uses some of them).
#![allow(dead_code)]
use pktflow_elements::{Router, RouterOptions};
use std::path::Path;

fn lines(d: &[pktflow_model::Diagnostic]) -> String {
    d.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The router of the Click configuration `file`, its input files relative to `base_dir` and
/// its outputs written to `out_dir`; panics with the file's diagnostics.
pub fn router_of_file(file: &Path, base_dir: &Path, out_dir: &Path) -> Router {
    let parsed = pktflow_click::parse_file(file)
        .unwrap_or_else(|d| panic!("{}: {}", file.display(), lines(&d)));
    Router::new(
        parsed.graph,
        &RouterOptions {
            base_dir: base_dir.to_path_buf(),
            out_dir: out_dir.to_path_buf(),
        },
    )
    .unwrap_or_else(|d| panic!("{}: {}", file.display(), lines(&d)))
}
