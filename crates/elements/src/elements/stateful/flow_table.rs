//! The global synchronized flow hash table of the thesis's Classifier and NAT (Table 3.1:
//! "exploits parallelism across flows stored in a global synchronized hash-table"; chapter 3:
//! "a thread cannot release the lock on the hash table prior to acquiring a lock on a flow
//! descriptor to ensure that the flow is not removed in the mean time").
//!
//! Structure: `buckets` chain heads (4 bytes each) and a pool of fixed-size flow records with
//! a free list. A lookup hashes the key, walks the bucket's chain comparing keys, unlinks
//! records idle longer than the timeout on the way (the expiry the thesis says every stateful
//! program needs), and inserts a new record when the key is absent. Everything is recorded as
//! accesses of the calling element's state objects:
//!
//! | object | what | key |
//! |---|---|---|
//! | [`OBJ_TABLE_LOCK`] | the table's global lock | 0 |
//! | [`OBJ_BUCKETS`] | chain heads | bucket × 4 |
//! | [`OBJ_RECORDS`] | flow records | slot × record size + field offset |
//! | [`OBJ_FLOW_LOCKS`] | per-flow locks | slot |
//! | [`OBJ_FREE`] | free-list heads | list × 4 |
//!
//! Free records are kept on `lists` free lists ([`FlowTable::with_free_lists`]; default 1, the
//! one global list). With more, it is the per-thread allocator "free of conflicts" the thesis
//! put in place of malloc/free for NetTM (section 8.3, "Improving Performance via Feedback"):
//! the lookups take turns over the lists (lookup n uses list n mod lists, the thread contexts
//! taking consecutive packets), a freed record joins the list of the lookup that frees it, and
//! an empty list takes a record from the next list that has one (reading the heads it passes).
//!
//! Record fields used here: key at offset 0 (16 bytes), next at 16 (4), last-seen time at 24
//! (8). The element owns the bytes from [`REC_USER`] on.
//! Costs: hashing 20 instructions, 8 per chain record visited, 12 to unlink, 24 to insert.
use super::{lock, unlock};
use crate::cx::Cx;
use pktflow_model::AccessKind::{Read, Write};

pub const OBJ_TABLE_LOCK: u8 = 0;
pub const OBJ_BUCKETS: u8 = 1;
pub const OBJ_RECORDS: u8 = 2;
pub const OBJ_FLOW_LOCKS: u8 = 3;
pub const OBJ_FREE: u8 = 4;
/// First record byte the element may use for its own fields.
pub const REC_USER: u64 = 32;

const NONE: u32 = u32::MAX;

/// A flow key: protocol, addresses and ports (or any 13 bytes the element chooses).
pub type FlowKey = [u8; 13];

struct Rec<R> {
    key: FlowKey,
    next: u32,
    last_ns: u64,
    used: bool,
    data: R,
}

pub struct FlowTable<R> {
    heads: Vec<u32>,
    recs: Vec<Rec<R>>,
    /// Free records, per free list.
    free: Vec<Vec<u32>>,
    /// Lookups so far: lookup n allocates from and frees to list n mod `free.len()`.
    turn: u64,
    rec_bytes: u64,
    pub timeout_ns: u64,
    pub expired: u64,
}

/// What a lookup found.
pub struct Found {
    pub slot: u32,
    pub new: bool,
}

impl<R: Default> FlowTable<R> {
    pub fn new(buckets: usize, capacity: usize, rec_bytes: u64, timeout_ns: u64) -> Self {
        FlowTable {
            heads: vec![NONE; buckets],
            recs: (0..capacity)
                .map(|_| Rec {
                    key: [0; 13],
                    next: NONE,
                    last_ns: 0,
                    used: false,
                    data: R::default(),
                })
                .collect(),
            free: vec![(0..capacity as u32).rev().collect()],
            turn: 0,
            rec_bytes,
            timeout_ns,
            expired: 0,
        }
    }

