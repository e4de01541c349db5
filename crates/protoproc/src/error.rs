//! Errors: one line saying which setting is wrong and why.
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum ProtoError {
    /// A request that cannot be served: a bad number, an unknown name, a size over a limit.
    #[error("{0}")]
    Request(String),
    /// The user interrupted the run (Ctrl-C).
    #[error("interrupted")]
    Interrupted,
    /// A broken invariant of the simulation (please report it).
    #[error("internal error (please report): {0}")]
    Internal(String),
}

impl From<pktflow_model::cancel::Cancelled> for ProtoError {
    fn from(_: pktflow_model::cancel::Cancelled) -> Self {
        ProtoError::Interrupted
    }
}

/// Refuse a number that is not finite or outside `[lo, hi]`, naming the setting.
pub fn check_range(name: &str, v: f64, lo: f64, hi: f64) -> Result<f64, ProtoError> {
    if !v.is_finite() {
        return Err(ProtoError::Request(format!(
            "{name} must be a finite number, got {v}"
        )));
    }
    if v < lo || v > hi {
        return Err(ProtoError::Request(format!(
            "{name} must be between {lo} and {hi}, got {v}"
        )));
    }
    Ok(v)
}
