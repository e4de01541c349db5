//! The per-flow mapping table of the rewriters: a chained hash table whose every access is
//! recorded as a persistent dynamic-state access, so that the timing models see exactly which
//! buckets and flow records each packet reads and writes (they become locks and transaction
//! conflicts).
//!
//! Layout (state objects of the owning element, see [`crate::cx::Cx::dynamic_state`]):
//! - object [`OBJ_BUCKETS`]: bucket heads, key = bucket index, 8 B each;
//! - object [`OBJ_ENTRIES`]: hash entries, key = entry id (`2 * flow + direction`), 16 B (the
//!   flow id compared on lookup, and the chain link);
//! - object [`OBJ_FLOWS`]: flow records (the mapping: rewritten flow id, outputs, expiry,
//!   TCP/UDP state), key = flow slot;
//! - object [`OBJ_COUNT`]: table size and free-slot list head, key 0.
//!
//! Each flow owns two entries: the forward entry, keyed by the flow id of packets of the
//! original flow, and the reply entry, keyed by the flow id that reply packets carry (the
//! reversed rewritten flow id). Both point to the one flow record.
//! Slots are reused lowest-last (a LIFO free list), deterministically.
use crate::cx::Cx;
use pktflow_model::AccessKind::{Read, Write};

pub const OBJ_BUCKETS: u8 = 0;
pub const OBJ_ENTRIES: u8 = 1;
pub const OBJ_FLOWS: u8 = 2;
pub const OBJ_COUNT: u8 = 3;
/// Pattern (port/address allocator) `i` is object `OBJ_PATTERN0 + i`.
pub const OBJ_PATTERN0: u8 = 4;

const NIL: u32 = u32::MAX;

/// A flow identifier: addresses and ports in host order, and the IP protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct FlowKey {
    pub saddr: u32,
    pub daddr: u32,
    pub sport: u16,
    pub dport: u16,
    pub proto: u8,
}

impl FlowKey {
    /// The flow id of packets going the other way.
    pub fn reverse(&self) -> FlowKey {
        FlowKey {
            saddr: self.daddr,
            daddr: self.saddr,
            sport: self.dport,
            dport: self.sport,
            proto: self.proto,
        }
    }

    /// Deterministic hash (the functional run must be reproducible across processes).
    #[inline]
    pub fn hash(&self) -> u64 {
        let a = ((self.saddr as u64) << 32) | self.daddr as u64;
        let b = ((self.sport as u64) << 24) | ((self.dport as u64) << 8) | self.proto as u64;
        let mut x = a ^ b.rotate_left(29) ^ 0x243f_6a88_85a3_08d3;
        x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
        x ^= x >> 31;
        x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
        x ^ (x >> 29)
    }
}

/// A mapping: how packets of the flow and of its reply flow are rewritten.
#[derive(Clone, Copy, Debug, Default)]
pub struct Flow {
    /// Flow id of the original (forward) packets.
    pub fwd: FlowKey,
    /// What forward packets are rewritten to.
    pub rew: FlowKey,
    pub fout: u16,
    pub rout: u16,
    /// Absolute time (ns) after which the mapping is dead.
    pub expiry_ns: u64,
    /// Protocol state bits (see the rewriters).
    pub state: u8,
    pub packets: u32,
    /// Pattern that allocated it (for statistics), `u16::MAX` for none.
    pub pattern: u16,
    pub live: bool,
    /// TCP sequence-number shift of the forward direction (FTPPortMapper's payload edits).
    pub seq: SeqShift,
}

/// How TCPRewriter shifts a flow's sequence numbers after FTPPortMapper changed the length of
/// a forward packet's payload: forward packets whose sequence number is after `trigger` (the
/// sequence number of the last changed packet) get `delta` added, earlier ones (and the
/// changed packet itself, whose start does not move) `old_delta`; reply packets'
/// acknowledgment numbers get the shift taken off again (`delta` when the ack is after
/// `trigger + old_delta`, else `old_delta`). All arithmetic is modulo 2^32.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SeqShift {
    pub set: bool,
    pub trigger: u32,
    pub delta: u32,
    pub old_delta: u32,
}

pub struct FlowTable {
    buckets: Vec<u32>,
    keys: Vec<FlowKey>,
    next: Vec<u32>,
    pub flows: Vec<Flow>,
    free: Vec<u32>,
    live: usize,
    /// Growth: buckets double when live flows exceed the bucket count (2 entries/bucket).
    pub rehashes: u64,
}

