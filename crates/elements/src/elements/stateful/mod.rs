//! Stateful benchmark applications of the NetThreads thesis (Labrecque, PhD thesis, University
//! of Toronto, 2011, Table 3.1): Classifier, NAT with flow statistics, UDHCP, Intruder,
//! Intruder2 and echo, written as pktflow elements that really process packets.
//!
//! Conventions shared by these elements (docs/thesis-apps.md states them for users):
//! - **Frames.** Every element here takes Ethernet II frames (IPv4 at byte 14), as the
//!   thesis's programs read packets straight from the NetFPGA input buffer.
//! - **Locks are in the trace.** The thesis's programs take coarse `lock(ID)`/`unlock(ID)`
//!   sections. Each element records a lock acquire as a 4-byte read and a 4-byte write of a
//!   *lock object* (a test-and-set of the mutex word) and a release as a 4-byte write of it; the
//!   lock object is per data structure and its key is the lock's identity (0 for a global
//!   lock, the flow's slot for a per-flow lock). A critical section is therefore the span of
//!   the trace from the lock object's first access to its last, which is what pktflow's
//!   profiler and the simulators' lock placement compute, and a lock-per-flow design is
//!   visible (many keys) beside a global lock (key 0). The lock-word accesses carry a
//!   [`LockMark`] (acquire or release), so a transactional-memory model can turn the lock calls
//!   into transaction boundaries and keep the lock words out of conflict detection, as the
//!   thesis's NetTM programs do (chapter 8).
//! - **Addresses.** Persistent accesses carry their byte offset within the structure as the
//!   key (record index times record size plus the field's offset), so distinct (object, key)
//!   pairs are distinct memory words.
//! - **Costs.** Instruction counts are per operation estimates for compiled MIPS-I code
//!   (listed in each element's header); they are inputs, not fitted to the thesis's tables.
pub mod echo_back;
pub mod flow_table;
pub mod intruder;
pub mod regex;
pub mod regex_classifier;
pub mod stateful_nat;
pub mod udhcp;

use crate::cx::Cx;
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_model::LockMark;

pub static CLASSES: &[ClassInfo] = &[
    echo_back::CLASS,
    regex_classifier::CLASS,
    stateful_nat::CLASS,
    udhcp::CLASS,
    intruder::CLASS,
    intruder::CLASS2,
];

/// Instructions of a lock or unlock (a memory-mapped request to the synchronization unit plus
/// loading its identifier).
pub const LOCK_INSTR: u32 = 2;

/// Acquire lock `key` of lock object `obj`: a test-and-set of the mutex word (both accesses
/// marked [`LockMark::Acquire`]).
pub fn lock(cx: &mut Cx, obj: u8, key: u64) {
    cx.instr(LOCK_INSTR);
    cx.lock_word(Read, obj, key, 4, LockMark::Acquire);
    cx.lock_word(Write, obj, key, 4, LockMark::Acquire);
}

/// Release lock `key` of lock object `obj` (the store is marked [`LockMark::Release`]).
pub fn unlock(cx: &mut Cx, obj: u8, key: u64) {
    cx.instr(LOCK_INSTR);
    cx.lock_word(Write, obj, key, 4, LockMark::Release);
}

/// A parsed IPv4 header inside an Ethernet frame.
#[derive(Clone, Copy, Debug)]
pub struct Ip4 {
    /// Offset of the IP header in the frame (14).
    pub off: usize,
    /// IP header length in bytes.
    pub hl: usize,
    /// IP total length (bounded by the frame).
    pub total: usize,
    pub proto: u8,
    pub src: [u8; 4],
    pub dst: [u8; 4],
    /// More-fragments flag set or a non-zero fragment offset.
    pub fragment: bool,
}

impl Ip4 {
    /// Offset of the transport header in the frame.
    pub fn l4(&self) -> usize {
        self.off + self.hl
    }
    /// End of the IP datagram in the frame.
    pub fn end(&self) -> usize {
        self.off + self.total
    }
}

/// Parse an Ethernet II frame carrying IPv4 with a sane header; `None` otherwise.
pub fn parse_ipv4(d: &[u8]) -> Option<Ip4> {
    if d.len() < 34 || d[12] != 0x08 || d[13] != 0x00 {
        return None;
    }
    let off = 14;
    if d[off] >> 4 != 4 {
        return None;
    }
    let hl = ((d[off] & 0x0f) as usize) * 4;
    let total = u16::from_be_bytes([d[off + 2], d[off + 3]]) as usize;
    if hl < 20 || total < hl || off + total > d.len() {
        return None;
    }
    let frag = u16::from_be_bytes([d[off + 6], d[off + 7]]);
    Some(Ip4 {
        off,
        hl,
        total,
        proto: d[off + 9],
        src: [d[off + 12], d[off + 13], d[off + 14], d[off + 15]],
        dst: [d[off + 16], d[off + 17], d[off + 18], d[off + 19]],
        fragment: frag & 0x3fff != 0,
    })
}

/// Parse a positive integer configuration value with an upper bound (the error names the
/// keyword and the limit).
pub fn bounded(
    class: &str,
    key: &str,
    v: Option<String>,
    default: u64,
    max: u64,
) -> Result<u64, String> {
    let Some(v) = v else { return Ok(default) };
    let n = crate::conf::parse_uint(v.trim()).map_err(|e| format!("{class}: {key}: {e}"))?;
    if n == 0 || n > max {
        return Err(format!(
            "{class}: {key} must be between 1 and {max}, got {n}"
        ));
    }
    Ok(n)
}

#[cfg(test)]
pub(crate) mod testutil {
    //! Hand-built frames for the element tests.
    pub fn ipv4_frame(proto: u8, src: [u8; 4], dst: [u8; 4], l4: &[u8]) -> Vec<u8> {
        let mut v = vec![0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1, 0x08, 0x00];
        let total = 20 + l4.len();
        let mut ip = vec![
            0x45,
            0,
            (total >> 8) as u8,
            total as u8,
            0,
            1,
            0,
            0,
            64,
            proto,
            0,
            0,
        ];
        ip.extend_from_slice(&src);
        ip.extend_from_slice(&dst);
        let c = pktflow_traffic::ip_checksum(&ip);
        ip[10..12].copy_from_slice(&c.to_be_bytes());
        v.extend_from_slice(&ip);
        v.extend_from_slice(l4);
        v
    }
    pub fn tcp(sport: u16, dport: u16, seq: u32, payload: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        t.extend_from_slice(&sport.to_be_bytes());
        t.extend_from_slice(&dport.to_be_bytes());
        t.extend_from_slice(&seq.to_be_bytes());
        t.extend_from_slice(&[0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0]);
        t.extend_from_slice(payload);
        t
    }
}
