//! Python function of the real runtime (crates/runtime): `pktflow run`. Takes and returns JSON
//! strings (request keys: docs/runtime.md); errors become `pktflow.PktflowError`.
use crate::{run_cancellable, PktflowError};
use pyo3::prelude::*;

/// Run an application on the host's cores with cost recording compiled out. `progress`, if
/// given, is called as `progress(packets_done)` every 65,536 packets (one thread).
#[pyfunction]
#[pyo3(signature = (request, progress=None))]
fn runtime_run(py: Python<'_>, request: &str, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_runtime::api::run_json(&r, &mut |done| crate::notify(&progress, (done,)))
    })?
    .map_err(PktflowError::new_err)
}

/// What each element costs on this host: the request's packets on one thread through the
/// timed build of the elements (`pktflow_runtime::hostcost`); JSON in and out.
#[pyfunction]
fn runtime_host_costs(py: Python<'_>, request: &str) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || pktflow_runtime::hostcost::measure_json(&r))?
        .map_err(PktflowError::new_err)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(runtime_run, m)?)?;
    m.add_function(wrap_pyfunction!(runtime_host_costs, m)?)?;
    Ok(())
}
