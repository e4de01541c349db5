//! I/O and packet sources: FromDump / ToDump (pcap files), InfiniteSource, RatedSource.
pub mod data;
mod from_dump;
mod sources;
mod to_dump;

use crate::registry::ClassInfo;

pub static CLASSES: &[ClassInfo] = &[
    from_dump::CLASS,
    to_dump::CLASS,
    sources::INFINITE,
    sources::RATED,
    sources::TIMED,
];
