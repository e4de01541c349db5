//! A packet: bytes with headroom (so headers can be prepended without copying, as Click's
//! `Packet::push`), and the annotations Click elements attach (destination IP, paint, network
//! header offset, fix-source flag, parameter-problem offset, packet type).

/// Headroom reserved in front of the data of a new packet (room for an Ethernet header + VLAN).
pub const DEFAULT_HEADROOM: usize = 48;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PacketType {
    #[default]
    Host,
    Broadcast,
    Multicast,
    OtherHost,
    Outgoing,
}

/// Click's packet annotations (the subset the implemented elements use).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Annotations {
    /// Destination IP annotation (GetIPAddress sets it; LookupIPRoute rewrites it to the gateway).
    pub dst_ip: [u8; 4],
    /// Paint annotation (Paint, PaintTee, CheckPaint).
    pub paint: u8,
    /// Offset of the IP header from the start of the buffer (absolute, survives Strip/Unstrip).
    pub network_header: Option<usize>,
    /// Length of the IP header in bytes when `network_header` is set.
    pub network_header_len: usize,
    /// Set by IPGWOptions/ICMPError when FixIPSrc must rewrite the source address.
    pub fix_ip_src: bool,
    /// Offset of the offending byte for ICMP parameter problem (IPGWOptions sets it).
    pub icmp_param_prob: u8,
    pub packet_type: PacketType,
    /// Arrival time, nanoseconds since the start of the trace.
    pub timestamp_ns: u64,
    /// Input interface the packet came from (FromDump/FromDevice number), if known.
    pub input_port: u8,
    /// Length of the packet on the wire when it arrived, if longer than its bytes (a capture
    /// truncated by its snap length); 0 means "the packet's own length".
    pub wire_len: u32,
}

