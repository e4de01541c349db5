//! A batch of trace packets for one thread, their bytes in one buffer: the I/O thread fills it,
//! a worker reads it, and it goes back to the I/O thread for the next batch (the return ring of
//! `api::run_rtc_inner`, or a [`link`] in `crate::staged`), so reading and handing packets to
//! threads allocates nothing per packet once the batches have grown to their working size.
//!
//! [`link`]: a ring of batches with a ring back, so the batches one thread hands another
//! circulate between the two instead of being allocated by one and freed by the other.
use crate::ring::{self, Consumer, Producer};
use pktflow_traffic::TraceRef;

/// Where one packet of a batch lies in its buffer.
#[derive(Clone, Copy, Debug)]
struct Slot {
    timestamp_ns: u64,
    orig_len: u32,
    start: u32,
    len: u32,
    iface: u16,
}

/// Packets in order, their bytes back to back in one vector.
#[derive(Debug, Default)]
pub struct TraceBatch {
    bytes: Vec<u8>,
    slots: Vec<Slot>,
}

impl TraceBatch {
    /// Room for `packets` packets of `bytes_each` bytes on average before it grows.
    pub fn with_capacity(packets: usize, bytes_each: usize) -> Self {
        TraceBatch {
            bytes: Vec::with_capacity(packets * bytes_each),
            slots: Vec::with_capacity(packets),
        }
    }

    /// Append a copy of `p`.
    #[inline]
    pub fn push(&mut self, p: &TraceRef<'_>) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(p.data);
        self.slots.push(Slot {
            timestamp_ns: p.timestamp_ns,
            orig_len: p.orig_len,
            // A batch holds at most a few thousand packets of at most 256 KiB each
            // (pktflow_traffic::pcap::MAX_CAPLEN): far below 4 GiB.
            start: start as u32,
            len: p.data.len() as u32,
            iface: p.iface,
        });
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Empty it, keeping both buffers.
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.slots.clear();
    }

    /// The packets, in the order they were pushed.
    pub fn iter(&self) -> impl Iterator<Item = TraceRef<'_>> + '_ {
        self.slots.iter().map(|s| TraceRef {
            timestamp_ns: s.timestamp_ns,
            iface: s.iface,
            data: &self.bytes[s.start as usize..(s.start + s.len) as usize],
            orig_len: s.orig_len,
        })
    }
}

/// The sending side of a [`link`].
pub struct LinkOut<B> {
    fwd: Producer<B>,
    back: Consumer<B>,
}

/// The receiving side of a [`link`].
pub struct LinkIn<B> {
    fwd: Consumer<B>,
    back: Producer<B>,
}

/// A ring of at least `slots` batches from one thread to another, and the ring that brings the
/// emptied batches back to the sender. The ring back has room for every batch that can be
/// between the two in steady state (the ring's slots, the one being filled, the one being
/// read), so it is never full then; a batch given back to a full ring back is dropped (after a
/// burst of batches the sender had to allocate). Neither side ever waits on the ring back.
pub fn link<B>(slots: usize) -> (LinkOut<B>, LinkIn<B>) {
    let (fp, fc) = ring::ring(slots);
    let (bp, bc) = ring::ring(fp.capacity() + 2);
    (LinkOut { fwd: fp, back: bc }, LinkIn { fwd: fc, back: bp })
}

impl<B> LinkOut<B> {
    /// An empty batch to fill: one given back if there is one, else `new()`.
    #[inline]
    pub fn fresh(&mut self, new: impl FnOnce() -> B) -> B {
        self.back.try_pop().unwrap_or_else(new)
    }

    /// Hand `b` over, or give it back when the ring is full.
    #[inline]
    pub fn try_push(&mut self, b: B) -> Result<(), B> {
        self.fwd.try_push(b)
    }

    pub fn capacity(&self) -> usize {
        self.fwd.capacity()
    }
}

impl<B> LinkIn<B> {
    /// The oldest batch handed over, if any.
    #[inline]
    pub fn try_pop(&mut self) -> Option<B> {
        self.fwd.try_pop()
    }

    /// Batches waiting in the ring.
    pub fn len(&self) -> usize {
        self.fwd.len()
    }

