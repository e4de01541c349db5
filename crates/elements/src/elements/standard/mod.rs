//! Basic elements: queues, sinks, counters, copies.
mod counter;
mod discard;
mod from_device;
mod idle;
mod queue;
mod tee;
mod to_device;

pub use queue::Queue;
pub use queue::CLASS as QUEUE_CLASS;

use crate::registry::ClassInfo;

pub static CLASSES: &[ClassInfo] = &[
    queue::CLASS,
    discard::CLASS,
    idle::CLASS,
    counter::CLASS,
    tee::CLASS,
    from_device::FROM_DEVICE,
    from_device::POLL_DEVICE,
    to_device::CLASS,
];
