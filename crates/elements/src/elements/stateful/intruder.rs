//! `IntruderDetector` and `IntruderDetector2` — the thesis's Intruder and Intruder2: network
//! intrusion detection over fragmented messages (after STAMP's `intruder`, "modified for
//! packetized input").
//!
//! Input: IPv4 packets of protocol 253 whose payload is a fragment header (12 bytes, big-endian:
//! flow id u32, message number u16, fragment index u8, fragment count u8, message length u16,
//! byte offset u16) and the fragment's bytes (the format `pktflow gen-trace --app intruder`
//! writes). A message is complete when all its fragments arrived; it is then reassembled and
//! searched for every word of the dictionary (an attack); its fragments leave together, on
//! output 0 when clean and output 1 when an attack was found. Malformed fragments are dropped
//! with a reason.
//!
//! `IntruderDetector` (thesis Table 3.1, Intruder): "Packets are stored in a synchronized
//! associative array until complete messages are fully reassembled. They are then checked
//! against a dictionary before being removed from the synchronized data structures"; "Multiple
//! lists and associative array make extensive use of the memory allocation routines". Under the
//! global *decoder lock* (object 0): find the message in a chained hash map (object 1 bucket
//! heads, map nodes in the heap), allocate its node and fragment list when new, allocate a list
//! element and a copy of the fragment, insert it in index order, and when the message is
//! complete allocate the message buffer, copy the fragments into it and free the list, the
//! fragments and the node. Every allocation and free takes the allocator lock (object 3) and
//! updates a free-list head (object 2, key size class × 4); heap memory is object 4 keyed by
//! address (a segregated free-list allocator with 16-byte classes, so freed blocks are reused).
//! The dictionary search runs outside any lock on the (now private) message, recorded as stack
//! traffic; the message buffer is freed afterwards.
//!
//! `IntruderDetector2` (Intruder2): "array-based reassembly buffers" statically allocated, and
//! "two synchronization phases: first a per-flow lock is acquired and released to allow
//! processing each packet individually, then most of the computation is performed on
//! reassembled messages before the per-flow variables are modified again under
//! synchronization". Slot `hash(flow, message) mod SLOTS` (object 1, `SLOT_BYTES` per slot: tag,
//! count, length, data) under its own lock (object 0, key slot): claim it (a slot held by
//! another message: dropped, "reassembly slot busy"), copy the fragment in, count it; when
//! complete, copy the message out. Then the dictionary search without a lock, then the slot's
//! lock again to clear it and update the flow's attack counter (object 2, key flow mod 256 × 8).
//!
//! Keywords: `DICT` (space-separated words, default the generator's attack signatures),
//! `SLOTS` (Intruder2, default 1024), `FREE_LISTS` (Intruder, 1 to 64, default 1: one shared
//! allocator under the allocator lock; more: per-thread allocators, see [`Heap`]).
//! Ports: 1 push input, 2 push outputs.
//! Costs: 40 instructions to parse the fragment; map: 16 to hash, 8 per node visited; list: 6
//! per element visited; malloc/free 30 each; 1 per 4 bytes copied; dictionary search 4 per
//! character comparison plus 10 per word and position started.
use crate::conf::{unquote, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::thesis::INTRUDER_DICTIONARY;
use pktflow_traffic::Packet;
use std::collections::HashMap;

use super::{lock, unlock};

pub const CLASS: ClassInfo = ClassInfo {
    name: "IntruderDetector",
    summary: "intrusion detection: reassemble messages in a locked associative array with heap allocation, then match a dictionary (the thesis's Intruder)",
    make: make1,
};
pub const CLASS2: ClassInfo = ClassInfo {
    name: "IntruderDetector2",
    summary: "intrusion detection with static per-slot reassembly buffers and per-slot locks (the thesis's Intruder2)",
    make: make2,
};

/// Largest message accepted (bytes) and most fragments per message.
pub const MAX_MESSAGE: usize = 2048;
pub const MAX_FRAGMENTS: usize = 16;
const HDR: usize = 12;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Frag {
    flow: u32,
    msg: u16,
    index: u8,
    count: u8,
    len: u16,
    offset: u16,
}

fn parse_frag(d: &[u8]) -> Result<(Frag, std::ops::Range<usize>), &'static str> {
    let ip = super::parse_ipv4(d).ok_or("not IPv4")?;
    if ip.proto != 253 || ip.fragment {
        return Err("not an intruder fragment");
    }
    let h = ip.l4();
    if h + HDR > ip.end() {
        return Err("truncated fragment header");
    }
    let f = Frag {
        flow: u32::from_be_bytes([d[h], d[h + 1], d[h + 2], d[h + 3]]),
        msg: u16::from_be_bytes([d[h + 4], d[h + 5]]),
        index: d[h + 6],
        count: d[h + 7],
        len: u16::from_be_bytes([d[h + 8], d[h + 9]]),
        offset: u16::from_be_bytes([d[h + 10], d[h + 11]]),
    };
    let data = h + HDR..ip.end();
    if f.count == 0 || f.count as usize > MAX_FRAGMENTS || f.index >= f.count {
        return Err("bad fragment numbering");
    }
    if f.len as usize > MAX_MESSAGE || f.offset as usize + data.len() > f.len as usize {
        return Err("fragment outside its message");
    }
    Ok((f, data))
}

