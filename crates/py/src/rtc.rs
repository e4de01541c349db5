//! Python functions of the run-to-completion engine and NetTM (crates/rtc). Both take and return
//! JSON strings (requests: docs/rtc.md); errors become `pktflow.PktflowError`.
use crate::{run_cancellable, PktflowError};
use pyo3::prelude::*;

/// Maximum sustainable rate (or saturation throughput) of an application on the
/// multithreaded soft multiprocessor. `progress`, if given, is called as
/// `progress(done, estimated_total)` after each tested rate.
#[pyfunction]
#[pyo3(signature = (request, progress=None))]
fn rtc_run(py: Python<'_>, request: &str, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_rtc::api::rtc_json(&r, &mut |done, total| {
            crate::notify(&progress, (done, total));
        })
    })?
    .map_err(PktflowError::new_err)
}

/// Fraction of packets whose persistent-state accesses conflict within windows of consecutive
/// packets, from the functional traces.
#[pyfunction]
fn rtc_conflicts(py: Python<'_>, request: &str) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || pktflow_rtc::api::conflicts_json(&r))?
        .map_err(PktflowError::new_err)
}

/// Appendix A's signature study: false-conflict rate of each signature hash against the
/// signature size on an application's transactions (request and result: docs/rtc.md).
/// `progress`, if given, is called as `progress(done, total)` after each point.
#[pyfunction]
#[pyo3(signature = (request, progress=None))]
fn rtc_signature_study(
    py: Python<'_>,
    request: &str,
    progress: Option<Py<PyAny>>,
) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_rtc::study::study_json(&r, &mut |done, total| {
            crate::notify(&progress, (done, total));
        })
    })?
    .map_err(PktflowError::new_err)
}

/// Every execution model an architecture supports, side by side (`pktflow compare`; request
/// and result: docs/rtc.md, "Comparing execution models"). `progress`, if given, is called as
/// `progress(done, total, label)` before each model's search.
#[pyfunction]
#[pyo3(signature = (request, progress=None))]
fn compare_run(py: Python<'_>, request: &str, progress: Option<Py<PyAny>>) -> PyResult<String> {
    let r = request.to_string();
    run_cancellable(py, move || {
        pktflow_rtc::compare::compare_json(&r, &mut |done, total, label| {
            crate::notify(&progress, (done, total, label.to_string()));
        })
    })?
    .map_err(PktflowError::new_err)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // The TDPM plans as NP simulator mappers (`--mapper tdpm`), for every binding call.
    pktflow_rtc::plan::install();
    m.add_function(wrap_pyfunction!(rtc_run, m)?)?;
    m.add_function(wrap_pyfunction!(rtc_conflicts, m)?)?;
    m.add_function(wrap_pyfunction!(rtc_signature_study, m)?)?;
    m.add_function(wrap_pyfunction!(compare_run, m)?)?;
    Ok(())
}