    /// Spread the free records over `lists` free lists (record s on list s mod lists): a
    /// per-thread allocator with one list per thread context. Call before the first lookup.
    pub fn with_free_lists(mut self, lists: usize) -> Self {
        let lists = lists.max(1);
        let mut free = vec![Vec::new(); lists];
        for s in (0..self.recs.len() as u32).rev() {
            free[s as usize % lists].push(s);
        }
        self.free = free;
        self
    }

    pub fn data(&mut self, slot: u32) -> &mut R {
        &mut self.recs[slot as usize].data
    }

    pub fn live(&self) -> usize {
        self.recs.len() - self.free.iter().map(Vec::len).sum::<usize>()
    }

    /// Byte address of field `off` of record `slot` (the key of its accesses).
    pub fn addr(&self, slot: u32, off: u64) -> u64 {
        slot as u64 * self.rec_bytes + off
    }

    fn hash(key: &FlowKey) -> u32 {
        // FNV-1a over the key bytes.
        let mut h: u32 = 0x811c9dc5;
        for &b in key {
            h = (h ^ b as u32).wrapping_mul(0x01000193);
        }
        h
    }

    /// Take the table lock, find or insert `key`, take the flow's lock, release the table
    /// lock. Returns `None` (with the table lock released, no flow lock held) when the key is
    /// absent and `insert` is false or the pool is full. `now` refreshes the record's time.
    pub fn acquire(&mut self, cx: &mut Cx, key: &FlowKey, insert: bool, now: u64) -> Option<Found> {
        lock(cx, OBJ_TABLE_LOCK, 0);
        cx.instr(20);
        let list = (self.turn % self.free.len() as u64) as usize;
        self.turn += 1;
        let b = (Self::hash(key) as usize) % self.heads.len();
        let bkey = b as u64 * 4;
        cx.dynamic_state(Read, OBJ_BUCKETS, bkey, 4);
        let mut prev: Option<u32> = None;
        let mut cur = self.heads[b];
        let mut found = None;
        while cur != NONE {
            cx.instr(8);
            let r = &self.recs[cur as usize];
            let next = r.next;
            cx.dynamic_state(Read, OBJ_RECORDS, self.addr(cur, 0), 16);
            if r.key == *key {
                found = Some(cur);
                break;
            }
            cx.dynamic_state(Read, OBJ_RECORDS, self.addr(cur, 24), 8);
            cx.dynamic_state(Read, OBJ_RECORDS, self.addr(cur, 16), 4);
            if now.saturating_sub(r.last_ns) > self.timeout_ns {
                // Unlink an idle record and return it to the pool.
                cx.instr(12);
                match prev {
                    None => {
                        self.heads[b] = next;
                        cx.dynamic_state(Write, OBJ_BUCKETS, bkey, 4);
                    }
                    Some(p) => {
                        self.recs[p as usize].next = next;
                        cx.dynamic_state(Write, OBJ_RECORDS, self.addr(p, 16), 4);
                    }
                }
                let r = &mut self.recs[cur as usize];
                r.used = false;
                r.data = R::default();
                self.free[list].push(cur);
                cx.dynamic_state(Read, OBJ_FREE, list as u64 * 4, 4);
                cx.dynamic_state(Write, OBJ_FREE, list as u64 * 4, 4);
                cx.dynamic_state(Write, OBJ_RECORDS, self.addr(cur, 16), 4);
                self.expired += 1;
            } else {
                prev = Some(cur);
            }
            cur = next;
        }
        let slot = match found {
            Some(s) => Found {
                slot: s,
                new: false,
            },
            None => {
                // This lookup's list, then the next ones, to the first that has a record.
                let n = self.free.len();
                let mut from = None;
                for k in 0..n {
                    let j = (list + k) % n;
                    cx.dynamic_state(Read, OBJ_FREE, j as u64 * 4, 4);
                    if !self.free[j].is_empty() {
                        from = Some(j);
                        break;
                    }
                    if !insert {
                        break;
                    }
                }
                let (Some(j), true) = (from, insert) else {
                    unlock(cx, OBJ_TABLE_LOCK, 0);
                    return None;
                };
                let slot = self.free[j].pop().expect("a list with a record");
                cx.instr(24);
                cx.dynamic_state(Read, OBJ_RECORDS, self.addr(slot, 16), 4);
                cx.dynamic_state(Write, OBJ_FREE, j as u64 * 4, 4);
                let r = &mut self.recs[slot as usize];
                r.key = *key;
                r.next = self.heads[b];
                r.used = true;
                r.data = R::default();
                self.heads[b] = slot;
                cx.dynamic_state(Write, OBJ_RECORDS, self.addr(slot, 0), 16);
                cx.dynamic_state(Write, OBJ_RECORDS, self.addr(slot, 16), 4);
                cx.dynamic_state(Write, OBJ_BUCKETS, bkey, 4);
                Found { slot, new: true }
            }
        };
        lock(cx, OBJ_FLOW_LOCKS, slot.slot as u64);
        unlock(cx, OBJ_TABLE_LOCK, 0);
        // Refresh the record's time under the flow lock.
        self.recs[slot.slot as usize].last_ns = now;
        cx.dynamic_state(Write, OBJ_RECORDS, self.addr(slot.slot, 24), 8);
        Some(slot)
    }

