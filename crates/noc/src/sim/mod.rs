//! Cycle-level mesh simulator: VC routers with circuits, synthetic traffic, stream driver,
//! circuit set-up with control flits.
pub mod network;
pub mod packet_routing;
pub mod setup;
pub mod stream;
pub mod synthetic;
pub mod traffic;

pub use network::{Delivery, NetOptions, Network, PacketRouting};
