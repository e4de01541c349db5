//! Cooperative cancellation (Ctrl-C).
//!
//! One process-wide flag. The front end (the Python binding, or a Rust binary's signal handler)
//! calls [`request`] when the user interrupts; long loops in every engine call [`check`] (or
//! [`requested`]) every few thousand iterations and stop promptly, returning what is finished
//! where that makes sense (an exploration returns the points already searched, marked
//! `"interrupted": true`) or [`Cancelled`] otherwise. [`reset`] is called at the start of each
//! top-level call from the front end.
//!
//! The flag is global on purpose: threading a token through every engine's call chain would put
//! a parameter on hundreds of functions for one bit. Tests that set it live in their own test
//! binary (one integration-test file each), so they cannot interrupt other tests.
use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// The message every engine uses for an interrupted run.
pub const MESSAGE: &str = "interrupted";

/// The run was interrupted by the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cancelled;

impl std::fmt::Display for Cancelled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(MESSAGE)
    }
}

impl std::error::Error for Cancelled {}

/// Ask every running engine to stop.
pub fn request() {
    REQUESTED.store(true, Ordering::Relaxed);
}

/// Clear the flag (start of a new top-level call).
pub fn reset() {
    REQUESTED.store(false, Ordering::Relaxed);
}

/// Has the user asked to stop?
#[inline]
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// `Err(Cancelled)` once the user has asked to stop.
#[inline]
pub fn check() -> Result<(), Cancelled> {
    if requested() {
        Err(Cancelled)
    } else {
        Ok(())
    }
}

/// Is this error message the one an interrupted run returns?
pub fn is_cancel_message(msg: &str) -> bool {
    msg.trim() == MESSAGE || msg.trim_end().ends_with(": interrupted")
}
