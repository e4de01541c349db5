//! Traffic: the packet buffer with Click-style annotations, pcap/pcapng reading and writing,
//! seeded synthetic traces, and routing tables (loaded from a BGP dump or generated).
pub mod packet;

pub use packet::{packets_created, Annotations, Packet};