impl FlowTable {
    /// A table with `buckets` buckets (rounded up to a power of two) and room for `flows`
    /// flows before any reallocation.
    pub fn new(buckets: usize, flows: usize) -> FlowTable {
        let nb = buckets.max(16).next_power_of_two();
        FlowTable {
            buckets: vec![NIL; nb],
            keys: Vec::with_capacity(2 * flows),
            next: Vec::with_capacity(2 * flows),
            flows: Vec::with_capacity(flows),
            free: Vec::new(),
            live: 0,
            rehashes: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.live
    }
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
    pub fn n_buckets(&self) -> usize {
        self.buckets.len()
    }

    #[inline]
    fn bucket_of(&self, k: &FlowKey) -> usize {
        (k.hash() as usize) & (self.buckets.len() - 1)
    }

    /// Find the entry keyed `k`. Costs: 10 instructions to hash, the bucket head read, and per
    /// entry examined 5 instructions and a 16 B entry read.
    pub fn lookup(&self, k: &FlowKey, cx: &mut Cx) -> Option<u32> {
        cx.instr(10);
        let b = self.bucket_of(k);
        cx.dynamic_state(Read, OBJ_BUCKETS, b as u64, 8);
        let mut e = self.buckets[b];
        while e != NIL {
            cx.instr(5);
            cx.dynamic_state(Read, OBJ_ENTRIES, e as u64, 16);
            if self.keys[e as usize] == *k {
                return Some(e);
            }
            e = self.next[e as usize];
        }
        None
    }

    /// Lookup without costs (tests, handlers).
    pub fn find(&self, k: &FlowKey) -> Option<u32> {
        let mut e = self.buckets[self.bucket_of(k)];
        while e != NIL {
            if self.keys[e as usize] == *k {
                return Some(e);
            }
            e = self.next[e as usize];
        }
        None
    }

    fn link(&mut self, e: u32, cx: &mut Cx) {
        let b = self.bucket_of(&self.keys[e as usize]);
        cx.instr(6);
        cx.dynamic_state(Read, OBJ_BUCKETS, b as u64, 8);
        self.next[e as usize] = self.buckets[b];
        cx.dynamic_state(Write, OBJ_ENTRIES, e as u64, 16);
        self.buckets[b] = e;
        cx.dynamic_state(Write, OBJ_BUCKETS, b as u64, 8);
    }

    /// Install a flow with its forward entry keyed `fwd_key` and reply entry keyed `rev_key`.
    /// Costs: size/free-list read and write (object [`OBJ_COUNT`]), the 32 B flow record write,
    /// and per entry the bucket head read, the entry write and the bucket head write; plus a
    /// rehash when the table grows.
    pub fn insert(&mut self, flow: Flow, fwd_key: FlowKey, rev_key: FlowKey, cx: &mut Cx) -> u32 {
        cx.instr(12);
        cx.dynamic_state(Read, OBJ_COUNT, 0, 8);
        if self.live + 1 > self.buckets.len() {
            self.grow(cx);
        }
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.flows.push(Flow::default());
                self.keys.push(FlowKey::default());
                self.keys.push(FlowKey::default());
                self.next.push(NIL);
                self.next.push(NIL);
                (self.flows.len() - 1) as u32
            }
        };
        self.live += 1;
        cx.dynamic_state(Write, OBJ_COUNT, 0, 8);
        self.flows[slot as usize] = Flow { live: true, ..flow };
        cx.dynamic_state(Write, OBJ_FLOWS, slot as u64, 32);
        self.keys[2 * slot as usize] = fwd_key;
        self.keys[2 * slot as usize + 1] = rev_key;
        self.link(2 * slot, cx);
        self.link(2 * slot + 1, cx);
        slot
    }

    fn unlink(&mut self, e: u32, cx: &mut Cx) {
        let b = self.bucket_of(&self.keys[e as usize]);
        cx.instr(4);
        cx.dynamic_state(Read, OBJ_BUCKETS, b as u64, 8);
        let mut prev = NIL;
        let mut cur = self.buckets[b];
        while cur != NIL && cur != e {
            cx.instr(3);
            cx.dynamic_state(Read, OBJ_ENTRIES, cur as u64, 16);
            prev = cur;
            cur = self.next[cur as usize];
        }
        debug_assert_eq!(cur, e, "entry not in its chain");
        let nx = self.next[e as usize];
        if prev == NIL {
            self.buckets[b] = nx;
            cx.dynamic_state(Write, OBJ_BUCKETS, b as u64, 8);
        } else {
            self.next[prev as usize] = nx;
            cx.dynamic_state(Write, OBJ_ENTRIES, prev as u64, 16);
        }
        self.next[e as usize] = NIL;
    }

    /// Remove flow `slot` (both entries). Costs: per entry the chain walk to its predecessor
    /// and the unlinking write; the 8 B flow record write (marking it free) and the size /
    /// free-list read and write.
    pub fn remove(&mut self, slot: u32, cx: &mut Cx) {
        debug_assert!(self.flows[slot as usize].live);
        cx.instr(8);
        self.unlink(2 * slot, cx);
        self.unlink(2 * slot + 1, cx);
        self.flows[slot as usize].live = false;
        cx.dynamic_state(Write, OBJ_FLOWS, slot as u64, 8);
        cx.dynamic_state(Read, OBJ_COUNT, 0, 8);
        self.free.push(slot);
        self.live -= 1;
        cx.dynamic_state(Write, OBJ_COUNT, 0, 8);
    }

    /// Double the bucket array and relink every live entry: per entry 6 instructions, the
    /// entry read and write and the bucket head write (keys are bucket indices of the new
    /// array).
    fn grow(&mut self, cx: &mut Cx) {
        let nb = self.buckets.len() * 2;
        self.buckets = vec![NIL; nb];
        self.rehashes += 1;
        for slot in 0..self.flows.len() {
            if !self.flows[slot].live {
                continue;
            }
            for e in [2 * slot as u32, 2 * slot as u32 + 1] {
                let b = self.bucket_of(&self.keys[e as usize]);
                cx.instr(6);
                cx.dynamic_state(Read, OBJ_ENTRIES, e as u64, 16);
                self.next[e as usize] = self.buckets[b];
                cx.dynamic_state(Write, OBJ_ENTRIES, e as u64, 16);
                self.buckets[b] = e;
                cx.dynamic_state(Write, OBJ_BUCKETS, b as u64, 8);
            }
        }
    }

    /// Live flow slots (in slot order).
    pub fn live_slots(&self) -> impl Iterator<Item = u32> + '_ {
        self.flows
            .iter()
            .enumerate()
            .filter(|(_, f)| f.live)
            .map(|(i, _)| i as u32)
    }

    /// Key of entry `e`.
    pub fn key(&self, e: u32) -> &FlowKey {
        &self.keys[e as usize]
    }
}

