//! Python functions of throughput-driven partitioning and mapping (crates/tdpm, seed 001).
//! `tdpm_map` and `tdpm_simulate` take and return JSON strings (request fields: docs/tdpm.md); errors become
//! `pktflow.PktflowError`.
use crate::{run_cancellable, PktflowError};
use pyo3::prelude::*;

/// Partition and map an application (Click app or PPF graph file) with one mapper.
#[pyfunction]
fn tdpm_map(py: Python<'_>, request: &str) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || pktflow_tdpm::api::map_json(&r))?
        .map_err(|e| PktflowError::new_err(e.to_string()))
}

/// Map an application with one mapper and simulate the plan on the timing simulator (crates/npsim):
/// `{"point": ..., "model": ..., "simulation": ...}` (docs/tdpm.md).
#[pyfunction]
fn tdpm_simulate(py: Python<'_>, request: &str) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || pktflow_tdpm::simulate::simulate_json(&r))?
        .map_err(|e| PktflowError::new_err(e.to_string()))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tdpm_map, m)?)?;
    m.add_function(wrap_pyfunction!(tdpm_simulate, m)?)?;
    Ok(())
}
