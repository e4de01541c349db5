//! The processing context handed to elements: where they emit packets, drop them with a reason,
//! and record their costs (instructions and typed memory accesses) for the current visit.
//! All buffers are reused across packets: recording a cost does not allocate once warmed up.
//!
//! Compiled with `--cfg pktflow_fast` (the crate `pktflow-elements-fast`, a second compilation
//! of these same sources used by `pktflow run`), cost recording is compiled out: the
//! instruction count and every memory access are empty inline functions, no visit or fate is
//! recorded, and packets that are dropped or leave are kept for reuse instead of freed: the
//! driver refills them with trace packets, and elements make their new packets and copies in
//! them ([`Cx::new_packet`], [`Cx::copy_packet`]).
use pktflow_model::{AccessKind, LockMark, MemType, PacketTrace};
#[cfg(not(pktflow_fast))]
use pktflow_model::{Fate, MemAccess};
use pktflow_traffic::Packet;

#[derive(Default)]
pub struct Cx {
    /// Simulated time of the packet being processed (its trace timestamp), nanoseconds.
    pub now_ns: u64,
    pub(crate) element: u32,
    #[cfg(not(pktflow_fast))]
    pub(crate) instr: u32,
    pub(crate) trace: PacketTrace,
    /// What the current visit emitted, in order: the first packet here (most visits emit
    /// exactly one, which the runtime hands on without touching a vector), the others in `out`.
    /// `out` holds packets only when `first` does.
    pub(crate) first: Option<(usize, Packet)>,
    pub(crate) out: Vec<(usize, Packet)>,
    /// When set, packets leaving through sinks are kept (element, packet) instead of freed, so
    /// the driver can look at them (e.g. answer ARP requests on the link).
    pub(crate) tap: bool,
    pub(crate) departed: Vec<(u32, Packet)>,
    /// Write handlers elements asked to call (`Counter(COUNT_CALL N HANDLER)`), run by the
    /// runtime once the current packet is processed.
    pub(crate) calls: Vec<String>,
    /// Packets in the storage element (Queue) downstream of the visited element's output 0,
    /// for elements that ask for it (RED); 0 when there is none.
    pub downstream_queue_len: usize,
    /// Fast build: packets output (left through a sink) and dropped, over the run.
    #[cfg(pktflow_fast)]
    pub(crate) outputs: u64,
    #[cfg(pktflow_fast)]
    pub(crate) drops: u64,
    /// Fast build: buffers of packets that were dropped or left, for the driver to reuse.
    #[cfg(pktflow_fast)]
    pub(crate) free: Vec<Packet>,
}

/// Most buffers the fast build keeps for reuse; beyond that, freed.
#[cfg(pktflow_fast)]
pub const FREE_LIST_MAX: usize = 1024;

impl Cx {
    pub fn new() -> Self {
        Cx::default()
    }

    /// Index of the element currently running.
    pub fn element(&self) -> u32 {
        self.element
    }

    /// Count `n` instructions executed by the current visit.
    #[inline]
    #[cfg(not(pktflow_fast))]
    pub fn instr(&mut self, n: u32) {
        self.instr += n;
    }
    #[inline(always)]
    #[cfg(pktflow_fast)]
    pub fn instr(&mut self, _n: u32) {}

    #[inline]
    #[cfg(not(pktflow_fast))]
    fn access(&mut self, mem: MemType, kind: AccessKind, bytes: u32, object: u32, key: u64) {
        self.access_marked(mem, kind, bytes, object, key, LockMark::None);
    }
    #[inline]
    #[cfg(not(pktflow_fast))]
    fn access_marked(
        &mut self,
        mem: MemType,
        kind: AccessKind,
        bytes: u32,
        object: u32,
        key: u64,
        lock: LockMark,
    ) {
        self.trace.accesses.push(MemAccess {
            mem,
            kind,
            bytes,
            at_instr: self.instr,
            object,
            key,
            lock,
        });
    }
    #[inline(always)]
    #[cfg(pktflow_fast)]
    fn access(&mut self, _mem: MemType, _kind: AccessKind, _bytes: u32, _object: u32, _key: u64) {}
    #[inline(always)]
    #[cfg(pktflow_fast)]
    fn access_marked(
        &mut self,
        _mem: MemType,
        _kind: AccessKind,
        _bytes: u32,
        _object: u32,
        _key: u64,
        _lock: LockMark,
    ) {
    }

