//! PyO3 binding: the Rust core as the Python module `pktflow._core`.
//! Each subsystem registers its functions from its own file.
use pyo3::prelude::*;

mod noc;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    noc::register(m)?;
    Ok(())
}