    /// Take the table lock, read record `slot` directly (an index known from the packet, e.g.
    /// a NAT's public port), and when it is in use and `accept` says its key fits, take its
    /// flow lock; release the table lock. `None`: no such flow (no lock held).
    pub fn acquire_slot(
        &mut self,
        cx: &mut Cx,
        slot: u32,
        now: u64,
        accept: impl Fn(&FlowKey) -> bool,
    ) -> Option<u32> {
        lock(cx, OBJ_TABLE_LOCK, 0);
        cx.instr(10);
        let ok = match self.recs.get(slot as usize) {
            Some(r) => {
                cx.dynamic_state(Read, OBJ_RECORDS, self.addr(slot, 0), 16);
                cx.dynamic_state(Read, OBJ_RECORDS, self.addr(slot, 24), 8);
                r.used && now.saturating_sub(r.last_ns) <= self.timeout_ns && accept(&r.key)
            }
            None => false,
        };
        if !ok {
            unlock(cx, OBJ_TABLE_LOCK, 0);
            return None;
        }
        lock(cx, OBJ_FLOW_LOCKS, slot as u64);
        unlock(cx, OBJ_TABLE_LOCK, 0);
        self.recs[slot as usize].last_ns = now;
        cx.dynamic_state(Write, OBJ_RECORDS, self.addr(slot, 24), 8);
        Some(slot)
    }

    /// The key of record `slot`.
    pub fn key(&self, slot: u32) -> FlowKey {
        self.recs[slot as usize].key
    }

