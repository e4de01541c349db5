//! Architecture model: TOML presets (npire, ixp2400, netthreads, mesh), every parameter named with its unit, validated
pub mod mesh;