/// Parse a Click time interval in seconds (`30`, `0.5`, `250ms`, `4min`, `24h`, `2d`) to ns.
pub fn parse_seconds(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let split = s
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let v: f64 = num
        .parse()
        .map_err(|_| format!("expected time in seconds, found '{s}'"))?;
    let mult = match unit.trim() {
        "" | "s" | "sec" | "secs" | "second" | "seconds" => 1e9,
        "ms" | "msec" => 1e6,
        "us" | "usec" => 1e3,
        "ns" | "nsec" => 1.0,
        "m" | "min" | "mins" | "minute" | "minutes" => 60e9,
        "h" | "hr" | "hour" | "hours" => 3600e9,
        "d" | "day" | "days" => 86400e9,
        u => return Err(format!("unknown time unit '{u}' in '{s}'")),
    };
    Ok((v * mult).round() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(i: u32) -> FlowKey {
        FlowKey {
            saddr: 0x0a00_0000 + i,
            daddr: 0x0101_0101,
            sport: 1000 + i as u16,
            dport: 80,
            proto: 6,
        }
    }

    #[test]
    fn insert_lookup_remove_and_grow() {
        let mut cx = Cx::new();
        let mut t = FlowTable::new(16, 0);
        let mut slots = Vec::new();
        for i in 0..100 {
            let key = k(i);
            let s = t.insert(Flow::default(), key, key.reverse(), &mut cx);
            slots.push(s);
        }
        assert!(t.n_buckets() >= 100 && t.rehashes > 0);
        assert_eq!(t.len(), 100);
        for i in 0..100 {
            assert_eq!(t.lookup(&k(i), &mut cx), Some(2 * slots[i as usize]));
            assert_eq!(t.find(&k(i).reverse()), Some(2 * slots[i as usize] + 1));
        }
        for i in (0..100).step_by(2) {
            t.remove(slots[i as usize], &mut cx);
        }
        assert_eq!(t.len(), 50);
        for i in 0..100 {
            assert_eq!(t.find(&k(i)).is_some(), i % 2 == 1, "flow {i}");
        }
        // Freed slots are reused.
        let s = t.insert(Flow::default(), k(7777), k(7777).reverse(), &mut cx);
        assert!(s < 100);
        assert_eq!(t.live_slots().count(), 51);
    }

    #[test]
    fn seconds() {
        assert_eq!(parse_seconds("30").unwrap(), 30_000_000_000);
        assert_eq!(parse_seconds("0.5").unwrap(), 500_000_000);
        assert_eq!(parse_seconds("250ms").unwrap(), 250_000_000);
        assert_eq!(parse_seconds("4min").unwrap(), 240_000_000_000);
        assert_eq!(parse_seconds("24h").unwrap(), 86_400_000_000_000);
        assert!(parse_seconds("x").is_err());
        assert!(parse_seconds("3 fortnights").is_err());
    }
}