fn dictionary(config: &str, class: &str, keys: &[&str]) -> Result<(Args, Vec<Vec<u8>>), String> {
    let mut a = Args::parse(class, config, keys);
    let dict: Vec<Vec<u8>> = match a.keyword("DICT") {
        Some(d) => unquote(&d)
            .split_whitespace()
            .map(|w| w.as_bytes().to_vec())
            .collect(),
        None => INTRUDER_DICTIONARY
            .iter()
            .map(|w| w.as_bytes().to_vec())
            .collect(),
    };
    if dict.is_empty() || dict.len() > 10_000 {
        return Err(format!(
            "{class}: DICT must hold 1 to 10000 words, got {}",
            dict.len()
        ));
    }
    Ok((a, dict))
}

/// Search `msg` for every word (naive scan, as STAMP's detector); costs as stack reads.
fn detect(dict: &[Vec<u8>], msg: &[u8], cx: &mut Cx) -> bool {
    let mut cmp = 0u64;
    let mut starts = 0u64;
    let mut found = false;
    for w in dict {
        if w.len() > msg.len() {
            starts += 1;
            continue;
        }
        for s in 0..=msg.len() - w.len() {
            starts += 1;
            let mut k = 0;
            while k < w.len() && msg[s + k] == w[k] {
                k += 1;
            }
            cmp += (k + 1).min(w.len()) as u64;
            if k == w.len() {
                found = true;
                break;
            }
        }
        if found {
            break;
        }
    }
    cx.instr((4 * cmp + 10 * starts).min(u32::MAX as u64 / 4) as u32);
    cx.stack(Read, msg.len() as u32);
    found
}

// ---------------------------------------------------------------------------------------
// Intruder: associative array + heap.

const OBJ_DECODER_LOCK: u8 = 0;
const OBJ_MAP: u8 = 1;
const OBJ_FREELISTS: u8 = 2;
const OBJ_ALLOC_LOCK: u8 = 3;
const OBJ_HEAP: u8 = 4;
const MAP_BUCKETS: u64 = 256;

/// Size classes an allocator list has room for (keys of one list's heads: list × this + class).
const CLASSES: u64 = 1024;
/// Bytes of heap address space the per-thread arenas share (one persistent-state region).
const ARENAS_BYTES: u64 = 1 << 20;