    /// Read `bytes` of packet data (header or payload).
    #[inline]
    pub fn read_pkt(&mut self, bytes: u32) {
        self.access(MemType::PacketData, AccessKind::Read, bytes, 0, 0);
    }
    #[inline]
    pub fn write_pkt(&mut self, bytes: u32) {
        self.access(MemType::PacketData, AccessKind::Write, bytes, 0, 0);
    }
    /// Read `bytes` of packet meta-data (annotations).
    #[inline]
    pub fn read_meta(&mut self, bytes: u32) {
        self.access(MemType::PacketMeta, AccessKind::Read, bytes, 0, 0);
    }
    #[inline]
    pub fn write_meta(&mut self, bytes: u32) {
        self.access(MemType::PacketMeta, AccessKind::Write, bytes, 0, 0);
    }
    /// Stack / temporaries of the visit.
    #[inline]
    pub fn stack(&mut self, kind: AccessKind, bytes: u32) {
        self.access(MemType::Stack, kind, bytes, 0, 0);
    }

    /// Global id of this element's state object number `obj`.
    #[inline]
    pub fn object_id(&self, obj: u8) -> u32 {
        (self.element << 8) | obj as u32
    }

    /// Access to persistent static state (exists after initialization: tables, configuration).
    /// `obj` numbers the element's state objects; `key` is the offset or key touched.
    #[inline]
    pub fn static_state(&mut self, kind: AccessKind, obj: u8, key: u64, bytes: u32) {
        let id = self.object_id(obj);
        self.access(MemType::StaticState, kind, bytes, id, key);
    }
    /// Access to persistent dynamic state (created or changed while processing: flow records,
    /// queue slots, counters).
    #[inline]
    pub fn dynamic_state(&mut self, kind: AccessKind, obj: u8, key: u64, bytes: u32) {
        let id = self.object_id(obj);
        self.access(MemType::DynamicState, kind, bytes, id, key);
    }

    /// Access to the lock word of a software lock kept in persistent dynamic state (object
    /// `obj`, key = the lock's identity): the test-and-set that takes it (`mark` =
    /// [`LockMark::Acquire`]) or the store that releases it ([`LockMark::Release`]). Recorded
    /// like [`Cx::dynamic_state`] but marked, so timing models can tell the lock word from data.
    #[inline]
    pub fn lock_word(&mut self, kind: AccessKind, obj: u8, key: u64, bytes: u32, mark: LockMark) {
        let id = self.object_id(obj);
        self.access_marked(MemType::DynamicState, kind, bytes, id, key, mark);
    }

    /// Send `p` out of output `port`.
    #[inline]
    pub fn emit(&mut self, port: usize, p: Packet) {
        if self.first.is_none() {
            self.first = Some((port, p));
        } else {
            self.out.push((port, p));
        }
    }

    /// The last packet emitted and not yet taken (the runtime routes them last to first).
    #[inline]
    pub(crate) fn pop_emitted(&mut self) -> Option<(usize, Packet)> {
        self.out.pop().or_else(|| self.first.take())
    }

    /// Packets emitted and not yet taken.
    pub fn emitted_count(&self) -> usize {
        usize::from(self.first.is_some()) + self.out.len()
    }

    /// Everything emitted since the last call, in the order emitted (for tests and tools that
    /// run an element by hand).
    pub fn take_emitted(&mut self) -> Vec<(usize, Packet)> {
        let mut v: Vec<(usize, Packet)> = self.first.take().into_iter().collect();
        v.append(&mut self.out);
        v
    }

