//! Python functions of the application stages: graphs, architectures, element classes,
//! functional runs, profiles and streamed per-packet traces. Results cross as JSON text (small
//! documents) or Python dicts built directly (per-packet traces).
use crate::{run_cancellable, PktflowError};
use pktflow_arch::Arch;
use pktflow_profile::{app::load_app, run};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use std::path::PathBuf;

fn err(msg: impl Into<String>) -> PyErr {
    PktflowError::new_err(msg.into())
}

#[pyfunction]
fn graph_json(app: &str) -> PyResult<String> {
    let a = load_app(app).map_err(err)?;
    a.instantiate(&PathBuf::from(".")).map_err(err)?;
    let mut j = a.graph.to_json();
    let warnings: Vec<String> = a.warnings.iter().map(|w| w.to_string()).collect();
    j["warnings"] = serde_json::json!(warnings);
    Ok(j.to_string())
}

#[pyfunction]
fn graph_dot(app: &str) -> PyResult<String> {
    let a = load_app(app).map_err(err)?;
    a.instantiate(&PathBuf::from(".")).map_err(err)?;
    Ok(a.graph.to_dot())
}

#[pyfunction]
fn arch_json(name: &str) -> PyResult<String> {
    Ok(Arch::load(name).map_err(err)?.to_json().to_string())
}

/// Measure this machine for the `host` preset (a second or two, GIL released): JSON with the
/// measurement, the preset's TOML text and the path the name `host` loads it from once written
/// (`path` null when no cache folder is known).
#[pyfunction]
fn measure_host(py: Python<'_>) -> PyResult<String> {
    let m = py.detach(pktflow_arch::host::measure);
    let toml = pktflow_arch::host::measured_preset_toml(&m).map_err(err)?;
    let path = pktflow_arch::host::cache_path().map(|p| p.display().to_string());
    Ok(serde_json::json!({"measurement": m, "toml": toml, "path": path}).to_string())
}

/// Where this machine's measured `host` preset is, if it has been measured (else None).
#[pyfunction]
fn host_measured_path() -> Option<String> {
    pktflow_arch::host::measured_text().map(|(_, p)| p)
}

#[pyfunction]
fn arch_names() -> Vec<&'static str> {
    pktflow_arch::preset_names()
}

#[pyfunction]
fn element_classes() -> String {
    let v: Vec<_> = pktflow_elements::classes()
        .iter()
        .map(|c| serde_json::json!({"name": c.name, "summary": c.summary}))
        .collect();
    serde_json::Value::Array(v).to_string()
}

fn source_of(
    trace: Option<String>,
    synthetic: Option<u64>,
    seed: Option<u64>,
    input_port: Option<String>,
) -> PyResult<run::Source> {
    let rule = match input_port {
        Some(s) => run::InputPort::parse(&s).map_err(err)?,
        None => run::InputPort::default(),
    };
    Ok(run::Source::from_args_with(
        trace.as_deref(),
        synthetic,
        seed.unwrap_or(DEFAULT_SEED),
        rule,
    ))
}

/// Seed of synthetic traces when none is given.
const DEFAULT_SEED: u64 = 1;

/// Functional run and profile (JSON text). Runs with the GIL released; Ctrl-C stops it (the
/// error `interrupted`, nothing half-done: ToDump outputs are removed). `progress(done)` is
/// called every 10,000 packets.
#[pyfunction]
#[pyo3(signature = (app, trace=None, synthetic=None, seed=None, out_dir=None, progress=None, input_port=None, destinations=None))]
#[allow(clippy::too_many_arguments)]
fn profile(
    py: Python<'_>,
    app: &str,
    trace: Option<String>,
    synthetic: Option<u64>,
    seed: Option<u64>,
    out_dir: Option<String>,
    progress: Option<Py<PyAny>>,
    input_port: Option<String>,
    destinations: Option<String>,
) -> PyResult<String> {
    let mut source = source_of(trace, synthetic, seed, input_port)?;
    if let Some(kind) = destinations {
        // The same names as the simulators' `destinations` (`{"kind": "per_port"}`).
        let w: pktflow_traffic::PrefixWeighting = if kind == "zipf" {
            pktflow_traffic::SynthConfig::default().dst_weighting
        } else {
            serde_json::from_value(serde_json::json!({ "kind": kind.replace('-', "_") }))
                .map_err(|_| err(format!("--destinations: unknown kind '{kind}'")))?
        };
        source = match source {
            run::Source::Synthetic { packets, seed } => run::Source::SyntheticWeighted {
                packets,
                seed,
                dst_weighting: w,
            },
            run::Source::Auto { seed } => run::Source::SyntheticWeighted {
                packets: run::DEFAULT_SYNTHETIC_PACKETS,
                seed,
                dst_weighting: w,
            },
            _ => {
                return Err(err(
                    "--destinations applies to synthetic traffic, not to a --trace file",
                ))
            }
        };
    }
    // Device pcaps only into a folder the user named (as `pktflow run`).
    let devices = out_dir.is_some();
    let out = PathBuf::from(out_dir.unwrap_or_else(|| ".".into()));
    let app = app.to_string();
    let report = run_cancellable(py, move || {
        run::profile_with(&app, &source, &out, devices, |done| {
            crate::notify(&progress, (done,));
        })
    })?
    .map_err(err)?;
    Ok(report.to_string())
}

