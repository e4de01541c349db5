//! Python functions of the network-processor timing simulator (crates/npsim). Both take and
//! return JSON strings (request: `{"spec": ..., "sim": ..., "search": ...}`, see docs/npsim.md);
//! errors become `pktflow.PktflowError`.
use crate::{run_cancellable, PktflowError};
use pyo3::prelude::*;

/// One simulation at a fixed inter-arrival time. `progress`, if given, is called as
/// `progress(packets_injected, packets_expected)` now and then (expected 0: unknown).
#[pyfunction]
#[pyo3(signature = (request, progress=None))]
fn simulate(py: Python<'_>, request: &str, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_npsim::api::simulate_json_with(&r, &mut |done, total| {
            crate::notify(&progress, (done, total));
        })
    })?
    .map_err(PktflowError::new_err)
}

/// Maximum sustainable rate by bisection. `progress`, if given, is called as
/// `progress(done, estimated_total, inter_arrival_cycles)` before each simulation of the search.
#[pyfunction]
#[pyo3(signature = (request, progress=None))]
fn maxrate(py: Python<'_>, request: &str, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_npsim::api::maxrate_json_with(&r, &mut |done, total, ia| {
            crate::notify(&progress, (done, total, ia));
        })
    })?
    .map_err(PktflowError::new_err)
}

/// An architecture (built-in preset or TOML file) after its `base` chain and the `KEY=VALUE`
/// overrides, validated, as JSON (`preset`, `kind`, `params`, `limits`).
#[pyfunction]
#[pyo3(signature = (name_or_path, overrides=None))]
fn arch_resolved(name_or_path: &str, overrides: Option<Vec<String>>) -> PyResult<String> {
    let a = pktflow_arch::Arch::load_with(name_or_path, &overrides.unwrap_or_default())
        .map_err(PktflowError::new_err)?;
    let mut v = a.to_json();
    v["limits"] = serde_json::json!({
        "np.pe_count": pktflow_arch::np::MAX_PES,
        "np.hardware_contexts_per_pe": pktflow_arch::np::MAX_CONTEXTS_PER_PE,
        "np.queue_size_requests": pktflow_arch::np::MAX_QUEUE_REQUESTS,
        "storage.*.channels": pktflow_arch::np::MAX_CHANNELS,
    });
    Ok(v.to_string())
}

/// Bottleneck finding by idealized executions (seed 000 section 5). `progress`, if given, is
/// called as `progress(done, label)` before each maximum-rate search.
#[pyfunction]
#[pyo3(signature = (request, progress=None))]
fn bottleneck(py: Python<'_>, request: &str, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_npsim::api::bottleneck_json(&r, |k, label| {
            crate::notify(&progress, (k, label));
        })
    })?
    .map_err(PktflowError::new_err)
}

/// Design-space exploration: for each PE count and replication scope, the mapping found, its
/// maximum rate, speedup and bottleneck. `progress(done, total, label)` before each point.
#[pyfunction]
#[pyo3(signature = (request, progress=None))]
fn explore(py: Python<'_>, request: &str, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_npsim::api::explore_json(&r, |done, total, label| {
            crate::notify(&progress, (done, total, label));
        })
    })?
    .map_err(PktflowError::new_err)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(maxrate, m)?)?;
    m.add_function(wrap_pyfunction!(arch_resolved, m)?)?;
    m.add_function(wrap_pyfunction!(bottleneck, m)?)?;
    m.add_function(wrap_pyfunction!(explore, m)?)?;
    Ok(())
}
