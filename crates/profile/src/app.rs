//! Resolve an application: a built-in name (`router`, `nat`, `router64`) or a Click file;
//! parse, flatten and validate it into a runnable [`Router`].
use pktflow_elements::{Router, RouterOptions};
use pktflow_model::{AppGraph, Diagnostic};
use std::path::{Path, PathBuf};

/// Built-in applications: (name, file name, Click text). Written for pktflow from Click's
/// documented element set (see apps/README.md).
pub const BUILTIN_APPS: &[(&str, &str, &str)] = &[
    (
        "router",
        "router.click",
        include_str!("../../../apps/router.click"),
    ),
    ("nat", "nat.click", include_str!("../../../apps/nat.click")),
    (
        "router64",
        "router64.click",
        include_str!("../../../apps/router64.click"),
    ),
    (
        "l3switch",
        "l3switch.click",
        include_str!("../../../apps/l3switch.click"),
    ),
    (
        "mpls",
        "mpls.click",
        include_str!("../../../apps/mpls.click"),
    ),
    (
        "firewall",
        "firewall.click",
        include_str!("../../../apps/firewall.click"),
    ),
    (
        "classifier",
        "classifier.click",
        include_str!("../../../apps/classifier.click"),
    ),
    (
        "nat-nt",
        "nat-nt.click",
        include_str!("../../../apps/nat-nt.click"),
    ),
    (
        "udhcp",
        "udhcp.click",
        include_str!("../../../apps/udhcp.click"),
    ),
    (
        "intruder",
        "intruder.click",
        include_str!("../../../apps/intruder.click"),
    ),
    (
        "intruder2",
        "intruder2.click",
        include_str!("../../../apps/intruder2.click"),
    ),
    (
        "echo",
        "echo.click",
        include_str!("../../../apps/echo.click"),
    ),
];

/// A parsed application and where it came from.
#[derive(Clone, Debug)]
pub struct App {
    pub name: String,
    pub graph: AppGraph,
    /// Folder relative file names in the configuration resolve against.
    pub base_dir: PathBuf,
    pub warnings: Vec<Diagnostic>,
}

/// Most diagnostics shown in one message; the rest are counted.
pub const MAX_SHOWN_DIAGNOSTICS: usize = 20;

/// Join diagnostics into one message, one per line (at most [`MAX_SHOWN_DIAGNOSTICS`], then a
/// line counting the others, so a configuration with 100,000 mistakes gives a readable message).
pub fn format_diagnostics(d: &[Diagnostic]) -> String {
    let mut lines: Vec<String> = d
        .iter()
        .take(MAX_SHOWN_DIAGNOSTICS)
        .map(|x| x.to_string())
        .collect();
    if d.len() > MAX_SHOWN_DIAGNOSTICS {
        lines.push(format!(
            "... and {} more problems",
            d.len() - MAX_SHOWN_DIAGNOSTICS
        ));
    }
    lines.join("\n")
}

pub fn builtin_names() -> Vec<&'static str> {
    BUILTIN_APPS.iter().map(|(n, _, _)| *n).collect()
}

/// Parse (but do not yet instantiate) `name_or_path`.
pub fn load_app(name_or_path: &str) -> Result<App, String> {
    if let Some((name, file, text)) = BUILTIN_APPS.iter().find(|(n, _, _)| *n == name_or_path) {
        let out = pktflow_click::parse_str(text, &format!("<builtin:{name}>/{file}"))
            .map_err(|d| format_diagnostics(&d))?;
        return Ok(App {
            name: name.to_string(),
            graph: out.graph,
            base_dir: PathBuf::from("."),
            warnings: out.warnings,
        });
    }
    let p = Path::new(name_or_path);
    if !p.exists() {
        return Err(format!(
            "unknown application '{name_or_path}': not a built-in ({}) and no such file",
            builtin_names().join(", ")
        ));
    }
    let out = pktflow_click::parse_file(p).map_err(|d| format_diagnostics(&d))?;
    let base_dir = p
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    Ok(App {
        name: name_or_path.to_string(),
        graph: out.graph,
        base_dir,
        warnings: out.warnings,
    })
}

impl App {
    /// Instantiate and validate; output files go to `out_dir`.
    pub fn instantiate(&self, out_dir: &Path) -> Result<Router, String> {
        let opts = RouterOptions {
            base_dir: self.base_dir.clone(),
            out_dir: out_dir.to_path_buf(),
        };
        Router::new(self.graph.clone(), &opts).map_err(|d| format_diagnostics(&d))
    }
}
