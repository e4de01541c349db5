//! Python functions of the network-processor timing simulator (crates/npsim). Both take and
//! return JSON strings (request: `{"spec": ..., "sim": ..., "search": ...}`, see docs/npsim.md);
//! errors become `pktflow.PktflowError`.
use crate::{run_cancellable, PktflowError};
use pyo3::prelude::*;

/// One simulation at a fixed inter-arrival time.
#[pyfunction]
fn simulate(py: Python<'_>, request: &str) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || pktflow_npsim::api::simulate_json(&r))?
        .map_err(PktflowError::new_err)
}

/// Maximum sustainable rate by bisection.
#[pyfunction]
fn maxrate(py: Python<'_>, request: &str) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || pktflow_npsim::api::maxrate_json(&r))?
        .map_err(PktflowError::new_err)
}

/// Bottleneck finding by idealized executions (seed 000 section 5). `progress`, if given, is
/// called as `progress(done, label)` before each maximum-rate search.
#[pyfunction]
#[pyo3(signature = (request, progress=None))]
fn bottleneck(py: Python<'_>, request: &str, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_npsim::api::bottleneck_json(&r, |k, label| {
            if let Some(cb) = &progress {
                Python::attach(|py| {
                    if let Err(e) = cb.call1(py, (k, label)) {
                        e.print(py);
                    }
                });
            }
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
            if let Some(cb) = &progress {
                Python::attach(|py| {
                    if let Err(e) = cb.call1(py, (done, total, label)) {
                        e.print(py);
                    }
                });
            }
        })
    })?
    .map_err(PktflowError::new_err)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(simulate, m)?)?;
    m.add_function(wrap_pyfunction!(maxrate, m)?)?;
    m.add_function(wrap_pyfunction!(bottleneck, m)?)?;
    m.add_function(wrap_pyfunction!(explore, m)?)?;
    Ok(())
}