/// Write a synthetic trace (JSON summary). Refused before writing when the estimated size
/// exceeds the free space; written atomically; Ctrl-C stops it and removes the partial file.
/// `progress(done, total)` is called every 10,000 packets.
#[pyfunction]
#[pyo3(signature = (path, n=None, seed=None, app=None, pcapng=false, progress=None))]
fn write_synthetic(
    py: Python<'_>,
    path: &str,
    n: Option<u64>,
    seed: Option<u64>,
    app: Option<String>,
    pcapng: bool,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    let path = path.to_string();
    let app = app.unwrap_or_else(|| "router".into());
    let seed = seed.unwrap_or(DEFAULT_SEED);
    let n = n.unwrap_or(run::DEFAULT_SYNTHETIC_PACKETS);
    let out = run_cancellable(py, move || {
        let mut tick = |done: u64, total: u64| {
            crate::notify(&progress, (done, total));
        };
        run::write_synthetic_with(
            &path,
            n,
            seed,
            &app,
            pcapng,
            run::WriteOptions {
                free_space: &run::free_space,
                tick: &mut tick,
            },
        )
    })?
    .map_err(err)?;
    Ok(out.to_string())
}

/// Iterator over the per-packet traces of a functional run.
#[pyclass(unsendable)]
struct TraceStream {
    run: run::Run,
}

#[pymethods]
impl TraceStream {
    #[new]
    #[pyo3(signature = (app, trace=None, synthetic=None, seed=None, input_port=None))]
    fn new(
        app: &str,
        trace: Option<String>,
        synthetic: Option<u64>,
        seed: Option<u64>,
        input_port: Option<String>,
    ) -> PyResult<Self> {
        let source = source_of(trace, synthetic, seed, input_port)?;
        // A stale request from an earlier interrupted call must not stop this stream; Ctrl-C
        // during iteration reaches Python between packets.
        pktflow_model::cancel::reset();
        Ok(TraceStream {
            run: run::Run::start(app, &source, &PathBuf::from(".")).map_err(err)?,
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(
        mut slf: PyRefMut<'py, Self>,
        py: Python<'py>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let Some(t) = slf.run.next_trace().map_err(err)? else {
            return Ok(None);
        };
        let d = PyDict::new(py);
        d.set_item("packet", t.packet)?;
        d.set_item("timestamp_ns", t.timestamp_ns)?;
        d.set_item("wire_bytes", t.wire_bytes)?;
        let visits = PyList::empty(py);
        for v in &t.visits {
            let vd = PyDict::new(py);
            vd.set_item("element", v.element)?;
            vd.set_item("port", v.port)?;
            vd.set_item("instructions", v.instructions)?;
            let acc = PyList::empty(py);
            for a in t.accesses_of(v) {
                let ad = PyDict::new(py);
                ad.set_item("mem", a.mem.name())?;
                ad.set_item(
                    "kind",
                    if a.kind == pktflow_model::AccessKind::Read {
                        "read"
                    } else {
                        "write"
                    },
                )?;
                ad.set_item("bytes", a.bytes)?;
                ad.set_item("at_instr", a.at_instr)?;
                ad.set_item("object", a.object)?;
                ad.set_item("key", a.key)?;
                acc.append(ad)?;
            }
            vd.set_item("accesses", acc)?;
            visits.append(vd)?;
        }
        d.set_item("visits", visits)?;
        let fates = PyList::empty(py);
        for f in &t.fates {
            let fd = PyDict::new(py);
            match *f {
                pktflow_model::Fate::Output { element } => {
                    fd.set_item("fate", "output")?;
                    fd.set_item("element", element)?;
                }
                pktflow_model::Fate::Drop { element, reason } => {
                    fd.set_item("fate", "drop")?;
                    fd.set_item("element", element)?;
                    fd.set_item("reason", reason)?;
                }
                pktflow_model::Fate::Held { element } => {
                    fd.set_item("fate", "held")?;
                    fd.set_item("element", element)?;
                }
            }
            fates.append(fd)?;
        }
        d.set_item("fates", fates)?;
        Ok(Some(d))
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(graph_json, m)?)?;
    m.add_function(wrap_pyfunction!(graph_dot, m)?)?;
    m.add_function(wrap_pyfunction!(arch_json, m)?)?;
    m.add_function(wrap_pyfunction!(arch_names, m)?)?;
    m.add_function(wrap_pyfunction!(measure_host, m)?)?;
    m.add_function(wrap_pyfunction!(host_measured_path, m)?)?;
    m.add_function(wrap_pyfunction!(element_classes, m)?)?;
    m.add_function(wrap_pyfunction!(profile, m)?)?;
    m.add_function(wrap_pyfunction!(write_synthetic, m)?)?;
    m.add_class::<TraceStream>()?;
    Ok(())
}