/// A segregated free-list allocator over a simulated heap (addresses only).
///
/// `lists` 1 (the default): one allocator, under the allocator lock, its free-list heads and
/// break (the head key 0) shared by every packet. More: the per-thread allocator "free of
/// conflicts" the thesis put in place of malloc/free for NetTM (section 8.3): packet n uses
/// allocator n mod lists (the thread contexts taking consecutive packets), each with its own
/// heads and its own arena (`ARENAS_BYTES / lists` apart), and takes no lock; a block is freed
/// to the allocator of the packet that frees it.
struct Heap {
    free: HashMap<(u64, u64), Vec<u64>>,
    tops: Vec<u64>,
    /// The allocator the current packet uses.
    cur: u64,
}

impl Heap {
    fn new(lists: usize) -> Heap {
        Heap {
            free: HashMap::new(),
            tops: vec![0; lists.max(1)],
            cur: 0,
        }
    }
    /// Packet `n` is being processed: allocator `n mod lists` serves it.
    fn begin_packet(&mut self, n: u64) {
        self.cur = n % self.tops.len() as u64;
    }
    fn shared(&self) -> bool {
        self.tops.len() == 1
    }
    fn class(bytes: usize) -> u64 {
        (bytes as u64 + 8).div_ceil(16)
    }
    fn head(&self, c: u64) -> u64 {
        (self.cur * CLASSES + c) * 4
    }
    fn malloc(&mut self, cx: &mut Cx, bytes: usize) -> u64 {
        let c = Self::class(bytes);
        if self.shared() {
            lock(cx, OBJ_ALLOC_LOCK, 0);
        }
        cx.instr(30);
        cx.dynamic_state(Read, OBJ_FREELISTS, self.head(c), 4);
        let addr = match self.free.get_mut(&(self.cur, c)).and_then(|v| v.pop()) {
            Some(a) => {
                cx.dynamic_state(Read, OBJ_HEAP, a, 4);
                cx.dynamic_state(Write, OBJ_FREELISTS, self.head(c), 4);
                a
            }
            None => {
                let arena = self.cur * (ARENAS_BYTES / self.tops.len() as u64);
                let top = &mut self.tops[self.cur as usize];
                let a = arena + *top;
                *top += c * 16;
                cx.dynamic_state(Read, OBJ_FREELISTS, self.head(0), 4);
                cx.dynamic_state(Write, OBJ_FREELISTS, self.head(0), 4);
                a
            }
        };
        cx.dynamic_state(Write, OBJ_HEAP, addr, 8); // chunk header
        if self.shared() {
            unlock(cx, OBJ_ALLOC_LOCK, 0);
        }
        addr + 8
    }
    fn free(&mut self, cx: &mut Cx, addr: u64, bytes: usize) {
        let c = Self::class(bytes);
        let a = addr - 8;
        if self.shared() {
            lock(cx, OBJ_ALLOC_LOCK, 0);
        }
        cx.instr(30);
        cx.dynamic_state(Read, OBJ_HEAP, a, 8);
        cx.dynamic_state(Read, OBJ_FREELISTS, self.head(c), 4);
        cx.dynamic_state(Write, OBJ_HEAP, a, 4);
        cx.dynamic_state(Write, OBJ_FREELISTS, self.head(c), 4);
        self.free.entry((self.cur, c)).or_default().push(a);
        if self.shared() {
            unlock(cx, OBJ_ALLOC_LOCK, 0);
        }
    }
    /// Heap bytes handed out so far (every arena's break).
    fn bytes(&self) -> u64 {
        self.tops.iter().sum()
    }
}

fn copy(cx: &mut Cx, from: Option<(u8, u64)>, to: (u8, u64), n: usize) {
    cx.instr(n.div_ceil(4) as u32);
    for w in 0..n.div_ceil(4) as u64 {
        if let Some((o, a)) = from {
            cx.dynamic_state(Read, o, a + 4 * w, 4);
        }
        cx.dynamic_state(Write, to.0, to.1 + 4 * w, 4);
    }
}

