//! The reusable conflict-detection layer of NetTM (chapter 8 and appendix A of the NetThreads
//! thesis): per-context read/write sets kept in a signature table with lazily cleared 2-bit
//! versions, pluggable hash functions, exact (perfect) sets, and the contention managers.
//!
//! Nothing here knows about the engine: a context is a number (0 to 31), an address a `u32`
//! byte address. A user calls [`ConflictTable::access`] on every transactional access (it reports
//! a conflict, in which case the requester is expected to abort, or records the access), and
//! [`ConflictTable::end`] when the context commits or aborts. [`ContentionManager`] decides how
//! many aborted transactions restart at each commit.
//!
//! Conflict rule (thesis): two transactions conflict when "their write sets intersect or a write
//! set intersects a read set": a load conflicts with another context's write bit, a store with
//! another context's read or write bit.
pub mod hash;
pub mod replay;
pub mod trie;

pub use hash::{Hasher, SignatureKind};
pub use trie::{Refinement, Trie};

use serde::{Deserialize, Serialize};
use std::collections::HashSet;

/// Most contexts a table tracks (the thesis's table row has bits for 8 contexts; appendix B
/// scales it to 32).
pub const MAX_CONTEXTS: u32 = 32;

/// Largest signature (bits) accepted.
pub const MAX_SIGNATURE_BITS: u32 = 1 << 20;

#[derive(Clone, Copy, Default, Debug)]
struct Row {
    r: u32,
    w: u32,
    /// 2-bit version of each context's bits in this row.
    ver: u64,
}

impl Row {
    #[inline]
    fn ver(&self, c: u32) -> u8 {
        ((self.ver >> (2 * c)) & 3) as u8
    }
    /// Bits whose version matches their context's current version (the others are stale:
    /// lazily cleared).
    #[inline]
    fn valid(&self, cur: &[u8]) -> u32 {
        let mut m = self.r | self.w;
        let mut v = 0u32;
        while m != 0 {
            let c = m.trailing_zeros();
            if self.ver(c) == cur[c as usize] {
                v |= 1 << c;
            }
            m &= m - 1;
        }
        v
    }
}

/// Per-context exact read and write sets of word addresses.
#[derive(Clone, Default, Debug)]
struct Exact {
    r: HashSet<u32>,
    w: HashSet<u32>,
}

/// The outcome of one transactional access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Check {
    /// No conflict: the access is recorded in the context's set.
    Ok,
    /// Conflict with the contexts in the mask; `false_positive` when the exact sets (kept
    /// alongside any hashed signature) show no real conflict. Nothing is recorded.
    Conflict { with: u32, false_positive: bool },
}

/// Signature table shared by all contexts (one per system, as in NetTM).
#[derive(Clone, Debug)]
pub struct ConflictTable {
    hasher: Hasher,
    rows: Vec<Row>,
    cur: Vec<u8>,
    /// Exact sets: the detector itself for `perfect`, the false-conflict reference otherwise.
    exact: Vec<Exact>,
    /// Contexts inside a transaction (their bits count).
    active: u32,
    pub accesses: u64,
    pub conflicts: u64,
    pub false_conflicts: u64,
}

impl ConflictTable {
    pub fn new(hasher: Hasher, contexts: u32) -> Result<ConflictTable, String> {
        if contexts == 0 || contexts > MAX_CONTEXTS {
            return Err(format!(
                "conflict detection tracks 1 to {MAX_CONTEXTS} thread contexts, got {contexts}"
            ));
        }
        let rows = if hasher.kind == SignatureKind::Perfect {
            0
        } else {
            hasher.bits()
        };
        if rows > MAX_SIGNATURE_BITS {
            return Err(format!(
                "signature of {rows} bits is larger than the {MAX_SIGNATURE_BITS} supported"
            ));
        }
        Ok(ConflictTable {
            hasher,
            rows: vec![Row::default(); rows as usize],
            cur: vec![0; contexts as usize],
            exact: vec![Exact::default(); contexts as usize],
            active: 0,
            accesses: 0,
            conflicts: 0,
            false_conflicts: 0,
        })
    }

    pub fn kind(&self) -> SignatureKind {
        self.hasher.kind
    }

