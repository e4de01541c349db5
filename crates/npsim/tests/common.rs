// Shared helpers of the integration tests (hand-built architectures and traces).
#![allow(dead_code)]
use pktflow_arch::np::*;
use pktflow_model::{AccessKind, Fate, MemAccess, MemType, PacketTrace, Visit};
use std::collections::BTreeMap;

pub struct Hw {
    pub pes: u32,
    pub contexts: u32,
    pub pending: u32,
    pub queue: u32,
    pub cs: u32,
    pub handoff: u32,
}

impl Default for Hw {
    fn default() -> Self {
        Hw {
            pes: 1,
            contexts: 1,
            pending: 3,
            queue: 40,
            cs: 0,
            handoff: 0,
        }
    }
}

pub fn storage(unpip: u32, r: u32, w: u32, channels: u32, bus: &str, private: bool) -> Storage {
    Storage {
        unpipelined_cycles: unpip,
        pipelined_read_cycles: r,
        pipelined_write_cycles: w,
        channels,
        bus: bus.into(),
        private_per_pe: private,
        capacity_bytes: None,
    }
}

/// Storage `ext` behind bus `xbus` (shared), `half` behind `hbus` (per half, read/write),
/// private `regs` without a bus. Memory map: packet data -> ext, meta -> half, static -> regs,
/// dynamic -> `dynamic`, stack -> regs.
pub fn arch(h: &Hw, ext: Storage, xbus: Bus, dynamic: &str) -> NpArch {
    let mut storage = BTreeMap::new();
    storage.insert("ext".to_string(), ext);
    storage.insert(
        "half".to_string(),
        self::storage(2, 10, 10, 2, "hbus", false),
    );
    storage.insert("regs".to_string(), self::storage(1, 0, 0, 1, "none", true));
    let mut bus = BTreeMap::new();
    bus.insert("xbus".to_string(), xbus);
    bus.insert(
        "hbus".to_string(),
        Bus {
            unpipelined_cycles: 2,
            pipelined_cycles: 5,
            organization: BusOrganization::PerHalfReadWrite,
        },
    );
    NpArch {
        np: PeParams {
            pe_count: h.pes,
            pe_frequency_mhz: 1000,
            hardware_contexts_per_pe: h.contexts,
            cycles_per_instruction: 1,
            pending_loads_per_context: h.pending,
            context_switch_latency_cycles: h.cs,
            rollback_on_failed_speculation_cycles: 0,
            queue_size_requests: h.queue,
            interface_pes: 0,
            lock_handoff_cycles: h.handoff,
            memory_word_bytes: 4,
            handoff_storage: None,
            handoff_requests: 0,
        },
        storage,
        bus,
        memory_map: MemoryMap {
            packet_data: "ext".into(),
            packet_meta: "half".into(),
            static_state: "regs".into(),
            dynamic_state: dynamic.into(),
            stack: "regs".into(),
        },
        control_store: None,
        control_core: None,
    }
}

pub fn shared_bus(unpip: u32, pip: u32) -> Bus {
    Bus {
        unpipelined_cycles: unpip,
        pipelined_cycles: pip,
        organization: BusOrganization::Shared,
    }
}

pub fn acc(mem: MemType, kind: AccessKind, at: u32, object: u32, key: u64) -> MemAccess {
    MemAccess {
        mem,
        kind,
        bytes: 4,
        at_instr: at,
        object,
        key,
        lock: pktflow_model::LockMark::None,
    }
}

/// A packet visiting `visits` = (element, instructions, accesses) in order, then output.
pub fn trace(visits: &[(u32, u32, Vec<MemAccess>)], wire: u32) -> PacketTrace {
    let mut t = PacketTrace {
        wire_bytes: wire,
        ..Default::default()
    };
    for (e, n, a) in visits {
        let s = t.accesses.len() as u32;
        t.accesses.extend(a.iter().copied());
        t.visits.push(Visit {
            element: *e,
            port: 0,
            instructions: *n,
            access_start: s,
            access_end: t.accesses.len() as u32,
        });
    }
    let last = visits.last().map(|v| v.0).unwrap_or(0);
    t.fates.push(Fate::Output { element: last });
    t
}
