//! The two builds of the elements behind one interface, so the driver that feeds packets, answers
//! for the link neighbours and writes the outputs is one piece of code for both:
//!
//! - [`Recording`]: `pktflow_elements::Router`, the functional run that records every cost (what
//!   `pktflow profile` runs); used here as the reference the fast run is compared with.
//! - [`Fast`]: `pktflow_elements_fast::Router`, the same element sources compiled with
//!   `--cfg pktflow_fast` (cost recording compiled out, buffers reused).
use pktflow_elements_fast::conf::Shared;
use pktflow_model::{AppGraph, Diagnostic};
use pktflow_traffic::{Packet, TraceRef};
use std::path::Path;
use std::sync::Arc;

/// The packet balance of a run: conserved when `injected + created == output + dropped + held`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Balance {
    pub injected: u64,
    pub created: u64,
    pub output: u64,
    pub dropped: u64,
    pub held: u64,
    /// Packets handed from one thread's elements to another's (element groups on threads),
    /// counted where they arrived and where they left; 0 for copies of the whole graph.
    pub received: u64,
    pub exported: u64,
}

impl Balance {
    /// Every packet accounted for: summed over the threads, the hand-overs cancel out
    /// (`received == exported`) and `injected + created == output + dropped + held`.
    pub fn conserved(&self) -> bool {
        self.received == self.exported
            && self.injected + self.created == self.output + self.dropped + self.held
    }
    pub fn add(&mut self, o: &Balance) {
        self.injected += o.injected;
        self.created += o.created;
        self.output += o.output;
        self.dropped += o.dropped;
        self.held += o.held;
        self.received += o.received;
        self.exported += o.exported;
    }
}

/// What the driver needs of a router.
pub trait Engine {
    /// Inject a packet built from `tp` (id `id`) on input interface `iface`.
    fn inject_trace(&mut self, tp: &TraceRef<'_>, id: u64) -> Result<(), String>;
    /// Process the next packet of the configuration's own sources; false once exhausted.
    fn generate_next(&mut self) -> bool;
    fn n_sources(&self) -> usize;
    fn n_generators(&self) -> usize;
    /// Whether every one of the configuration's own sources ends by itself (FromDump).
    fn generators_finite(&self) -> bool;
    fn generator_names(&self) -> Vec<String>;
    fn stopped(&self) -> bool;
    fn set_tap(&mut self, on: bool);
    /// Packets that left through sinks since the last call, with the sink's element index,
    /// into `into` (empty): the two vectors are exchanged, not copied.
    fn drain_departed(&mut self, into: &mut Vec<(u32, Packet)>);
    /// Give back a departed packet (its buffer is reused by the fast build).
    fn recycle(&mut self, p: Packet);
    fn device_of(&self, element: u32) -> Option<String>;
    fn class_of(&self, element: u32) -> &str;
    fn source_index_of_device(&self, dev: &str) -> Option<usize>;
    fn last_timestamp(&self) -> u64;
    fn finish(&mut self) -> Result<(), String>;
    fn stats(&self) -> serde_json::Value;
    fn held_total(&self) -> u64;
}

/// Refill a reused packet buffer with `bytes` and fresh annotations, as
/// `TracePacket::to_packet` builds a new one: default headroom, then the bytes.
#[inline]
pub fn refill(p: &mut Packet, tp: &TraceRef<'_>, id: u64) {
    p.refill_from(tp.data);
    tp.annotate(p, id);
}

macro_rules! common_engine {
    () => {
        fn generate_next(&mut self) -> bool {
            self.0.generate_next().is_some()
        }
        fn n_sources(&self) -> usize {
            self.0.n_sources()
        }
        fn n_generators(&self) -> usize {
            self.0.n_generators()
        }
        fn generators_finite(&self) -> bool {
            self.0.generators_finite()
        }
        fn generator_names(&self) -> Vec<String> {
            self.0.generator_names()
        }
        fn stopped(&self) -> bool {
            self.0.stopped()
        }
        fn set_tap(&mut self, on: bool) {
            self.0.set_tap(on)
        }
        #[inline]
        fn drain_departed(&mut self, into: &mut Vec<(u32, pktflow_traffic::Packet)>) {
            self.0.swap_departed(into);
        }
        fn device_of(&self, element: u32) -> Option<String> {
            self.0
                .element(element as usize)
                .device()
                .map(str::to_string)
        }
        fn class_of(&self, element: u32) -> &str {
            &self.0.graph.elements[element as usize].class
        }
        fn source_index_of_device(&self, dev: &str) -> Option<usize> {
            self.0.source_index_of_device(dev)
        }
        fn last_timestamp(&self) -> u64 {
            self.0.last_trace().timestamp_ns
        }
        fn finish(&mut self) -> Result<(), String> {
            self.0.finish()
        }
        fn stats(&self) -> serde_json::Value {
            self.0.stats()
        }
        fn held_total(&self) -> u64 {
            self.0.held().iter().map(|(_, c)| *c as u64).sum()
        }
    };
}

pub(crate) use common_engine;

/// `inject_trace` and `recycle` of a build that reuses packet buffers (the fast and the timed
/// build): a departed packet's buffer is refilled with the next trace packet.
macro_rules! reusing_engine {
    () => {
        #[inline]
        fn inject_trace(
            &mut self,
            tp: &pktflow_traffic::TraceRef<'_>,
            id: u64,
        ) -> Result<(), String> {
            let p = match self.0.take_free() {
                Some(mut p) => {
                    $crate::engine::refill(&mut p, tp, id);
                    p
                }
                None => tp.to_packet(id),
            };
            self.0.inject(tp.iface as usize, p).map(|_| ())
        }
        fn recycle(&mut self, p: pktflow_traffic::Packet) {
            self.0.recycle(p);
        }
        $crate::engine::common_engine!();
    };
}
pub(crate) use reusing_engine;

/// The functional run with cost recording (the reference).
pub struct Recording(pub pktflow_elements::Router);

impl Recording {
    pub fn new(graph: &AppGraph, base_dir: &Path, out_dir: &Path) -> Result<Self, Vec<Diagnostic>> {
        let opts = pktflow_elements::RouterOptions {
            base_dir: base_dir.to_path_buf(),
            out_dir: out_dir.to_path_buf(),
        };
        pktflow_elements::Router::new(graph.clone(), &opts).map(Recording)
    }
}

impl Engine for Recording {
    fn inject_trace(&mut self, tp: &TraceRef<'_>, id: u64) -> Result<(), String> {
        self.0
            .inject(tp.iface as usize, tp.to_packet(id))
            .map(|_| ())
    }
    fn recycle(&mut self, p: Packet) {
        drop(p);
    }
    common_engine!();
}

/// The fast build: no cost recording, packet buffers reused.
pub struct Fast(pub pktflow_elements_fast::Router);

impl Fast {
    fn options(base_dir: &Path, out_dir: &Path) -> pktflow_elements_fast::RouterOptions {
        pktflow_elements_fast::RouterOptions {
            base_dir: base_dir.to_path_buf(),
            out_dir: out_dir.to_path_buf(),
        }
    }