    /// Signature bits (0 for perfect detection).
    pub fn bits(&self) -> u32 {
        self.rows.len() as u32
    }

    /// Context `c` starts a transaction.
    pub fn begin(&mut self, c: u32) {
        self.active |= 1 << c;
    }

    fn exact_conflicts(&self, c: u32, word: u32, write: bool) -> u32 {
        let mut m = self.active & !(1 << c);
        let mut out = 0;
        while m != 0 {
            let o = m.trailing_zeros();
            let e = &self.exact[o as usize];
            if e.w.contains(&word) || (write && e.r.contains(&word)) {
                out |= 1 << o;
            }
            m &= m - 1;
        }
        out
    }

    /// A transactional access by context `c` (which must have called [`Self::begin`]).
    pub fn access(&mut self, c: u32, addr: u32, write: bool) -> Check {
        self.accesses += 1;
        let word = addr >> 2;
        let real = self.exact_conflicts(c, word, write);
        let own = 1u32 << c;
        if self.hasher.kind != SignatureKind::Perfect {
            let mut hit = u32::MAX;
            for i in 0..self.hasher.k {
                let row = &mut self.rows[self.hasher.bit(i, addr) as usize];
                let all_valid = row.valid(&self.cur);
                // Lazy clear of every context's stale bits in the row read.
                let stale = (row.r | row.w) & !all_valid & !own;
                row.r &= !stale;
                row.w &= !stale;
                let valid = all_valid & self.active & !own;
                let bits = if write { row.r | row.w } else { row.w };
                hit &= bits & valid;
            }
            if hit != 0 {
                self.conflicts += 1;
                let fp = real == 0;
                self.false_conflicts += fp as u64;
                return Check::Conflict {
                    with: hit,
                    false_positive: fp,
                };
            }
            let v = self.cur[c as usize] as u64;
            for i in 0..self.hasher.k {
                let row = &mut self.rows[self.hasher.bit(i, addr) as usize];
                if row.ver(c) as u64 != v {
                    // Stale bits of an earlier transaction: clear them now.
                    row.r &= !own;
                    row.w &= !own;
                    row.ver = (row.ver & !(3 << (2 * c))) | (v << (2 * c));
                }
                if write {
                    row.w |= own;
                } else {
                    row.r |= own;
                }
            }
        } else if real != 0 {
            self.conflicts += 1;
            return Check::Conflict {
                with: real,
                false_positive: false,
            };
        }
        let e = &mut self.exact[c as usize];
        if write {
            e.w.insert(word);
        } else {
            e.r.insert(word);
        }
        Check::Ok
    }

    /// Any other memory reference to `addr`: the rows it hashes to are read, and bits whose
    /// version no longer matches their context's are cleared ("for every memory reference a row
    /// of the signature table is accessed, and we clear the corresponding signature bits for any
    /// transaction with mismatching version numbers").
    pub fn touch(&mut self, addr: u32) {
        if self.hasher.kind == SignatureKind::Perfect {
            return;
        }
        for i in 0..self.hasher.k {
            let row = &mut self.rows[self.hasher.bit(i, addr) as usize];
            let stale = (row.r | row.w) & !row.valid(&self.cur);
            row.r &= !stale;
            row.w &= !stale;
        }
    }

    /// Context `c` commits or aborts: its bits become stale (the version register advances,
    /// 2 bits wide, so a row not revisited for 4 transactions can show a stale bit as valid: a
    /// false conflict, never a missed one).
    pub fn end(&mut self, c: u32) {
        self.active &= !(1 << c);
        self.cur[c as usize] = (self.cur[c as usize] + 1) & 3;
        let e = &mut self.exact[c as usize];
        e.r.clear();
        e.w.clear();
    }

    /// Distinct words read and written by context `c`'s current transaction.
    pub fn set_sizes(&self, c: u32) -> (usize, usize) {
        let e = &self.exact[c as usize];
        (e.r.len(), e.w.len())
    }
}

