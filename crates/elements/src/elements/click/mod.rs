//! Elements that let Click's own configurations run as written: configuration-only elements
//! (AddressInfo, ScheduleInfo, StaticThreadSched, RandomSeed), handler scripts (Script,
//! DriverManager), the host/kernel device elements, and the commonly used standard and IP
//! elements of Click's standard, ip, icmp, tcpudp and userlevel groups. Every element's doc
//! header states its Click semantics, ports and cost rule; `docs/elements.md` lists them.
pub mod address_info;
mod devices;
pub mod info;
pub mod script;

use crate::registry::ClassInfo;

pub static CLASSES: &[ClassInfo] = &[
    address_info::CLASS,
    script::SCRIPT,
    script::DRIVER_MANAGER,
    info::SCHEDULE_INFO,
    info::STATIC_THREAD_SCHED,
    info::RANDOM_SEED,
    devices::TO_HOST,
    devices::TO_HOST_SNIFFERS,
    devices::FROM_HOST,
    devices::KERNEL_TUN,
    devices::KERNEL_TAP,
];
