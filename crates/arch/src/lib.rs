//! Architecture model: TOML presets, every parameter named with its unit, validated with
//! messages naming the file and the field. One table of defaults per preset lives in
//! `presets/NAME.toml` (embedded here, so an installed package has them).
//!
//! A preset file has a `[preset]` header (`name`, `description`, optional `source`) and exactly
//! one body: `[np]` + `[storage.*]` + `[bus.*]` + `[memory_map]` (network processors: `npire`,
//! `ixp2400`), `[netthreads]` (the soft multiprocessor) or `[mesh]` (the network-on-chip).
pub mod host;
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
    ("host", include_str!("../../../presets/host.toml")),
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
    np: np::PeParams,
    storage: std::collections::BTreeMap<String, np::Storage>,
    bus: std::collections::BTreeMap<String, np::Bus>,
    memory_map: np::MemoryMap,
    #[serde(default)]
    control_store: Option<np::ControlStore>,
    #[serde(default)]
    control_core: Option<np::ControlCore>,
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

/// Largest architecture file read, bytes (a preset is a few kilobytes).
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// Deepest chain of `base = "..."` inheritance.
pub const MAX_BASE_DEPTH: usize = 8;

/// One source of a merged architecture document, for locating keys in error messages.
#[derive(Debug, Clone)]
struct Origin {
    /// File label (`presets/npire.toml`, `my.toml`).
    file: String,
    text: String,
}

/// A document being assembled: the merged table and where its keys came from (later sources
/// override earlier ones; `--set` overrides come last).
struct Merged {
    table: toml::Table,
    /// Innermost base first, the named file last.
    origins: Vec<Origin>,
    /// `--set` overrides by dotted key.
    sets: Vec<(String, String)>,
}

/// 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// Dotted key paths defined on each line of a TOML text (`[a.b]` headers plus `k = v` lines).
/// Good enough to locate the keys of a preset: headers, plain and dotted keys.
fn key_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut header = String::new();
    for (i, raw) in text.lines().enumerate() {
        let l = raw.trim();
        if l.starts_with('#') || l.is_empty() {
            continue;
        }
        if l.starts_with('[') {
            let inner = l.trim_start_matches('[');
            let inner = inner.split(']').next().unwrap_or("");
            header = unquote_path(inner);
            out.push((i + 1, header.clone()));
            continue;
        }
        if let Some((k, _)) = l.split_once('=') {
            let k = unquote_path(k);
            let full = if header.is_empty() {
                k
            } else {
                format!("{header}.{k}")
            };
            out.push((i + 1, full));
        }
    }
    out
}

fn unquote_path(s: &str) -> String {
    s.split('.')
        .map(|p| p.trim().trim_matches('"').trim_matches('\''))
        .collect::<Vec<_>>()
        .join(".")
}

impl Merged {
    /// Where the dotted key `path` was given last: `--set KEY=V`, or `file:LINE`.
    fn locate(&self, path: &str) -> String {
        if let Some((k, v)) = self.sets.iter().rev().find(|(k, _)| k == path) {
            return format!("--set {k}={v}");
        }
        // A key nested below a --set (e.g. --set storage.x={...}).
        if let Some((k, v)) = self
            .sets
            .iter()
            .rev()
            .find(|(k, _)| path.starts_with(&format!("{k}.")))
        {
            return format!("--set {k}={v}");
        }
        for o in self.origins.iter().rev() {
            if let Some((line, _)) = key_lines(&o.text).into_iter().find(|(_, k)| k == path) {
                return format!("{}:{line}", o.file);
            }
        }
        // The key's table, if the key itself is not written anywhere (a missing key).
        if let Some((parent, _)) = path.rsplit_once('.') {
            for o in self.origins.iter().rev() {
                if let Some((line, _)) = key_lines(&o.text).into_iter().find(|(_, k)| k == parent) {
                    return format!("{}:{line}", o.file);
                }
            }
        }
        self.origins
            .last()
            .map(|o| o.file.clone())
            .unwrap_or_default()
    }
}

