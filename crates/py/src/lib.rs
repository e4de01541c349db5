//! PyO3 binding: the Rust core as the Python module `pktflow._core`.
//! Each subsystem registers its functions from its own file.
use pyo3::prelude::*;
use std::sync::mpsc;
use std::time::Duration;

mod app;
mod noc;
mod npsim;
mod protoproc;
mod rtc;
mod runtime;
mod tdpm;

/// Call a Python progress callback, if given, from a worker thread. An exception it raises is
/// printed, not propagated: progress reporting never stops a run.
pub(crate) fn notify<A>(cb: &Option<Py<PyAny>>, args: A)
where
    A: for<'py> pyo3::call::PyCallArgs<'py>,
{
    if let Some(cb) = cb {
        Python::attach(|py| {
            if let Err(e) = cb.call1(py, args) {
                e.print(py);
            }
        });
    }
}

pyo3::create_exception!(
    _core,
    PktflowError,
    pyo3::exceptions::PyException,
    "A user-facing pktflow error (bad file, bad name, impossible parameters)."
);

/// Run `work` on a worker thread with the GIL released, while this thread watches for Ctrl-C.
///
/// Python runs signal handlers only on its main thread and only when that thread executes Python,
/// so a long Rust call that merely releases the GIL never sees Ctrl-C. Here the calling thread
/// waits for the worker in slices of 50 ms and calls `check_signals` between them; on
/// KeyboardInterrupt it raises the shared cancellation flag (`pktflow_model::cancel`), which every
/// engine's loops check, and waits for the worker to stop.
///
/// Returns the worker's value when it finished (an interrupted engine may return a partial result
/// marked `"interrupted": true`); re-raises the KeyboardInterrupt when the worker gave up with an
/// error after the interrupt. Progress callbacks in `work` may take the GIL (`Python::attach`):
/// the waiting thread holds it only between slices.
pub(crate) fn run_cancellable<T, E>(
    py: Python<'_>,
    work: impl FnOnce() -> Result<T, E> + Send,
) -> PyResult<Result<T, E>>
where
    T: Send,
    E: Send,
{
    pktflow_model::cancel::reset();
    std::thread::scope(|s| {
        let (tx, rx) = mpsc::channel::<()>();
        let handle = s.spawn(move || {
            let out = work();
            let _ = tx.send(());
            out
        });
        let mut interrupt: Option<PyErr> = None;
        let mut rx = rx;
        loop {
            // The receiver is Send but not Sync: move it into the GIL-free slice and back.
            let (back, done) = py.detach(move || {
                let done = match rx.recv_timeout(Duration::from_millis(50)) {
                    Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => true,
                    Err(mpsc::RecvTimeoutError::Timeout) => false,
                };
                (rx, done)
            });
            rx = back;
            if done {
                break;
            }
            if interrupt.is_none() {
                if let Err(e) = py.check_signals() {
                    pktflow_model::cancel::request();
                    interrupt = Some(e);
                }
            }
        }
        let out = match handle.join() {
            Ok(v) => v,
            Err(p) => {
                let what = p
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_else(|| "unknown".into());
                return Err(PktflowError::new_err(format!(
                    "internal error (please report): {what}"
                )));
            }
        };
        pktflow_model::cancel::reset();
        match (interrupt, out) {
            (Some(e), Err(_)) => Err(e),
            (_, out) => Ok(out),
        }
    })
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("PktflowError", m.py().get_type::<PktflowError>())?;
    app::register(m)?;
    noc::register(m)?;
    npsim::register(m)?;
    tdpm::register(m)?;
    protoproc::register(m)?;
    rtc::register(m)?;
    runtime::register(m)?;
    Ok(())
}
