//! The `mesh` preset (`presets/mesh.toml`, the one table of NoC defaults), embedded so that an
//! installed wheel needs no repository checkout.
use crate::error::{NocError, Result};
use pktflow_arch::mesh::MeshArch;
use serde::Deserialize;

pub const MESH_PRESET_TOML: &str = include_str!("../../../presets/mesh.toml");

#[derive(Deserialize)]
struct PresetFile {
    mesh: MeshArch,
}

/// Parse a preset file text (`[preset]` + `[mesh]` tables).
pub fn parse_mesh_preset(text: &str, origin: &str) -> Result<MeshArch> {
    let p: PresetFile = toml::from_str(text).map_err(|e| NocError::Parse {
        origin: origin.to_string(),
        msg: e.to_string(),
    })?;
    p.mesh.validate().map_err(NocError::Param)?;
    Ok(p.mesh)
}

/// Defaults of the `mesh` preset.
pub fn default_mesh() -> MeshArch {
    parse_mesh_preset(MESH_PRESET_TOML, "presets/mesh.toml").expect("embedded mesh preset is valid")
}

/// Apply JSON overrides (any `MeshArch` field) on top of the defaults and validate.
pub fn mesh_with(overrides: &serde_json::Value) -> Result<MeshArch> {
    let mut v = serde_json::to_value(default_mesh()).expect("serialize");
    if let Some(o) = overrides.as_object() {
        for (k, val) in o {
            if v.get(k).is_none() {
                return Err(NocError::Param(format!("unknown mesh parameter `{k}`")));
            }
            v[k] = val.clone();
        }
    }
    let a: MeshArch =
        serde_json::from_value(v).map_err(|e| NocError::Param(format!("mesh parameters: {e}")))?;
    a.validate().map_err(NocError::Param)?;
    Ok(a)
}
