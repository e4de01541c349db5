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

/// The first exception a progress callback raised during the current call (KeyboardInterrupt
/// included): the run is cancelled and [`run_cancellable`] raises it once the worker has stopped.
static CALLBACK_ERROR: std::sync::Mutex<Option<PyErr>> = std::sync::Mutex::new(None);

/// Call a Python progress callback, if given, from a worker thread. An exception it raises stops
/// the run: it is kept, the engines' cancellation flag is raised, and the call that started the
/// run raises it when the worker has cleaned up (it used to be printed and ignored, so a script's
/// Ctrl-C inside a callback was lost). Callbacks are not called again after one raised.
pub(crate) fn notify<A>(cb: &Option<Py<PyAny>>, args: A)
where
    A: for<'py> pyo3::call::PyCallArgs<'py>,
{
    if let Some(cb) = cb {
        Python::attach(|py| {
            let mut slot = CALLBACK_ERROR.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_some() {
                return;
            }
            if let Err(e) = cb.call1(py, args) {
                *slot = Some(e);
                pktflow_model::cancel::request();
            }
        });
    }
}

fn take_callback_error() -> Option<PyErr> {
    CALLBACK_ERROR
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .take()
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
/// marked `"interrupted": true`, which the Python wrappers turn into `pktflow.Interrupted`);
/// re-raises the KeyboardInterrupt when the worker gave up with an error after the interrupt, and
/// raises the exception a progress callback raised (see [`notify`]). Progress callbacks in `work` may take the GIL (`Python::attach`):
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
    drop(take_callback_error());
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
        if let Some(e) = take_callback_error() {
            return Err(e);
        }
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
