//! Errors of the NoC subsystem: every variant names the file, edge or parameter at fault.
use thiserror::Error;

#[derive(Debug, Error)]
pub enum NocError {
    #[error("cannot read stream graph file `{path}`: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("malformed stream graph `{origin}`: {msg}")]
    Parse { origin: String, msg: String },
    #[error("invalid stream graph `{graph}`: {msg}")]
    Graph { graph: String, msg: String },
    #[error("inconsistent rates on edge {edge} of `{graph}`: {msg}")]
    Inconsistent {
        graph: String,
        edge: String,
        msg: String,
    },
    #[error("feedback loop of `{graph}` deadlocks: edge {edge} {msg}")]
    Deadlock {
        graph: String,
        edge: String,
        msg: String,
    },
    #[error("unknown benchmark `{0}` (known: AudioBeam, BeamFormer, BitonicSort, ChannelVocoder, DES, FilterBank, FMRadio, TDE, Vocoder)")]
    UnknownBenchmark(String),
    /// A request field with a bad value: `measure must be an integer from 1 to ...`.
    #[error("{field} {msg}")]
    Field { field: String, msg: String },
    /// A malformed request document (not JSON, not an object, unknown field).
    #[error("malformed {what}: {msg}")]
    Request { what: String, msg: String },
    /// The user interrupted the run (Ctrl-C).
    #[error("interrupted")]
    Interrupted,
    #[error("invalid parameter: {0}")]
    Param(String),
    /// A BookSim-style configuration file with a bad line: names the file, line and key.
    #[error("config `{file}` line {line}: {msg}")]
    Config {
        file: String,
        line: usize,
        msg: String,
    },
    #[error("routing `{routing}` failed: {msg}")]
    Routing { routing: String, msg: String },
    #[error("simulation invariant violated: {0}")]
    Invariant(String),
}

pub type Result<T> = std::result::Result<T, NocError>;

pub(crate) fn param<T>(msg: impl Into<String>) -> Result<T> {
    Err(NocError::Param(msg.into()))
}