/// Deep merge: tables merge key by key, anything else in `over` replaces `base`.
fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

fn parse_table(text: &str, file: &str) -> Result<toml::Table, String> {
    toml::from_str::<toml::Table>(text).map_err(|e| {
        let at = e
            .span()
            .map(|s| format!(":{}", line_of(text, s.start)))
            .unwrap_or_default();
        format!("{file}{at}: {}", one_line(e.message()))
    })
}

/// The text and label of a built-in preset or a file.
fn source_text(name_or_path: &str) -> Result<(String, String), String> {
    if name_or_path == "host" {
        // this machine's own measurement, once `pktflow arch measure-host` has made it
        if let Some(found) = host::measured_text() {
            return Ok(found);
        }
    }
    if let Some((_, text)) = PRESETS.iter().find(|(n, _)| *n == name_or_path) {
        return Ok((text.to_string(), format!("presets/{name_or_path}.toml")));
    }
    let p = Path::new(name_or_path);
    if p.extension().is_some_and(|e| e == "toml") || p.exists() {
        let meta = std::fs::metadata(p).map_err(|e| format!("{name_or_path}: cannot read: {e}"))?;
        if meta.is_dir() {
            return Err(format!(
                "{name_or_path}: is a directory, expected a .toml file"
            ));
        }
        if meta.len() > MAX_FILE_BYTES {
            return Err(format!(
                "{name_or_path}: {} bytes is too large for an architecture file (at most {MAX_FILE_BYTES})",
                meta.len()
            ));
        }
        let text =
            std::fs::read_to_string(p).map_err(|e| format!("{name_or_path}: cannot read: {e}"))?;
        return Ok((text, name_or_path.to_string()));
    }
    Err(format!(
        "unknown architecture '{name_or_path}': not a built-in preset ({}) nor a .toml file",
        preset_names().join(", ")
    ))
}

/// Load `text` (labelled `file`) and the chain of presets it inherits from (`base = "npire"`:
/// a built-in preset or a file path, relative to the inheriting file's folder).
fn load_chain(text: &str, file: &str, depth: usize, m: &mut Merged) -> Result<(), String> {
    let mut t = parse_table(text, file)?;
    if let Some(b) = t.remove("base") {
        let toml::Value::String(b) = b else {
            let line = key_lines(text)
                .into_iter()
                .find(|(_, k)| k == "base")
                .map(|(l, _)| format!(":{l}"))
                .unwrap_or_default();
            return Err(format!(
                "{file}{line}: base must be a string (a preset name or a .toml file)"
            ));
        };
        if depth >= MAX_BASE_DEPTH {
            return Err(format!(
                "{file}: base = \"{b}\": more than {MAX_BASE_DEPTH} levels of inheritance (a cycle?)"
            ));
        }
        let resolved = if PRESETS.iter().any(|(n, _)| *n == b) || Path::new(&b).is_absolute() {
            b.clone()
        } else {
            let dir = Path::new(file).parent().unwrap_or(Path::new(""));
            let cand = dir.join(&b);
            if cand.exists() {
                cand.to_string_lossy().into_owned()
            } else {
                b.clone()
            }
        };
        let (btext, bfile) =
            source_text(&resolved).map_err(|e| format!("{file}: base = \"{b}\": {e}"))?;
        load_chain(&btext, &bfile, depth + 1, m)?;
    }
    merge(&mut m.table, t);
    m.origins.push(Origin {
        file: file.to_string(),
        text: text.to_string(),
    });
    Ok(())
}

