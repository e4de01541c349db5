//! Architecture model: TOML presets, every parameter named with its unit, validated with
//! messages naming the file and the field. One table of defaults per preset lives in
//! `presets/NAME.toml` (embedded here, so an installed package has them).
//!
//! A preset file has a `[preset]` header (`name`, `description`, optional `source`) and exactly
//! one body: `[np]` + `[storage.*]` + `[bus.*]` + `[memory_map]` (network processors: `npire`,
//! `ixp2400`), `[netthreads]` (the soft multiprocessor) or `[mesh]` (the network-on-chip).
pub mod mesh;
pub mod netthreads;
pub mod np;

use serde::{Deserialize, Serialize};
use std::path::Path;

pub use mesh::MeshArch;
pub use netthreads::NetThreadsArch;
pub use np::NpArch;

/// The built-in presets: (name, TOML text).
pub const PRESETS: &[(&str, &str)] = &[
    ("npire", include_str!("../../../presets/npire.toml")),
    ("ixp2400", include_str!("../../../presets/ixp2400.toml")),
    (
        "netthreads",
        include_str!("../../../presets/netthreads.toml"),
    ),
    ("mesh", include_str!("../../../presets/mesh.toml")),
];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Header {
    pub name: String,
    pub description: String,
    #[serde(default)]
    pub source: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", content = "params", rename_all = "lowercase")]
pub enum Body {
    Np(NpArch),
    NetThreads(NetThreadsArch),
    Mesh(MeshArch),
}

/// A loaded, validated architecture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Arch {
    pub preset: Header,
    #[serde(flatten)]
    pub body: Body,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NpFile {
    preset: Header,
    #[serde(flatten)]
    np: NpArch,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NetThreadsFile {
    preset: Header,
    netthreads: NetThreadsArch,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MeshFile {
    preset: Header,
    mesh: MeshArch,
}

/// Names of the built-in presets.
pub fn preset_names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

impl Arch {
    /// Parse and validate TOML text; `file` names the source in error messages.
    pub fn from_toml(text: &str, file: &str) -> Result<Arch, String> {
        let value: toml::Table =
            toml::from_str(text).map_err(|e| format!("{file}: {}", e.to_string().trim_end()))?;
        if !value.contains_key("preset") {
            return Err(format!(
                "{file}: missing [preset] table (name, description)"
            ));
        }
        let bodies: Vec<&str> = ["np", "netthreads", "mesh"]
            .into_iter()
            .filter(|k| value.contains_key(*k))
            .collect();
        let arch = match bodies.as_slice() {
            ["np"] => {
                let f: NpFile = toml::from_str(text).map_err(|e| format!("{file}: {}", e.to_string().trim_end()))?;
                Arch { preset: f.preset, body: Body::Np(f.np) }
            }
            ["netthreads"] => {
                let f: NetThreadsFile = toml::from_str(text).map_err(|e| format!("{file}: {}", e.to_string().trim_end()))?;
                Arch { preset: f.preset, body: Body::NetThreads(f.netthreads) }
            }
            ["mesh"] => {
                let f: MeshFile = toml::from_str(text).map_err(|e| format!("{file}: {}", e.to_string().trim_end()))?;
                Arch { preset: f.preset, body: Body::Mesh(f.mesh) }
            }
            [] => return Err(format!("{file}: no architecture body: expected one of the tables [np], [netthreads] or [mesh]")),
            more => return Err(format!("{file}: more than one architecture body ({}); a preset describes one machine", more.join(", "))),
        };
        let errs = arch.validate();
        if errs.is_empty() {
            Ok(arch)
        } else {
            Err(format!(
                "{file}: impossible architecture:\n  {}",
                errs.join("\n  ")
            ))
        }
    }

    /// A built-in preset by name, or a TOML file by path.
    pub fn load(name_or_path: &str) -> Result<Arch, String> {
        if let Some((_, text)) = PRESETS.iter().find(|(n, _)| *n == name_or_path) {
            return Arch::from_toml(text, &format!("presets/{name_or_path}.toml"));
        }
        let p = Path::new(name_or_path);
        if p.extension().is_some_and(|e| e == "toml") || p.exists() {
            let text = std::fs::read_to_string(p)
                .map_err(|e| format!("{name_or_path}: cannot read: {e}"))?;
            return Arch::from_toml(&text, name_or_path);
        }
        Err(format!(
            "unknown architecture '{name_or_path}': not a built-in preset ({}) nor a .toml file",
            preset_names().join(", ")
        ))
    }

    pub fn validate(&self) -> Vec<String> {
        match &self.body {
            Body::Np(a) => a.validate(),
            Body::NetThreads(a) => a.validate(),
            Body::Mesh(a) => a.validate().err().map(|e| vec![e]).unwrap_or_default(),
        }
    }

    pub fn as_np(&self) -> Option<&NpArch> {
        match &self.body {
            Body::Np(a) => Some(a),
            _ => None,
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("architecture serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_preset_loads_and_validates() {
        for name in preset_names() {
            let a = Arch::load(name).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(a.preset.name, name);
        }
    }

    #[test]
    fn npire_matches_seed_000_table_3() {
        let a = Arch::load("npire").unwrap();
        let np = a.as_np().unwrap();
        // "to access external SRAM takes 4+51+5+81 = 141 cycles"
        assert_eq!(np.zero_load_read_cycles("sram"), Some(141));
        assert_eq!(np.np.pe_frequency_mhz, 1000);
        assert_eq!(np.np.hardware_contexts_per_pe, 8);
        assert_eq!(np.np.pending_loads_per_context, 3);
        assert_eq!(np.np.queue_size_requests, 40);
        assert_eq!(np.np.rollback_on_failed_speculation_cycles, 40);
        assert_eq!(np.storage["dram"].channels + np.storage["sram"].channels, 7);
        assert_eq!(np.storage["dram"].pipelined_read_cycles, 226);
        assert_eq!(np.memory_map.packet_data, "dram");
        assert_eq!(np.memory_map.static_state, "local_store");
    }

    #[test]
    fn ixp2400_has_the_control_store_of_seed_001() {
        let a = Arch::load("ixp2400").unwrap();
        let np = a.as_np().unwrap();
        assert_eq!(np.np.pe_count, 8);
        assert_eq!(np.np.hardware_contexts_per_pe, 8);
        assert_eq!(
            np.control_store.as_ref().unwrap().instructions_per_engine,
            4096
        );
        let cc = np.control_core.as_ref().unwrap();
        assert_eq!((cc.cycles_per_instruction, cc.hardware_contexts), (2, 1));
        assert_eq!(np.np.handoff_storage.as_deref(), Some("dram"));
        assert_eq!(np.np.handoff_requests, 1);
        // npire charges no hand-off (seed 000 has no such cost).
        let n = Arch::load("npire").unwrap();
        assert_eq!(n.as_np().unwrap().np.handoff_requests, 0);
    }

    #[test]
    fn handoff_and_control_core_are_validated() {
        let ixp = PRESETS.iter().find(|p| p.0 == "ixp2400").unwrap().1;
        let bad = ixp.replace("handoff_storage = \"dram\"", "handoff_storage = \"ring\"");
        let e = Arch::from_toml(&bad, "h.toml").unwrap_err();
        assert!(
            e.contains("np.handoff_storage names unknown storage 'ring'"),
            "{e}"
        );
        let bad = ixp.replace("hardware_contexts = 1", "hardware_contexts = 0");
        let e = Arch::from_toml(&bad, "c.toml").unwrap_err();
        assert!(e.contains("control_core.hardware_contexts"), "{e}");
    }

    #[test]
    fn errors_name_file_and_field() {
        let bad = PRESETS[0].1.replace("pe_count = 16", "pe_count = 0");
        let e = Arch::from_toml(&bad, "x.toml").unwrap_err();
        assert!(
            e.contains("x.toml: impossible architecture")
                && e.contains("np.pe_count must be at least 1"),
            "{e}"
        );
        let typo = PRESETS[0].1.replace("pe_count = 16", "pe_cont = 16");
        let e = Arch::from_toml(&typo, "y.toml").unwrap_err();
        assert!(e.starts_with("y.toml:") && e.contains("pe_cont"), "{e}");
        let e = Arch::from_toml("[preset]\nname='a'\ndescription='b'\n", "z.toml").unwrap_err();
        assert!(e.contains("no architecture body"), "{e}");
        let bad_map = PRESETS[0]
            .1
            .replace("stack = \"registers\"", "stack = \"regs\"");
        let e = Arch::from_toml(&bad_map, "m.toml").unwrap_err();
        assert!(
            e.contains("memory_map.stack names unknown storage 'regs'"),
            "{e}"
        );
        assert!(Arch::load("nosuch")
            .unwrap_err()
            .contains("unknown architecture 'nosuch'"));
    }
}
