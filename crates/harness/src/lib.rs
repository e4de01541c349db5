//! The evaluation harness: what every engine of pktflow shares, so that an engine is one
//! implementation of a measurement and nothing else.
//!
//! - [`window`]: the measurement window an engine fills in (arrivals, departures, drops,
//!   packets in flight) and the criteria that say whether a run kept up.
//! - [`search`]: the maximum sustainable rate by bisection over the inter-arrival time, with the
//!   three criteria of the papers (keep-up, zero drop, 90% confidence of zero drop).
//! - [`bottleneck`]: the vocabulary of binding resources and the sentence that names one with
//!   its evidence.
//! - [`engine`]: the [`Engine`] trait (evaluate at a rate with a repetition seed, findings)
//!   and the search on any engine.
//! - [`registry`]: named plug-ins (engines, mappers, routing functions, traffic patterns,
//!   contention managers) registered with one line each.
pub mod bottleneck;
pub mod engine;
pub mod registry;
pub mod search;
pub mod window;

pub use bottleneck::{Finding, Resource};
pub use engine::{engine_max_rate, Engine, EngineFactory, EngineRegistry, Evaluation};
pub use registry::Registry;
pub use search::{
    evaluate, max_rate, max_rate_partial, max_rate_with, Criterion, MaxRate, Probe, SearchConfig,
    Stopped,
};
pub use window::{Measured, Window};
