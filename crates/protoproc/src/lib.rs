//! Protocol-processing policies: when to dedicate a processor of a multiprocessor node to
//! protocol processing (the protocol-processing paper by Falsafi and Wood; docs/sources.md).
//!
//! * [`policy`]: the policy type (`Single`, `Fixed`, `Floating`) and its cost parameters, shared
//!   by every engine that schedules protocol (or slow-path) work.
//! * [`model`]: the paper's closed-form model (section 4): `Tfixed`, `Tsingle`, `Tfloating`, the
//!   normalized time, break-even points, cost-effectiveness thresholds, multithreading limits.
//! * [`sim`]: a discrete-event simulation of N nodes of P CPUs with T threads each, one protocol
//!   handler slot per node, a network latency and an optional node bus (sections 5 and 6).
//! * [`workload`]: the em3d, gauss, tomcatv and synthetic request/reply programs the threads run.
//! * [`api`]: JSON requests and results for the command line and Python (`pktflow protoproc`).
//!
//! Units: every time is in microseconds (us) at the interfaces; the simulator keeps integer
//! nanoseconds internally so that event order is exact and runs are deterministic.
pub mod api;
pub mod error;
pub mod model;
pub mod policy;
pub mod sim;
pub mod workload;

pub use error::ProtoError;
pub use policy::{CostSet, HandlerCosts, Notify, Policy, PolicyCosts};
