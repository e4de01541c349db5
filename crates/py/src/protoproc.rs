//! Python functions of the protocol-processing policies (crates/protoproc). Each takes and
//! returns a JSON string (request fields: docs/protoproc.md); errors become
//! `pktflow.PktflowError`.
use crate::{run_cancellable, PktflowError};
use pyo3::prelude::*;

/// The analytic model: curves, break-even points and cost-effectiveness thresholds.
#[pyfunction]
fn protoproc_model(py: Python<'_>, request: &str) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || pktflow_protoproc::api::model_json(&r))?
        .map_err(|e| PktflowError::new_err(e.to_string()))
}

/// One simulation. `progress`, if given, is called as `progress(misses_done, misses_expected)`
/// now and then.
#[pyfunction]
#[pyo3(signature = (request, progress=None))]
fn protoproc_sim(py: Python<'_>, request: &str, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_protoproc::api::sim_json_with(&r, &mut |done, total| {
            crate::notify(&progress, (done, total));
        })
    })?
    .map_err(|e| PktflowError::new_err(e.to_string()))
}

/// Table 2's microbenchmark on the simulator, beside the paper's figures.
#[pyfunction]
fn protoproc_table2(py: Python<'_>, request: &str) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || pktflow_protoproc::api::table2_json(&r))?
        .map_err(|e| PktflowError::new_err(e.to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(protoproc_model, m)?)?;
    m.add_function(wrap_pyfunction!(protoproc_sim, m)?)?;
    m.add_function(wrap_pyfunction!(protoproc_table2, m)?)?;
    Ok(())
}