/// Appendix B's conflict probability when `contexts` transactions each access one location
/// drawn uniformly from `range` (each location its own signature bit): one minus the chance
/// that all locations differ, `1 - range! / ((range - contexts)! * range^contexts)`.
pub fn appendix_b_conflict_probability(range: u32, contexts: u32) -> f64 {
    if contexts > range {
        return 1.0;
    }
    let mut all_differ = 1.0f64;
    for i in 0..contexts {
        all_differ *= (range - i) as f64 / range as f64;
    }
    1.0 - all_differ
}

/// Contention managers: how many aborted transactions restart at each commit (chapter 8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum ContentionManager {
    /// At most one aborted transaction restarts per commit.
    #[serde(rename = "cm1")]
    Cm1,
    /// At most two.
    #[serde(rename = "cm2")]
    Cm2,
    /// Up to two when they are the only aborted transactions, otherwise one.
    #[serde(rename = "cm1/2")]
    Cm12,
    /// All aborted transactions wait for a commit, then all restart (appendix B's default).
    #[default]
    #[serde(rename = "cm4")]
    Cm4,
}

impl ContentionManager {
    pub fn name(self) -> &'static str {
        match self {
            ContentionManager::Cm1 => "cm1",
            ContentionManager::Cm2 => "cm2",
            ContentionManager::Cm12 => "cm1/2",
            ContentionManager::Cm4 => "cm4",
        }
    }
    pub fn parse(s: &str) -> Result<ContentionManager, String> {
        Ok(match s {
            "cm1" => ContentionManager::Cm1,
            "cm2" => ContentionManager::Cm2,
            "cm1/2" => ContentionManager::Cm12,
            "cm4" => ContentionManager::Cm4,
            _ => {
                return Err(format!(
                    "unknown contention manager '{s}' (expected cm1, cm2, cm1/2 or cm4)"
                ))
            }
        })
    }
    /// Aborted transactions to restart at a commit when `waiting` are waiting.
    pub fn restarts(self, waiting: usize) -> usize {
        match self {
            ContentionManager::Cm1 => waiting.min(1),
            ContentionManager::Cm2 => waiting.min(2),
            ContentionManager::Cm12 => {
                if waiting <= 2 {
                    waiting
                } else {
                    1
                }
            }
            ContentionManager::Cm4 => waiting,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(kind: SignatureKind, bits: u32) -> ConflictTable {
        let h = Hasher::new(kind, bits, kind.default_hashes(), 1, None).unwrap();
        ConflictTable::new(h, 8).unwrap()
    }

    #[test]
    fn read_read_is_no_conflict_and_write_conflicts_with_reads_and_writes() {
        for kind in [
            SignatureKind::Perfect,
            SignatureKind::Bitsel,
            SignatureKind::H3,
        ] {
            let mut t = table(kind, 256);
            t.begin(0);
            t.begin(1);
            assert_eq!(t.access(0, 0x100, false), Check::Ok);
            assert_eq!(t.access(1, 0x100, false), Check::Ok, "{kind:?}");
            assert!(matches!(
                t.access(1, 0x100, true),
                Check::Conflict { with: 1, .. }
            ));
            // A load conflicts with another's write.
            assert_eq!(t.access(1, 0x200, true), Check::Ok);
            assert!(matches!(
                t.access(0, 0x200, false),
                Check::Conflict { with: 2, .. }
            ));
            // Own accesses never conflict.
            assert_eq!(t.access(1, 0x200, false), Check::Ok);
            // After context 1 ends, its bits no longer count (lazy clear by version).
            t.end(1);
            assert_eq!(t.access(0, 0x200, true), Check::Ok);
        }
    }

    #[test]
    fn aliasing_rows_give_false_conflicts_that_perfect_detection_avoids() {
        let mut t = table(SignatureKind::Bitsel, 16);
        t.begin(0);
        t.begin(1);
        assert_eq!(t.access(0, 4 * 3, true), Check::Ok);
        // Word 19 maps to row 3 too.
        assert_eq!(
            t.access(1, 4 * 19, false),
            Check::Conflict {
                with: 1,
                false_positive: true
            }
        );
        assert_eq!(t.false_conflicts, 1);
        let mut p = table(SignatureKind::Perfect, 16);
        p.begin(0);
        p.begin(1);
        p.access(0, 4 * 3, true);
        assert_eq!(p.access(1, 4 * 19, false), Check::Ok);
    }

    #[test]
    fn inactive_contexts_and_stale_versions_do_not_conflict_until_the_version_wraps() {
        let mut t = table(SignatureKind::Bitsel, 16);
        t.begin(0);
        t.access(0, 0, true);
        t.end(0); // version 0 -> 1
        t.begin(1);
        assert_eq!(t.access(1, 4 * 7, true), Check::Ok);
        t.end(1);
        // Nothing reads row 0 meanwhile. Context 0 runs 3 more transactions elsewhere: its version wraps back to 0 and the
        // stale bit of row 0 looks valid again (a false conflict, as in hardware).
        for _ in 0..3 {
            t.begin(0);
            t.access(0, 4 * 5, false);
            t.end(0);
        }
        t.begin(0);
        t.begin(1);
        assert!(matches!(
            t.access(1, 0, false),
            Check::Conflict {
                false_positive: true,
                ..
            }
        ));
    }

    #[test]
    fn any_memory_reference_clears_stale_bits_so_a_wrap_finds_nothing() {
        let mut t = table(SignatureKind::Bitsel, 16);
        t.begin(0);
        t.access(0, 0, true);
        t.end(0);
        t.touch(0); // a non-transactional reference to row 0 clears context 0's stale bit
        for _ in 0..3 {
            t.begin(0);
            t.access(0, 4 * 5, false);
            t.end(0);
        }
        t.begin(0);
        t.begin(1);
        assert_eq!(t.access(1, 0, false), Check::Ok);
    }

    #[test]
    fn contention_managers_restart_as_the_thesis_says() {
        use ContentionManager::*;
        assert_eq!(Cm1.restarts(5), 1);
        assert_eq!(Cm2.restarts(5), 2);
        assert_eq!(Cm2.restarts(1), 1);
        assert_eq!(Cm12.restarts(2), 2);
        assert_eq!(Cm12.restarts(3), 1);
        assert_eq!(Cm4.restarts(7), 7);
        assert_eq!(Cm1.restarts(0), 0);
        assert_eq!(ContentionManager::parse("cm1/2").unwrap(), Cm12);
        assert!(ContentionManager::parse("cm3").is_err());
    }

    #[test]
    fn appendix_b_probability_matches_the_thesis_and_the_table() {
        let p = appendix_b_conflict_probability;
        assert!((p(1024, 32) - 0.39).abs() < 0.01);
        assert!((p(8, 32) - 1.0).abs() < 1e-12);
        assert!((p(8, 8) - (1.0 - 40320.0 / 16_777_216.0)).abs() < 1e-9);
        // 2 cores (8 contexts) at range 1024: 0.027 by the formula.
        assert!((p(1024, 8) - 0.027).abs() < 0.001);
        // The table sees exactly these conflicts: 32 contexts each write one of 1024 words
        // (one bit each); count trials where some write meets an earlier one.
        // A fresh table per trial: reusing one would add the false conflicts of 2-bit version
        // wrap-around (rows touched once every few transactions), a separate effect.
        let h = Hasher::new(SignatureKind::Bitsel, 1024, 1, 0, None).unwrap();
        let mut s = 99u64;
        let trials = 4000;
        let mut hit = 0;
        for _ in 0..trials {
            let mut t = ConflictTable::new(h.clone(), 32).unwrap();
            let mut any = false;
            for c in 0..32 {
                t.begin(c);
                let loc = (splitmix(&mut s) % 1024) as u32;
                any |= t.access(c, 0x1000_0000 + 4 * loc, true) != Check::Ok;
            }
            hit += any as u32;
        }
        let f = hit as f64 / trials as f64;
        assert!((f - p(1024, 32)).abs() < 0.035, "{f}");
    }

    fn splitmix(x: &mut u64) -> u64 {
        *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = *x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    #[test]
    fn context_limits_are_enforced() {
        let h = Hasher::new(SignatureKind::Bitsel, 64, 1, 0, None).unwrap();
        assert!(ConflictTable::new(h.clone(), 0).is_err());
        assert!(ConflictTable::new(h.clone(), 33).is_err());
        assert!(ConflictTable::new(h, 32).is_ok());
    }
}
