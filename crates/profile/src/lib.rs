//! Application stage: resolve an application (a built-in name or a Click file), build and
//! validate it, feed it packets (a pcap/pcapng trace or a seeded synthetic trace shaped for
//! it), and aggregate the per-packet traces into a profile.
pub mod app;
pub mod costs;
pub mod hints;
pub mod neighbors;
pub mod profiler;
pub mod run;

pub use profiler::{Profile, Profiler};