/// Apply one `KEY=VALUE` override (dotted key, TOML value).
fn apply_set(table: &mut toml::Table, set: &str) -> Result<(String, String), String> {
    let Some((k, v)) = set.split_once('=') else {
        return Err(format!(
            "--set {set}: expected KEY=VALUE (e.g. np.hardware_contexts_per_pe=4)"
        ));
    };
    let key = k.trim();
    let val = v.trim();
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    if key.is_empty() || parts.iter().any(|p| p.is_empty()) {
        return Err(format!("--set {set}: empty key"));
    }
    if parts[0] == "base" {
        return Err(format!("--set {set}: base cannot be overridden"));
    }
    let value = toml::from_str::<toml::Table>(&format!("v = {val}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .ok_or_else(|| {
            format!(
                "--set {set}: {val:?} is not a TOML value (numbers: 4, booleans: true, \
                 strings in quotes: '\"dram\"')"
            )
        })?;
    let mut cur = table;
    for (i, p) in parts[..parts.len() - 1].iter().enumerate() {
        let entry = cur
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        cur = match entry {
            toml::Value::Table(t) => t,
            _ => {
                return Err(format!(
                    "--set {set}: {} is a value, not a table",
                    parts[..=i].join(".")
                ))
            }
        };
    }
    cur.insert(parts[parts.len() - 1].to_string(), value);
    Ok((parts.join("."), val.to_string()))
}

/// The dotted key of the entry on line `line` of a TOML text written by `toml::to_string`.
fn key_on_line(text: &str, line: usize) -> Option<String> {
    key_lines(text)
        .into_iter()
        .rev()
        .find(|(l, _)| *l <= line)
        .map(|(_, k)| k)
}

/// Deserialize the merged table as `T`, turning serde's message into `file:line: key: what`.
fn decode<T: serde::de::DeserializeOwned>(m: &Merged) -> Result<T, String> {
    let text = toml::to_string(&m.table).map_err(|e| format!("architecture: {e}"))?;
    toml::from_str::<T>(&text).map_err(|e| {
        let msg = one_line(e.message()).to_string();
        let line = e.span().map(|s| line_of(&text, s.start));
        let here = line.and_then(|l| key_on_line(&text, l)).unwrap_or_default();
        // serde names the offending field for unknown and missing keys.
        let field = msg
            .split('`')
            .nth(1)
            .filter(|_| msg.starts_with("unknown field") || msg.starts_with("missing field"))
            .map(str::to_string);
        let table_of = |k: &str| -> String {
            // `here` is the key on the line (for an unknown field: the field itself or its table).
            let lines = key_lines(&text);
            let on_line: Vec<&String> = lines
                .iter()
                .filter(|(l, _)| Some(*l) == line)
                .map(|(_, s)| s)
                .collect();
            let base = on_line.first().map(|s| s.as_str()).unwrap_or(here.as_str());
            if base.ends_with(&format!(".{k}")) || base == k {
                base.to_string()
            } else if base.is_empty() {
                k.to_string()
            } else {
                format!("{base}.{k}")
            }
        };
        match field {
            Some(f) if msg.starts_with("unknown field") => {
                let path = table_of(&f);
                let expected = msg
                    .split_once(", expected")
                    .map(|(_, x)| format!(" (expected{x})"))
                    .unwrap_or_default();
                format!("{}: unknown key {path}{expected}", m.locate(&path))
            }
            Some(f) => {
                let path = table_of(&f);
                format!("{}: missing key {path}", m.locate(&path))
            }
            None if !here.is_empty() => format!("{}: {here}: {msg}", m.locate(&here)),
            None => format!("{}: {msg}", m.locate("")),
        }
    })
}

impl Arch {
    /// Parse and validate TOML text; `file` names the source in error messages.
    pub fn from_toml(text: &str, file: &str) -> Result<Arch, String> {
        Arch::from_toml_with(text, file, &[])
    }

