//! Errors with messages that say what was wrong and where.
use thiserror::Error;

#[derive(Debug, Error, Clone, PartialEq)]
pub enum TdpmError {
    /// The graph file could not be read or parsed.
    #[error("{0}")]
    Parse(String),
    /// The PPF graph is malformed (cycle, disconnected PPF, unknown name, bad number).
    #[error("{0}")]
    Graph(String),
    /// The architecture or the request cannot be served (e.g. zero engines).
    #[error("{0}")]
    Machine(String),
    /// The application could not be loaded or run.
    #[error("{0}")]
    App(String),
    /// The request is too large for the exact search, or names an unknown mapper.
    #[error("{0}")]
    Request(String),
}
