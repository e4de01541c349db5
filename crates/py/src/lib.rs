//! PyO3 binding: the Rust core as the Python module `pktflow._core`.
//! Each subsystem registers its functions from its own file.
use pyo3::prelude::*;

mod app;
mod noc;
mod npsim;
mod tdpm;

pyo3::create_exception!(
    _core,
    PktflowError,
    pyo3::exceptions::PyException,
    "A user-facing pktflow error (bad file, bad name, impossible parameters)."
);

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("PktflowError", m.py().get_type::<PktflowError>())?;
    app::register(m)?;
    noc::register(m)?;
    npsim::register(m)?;
    tdpm::register(m)?;
    Ok(())
}