    /// Parse TOML text, resolve its `base` chain, apply `KEY=VALUE` overrides and validate.
    pub fn from_toml_with(text: &str, file: &str, sets: &[String]) -> Result<Arch, String> {
        let mut m = Merged {
            table: toml::Table::new(),
            origins: Vec::new(),
            sets: Vec::new(),
        };
        load_chain(text, file, 0, &mut m)?;
        for s in sets {
            let kv = apply_set(&mut m.table, s)?;
            m.sets.push(kv);
        }
        let file = m.origins.last().map(|o| o.file.clone()).unwrap_or_default();
        if !m.table.contains_key("preset") {
            return Err(format!(
                "{file}: missing [preset] table (name, description)"
            ));
        }
        let bodies: Vec<&str> = ["np", "netthreads", "mesh"]
            .into_iter()
            .filter(|k| m.table.contains_key(*k))
            .collect();
        let arch = match bodies.as_slice() {
            ["np"] => {
                let f: NpFile = decode(&m)?;
                Arch {
                    preset: f.preset,
                    body: Body::Np(NpArch {
                        np: f.np,
                        storage: f.storage,
                        bus: f.bus,
                        memory_map: f.memory_map,
                        control_store: f.control_store,
                        control_core: f.control_core,
                    }),
                }
            }
            ["netthreads"] => {
                let f: NetThreadsFile = decode(&m)?;
                Arch { preset: f.preset, body: Body::NetThreads(f.netthreads) }
            }
            ["mesh"] => {
                let f: MeshFile = decode(&m)?;
                Arch { preset: f.preset, body: Body::Mesh(f.mesh) }
            }
            [] => return Err(format!("{file}: no architecture body: expected one of the tables [np], [netthreads] or [mesh]")),
            more => return Err(format!("{file}: more than one architecture body ({}); a preset describes one machine", more.join(", "))),
        };
        let errs = arch.validate();
        if errs.is_empty() {
            Ok(arch)
        } else {
            let with = if m.sets.is_empty() {
                String::new()
            } else {
                let s: Vec<String> = m.sets.iter().map(|(k, v)| format!("{k}={v}")).collect();
                format!(" with --set {}", s.join(", "))
            };
            Err(format!(
                "{file}{with}: impossible architecture: {}",
                errs.join("; ")
            ))
        }
    }

    /// A built-in preset by name, or a TOML file by path.
    pub fn load(name_or_path: &str) -> Result<Arch, String> {
        Arch::load_with(name_or_path, &[])
    }