    pub fn is_empty(&self) -> bool {
        self.fwd.is_empty()
    }

    /// Give a batch back to the sender for reuse (dropped when the ring back is full). The
    /// caller empties it first: the sender fills what it gets back as it is.
    #[inline]
    pub fn give_back(&mut self, b: B) {
        let _ = self.try_give_back(b);
    }

    /// [`LinkIn::give_back`], returning the batch when the ring back is full (for the caller
    /// to keep what it put in it).
    #[inline]
    pub fn try_give_back(&mut self, b: B) -> Result<(), B> {
        self.back.try_push(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pktflow_traffic::TracePacket;
    use proptest::prelude::*;

    /// Batches given back come out of `fresh` again (the same buffers), in the order given.
    #[test]
    fn batches_given_back_are_reused() {
        let (mut tx, mut rx) = link::<Vec<u32>>(4);
        let mut made = 0;
        let mut sent = Vec::new();
        for i in 0..3 {
            let mut b = tx.fresh(|| {
                made += 1;
                Vec::with_capacity(8)
            });
            b.push(i);
            sent.push(b.as_ptr());
            assert!(tx.try_push(b).is_ok());
        }
        assert_eq!(made, 3);
        for i in 0..3 {
            let mut b = rx.try_pop().expect("a batch");
            assert_eq!(b, vec![i]);
            b.clear();
            rx.give_back(b);
        }
        assert!(rx.try_pop().is_none());
        for &p in &sent {
            let b = tx.fresh(|| panic!("a batch was given back"));
            assert_eq!(b.as_ptr(), p);
            assert!(b.is_empty());
        }
    }

    /// Two threads: every value arrives once and in order, and the sender makes at most as many
    /// batches as can be between the two at once (the ring's slots, the one being read, the one
    /// being filled); the rest are batches it got back.
    #[test]
    fn two_threads_lose_nothing_and_reuse_batches() {
        const N: u32 = 100_000;
        let (mut tx, mut rx) = link::<Vec<u32>>(4);
        let most = tx.capacity() + 2;
        let reader = std::thread::spawn(move || {
            let mut next = 0u32;
            let mut waits = 0;
            while next < N {
                match rx.try_pop() {
                    Some(mut b) => {
                        for v in b.drain(..) {
                            assert_eq!(v, next, "lost or reordered");
                            next += 1;
                        }
                        rx.give_back(b);
                    }
                    None => {
                        waits += 1;
                        crate::ring::backoff(waits);
                    }
                }
            }
            assert!(rx.try_pop().is_none(), "more than was sent");
        });
        let mut made = 0;
        let mut v = 0u32;
        while v < N {
            let mut b = tx.fresh(|| {
                made += 1;
                Vec::with_capacity(7)
            });
            assert!(b.is_empty());
            while b.len() < 7 && v < N {
                b.push(v);
                v += 1;
            }
            let mut waits = 0;
            while let Err(back) = tx.try_push(b) {
                b = back;
                waits += 1;
                crate::ring::backoff(waits);
            }
        }
        reader.join().unwrap();
        assert!(made <= most, "{made} batches made, at most {most} expected");
    }

    proptest! {
        /// What goes in comes out, in order, after any number of reuses.
        #[test]
        fn packets_come_out_as_they_went_in(
            rounds in proptest::collection::vec(
                proptest::collection::vec((any::<u64>(), any::<u16>(), proptest::collection::vec(any::<u8>(), 0..200), any::<u32>()), 0..20),
                1..4,
            ),
        ) {
            let mut b = TraceBatch::with_capacity(4, 64);
            for round in rounds {
                b.clear();
                let want: Vec<TracePacket> = round
                    .into_iter()
                    .map(|(timestamp_ns, iface, data, orig_len)| TracePacket { timestamp_ns, iface, data, orig_len })
                    .collect();
                for p in &want {
                    b.push(&p.as_ref());
                }
                prop_assert_eq!(b.len(), want.len());
                let got: Vec<TracePacket> = b.iter().map(|r| r.to_owned()).collect();
                prop_assert_eq!(got, want);
            }
        }
    }
}