    /// Release the flow lock taken by [`FlowTable::acquire`].
    pub fn release(&mut self, cx: &mut Cx, slot: u32) {
        unlock(cx, OBJ_FLOW_LOCKS, slot as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Keys of the free-list heads a lookup touched.
    fn heads_touched(cx: &Cx) -> Vec<u64> {
        cx.trace()
            .accesses
            .iter()
            .filter(|a| a.object == OBJ_FREE as u32)
            .map(|a| a.key)
            .collect()
    }

    #[test]
    fn per_thread_free_lists_give_consecutive_lookups_heads_of_their_own() {
        // One list: every insert reads and writes head 0.
        let mut t: FlowTable<u32> = FlowTable::new(64, 16, 64, 1000);
        for k in 0..4u8 {
            let mut cx = Cx::new();
            let f = t.acquire(&mut cx, &[k; 13], true, 0).unwrap();
            t.release(&mut cx, f.slot);
            assert_eq!(heads_touched(&cx), vec![0, 0]);
        }
        // Four lists: lookup n uses head n mod 4, so four inserts in flight touch four words.
        let mut t: FlowTable<u32> = FlowTable::new(64, 16, 64, 1000).with_free_lists(4);
        for k in 0..8u8 {
            let mut cx = Cx::new();
            let f = t.acquire(&mut cx, &[k; 13], true, 0).unwrap();
            t.release(&mut cx, f.slot);
            let h = (k as u64 % 4) * 4;
            assert_eq!(heads_touched(&cx), vec![h, h]);
            assert_eq!(
                f.slot as u64 % 4,
                k as u64 % 4,
                "list k holds records k mod 4"
            );
        }
        assert_eq!(t.live(), 8);
        // A list run dry takes from the next one, reading the heads it passes.
        let mut t: FlowTable<u32> = FlowTable::new(64, 2, 64, 1000).with_free_lists(2);
        let mut slots = Vec::new();
        for k in 0..2u8 {
            let mut cx = Cx::new();
            slots.push(t.acquire(&mut cx, &[k; 13], true, 0).unwrap().slot);
            t.release(&mut cx, slots[k as usize]);
        }
        let mut cx = Cx::new();
        assert!(
            t.acquire(&mut cx, &[9; 13], true, 0).is_none(),
            "both lists empty"
        );
        assert_eq!(heads_touched(&cx), vec![0, 4]);
    }

    #[test]
    fn insert_find_expire_and_lock_order() {
        let mut t: FlowTable<u32> = FlowTable::new(4, 2, 64, 1000);
        let mut cx = Cx::new();
        let a = t.acquire(&mut cx, &[1; 13], true, 0).unwrap();
        assert!(a.new);
        t.release(&mut cx, a.slot);
        let again = t.acquire(&mut cx, &[1; 13], true, 10).unwrap();
        assert!(!again.new && again.slot == a.slot);
        t.release(&mut cx, a.slot);
        let b = t.acquire(&mut cx, &[2; 13], true, 20).unwrap();
        t.release(&mut cx, b.slot);
        // Pool full: a third key is refused.
        assert!(t.acquire(&mut cx, &[3; 13], true, 30).is_none());
        // Not inserting: absent key is None.
        assert!(t.acquire(&mut cx, &[4; 13], false, 30).is_none());
        // Much later, both records are idle; a lookup in their bucket frees them.
        let mut freed = 0;
        for k in 5..40u8 {
            if let Some(f) = t.acquire(&mut cx, &[k; 13], true, 1_000_000) {
                t.release(&mut cx, f.slot);
            }
            freed = t.expired;
            if freed == 2 {
                break;
            }
        }
        assert_eq!(freed, 2);
        // The flow lock is taken before the table lock is released.
        let acc = &cx.trace().accesses;
        let first_flow_lock = acc
            .iter()
            .position(|a| a.object == OBJ_FLOW_LOCKS as u32)
            .unwrap();
        let table_unlock = acc
            .iter()
            .enumerate()
            .filter(|(_, a)| a.object == OBJ_TABLE_LOCK as u32)
            .map(|(i, _)| i)
            .nth(2)
            .unwrap();
        assert!(first_flow_lock < table_unlock);
        // Exactly the lock words are marked: acquires (a read and a write) and releases.
        use pktflow_model::LockMark;
        for a in acc {
            let lock_obj = a.object == OBJ_TABLE_LOCK as u32 || a.object == OBJ_FLOW_LOCKS as u32;
            assert_eq!(lock_obj, !a.lock.is_none(), "{a:?}");
            if a.lock == LockMark::Release {
                assert_eq!(a.kind, Write);
            }
        }
        let acquires = acc.iter().filter(|a| a.lock == LockMark::Acquire).count();
        let releases = acc.iter().filter(|a| a.lock == LockMark::Release).count();
        assert_eq!(acquires, 2 * releases, "every lock taken is released");
    }
}