    /// A built-in preset or TOML file, with `KEY=VALUE` overrides (`np.pe_count=8`; values in
    /// TOML syntax) applied after its `base` chain.
    pub fn load_with(name_or_path: &str, sets: &[String]) -> Result<Arch, String> {
        let (text, file) = source_text(name_or_path)?;
        Arch::from_toml_with(&text, &file, sets)
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

/// A multi-line parser message as one line.
fn one_line(msg: &str) -> String {
    msg.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(": ")
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

    fn tmp(name: &str, text: &str) -> String {
        let d = std::env::temp_dir().join(format!("pktflow-arch-test-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let p = d.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    }

    #[test]
    fn unknown_keys_and_type_errors_name_the_key_and_its_line() {
        // Every scalar key of every preset, misspelt or given a string: the message names the
        // file, the line of the key and the dotted key.
        for (name, text) in PRESETS {
            let lines: Vec<&str> = text.lines().collect();
            for (i, l) in lines.iter().enumerate() {
                let t = l.trim();
                if t.starts_with('#') || t.starts_with('[') || !t.contains('=') {
                    continue;
                }
                let key = t.split('=').next().unwrap().trim();
                let mut bad = lines.clone();
                let typo = l.replacen(key, &format!("{key}x"), 1);
                bad[i] = &typo;
                let e = Arch::from_toml(&bad.join("\n"), "my.toml").unwrap_err();
                let want = format!("my.toml:{}: unknown key ", i + 1);
                assert!(
                    e.starts_with(&want) && e.contains(&format!("{key}x")),
                    "{name}: {e}"
                );
                let is_string = t.split('=').nth(1).unwrap().trim().starts_with('"');
                let wrong = if is_string {
                    format!("{key} = 7")
                } else {
                    format!("{key} = \"seven\"")
                };
                let mut bad = lines.clone();
                bad[i] = &wrong;
                let e = Arch::from_toml(&bad.join("\n"), "my.toml").unwrap_err();
                assert!(
                    e.starts_with(&format!("my.toml:{}: ", i + 1)) && e.contains(key),
                    "{name} line {}: {e}",
                    i + 1
                );
            }
        }
    }

    #[test]
    fn presets_inherit_with_base_and_take_overrides() {
        let f = tmp(
            "four.toml",
            "base = \"npire\"\n[preset]\nname = \"four\"\ndescription = \"npire with 4 contexts\"\n\n[np]\nhardware_contexts_per_pe = 4\n",
        );
        let a = Arch::load(&f).unwrap();
        let n = Arch::load("npire").unwrap();
        let (an, nn) = (a.as_np().unwrap(), n.as_np().unwrap());
        assert_eq!(an.np.hardware_contexts_per_pe, 4);
        assert_eq!(an.np.pe_count, nn.np.pe_count);
        assert_eq!(an.storage, nn.storage);
        assert_eq!(a.preset.name, "four");
        // Overrides apply last, in TOML syntax.
        let o = Arch::load_with(
            &f,
            &["np.pe_count=8".into(), "memory_map.stack=\"sram\"".into()],
        )
        .unwrap();
        assert_eq!(o.as_np().unwrap().np.pe_count, 8);
        assert_eq!(o.as_np().unwrap().np.hardware_contexts_per_pe, 4);
        assert_eq!(o.as_np().unwrap().memory_map.stack, "sram");
        for (set, want) in [
            (
                "np.hardwar_contexts=4",
                "--set np.hardwar_contexts=4: unknown key np.hardwar_contexts",
            ),
            ("np.pe_count=\"x\"", "--set np.pe_count=\"x\": np.pe_count"),
            ("np.pe_count", "expected KEY=VALUE"),
            ("memory_map.stack=sram", "is not a TOML value"),
            ("np.pe_count.x=1", "np.pe_count is a value"),
            (
                "np.pe_count=0",
                "with --set np.pe_count=0: impossible architecture: np.pe_count must be at least 1",
            ),
        ] {
            let e = Arch::load_with("npire", &[set.to_string()]).unwrap_err();
            assert!(e.contains(want), "{set}: {e}");
        }
        // An unknown key in the inheriting file is reported at its line there.
        let g = tmp(
            "typo.toml",
            "base = \"npire\"\n[np]\n\nhardwar_contexts = 4\n",
        );
        let e = Arch::load(&g).unwrap_err();
        assert!(
            e.starts_with(&format!("{g}:4: unknown key np.hardwar_contexts")),
            "{e}"
        );
        // Cycles and bad bases are refused.
        let c = tmp("cycle.toml", "base = \"cycle.toml\"\n");
        assert!(Arch::load(&c)
            .unwrap_err()
            .contains("levels of inheritance"));
        let b = tmp("badbase.toml", "base = 3\n");
        assert!(Arch::load(&b)
            .unwrap_err()
            .contains(":1: base must be a string"));
        let b = tmp("nobase.toml", "base = \"nosuch\"\n");
        assert!(Arch::load(&b)
            .unwrap_err()
            .contains("unknown architecture 'nosuch'"));
    }

    #[test]
    fn sizes_beyond_the_limits_are_refused_with_the_limit() {
        for (set, want) in [
            ("np.hardware_contexts_per_pe=1000000", "256 supported"),
            ("np.pe_count=100000", "4096 supported"),
            ("np.pe_count=4294967295", "4096 supported"),
            ("np.queue_size_requests=4000000000", "65536 supported"),
            ("storage.dram.channels=4000000000", "1024 supported"),
            ("np.pe_count=4294967296", "np.pe_count"),
            ("np.pe_count=-1", "np.pe_count"),
        ] {
            let e = Arch::load_with("npire", &[set.to_string()]).unwrap_err();
            assert!(e.contains(want), "{set}: {e}");
        }
    }
}
