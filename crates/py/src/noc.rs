//! Python functions of the NoC / stream-graph subsystem (crates/noc). Every function takes and
//! returns JSON strings; errors become `pktflow.PktflowError` with the message naming the file, edge or
//! parameter at fault.
use crate::{run_cancellable, PktflowError};
use pyo3::prelude::*;

fn py_err(e: pktflow_noc::NocError) -> PyErr {
    PktflowError::new_err(e.to_string())
}

/// Call `progress(done, total, label)` from the worker thread, if given.
fn report(cb: &Option<Py<PyAny>>, done: u64, total: u64, label: &str) {
    crate::notify(cb, (done, total, label));
}

/// Synthetic-traffic sweep; request/response documented in docs/noc.md. `progress(cycles done,
/// cycles at most, label)` is called now and then (at most every 0.2 s).
#[pyfunction]
#[pyo3(signature = (request, progress=None))]
fn noc_sweep(py: Python<'_>, request: &str, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_noc::api::noc_sweep_with(&r, &mut |d, t, l| report(&progress, d, t, l))
    })?
    .map_err(py_err)
}

/// Partition, lay out, route and simulate a stream graph; `progress` as for `noc_sweep`
/// (during the simulation).
#[pyfunction]
#[pyo3(signature = (request, progress=None))]
fn stream_run(py: Python<'_>, request: &str, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_noc::api::stream_run_with(&r, &mut |d, t, l| report(&progress, d, t, l))
    })?
    .map_err(py_err)
}

/// Load and balance a stream graph (benchmark name, .json/.toml path, or inline JSON).
#[pyfunction]
fn stream_graph_load(py: Python<'_>, spec: &str) -> PyResult<String> {
    let s = spec.to_string();
    run_cancellable(py, move || pktflow_noc::api::stream_graph_load(&s))?.map_err(py_err)
}

/// Routing success of each router on perturbed layouts.
#[pyfunction]
fn noc_perturbed_routing(
    py: Python<'_>,
    request: &str,
    trials: usize,
    swaps: usize,
) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_noc::api::perturbed_routing(&r, trials, swaps)
    })?
    .map_err(py_err)
}

/// Built-in benchmarks, routers, traffic patterns and the mesh preset defaults.
#[pyfunction]
fn noc_catalog() -> String {
    pktflow_noc::api::catalog()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(noc_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(stream_run, m)?)?;
    m.add_function(wrap_pyfunction!(stream_graph_load, m)?)?;
    m.add_function(wrap_pyfunction!(noc_perturbed_routing, m)?)?;
    m.add_function(wrap_pyfunction!(noc_catalog, m)?)?;
    Ok(())
}
