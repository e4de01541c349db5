//! A batch of trace packets for one thread, their bytes in one buffer: the I/O thread fills it,
//! a worker reads it, and it goes back to the I/O thread for the next batch (the return ring of
//! `api::run_rtc_inner`), so reading and handing packets to threads allocates nothing per packet
//! once the batches have grown to their working size.
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

#[cfg(test)]
mod tests {
    use super::*;
    use pktflow_traffic::TracePacket;
    use proptest::prelude::*;

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
