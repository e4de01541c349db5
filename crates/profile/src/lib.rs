//! Application stage: resolve an application (a built-in name or a Click file), build and
//! validate it, feed it packets (a pcap/pcapng trace or a seeded synthetic trace), and aggregate
//! the per-packet traces into a profile.
pub mod profiler;

pub use profiler::{Profile, Profiler};