struct Pending {
    node: u64,
    /// (index, list element address, fragment copy address, bytes, offset, packet)
    frags: Vec<(u8, u64, u64, usize, usize, Packet)>,
    count: u8,
    len: usize,
}

struct Intruder {
    dict: Vec<Vec<u8>>,
    heap: Heap,
    /// Packets pushed so far (the allocator of packet n: [`Heap::begin_packet`]).
    packets: u64,
    map: HashMap<(u32, u16), Pending>,
    /// Each bucket's chain: its nodes' heap addresses, head first (new nodes go to the head).
    chains: HashMap<u64, Vec<u64>>,
    messages: u64,
    attacks: u64,
}

fn make1(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    const C: &str = "IntruderDetector";
    let (mut a, dict) = dictionary(config, C, &["DICT", "FREE_LISTS"])?;
    let lists = super::bounded(C, "FREE_LISTS", a.keyword("FREE_LISTS"), 1, 64)? as usize;
    a.finish()?;
    Ok(Box::new(Intruder {
        dict,
        heap: Heap::new(lists),
        packets: 0,
        map: HashMap::new(),
        chains: HashMap::new(),
        messages: 0,
        attacks: 0,
    }))
}

fn bucket(flow: u32, msg: u16) -> u64 {
    ((flow.wrapping_mul(2_654_435_761) ^ msg as u32) as u64) % MAP_BUCKETS
}

impl Element for Intruder {
    fn ports(&self) -> Ports {
        Ports::push(1, 2)
    }
    fn held(&self) -> usize {
        self.map.values().map(|p| p.frags.len()).sum()
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        self.heap.begin_packet(self.packets);
        self.packets += 1;
        cx.instr(40);
        cx.read_pkt(46.min(p.len() as u32));
        let (f, data) = match parse_frag(p.data()) {
            Ok(x) => x,
            Err(e) => {
                cx.drop_packet(p, e);
                return;
            }
        };
        let key = (f.flow, f.msg);
        let b = bucket(f.flow, f.msg);
        lock(cx, OBJ_DECODER_LOCK, 0);
        cx.instr(16);
        cx.dynamic_state(Read, OBJ_MAP, b * 4, 4);
        // Walk the bucket's chain (nodes in the heap, head first) up to the message's node, or
        // all of it. (The chain's order once came from a std HashMap's iteration, which differs
        // from process to process: the same trace gave different programs.)
        let pos = self.map.get(&key).map(|v| v.node);
        for n in self.chains.get(&b).map(Vec::as_slice).unwrap_or(&[]) {
            cx.instr(8);
            cx.dynamic_state(Read, OBJ_HEAP, *n, 8);
            if Some(*n) == pos {
                break;
            }
        }
        if let Some(pd) = self.map.get(&key) {
            if pd.count != f.count
                || pd.len != f.len as usize
                || pd.frags.iter().any(|x| x.0 == f.index)
            {
                unlock(cx, OBJ_DECODER_LOCK, 0);
                cx.drop_packet(p, "inconsistent or duplicate fragment");
                return;
            }
        } else {
            let node = self.heap.malloc(cx, 32);
            cx.instr(20);
            cx.dynamic_state(Write, OBJ_HEAP, node, 16);
            cx.dynamic_state(Write, OBJ_MAP, b * 4, 4);
            self.chains.entry(b).or_default().insert(0, node);
            self.map.insert(
                key,
                Pending {
                    node,
                    frags: Vec::new(),
                    count: f.count,
                    len: f.len as usize,
                },
            );
        }
        let n = data.len();
        let elem = self.heap.malloc(cx, 16);
        let copy_at = self.heap.malloc(cx, n.max(1));
        copy(cx, None, (OBJ_HEAP, copy_at), n);
        cx.read_pkt(n as u32);
        let pd = self.map.get_mut(&key).expect("inserted");
        // Insert in index order: walk the list.
        let at = pd
            .frags
            .iter()
            .position(|x| x.0 > f.index)
            .unwrap_or(pd.frags.len());
        for x in &pd.frags[..at] {
            cx.instr(6);
            cx.dynamic_state(Read, OBJ_HEAP, x.1, 8);
        }
        cx.dynamic_state(Write, OBJ_HEAP, elem, 16);
        cx.dynamic_state(Write, OBJ_HEAP, pd.node + 8, 4);
        pd.frags
            .insert(at, (f.index, elem, copy_at, n, f.offset as usize, p));
        if pd.frags.len() < pd.count as usize {
            unlock(cx, OBJ_DECODER_LOCK, 0);
            return;
        }
        // Complete: reassemble into a new buffer, free the list, the copies and the node.
        let pd = self.map.remove(&key).expect("present");
        self.chains
            .get_mut(&b)
            .expect("chained")
            .retain(|&n| n != pd.node);
        cx.dynamic_state(Write, OBJ_MAP, b * 4, 4);
        let buf = self.heap.malloc(cx, pd.len.max(1));
        let mut msg = vec![0u8; pd.len];
        for x in &pd.frags {
            let d = &x.5.data()[x.5.len() - x.3..];
            msg[x.4..x.4 + x.3].copy_from_slice(d);
            copy(cx, Some((OBJ_HEAP, x.2)), (OBJ_HEAP, buf + x.4 as u64), x.3);
        }
        let mut pkts = Vec::with_capacity(pd.frags.len());
        for x in pd.frags {
            self.heap.free(cx, x.1, 16);
            self.heap.free(cx, x.2, x.3.max(1));
            pkts.push(x.5);
        }
        self.heap.free(cx, pd.node, 32);
        unlock(cx, OBJ_DECODER_LOCK, 0);
        // Detector: private message, no lock.
        let attack = detect(&self.dict, &msg, cx);
        self.heap.free(cx, buf, pd.len.max(1));
        self.messages += 1;
        self.attacks += attack as u64;
        for p in pkts {
            cx.emit(attack as usize, p);
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"messages": self.messages, "attacks": self.attacks, "pending_messages": self.map.len(), "heap_bytes": self.heap.bytes()})
    }
    fn code_size(&self) -> u32 {
        1800
    }
}

