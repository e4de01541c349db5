//! Application model: the task graph of element instances (with numbered ports and the source
//! position of every declaration), diagnostics that name `file:line:col`, and the cost/trace
//! vocabulary (memory types of seed 000 section 2.2, memory accesses, per-packet traces) that the
//! functional run produces and the timing models consume.
pub mod cancel;
pub mod cost;
pub mod diag;
pub mod graph;
pub mod text;

pub use cost::{
    sorted_sets_meet, AccessKind, Fate, LockMark, MemAccess, MemType, PacketTrace, Visit,
};
pub use diag::{Diagnostic, Severity, Span};
pub use graph::{AppGraph, Connection, ElementDecl};
