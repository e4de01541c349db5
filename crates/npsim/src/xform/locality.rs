//! Locality transformation (NPIRE paper section 2.8): "automatically target wide memory
//! operations when accessing a large data structure or when accessing several consecutive
//! memory words".
//!
//! Model. Without it, a traced access of `b` bytes costs `ceil(b / word)` requests
//! (`np.memory_word_bytes`, one word each). With it, per visit and per data structure (the
//! packet buffer, the packet's meta-data, each persistent-state object), the accesses of one
//! kind that touch consecutive or overlapping bytes within a window of `wide_bytes` form a
//! *run* served by `ceil(run bytes / wide_bytes)` wide requests: a read run's requests are
//! issued at its first access (the data are then in the context's transfer registers: a
//! software-managed cache), a write run's at its last access (write combining). A run ends at
//! an access of the other kind to the same structure (a read after buffered writes, or a write
//! after a fetched block, would see stale data otherwise), at a byte outside its window, and at
//! a critical-section boundary (a wide read must not move shared data out of its section).
//! Only structures whose storage is reached through a bus take part (external DRAM/SRAM and
//! the shared on-chip memories: "the packet data is mapped to a memory with a large latency but
//! high throughput"); registers and local storage keep one request per word.
//!
//! A wide request occupies a bus and a channel as long as a one-word request (the architecture
//! gives one unpipelined time per request); what changes is the number of requests and when
//! they are issued (all of a run's at once: the burstiness the paper observes).
use pktflow_model::{AccessKind, MemAccess, MemType};
use serde::Serialize;
use std::collections::BTreeMap;

/// Requests before and after the transformation, per memory type.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LocalityStats {
    /// Bytes of one wide request.
    pub wide_bytes: u32,
    /// By memory type (`packet_data`, `packet_meta`, `static_state`, `dynamic_state`,
    /// `stack`): requests one per word, requests with wide operations.
    pub by_memory_type: BTreeMap<String, RequestSavings>,
    pub word_requests: u64,
    pub wide_requests: u64,
    /// 1 - wide / word requests.
    pub saved_fraction: f64,
}

#[derive(Clone, Copy, Debug, Default, Serialize, PartialEq)]
pub struct RequestSavings {
    pub word_requests: u64,
    pub wide_requests: u64,
}

/// Per-visit planner kept by the compiler.
#[derive(Clone, Debug)]
pub struct Locality {
    pub wide_bytes: u32,
    /// Memory types (by `MemType as usize`) whose storage is behind a bus.
    pub eligible: [bool; 5],
    /// Requests to emit at each access of the last planned visit (0: served by a run's
    /// request issued at another access).
    pub reqs: Vec<u32>,
    /// For each access, the byte offset its first request starts at (the run's start).
    pub start: Vec<u64>,
    counts: [RequestSavings; 5],
    runs: Vec<Run>,
}

#[derive(Clone, Copy, Debug)]
struct Run {
    mem: MemType,
    object: u32,
    write: bool,
    section: u32,
    lo: u64,
    hi: u64,
    /// Access index where the requests go (first for reads, last for writes).
    at: usize,
    open: bool,
}

fn words(bytes: u32, word: u32) -> u32 {
    if word == 0 {
        1
    } else {
        bytes.div_ceil(word).max(1)
    }
}

impl Locality {
    pub fn new(wide_bytes: u32, eligible: [bool; 5]) -> Locality {
        Locality {
            wide_bytes: wide_bytes.max(1),
            eligible,
            reqs: Vec::new(),
            start: Vec::new(),
            counts: Default::default(),
            runs: Vec::new(),
        }
    }

    /// Plan the requests of one visit's accesses. `sections` are the visit's merged critical
    /// sections (inclusive access ranges, in order); `word` the bytes of a one-word request
    /// (0: one request per traced access, i.e. wide accesses everywhere already).
    pub fn plan_visit(&mut self, acc: &[MemAccess], sections: &[(u32, u32)], word: u32) {
        self.reqs.clear();
        self.start.clear();
        self.runs.clear();
        let wide = self.wide_bytes as u64;
        let mut k = 0usize;
        for (i, a) in acc.iter().enumerate() {
            let base = words(a.bytes, word);
            self.counts[a.mem as usize].word_requests += base as u64;
            self.reqs.push(0);
            self.start.push(a.key);
            // Section number of this access (0 = outside any), so runs never cross a boundary.
            while k < sections.len() && sections[k].1 < i as u32 {
                k += 1;
            }
            let section = if k < sections.len() && sections[k].0 <= i as u32 {
                k as u32 + 1
            } else {
                0
            };
            if !self.eligible[a.mem as usize] || word == 0 {
                self.reqs[i] = base;
                continue;
            }
            let write = a.kind == AccessKind::Write;
            let object = if a.mem.is_persistent() { a.object } else { 0 };
            let (lo, hi) = (a.key, a.key.saturating_add(a.bytes.max(1) as u64));
            // The structure's open runs: one of the other kind closes; one of this kind absorbs
            // the access when its bytes are consecutive and within the window.
            let mut joined = None;
            for (ri, r) in self.runs.iter_mut().enumerate() {
                if !r.open || r.mem != a.mem || r.object != object {
                    continue;
                }
                if r.write != write || r.section != section {
                    r.open = false;
                    continue;
                }
                let nlo = r.lo.min(lo);
                let nhi = r.hi.max(hi);
                let touches = lo <= r.hi && hi >= r.lo;
                if touches && nhi - nlo <= wide {
                    r.lo = nlo;
                    r.hi = nhi;
                    if write {
                        r.at = i;
                    }
                    joined = Some(ri);
                } else {
                    r.open = false;
                }
            }
            if joined.is_none() {
                self.runs.push(Run {
                    mem: a.mem,
                    object,
                    write,
                    section,
                    lo,
                    hi,
                    at: i,
                    open: true,
                });
            }
        }
        for r in &self.runs {
            let n = (r.hi - r.lo).div_ceil(wide).max(1) as u32;
            self.reqs[r.at] += n;
            self.start[r.at] = r.lo;
        }
        for (i, a) in acc.iter().enumerate() {
            self.counts[a.mem as usize].wide_requests += self.reqs[i] as u64;
        }
    }