// ---------------------------------------------------------------------------------------
// Intruder2: static slots.

const OBJ_SLOT_LOCKS: u8 = 0;
const OBJ_SLOTS: u8 = 1;
const OBJ_FLOWVARS: u8 = 2;
/// Bytes per static reassembly slot: tag 8, count 4, length 4, data.
pub const SLOT_BYTES: u64 = 16 + MAX_MESSAGE as u64;

struct Slot {
    tag: Option<(u32, u16)>,
    count: u8,
    got: u8,
    len: usize,
    data: Vec<u8>,
    pkts: Vec<Option<Packet>>,
}

struct Intruder2 {
    dict: Vec<Vec<u8>>,
    slots: Vec<Slot>,
    attacks_by_flow: Vec<u32>,
    messages: u64,
    attacks: u64,
}

fn make2(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    const C: &str = "IntruderDetector2";
    let (mut a, dict) = dictionary(config, C, &["DICT", "SLOTS"])?;
    let n = super::bounded(C, "SLOTS", a.keyword("SLOTS"), 1024, 65_536)? as usize;
    a.finish()?;
    Ok(Box::new(Intruder2::new(dict, n)))
}

impl Intruder2 {
    fn new(dict: Vec<Vec<u8>>, n: usize) -> Self {
        Intruder2 {
            dict,
            slots: (0..n)
                .map(|_| Slot {
                    tag: None,
                    count: 0,
                    got: 0,
                    len: 0,
                    data: Vec::new(),
                    pkts: Vec::new(),
                })
                .collect(),
            attacks_by_flow: vec![0; 256],
            messages: 0,
            attacks: 0,
        }
    }
}