thread_local! {
    static CREATED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Packets constructed (new or cloned) on this thread so far. The functional run uses it to
/// check that every packet created is delivered, dropped with a reason, or still held.
#[inline]
pub fn packets_created() -> u64 {
    CREATED.with(|c| c.get())
}

fn count_created() {
    CREATED.with(|c| c.set(c.get() + 1));
}

/// A packet: one pointer to its [`PacketBuf`] (bytes, annotations, id), so handing a packet
/// from element to element, through the runtime's stacks and queues, moves 8 bytes instead of
/// the whole record. Everything of [`PacketBuf`] is reached through it (`p.data()`, `p.anno`).
#[derive(Debug, PartialEq, Eq)]
pub struct Packet(Box<PacketBuf>);

/// What a [`Packet`] holds. `data()` is the current packet; bytes before it are headroom.
#[derive(Debug, PartialEq, Eq)]
pub struct PacketBuf {
    buf: Vec<u8>,
    head: usize,
    tail: usize,
    pub anno: Annotations,
    /// Index of the injected packet this packet descends from (trace position).
    pub id: u64,
}

impl std::ops::Deref for Packet {
    type Target = PacketBuf;
    #[inline(always)]
    fn deref(&self) -> &PacketBuf {
        &self.0
    }
}

impl std::ops::DerefMut for Packet {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut PacketBuf {
        &mut self.0
    }
}

impl Clone for Packet {
    fn clone(&self) -> Self {
        count_created();
        Packet(Box::new(PacketBuf {
            buf: self.buf.clone(),
            head: self.head,
            tail: self.tail,
            anno: self.anno.clone(),
            id: self.id,
        }))
    }
}

impl Packet {
    /// A packet holding a copy of `bytes`, with default headroom.
    pub fn from_bytes(bytes: &[u8]) -> Self {
        count_created();
        let mut buf = vec![0u8; DEFAULT_HEADROOM + bytes.len()];
        buf[DEFAULT_HEADROOM..].copy_from_slice(bytes);
        Packet(Box::new(PacketBuf {
            head: DEFAULT_HEADROOM,
            tail: buf.len(),
            buf,
            anno: Annotations::default(),
            id: 0,
        }))
    }

    /// A zero-filled packet of `len` bytes.
    pub fn zeroed(len: usize) -> Self {
        count_created();
        let buf = vec![0u8; DEFAULT_HEADROOM + len];
        Packet(Box::new(PacketBuf {
            head: DEFAULT_HEADROOM,
            tail: buf.len(),
            buf,
            anno: Annotations::default(),
            id: 0,
        }))
    }

    /// What [`Packet::from_bytes`]`(bytes)` builds, made in this packet's buffer (its
    /// allocations reused): counted as a packet created, as `from_bytes` counts it.
    pub fn remade_from(mut self, bytes: &[u8]) -> Packet {
        count_created();
        self.0.refill_from(bytes);
        self
    }

    /// What [`Packet::zeroed`]`(len)` builds, made in this packet's buffer (its allocations
    /// reused): counted as a packet created, as `zeroed` counts it. Whatever this packet went
    /// through, the result cannot be told from a new one.
    pub fn remade_zeroed(mut self, len: usize) -> Packet {
        count_created();
        self.0.refill_zeroed(len);
        self
    }

    /// What `of.clone()` builds (the same bytes, headroom, annotations and id), made in this
    /// packet's buffer (its allocations reused): counted as a packet created, as `clone` counts
    /// it.
    pub fn remade_copy_of(mut self, of: &Packet) -> Packet {
        count_created();
        self.0.refill_copy_of(of);
        self
    }
}

impl PacketBuf {
    /// Make this packet what [`Packet::from_bytes`]`(bytes)` builds (zeroed default headroom,
    /// a copy of `bytes`, default annotations, id 0), reusing its allocation: how the real
    /// runtime refills the buffer of a packet that left with the next trace packet.
    #[inline]
    pub fn refill_from(&mut self, bytes: &[u8]) {
        let need = DEFAULT_HEADROOM + bytes.len();
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
        self.buf[..DEFAULT_HEADROOM].fill(0);
        self.buf[DEFAULT_HEADROOM..need].copy_from_slice(bytes);
        self.head = DEFAULT_HEADROOM;
        self.tail = need;
        self.anno = Annotations::default();
        self.id = 0;
    }

    /// Make this packet what [`Packet::zeroed`]`(len)` builds (zeroed default headroom, `len`
    /// zero bytes, default annotations, id 0), reusing its allocation.
    #[inline]
    pub fn refill_zeroed(&mut self, len: usize) {
        let need = DEFAULT_HEADROOM + len;
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
        self.buf[..need].fill(0);
        self.head = DEFAULT_HEADROOM;
        self.tail = need;
        self.anno = Annotations::default();
        self.id = 0;
    }

    /// Make this packet what a clone of `of` is (the same bytes up to its end, headroom
    /// included, the same annotations and id), reusing its allocation. Bytes past the end are
    /// never seen (`put` zeroes what it appends), so they are not copied.
    #[inline]
    pub fn refill_copy_of(&mut self, of: &PacketBuf) {
        let need = of.tail;
        if self.buf.len() < need {
            self.buf.resize(need, 0);
        }
        self.buf[..need].copy_from_slice(&of.buf[..need]);
        self.head = of.head;
        self.tail = of.tail;
        self.anno.clone_from(&of.anno);
        self.id = of.id;
    }

    /// The packet's bytes. Every element reads them, often several times per packet, so the
    /// range is not checked again here: `head <= tail <= buf.len()` holds after every method of
    /// this type (the fields are private; each constructor, refill, strip, push, put and take
    /// keeps it), and debug builds assert it.
    #[inline]
    pub fn data(&self) -> &[u8] {
        debug_assert!(self.head <= self.tail && self.tail <= self.buf.len());
        // SAFETY: `head <= tail <= buf.len()` (see above).
        unsafe { self.buf.get_unchecked(self.head..self.tail) }
    }
    /// [`PacketBuf::data`], writable.
    #[inline]
    pub fn data_mut(&mut self) -> &mut [u8] {
        debug_assert!(self.head <= self.tail && self.tail <= self.buf.len());
        // SAFETY: as for `data`.
        unsafe { self.buf.get_unchecked_mut(self.head..self.tail) }
    }
    #[inline]
    pub fn len(&self) -> usize {
        self.tail - self.head
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.tail == self.head
    }
    #[inline]
    pub fn headroom(&self) -> usize {
        self.head
    }
    /// Offset of the start of `data()` within the buffer (to relate `network_header` to data).
    #[inline]
    pub fn data_offset(&self) -> usize {
        self.head
    }

    /// Remove `n` bytes from the front (Click `pull`, used by Strip). Saturates at the length.
    #[inline]
    pub fn strip_front(&mut self, n: usize) {
        self.head += n.min(self.len());
    }

    /// Prepend `n` bytes (Click `push`, used by Unstrip and EtherEncap). Reuses headroom when
    /// there is enough; otherwise reallocates with fresh headroom. The new bytes are whatever
    /// the buffer held (Unstrip relies on this to restore a stripped header).
    #[inline]
    pub fn push_front(&mut self, n: usize) {
        if n <= self.head {
            self.head -= n;
        } else {
            self.push_front_grow(n);
        }
    }

    /// [`PacketBuf::push_front`] beyond the headroom: a new, larger buffer.
    #[cold]
    fn push_front_grow(&mut self, n: usize) {
        let extra = n - self.head + DEFAULT_HEADROOM;
        let mut nb = vec![0u8; self.buf.len() + extra];
        nb[extra..].copy_from_slice(&self.buf);
        self.buf = nb;
        self.head = self.head + extra - n;
        self.tail += extra;
        if let Some(nh) = self.anno.network_header.as_mut() {
            *nh += extra;
        }
    }

    /// Append `n` zero bytes at the end.
    #[inline]
    pub fn put(&mut self, n: usize) {
        if self.tail + n > self.buf.len() {
            self.buf.resize(self.tail + n, 0);
        }
        for b in &mut self.buf[self.tail..self.tail + n] {
            *b = 0;
        }
        self.tail += n;
    }

    /// Remove `n` bytes from the end (Click `take`).
    #[inline]
    pub fn take(&mut self, n: usize) {
        self.tail -= n.min(self.len());
    }

    /// The IP header, when the network header annotation is set and lies inside the data.
    #[inline]
    pub fn ip_header(&self) -> Option<&[u8]> {
        let nh = self.anno.network_header?;
        if nh < self.head || nh >= self.tail {
            return None;
        }
        Some(&self.buf[nh..self.tail])
    }
    #[inline]
    pub fn ip_header_mut(&mut self) -> Option<&mut [u8]> {
        let nh = self.anno.network_header?;
        if nh < self.head || nh >= self.tail {
            return None;
        }
        Some(&mut self.buf[nh..self.tail])
    }
    /// Offset of the IP header relative to `data()`, if it lies inside the data.
    #[inline]
    pub fn ip_offset(&self) -> Option<usize> {
        let nh = self.anno.network_header?;
        (nh >= self.head && nh < self.tail).then(|| nh - self.head)
    }
    /// Set the network header annotation to `data()[off..]` with header length `len`.
    #[inline]
    pub fn set_ip_header(&mut self, off: usize, len: usize) {
        self.anno.network_header = Some(self.head + off);
        self.anno.network_header_len = len;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Whatever a packet went through, refilling it gives the packet `from_bytes` builds.
        #[test]
        fn refill_from_equals_from_bytes_after_any_use(
            first in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            ops in proptest::collection::vec((0usize..4, 0usize..200), 0..8),
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
        ) {
            let mut p = used(&first, &ops);
            p.refill_from(&bytes);
            let fresh = Packet::from_bytes(&bytes);
            proptest::prop_assert_eq!(p.data(), fresh.data());
            proptest::prop_assert_eq!(p.headroom(), fresh.headroom());
            proptest::prop_assert_eq!(&p.anno, &fresh.anno);
            proptest::prop_assert_eq!(p.id, fresh.id);
            let (mut a, mut b) = (p, fresh);
            a.push_front(DEFAULT_HEADROOM);
            b.push_front(DEFAULT_HEADROOM);
            proptest::prop_assert_eq!(a.data(), b.data());
        }
    }

    /// A packet after some use: `ops` applied (strip, push, put, take), its data scribbled
    /// over, its annotations and id set.
    fn used(first: &[u8], ops: &[(usize, usize)]) -> Packet {
        let mut p = Packet::from_bytes(first);
        for &(op, n) in ops {
            match op {
                0 => p.strip_front(n),
                1 => p.push_front(n),
                2 => p.put(n),
                _ => p.take(n),
            }
            p.data_mut().fill(0x5a);
        }
        p.anno.paint = 9;
        p.set_ip_header(0, 20);
        p.anno.fix_ip_src = true;
        p.id = 3;
        p
    }

    /// Everything an element can see of two packets is the same: the data, the headroom's
    /// bytes (a header pushed into it), annotations, id, and what appending bytes shows.
    fn assert_same(a: Packet, b: Packet) -> Result<(), proptest::test_runner::TestCaseError> {
        proptest::prop_assert_eq!(a.data(), b.data());
        proptest::prop_assert_eq!(a.headroom(), b.headroom());
        proptest::prop_assert_eq!(&a.anno, &b.anno);
        proptest::prop_assert_eq!(a.id, b.id);
        proptest::prop_assert_eq!(a.ip_header(), b.ip_header());
        let (mut a, mut b) = (a, b);
        let h = a.headroom();
        a.push_front(h);
        b.push_front(h);
        proptest::prop_assert_eq!(a.data(), b.data());
        a.put(64);
        b.put(64);
        proptest::prop_assert_eq!(a.data(), b.data());
        a.push_front(DEFAULT_HEADROOM + 5);
        b.push_front(DEFAULT_HEADROOM + 5);
        proptest::prop_assert_eq!(a.data(), b.data());
        proptest::prop_assert_eq!(&a.anno, &b.anno);
        Ok(())
    }

    proptest::proptest! {
        /// Whatever a packet went through, remaking it zeroed gives what `zeroed` builds, and
        /// counts one packet created as `zeroed` does.
        #[test]
        fn remade_zeroed_equals_zeroed_after_any_use(
            first in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            ops in proptest::collection::vec((0usize..4, 0usize..200), 0..8),
            len in 0usize..600,
        ) {
            let p = used(&first, &ops);
            let before = packets_created();
            let p = p.remade_zeroed(len);
            proptest::prop_assert_eq!(packets_created() - before, 1);
            assert_same(p, Packet::zeroed(len))?;
        }

        /// Whatever a packet went through, remaking it from bytes gives what `from_bytes`
        /// builds, and counts one packet created as `from_bytes` does.
        #[test]
        fn remade_from_equals_from_bytes_after_any_use(
            first in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            ops in proptest::collection::vec((0usize..4, 0usize..200), 0..8),
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..600),
        ) {
            let p = used(&first, &ops);
            let before = packets_created();
            let p = p.remade_from(&bytes);
            proptest::prop_assert_eq!(packets_created() - before, 1);
            assert_same(p, Packet::from_bytes(&bytes))?;
        }

        /// Whatever a packet went through, remaking it as a copy of another gives what
        /// `clone` builds, and counts one packet created as `clone` does.
        #[test]
        fn remade_copy_equals_clone_after_any_use(
            first in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            ops in proptest::collection::vec((0usize..4, 0usize..200), 0..8),
            other in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..300),
            other_ops in proptest::collection::vec((0usize..4, 0usize..200), 0..8),
        ) {
            let p = used(&first, &ops);
            let mut of = used(&other, &other_ops);
            of.anno.dst_ip = [10, 0, 0, 1];
            of.id = 77;
            let before = packets_created();
            let p = p.remade_copy_of(&of);
            proptest::prop_assert_eq!(packets_created() - before, 1);
            let c = of.clone();
            assert_same(p, c)?;
        }
    }

    #[test]
    fn refill_from_equals_a_new_packet() {
        for (len, strip, push, put) in [
            (100, 14, 0, 0),
            (10, 0, 40, 0),
            (3, 0, 0, 900),
            (70, 20, 60, 3),
        ] {
            let mut p = Packet::from_bytes(&vec![9u8; len]);
            p.strip_front(strip);
            p.push_front(push);
            p.put(put);
            p.anno.paint = 3;
            p.id = 8;
            for bytes in [&[1u8, 2, 3][..], &[7u8; 200][..], &[][..]] {
                p.refill_from(bytes);
                let fresh = Packet::from_bytes(bytes);
                assert_eq!(p.data(), fresh.data());
                assert_eq!(p.headroom(), fresh.headroom());
                assert_eq!(p.anno, fresh.anno);
                assert_eq!(p.id, fresh.id);
                // What a header pushed into the headroom would show.
                let mut a = Packet::from_bytes(bytes);
                a.push_front(DEFAULT_HEADROOM);
                p.push_front(DEFAULT_HEADROOM);
                assert_eq!(p.data(), a.data());
                p.strip_front(DEFAULT_HEADROOM);
            }
        }
    }

    #[test]
    fn strip_and_unstrip_restore_header() {
        let mut p = Packet::from_bytes(&[1, 2, 3, 4, 5, 6]);
        p.set_ip_header(2, 4);
        p.strip_front(2);
        assert_eq!(p.data(), &[3, 4, 5, 6]);
        assert_eq!(p.ip_offset(), Some(0));
        p.push_front(2);
        assert_eq!(p.data(), &[1, 2, 3, 4, 5, 6]);
        assert_eq!(p.ip_offset(), Some(2));
    }

    #[test]
    fn push_front_beyond_headroom_keeps_data_and_annotation() {
        let mut p = Packet::from_bytes(&[9, 8, 7]);
        p.set_ip_header(0, 3);
        p.push_front(DEFAULT_HEADROOM + 10);
        assert_eq!(p.len(), DEFAULT_HEADROOM + 13);
        assert_eq!(&p.data()[DEFAULT_HEADROOM + 10..], &[9, 8, 7]);
        assert_eq!(p.ip_header().unwrap(), &[9, 8, 7]);
    }
}