    /// Drop `p`, recording why.
    #[cfg(not(pktflow_fast))]
    pub fn drop_packet(&mut self, p: Packet, reason: &'static str) {
        drop(p);
        self.trace.fates.push(Fate::Drop {
            element: self.element,
            reason,
        });
    }
    #[cfg(pktflow_fast)]
    pub fn drop_packet(&mut self, p: Packet, _reason: &'static str) {
        self.drops += 1;
        self.recycle(p);
    }

    /// `p` leaves the graph through this (sink) element.
    #[cfg(not(pktflow_fast))]
    pub fn output(&mut self, p: Packet) {
        if self.tap {
            self.departed.push((self.element, p));
        }
        self.trace.fates.push(Fate::Output {
            element: self.element,
        });
    }
    #[cfg(pktflow_fast)]
    pub fn output(&mut self, p: Packet) {
        self.outputs += 1;
        if self.tap {
            self.departed.push((self.element, p));
        } else {
            self.recycle(p);
        }
    }

    /// Fast build: keep `p`'s buffer for reuse (up to [`FREE_LIST_MAX`]).
    #[cfg(pktflow_fast)]
    #[inline]
    pub(crate) fn recycle(&mut self, p: Packet) {
        if self.free.len() < FREE_LIST_MAX {
            self.free.push(p);
        }
    }

    /// A new packet of `len` zero bytes, as [`Packet::zeroed`] makes it (default headroom and
    /// annotations, id 0) and counted as created as it counts it. The fast build makes it in
    /// the buffer of a packet that was dropped or left, when there is one.
    #[inline]
    pub fn new_packet(&mut self, len: usize) -> Packet {
        #[cfg(pktflow_fast)]
        if let Some(p) = self.free.pop() {
            return p.remade_zeroed(len);
        }
        Packet::zeroed(len)
    }

    /// A packet holding a copy of `bytes`, as [`Packet::from_bytes`] makes it (default
    /// headroom and annotations, id 0) and counted as created as it counts it: how generators
    /// (InfiniteSource, UDPGen, FromDump) make theirs. The fast build makes it in the buffer of
    /// a packet that was dropped or left, when there is one.
    #[inline]
    pub fn packet_from(&mut self, bytes: &[u8]) -> Packet {
        #[cfg(pktflow_fast)]
        if let Some(p) = self.free.pop() {
            return p.remade_from(bytes);
        }
        Packet::from_bytes(bytes)
    }

    /// A copy of `p`, as `p.clone()` makes it (the same bytes, headroom, annotations and id)
    /// and counted as created as it counts it. The fast build makes it in the buffer of a
    /// packet that was dropped or left, when there is one.
    #[inline]
    pub fn copy_packet(&mut self, p: &Packet) -> Packet {
        #[cfg(pktflow_fast)]
        if let Some(q) = self.free.pop() {
            return q.remade_copy_of(p);
        }
        p.clone()
    }

    /// Ask the runtime to call write handler `spec` (`stop`, `ELEMENT.HANDLER [VALUE]`) once
    /// the current packet is processed.
    pub fn call_handler(&mut self, spec: &str) {
        self.calls.push(spec.to_string());
    }

    /// The trace being recorded (for tests and the runtime).
    pub fn trace(&self) -> &PacketTrace {
        &self.trace
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktflow_traffic::packets_created;

    /// The recording build makes new packets and copies as `Packet::zeroed` and `clone` do,
    /// counted once each (the fast build's reuse is tested in pktflow-traffic and by the
    /// runtime's identity tests).
    #[test]
    fn new_and_copied_packets_are_what_zeroed_and_clone_make() {
        let mut cx = Cx::new();
        let before = packets_created();
        let p = cx.new_packet(30);
        assert_eq!(packets_created() - before, 1);
        assert_eq!(p, Packet::zeroed(30));
        let mut p = Packet::from_bytes(&[1, 2, 3, 4]);
        p.strip_front(1);
        p.anno.paint = 2;
        p.id = 5;
        let before = packets_created();
        let c = cx.copy_packet(&p);
        assert_eq!(packets_created() - before, 1);
        assert_eq!(c, p);
    }
}