    pub fn new(
        graph: &AppGraph,
        base_dir: &Path,
        out_dir: &Path,
        shared: Arc<Shared>,
    ) -> Result<Self, Vec<Diagnostic>> {
        let opts = Self::options(base_dir, out_dir);
        pktflow_elements_fast::Router::new_shared(graph.clone(), &opts, shared).map(Fast)
    }

    /// As [`Fast::new`], the scripts left to [`pktflow_elements_fast::run_scripts_across`]
    /// (one of several routers of a graph whose scripts run once, against all of them).
    pub fn new_deferred(
        graph: &AppGraph,
        base_dir: &Path,
        out_dir: &Path,
        shared: Arc<Shared>,
    ) -> Result<Self, Vec<Diagnostic>> {
        let opts = Self::options(base_dir, out_dir);
        pktflow_elements_fast::Router::new_deferred(graph.clone(), &opts, shared).map(Fast)
    }

    pub fn balance(&self) -> Balance {
        let c = self.0.counts();
        Balance {
            injected: c.injected,
            created: c.created,
            output: c.output,
            dropped: c.dropped,
            held: c.held,
            received: c.received,
            exported: c.exported,
        }
    }
}

impl Engine for Fast {
    reusing_engine!();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refill_matches_a_new_packet() {
        let tp = pktflow_traffic::TracePacket {
            timestamp_ns: 77,
            iface: 1,
            data: (0u8..60).collect(),
            orig_len: 60,
        };
        let fresh = tp.to_packet(5);
        // A used buffer: stripped, prepended, lengthened, annotated.
        for (strip, push, put) in [(14, 0, 0), (0, 40, 0), (0, 0, 900), (20, 60, 3)] {
            let mut p = Packet::from_bytes(&[9u8; 100]);
            p.strip_front(strip);
            p.push_front(push);
            p.put(put);
            p.anno.paint = 3;
            refill(&mut p, &tp.as_ref(), 5);
            assert_eq!(p.data(), fresh.data());
            assert_eq!(p.headroom(), fresh.headroom());
            assert_eq!(p.anno, fresh.anno);
            assert_eq!(p.id, 5);
        }
    }
}
