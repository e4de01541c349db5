//! Cost and trace vocabulary shared by the functional run and the timing models.
//!
//! Memory types follow seed 000 (`000_3853cd1582c2b67c.txt`, section 2.2 and Table 2): packet
//! data (header and payload, mapped to DRAM in NPIRE), packet meta-data (SRAM), persistent
//! static heap (state that exists after initialization, e.g. a routing table; local store),
//! persistent dynamic heap (state created while packets are processed, e.g. NAT flow records;
//! SRAM) and the execution context (stack/temporaries; registers).
//!
//! A functional run of one injected packet yields one [`PacketTrace`]: the element visits in
//! execution order, each with the instructions it executed and its memory accesses. Accesses to
//! persistent state carry the state object and the offset or key touched, so later stages can
//! derive critical sections (seed 000 section 2.4), dependences and transaction conflicts.
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum MemType {
    /// Packet buffer: header and payload bytes.
    PacketData = 0,
    /// Annotations attached to the packet by elements (paint, destination address, ...).
    PacketMeta = 1,
    /// Persistent heap that exists after initialization (tables, configuration).
    StaticState = 2,
    /// Persistent heap created or changed while packets are processed (flow tables, counters, queues).
    DynamicState = 3,
    /// Execution context private to one task instance: stack, registers, temporaries.
    Stack = 4,
}

impl MemType {
    pub const ALL: [MemType; 5] = [
        MemType::PacketData,
        MemType::PacketMeta,
        MemType::StaticState,
        MemType::DynamicState,
        MemType::Stack,
    ];
    pub fn name(self) -> &'static str {
        match self {
            MemType::PacketData => "packet_data",
            MemType::PacketMeta => "packet_meta",
            MemType::StaticState => "static_state",
            MemType::DynamicState => "dynamic_state",
            MemType::Stack => "stack",
        }
    }
    /// Persistent state is shared between task instances (and replicas): accesses to it become
    /// critical sections, dependences and transaction conflicts.
    pub fn is_persistent(self) -> bool {
        matches!(self, MemType::StaticState | MemType::DynamicState)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[repr(u8)]
pub enum AccessKind {
    Read = 0,
    Write = 1,
}

/// Whether an access is part of an application's software lock rather than its data.
///
/// Applications that take a lock by a test-and-set of a lock word in their own state (the
/// NetThreads thesis's benchmarks as pktflow writes them) mark those accesses, so the timing
/// models can tell the lock word from the data it protects: under locks the word is ordinary
/// memory traffic; under transactional memory the lock call is a transaction boundary and the
/// word enters neither conflict detection nor the undo log (the thesis's NetTM programs replace
/// the lock calls by transaction boundaries, chapter 8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[repr(u8)]
pub enum LockMark {
    /// An ordinary (data) access.
    #[default]
    None = 0,
    /// Taking a software lock: the read and the write of its lock word's test-and-set.
    Acquire = 1,
    /// Releasing a software lock: the write of its lock word.
    Release = 2,
}

impl LockMark {
    pub fn is_none(&self) -> bool {
        *self == LockMark::None
    }
}

/// One memory access of an element visit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct MemAccess {
    pub mem: MemType,
    pub kind: AccessKind,
    pub bytes: u32,
    /// Instructions the visit had executed before this access (places the access in time).
    pub at_instr: u32,
    /// Persistent state object (global id: element index << 8 | object number within the
    /// element); 0 for non-persistent memory.
    pub object: u32,
    /// Offset within the object, or the key (e.g. hashed flow id, table slot) touched.
    pub key: u64,
    /// A software lock's lock word ([`LockMark::Acquire`] / [`LockMark::Release`]) or data
    /// ([`LockMark::None`], left out of the JSON).
    #[serde(skip_serializing_if = "LockMark::is_none")]
    pub lock: LockMark,
}

/// One element visit: an element processing one packet (or one pull).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Visit {
    pub element: u32,
    /// Input port the packet arrived on (pull visits: the output port pulled).
    pub port: u16,
    pub instructions: u32,
    /// Range of this visit's accesses in [`PacketTrace::accesses`].
    pub access_start: u32,
    pub access_end: u32,
}

/// What finally happened to (a copy of) the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "fate", rename_all = "lowercase")]
pub enum Fate {
    /// Left the graph through a sink element (ToDump, ToDevice, Discard counts as a drop).
    Output { element: u32 },
    /// Dropped by an element, with the reason.
    Drop { element: u32, reason: &'static str },
    /// Still held by an element (e.g. a queue, or an ARP query waiting) at the end of the run.
    Held { element: u32 },
}

/// Everything the functional run did because of one injected packet.
#[derive(Clone, Debug, Default, Serialize)]
pub struct PacketTrace {
    /// Index of the packet in the input trace.
    pub packet: u64,
    /// Arrival time from the trace, nanoseconds.
    pub timestamp_ns: u64,
    /// Length of the packet on the wire, bytes.
    pub wire_bytes: u32,
    pub visits: Vec<Visit>,
    pub accesses: Vec<MemAccess>,
    pub fates: Vec<Fate>,
}

impl PacketTrace {
    pub fn clear(&mut self) {
        self.visits.clear();
        self.accesses.clear();
        self.fates.clear();
    }
    pub fn instructions(&self) -> u64 {
        self.visits.iter().map(|v| v.instructions as u64).sum()
    }
    pub fn accesses_of(&self, v: &Visit) -> &[MemAccess] {
        &self.accesses[v.access_start as usize..v.access_end as usize]
    }
}

/// Whether two sorted, deduplicated sets (of traced locations, words, ...) share an element: the
/// read/write-set test that conflict detection uses everywhere (the NP simulator's speculation,
/// the run-to-completion engine's conflict windows and its signature study). One linear merge,
/// no allocation.
pub fn sorted_sets_meet<T: Ord>(a: &[T], b: &[T]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}

#[cfg(test)]
mod set_tests {
    use super::sorted_sets_meet;

    #[test]
    fn sorted_sets_meet_only_on_a_common_element() {
        assert!(sorted_sets_meet(&[1, 4, 9], &[2, 4]));
        assert!(sorted_sets_meet(&[9], &[1, 5, 9]));
        assert!(!sorted_sets_meet(&[1, 3, 5], &[2, 4, 6]));
        assert!(!sorted_sets_meet::<u32>(&[], &[1]));
        assert!(!sorted_sets_meet::<u32>(&[1], &[]));
    }
}
