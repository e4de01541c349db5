//! Elements that let Click's own configurations run as written: configuration-only elements
//! (AddressInfo, ScheduleInfo, StaticThreadSched, RandomSeed), handler scripts (Script,
//! DriverManager), the host/kernel device elements, and the commonly used standard and IP
//! elements of Click's standard, ip, icmp, tcpudp and userlevel groups. Every element's doc
//! header states its Click semantics, ports and cost rule; `docs/elements.md` lists them.
pub mod address_info;
mod avg_counter;
mod devices;
mod ftp_port_mapper;
mod icmp_ping;
pub mod icmp_ping_rewriter;
mod icmp_rewriter;
pub mod info;
mod ip_print;
mod ipmod;
mod link_unqueue;
mod lookup;
mod meter;
mod passthrough;
mod pull;
mod red;
pub mod script;
pub mod shaper;
pub mod switches;
mod tcp_rewriter;
mod udpgen;

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
    passthrough::NULL,
    passthrough::SET_TIMESTAMP,
    passthrough::ALIGN,
    switches::SWITCH,
    switches::STATIC_SWITCH,
    switches::RANDOM_SWITCH,
    switches::ROUND_ROBIN_SWITCH,
    switches::HASH_SWITCH,
    switches::CHECK_PAINT,
    ipmod::MARK_IP_HEADER,
    ipmod::STRIP_IP_HEADER,
    ipmod::SET_IP_ADDRESS,
    ipmod::STORE_IP_ADDRESS,
    ipmod::SET_RAND_IP_ADDRESS,
    ipmod::IP_ENCAP,
    ipmod::UDP_IP_ENCAP,
    ipmod::IP_MIRROR,
    ipmod::HOST_ETHER_FILTER,
    ipmod::ICMP_PING_RESPONDER,
    avg_counter::CLASS,
    ip_print::CLASS,
    red::CLASS,
    shaper::CLASS,
    meter::CLASS,
    link_unqueue::CLASS,
    tcp_rewriter::CLASS,
    ftp_port_mapper::CLASS,
    icmp_rewriter::CLASS,
    icmp_ping_rewriter::CLASS,
    icmp_ping::CLASS,
    icmp_ping::ALIAS,
    lookup::LINEAR,
    lookup::DIRECT,
    udpgen::FAST_UDP_SOURCE,
    udpgen::FAST_UDP_FLOWS,
    pull::PULL_TEE,
    pull::UNQUEUE,
    pull::TIMED_SINK,
    pull::ROUND_ROBIN_SCHED,
    pull::PRIO_SCHED,
    ClassInfo {
        name: "SimpleQueue",
        summary: "FIFO packet storage (Queue without the multi-thread guarantees)",
        make: crate::elements::standard::QUEUE_CLASS.make,
    },
    ClassInfo {
        name: "ThreadSafeQueue",
        summary: "FIFO packet storage safe for several threads (as Queue here)",
        make: crate::elements::standard::QUEUE_CLASS.make,
    },
];