    pub fn stats(&self) -> LocalityStats {
        let names = [
            MemType::PacketData,
            MemType::PacketMeta,
            MemType::StaticState,
            MemType::DynamicState,
            MemType::Stack,
        ];
        let mut s = LocalityStats {
            wide_bytes: self.wide_bytes,
            ..Default::default()
        };
        for m in names {
            let c = self.counts[m as usize];
            if c.word_requests > 0 {
                s.by_memory_type.insert(m.name().to_string(), c);
            }
            s.word_requests += c.word_requests;
            s.wide_requests += c.wide_requests;
        }
        s.saved_fraction = if s.word_requests > 0 {
            1.0 - s.wide_requests as f64 / s.word_requests as f64
        } else {
            0.0
        };
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AccessKind::*;
    use MemType::*;

    fn a(mem: MemType, kind: AccessKind, key: u64, bytes: u32) -> MemAccess {
        MemAccess {
            mem,
            kind,
            bytes,
            at_instr: 0,
            object: if mem.is_persistent() { 7 } else { 0 },
            key,
            lock: pktflow_model::LockMark::None,
        }
    }

    #[test]
    fn consecutive_words_share_one_wide_request_and_a_write_breaks_the_run() {
        let mut l = Locality::new(64, [true; 5]);
        // Five 4-byte reads of the header at 0,4,...,16: 5 word requests, 1 wide request at
        // the first; then a 20-byte read far away: 5 words, 1 wide; a write to the packet at
        // 8 closes the read run (a later read of 12 needs a new request).
        let acc = [
            a(PacketData, Read, 0, 4),
            a(PacketData, Read, 4, 4),
            a(PacketData, Read, 8, 4),
            a(PacketData, Read, 12, 4),
            a(PacketData, Read, 16, 4),
            a(PacketData, Read, 1000, 20),
            a(PacketData, Write, 8, 4),
            a(PacketData, Read, 12, 4),
        ];
        l.plan_visit(&acc, &[], 4);
        assert_eq!(l.reqs, vec![1, 0, 0, 0, 0, 1, 1, 1]);
        let s = l.stats();
        assert_eq!(s.word_requests, 5 + 5 + 1 + 1);
        assert_eq!(s.wide_requests, 4);
        assert_eq!(s.by_memory_type["packet_data"].wide_requests, 4);
    }

    #[test]
    fn a_large_structure_takes_ceil_bytes_over_wide_and_writes_go_at_the_last_access() {
        let mut l = Locality::new(32, [true; 5]);
        // 100-byte read: 25 words, ceil(100/32) = 4 wide requests.
        l.plan_visit(&[a(DynamicState, Read, 0, 100)], &[], 4);
        assert_eq!(l.reqs, vec![4]);
        // Three consecutive 4-byte writes: one request, at the last write.
        l.plan_visit(
            &[
                a(PacketMeta, Write, 0, 4),
                a(PacketMeta, Write, 4, 4),
                a(PacketMeta, Write, 8, 4),
            ],
            &[],
            4,
        );
        assert_eq!(l.reqs, vec![0, 0, 1]);
    }

    #[test]
    fn runs_stop_at_sections_windows_and_ineligible_storage() {
        let mut l = Locality::new(16, [true, true, true, true, false]);
        let acc = [
            a(DynamicState, Read, 0, 4),
            a(DynamicState, Read, 4, 4), // in section 1: a new run
            a(DynamicState, Read, 8, 4), // same section: joins
            a(PacketMeta, Read, 0, 4),
            a(PacketMeta, Read, 16, 4), // outside the 16-byte window of the run at 0: new
            a(Stack, Read, 0, 4),
            a(Stack, Read, 4, 4), // registers: one request per word
        ];
        l.plan_visit(&acc, &[(1, 2)], 4);
        assert_eq!(l.reqs, vec![1, 1, 0, 1, 1, 1, 1]);
        // Words of 0 bytes (wide accesses already): nothing changes.
        l.plan_visit(&acc, &[], 0);
        assert_eq!(l.reqs, vec![1; 7]);
    }
}
