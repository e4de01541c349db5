//! Throughput-driven partitioning and mapping (TDPM) of seed 001
//! (`001_50c9ec885c831f52.txt`): packet-processing functions (PPFs) joined by channels from a
//! receiver to a transmitter are grouped into tasks, tasks are duplicated over the MEs of a
//! network processor, and non-critical tasks run on the XScale core, guided by the throughput
//! cost model of section 4.2. See docs/tdpm.md.
pub mod api;
pub mod baselines;
pub mod click;
pub mod cost;
pub mod error;
pub mod gen;
pub mod graph;
pub mod heuristic;
pub mod optimal;
pub mod refine;
pub mod simulate;

pub use baselines::{map, MAPPERS};
pub use cost::{Binding, Eval, Machine, Mapping, Model, Task, TaskCost};
pub use error::TdpmError;
pub use graph::{End, GraphFile, LockUse, MemUse, Ppf, PpfGraph};
pub use heuristic::{Options, Plan};