impl Element for Intruder2 {
    fn ports(&self) -> Ports {
        Ports::push(1, 2)
    }
    fn held(&self) -> usize {
        self.slots
            .iter()
            .map(|s| s.pkts.iter().flatten().count())
            .sum()
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(40);
        cx.read_pkt(46.min(p.len() as u32));
        let (f, data) = match parse_frag(p.data()) {
            Ok(x) => x,
            Err(e) => {
                cx.drop_packet(p, e);
                return;
            }
        };
        let si = (bucket(f.flow, f.msg) as usize * 7919 + f.msg as usize) % self.slots.len();
        let base = si as u64 * SLOT_BYTES;
        // Phase 1: the slot's lock for this packet.
        lock(cx, OBJ_SLOT_LOCKS, si as u64);
        cx.instr(12);
        cx.dynamic_state(Read, OBJ_SLOTS, base, 8);
        let s = &mut self.slots[si];
        match s.tag {
            Some(t) if t != (f.flow, f.msg) => {
                unlock(cx, OBJ_SLOT_LOCKS, si as u64);
                cx.drop_packet(p, "reassembly slot busy");
                return;
            }
            Some(_) => {
                cx.dynamic_state(Read, OBJ_SLOTS, base + 8, 8);
                if s.count != f.count
                    || s.len != f.len as usize
                    || s.pkts[f.index as usize].is_some()
                {
                    unlock(cx, OBJ_SLOT_LOCKS, si as u64);
                    cx.drop_packet(p, "inconsistent or duplicate fragment");
                    return;
                }
            }
            None => {
                s.tag = Some((f.flow, f.msg));
                s.count = f.count;
                s.got = 0;
                s.len = f.len as usize;
                s.data.clear();
                s.data.resize(s.len, 0);
                s.pkts.clear();
                s.pkts.resize_with(f.count as usize, || None);
                cx.dynamic_state(Write, OBJ_SLOTS, base, 8);
                cx.dynamic_state(Write, OBJ_SLOTS, base + 8, 8);
            }
        }
        let n = data.len();
        let off = f.offset as usize;
        s.data[off..off + n].copy_from_slice(&p.data()[data]);
        cx.read_pkt(n as u32);
        copy(cx, None, (OBJ_SLOTS, base + 16 + off as u64), n);
        s.got += 1;
        cx.dynamic_state(Write, OBJ_SLOTS, base + 8, 4);
        s.pkts[f.index as usize] = Some(p);
        if s.got < s.count {
            unlock(cx, OBJ_SLOT_LOCKS, si as u64);
            return;
        }
        // Complete: copy the message out of the slot.
        let msg = s.data.clone();
        cx.instr(msg.len().div_ceil(4) as u32);
        for w in 0..msg.len().div_ceil(4) as u64 {
            cx.dynamic_state(Read, OBJ_SLOTS, base + 16 + 4 * w, 4);
        }
        cx.stack(Write, msg.len() as u32);
        unlock(cx, OBJ_SLOT_LOCKS, si as u64);
        // Phase 2: the dictionary search, no lock.
        let attack = detect(&self.dict, &msg, cx);
        // Phase 3: per-flow variables under the lock again.
        lock(cx, OBJ_SLOT_LOCKS, si as u64);
        cx.instr(16);
        let s = &mut self.slots[si];
        s.tag = None;
        cx.dynamic_state(Write, OBJ_SLOTS, base, 8);
        let pkts: Vec<Packet> = s.pkts.drain(..).flatten().collect();
        let fv = (f.flow % 256) as usize;
        cx.dynamic_state(Read, OBJ_FLOWVARS, fv as u64 * 8, 4);
        if attack {
            self.attacks_by_flow[fv] += 1;
            cx.dynamic_state(Write, OBJ_FLOWVARS, fv as u64 * 8, 4);
        }
        unlock(cx, OBJ_SLOT_LOCKS, si as u64);
        self.messages += 1;
        self.attacks += attack as u64;
        for p in pkts {
            cx.emit(attack as usize, p);
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"messages": self.messages, "attacks": self.attacks})
    }
    fn code_size(&self) -> u32 {
        1200
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn per_thread_allocators_take_no_lock_and_keep_their_own_heads_and_arenas() {
        for lists in [1usize, 8] {
            let mut h = Heap::new(lists);
            let mut seen = Vec::new();
            for n in 0..3u64 {
                let mut cx = Cx::new();
                h.begin_packet(n);
                let a = h.malloc(&mut cx, 20);
                h.free(&mut cx, a, 20);
                let acc = &cx.trace().accesses;
                let locked = acc.iter().any(|x| x.object == OBJ_ALLOC_LOCK as u32);
                assert_eq!(locked, lists == 1, "the allocator lock only when shared");
                let heads: Vec<u64> = acc
                    .iter()
                    .filter(|x| x.object == OBJ_FREELISTS as u32)
                    .map(|x| x.key)
                    .collect();
                seen.push((a, heads));
            }
            if lists == 1 {
                // One allocator: the block freed by packet 0 is reused by packets 1 and 2.
                assert!(seen.iter().all(|s| s.0 == seen[0].0));
            } else {
                // Packet n: allocator n, its own arena and heads.
                for (n, (a, heads)) in seen.iter().enumerate() {
                    let base = n as u64 * (ARENAS_BYTES / 8);
                    assert!(*a >= base && *a < base + ARENAS_BYTES / 8, "{a:#x}");
                    assert!(
                        heads.iter().all(|k| k / 4 / CLASSES == n as u64),
                        "{heads:?}"
                    );
                }
            }
        }
    }

    use super::*;
    use crate::elements::stateful::testutil::ipv4_frame;
    use proptest::prelude::*;

    fn frag(
        flow: u32,
        msg: u16,
        index: u8,
        count: u8,
        len: u16,
        offset: u16,
        data: &[u8],
    ) -> Vec<u8> {
        let mut v = flow.to_be_bytes().to_vec();
        v.extend_from_slice(&msg.to_be_bytes());
        v.extend_from_slice(&[index, count]);
        v.extend_from_slice(&len.to_be_bytes());
        v.extend_from_slice(&offset.to_be_bytes());
        v.extend_from_slice(data);
        ipv4_frame(253, [10, 0, 0, 5], [10, 0, 0, 9], &v)
    }

    fn elems() -> Vec<Box<dyn Element>> {
        vec![
            make1("", &InitEnv::default()).unwrap(),
            make2("", &InitEnv::default()).unwrap(),
        ]
    }

    fn feed(e: &mut dyn Element, frames: &[Vec<u8>]) -> Vec<(usize, Packet)> {
        let mut all = Vec::new();
        for f in frames {
            let mut cx = Cx::new();
            e.push(0, Packet::from_bytes(f), &mut cx);
            all.append(&mut cx.take_emitted());
        }
        all
    }

    #[test]
    fn reassembled_message_with_a_dictionary_word_is_flagged() {
        let word = INTRUDER_DICTIONARY[0].as_bytes();
        let mut m = b"hello there ".to_vec();
        m.extend_from_slice(word);
        m.extend_from_slice(b" bye");
        let cut = 14; // the word is split across two fragments
        let (a, b) = m.split_at(cut);
        let frames = [
            frag(1, 0, 1, 2, m.len() as u16, cut as u16, b),
            frag(1, 0, 0, 2, m.len() as u16, 0, a),
        ];
        for mut e in elems() {
            let out = feed(e.as_mut(), &frames[..1]);
            assert!(out.is_empty() && e.held() == 1);
            let out = feed(e.as_mut(), &frames[1..]);
            assert_eq!(out.len(), 2);
            assert!(
                out.iter().all(|(port, _)| *port == 1),
                "attack goes to output 1"
            );
            assert_eq!(e.held(), 0);
        }
    }

    #[test]
    fn two_detectors_fed_the_same_fragments_record_the_same_programs() {
        // 600 half-arrived messages over 256 buckets, then their second halves: chains of
        // several nodes, walked in an order that must not depend on a HashMap's seed.
        let mut frames = Vec::new();
        for second in [false, true] {
            for flow in 0..600u32 {
                let (i, off, d): (u8, u16, &[u8]) = if second {
                    (1, 3, b"def")
                } else {
                    (0, 0, b"abc")
                };
                frames.push(frag(flow, 7, i, 2, 6, off, d));
            }
        }
        let programs = |mut e: Box<dyn Element>| -> Vec<(u32, u64, u32)> {
            let mut all = Vec::new();
            for f in &frames {
                let mut cx = Cx::new();
                e.push(0, Packet::from_bytes(f), &mut cx);
                all.extend(
                    cx.trace()
                        .accesses
                        .iter()
                        .map(|a| (a.object, a.key, a.at_instr)),
                );
            }
            all
        };
        for conf in ["", "FREE_LISTS 8"] {
            let a = programs(make1(conf, &InitEnv::default()).unwrap());
            let b = programs(make1(conf, &InitEnv::default()).unwrap());
            assert!(a == b, "the programs differ ({conf})");
        }
    }

    #[test]
    fn clean_message_passes_and_bad_fragments_are_dropped() {
        let frames = [frag(2, 3, 0, 1, 5, 0, b"quiet")];
        for mut e in elems() {
            let out = feed(e.as_mut(), &frames);
            assert_eq!(out.len(), 1);
            assert_eq!(out[0].0, 0);
            assert_eq!(out[0].1.data(), &frames[0][..]);
            for bad in [
                frag(1, 1, 2, 2, 5, 0, b"x"),
                frag(1, 1, 0, 1, 3, 2, b"xyz"),
                frag(1, 1, 0, 0, 3, 0, b""),
            ] {
                let mut cx = Cx::new();
                e.push(0, Packet::from_bytes(&bad), &mut cx);
                assert!(cx.emitted_count() == 0 && cx.trace().fates.len() == 1);
            }
        }
    }

    #[test]
    fn intruder_allocates_under_the_allocator_lock_and_intruder2_locks_per_slot() {
        let f = frag(7, 1, 0, 1, 4, 0, b"abcd");
        let mut e = make1("", &InitEnv::default()).unwrap();
        let mut cx = Cx::new();
        e.push(0, Packet::from_bytes(&f), &mut cx);
        let acc = &cx.trace().accesses;
        assert!(
            acc.iter()
                .filter(|a| a.object == OBJ_ALLOC_LOCK as u32)
                .count()
                >= 2 * 6
        );
        assert!(acc
            .iter()
            .all(|a| a.object != OBJ_DECODER_LOCK as u32 || a.key == 0));
        let mut e2 = make2("", &InitEnv::default()).unwrap();
        let mut cx = Cx::new();
        e2.push(0, Packet::from_bytes(&f), &mut cx);
        let keys: std::collections::HashSet<u64> = cx
            .trace()
            .accesses
            .iter()
            .filter(|a| a.object == OBJ_SLOT_LOCKS as u32 && a.mem.is_persistent())
            .map(|a| a.key)
            .collect();
        assert_eq!(keys.len(), 1);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_packets_do_not_panic(bytes in proptest::collection::vec(any::<u8>(), 0..120), hdr in proptest::collection::vec(any::<u8>(), 12..40)) {
            for mut e in elems() {
                let mut cx = Cx::new();
                e.push(0, Packet::from_bytes(&bytes), &mut cx);
                let f = ipv4_frame(253, [1, 1, 1, 1], [2, 2, 2, 2], &hdr);
                e.push(0, Packet::from_bytes(&f), &mut cx);
                e.push(0, Packet::from_bytes(&f), &mut cx);
            }
        }
    }
}
