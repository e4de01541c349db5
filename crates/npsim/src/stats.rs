//! Bounded-memory statistics: a log-linear histogram (1/64 relative precision) and the report.
use serde::Serialize;
use std::collections::BTreeMap;

/// Histogram of u64 values with 64 sub-buckets per power of two (values below 128 exact).
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    max: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; 64 * 57 + 128],
            n: 0,
            sum: 0,
            max: 0,
        }
    }
}

fn bucket(v: u64) -> usize {
    if v < 128 {
        v as usize
    } else {
        let e = 63 - v.leading_zeros();
        ((e - 6) * 64) as usize + (v >> (e - 6)) as usize
    }
}

fn lower(b: usize) -> u64 {
    if b < 128 {
        b as u64
    } else {
        let e = (b / 64) as u32 + 5;
        let m = (b % 64) as u64 + 64;
        m << (e - 6)
    }
}

impl Histogram {
    pub fn add(&mut self, v: u64) {
        self.counts[bucket(v)] += 1;
        self.n += 1;
        self.sum += v as u128;
        self.max = self.max.max(v);
    }
    pub fn count(&self) -> u64 {
        self.n
    }
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }
    pub fn max(&self) -> u64 {
        self.max
    }
    /// Value at quantile `q` (the lower edge of its bucket, exact below 128).
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        let target = ((q * self.n as f64).ceil() as u64).clamp(1, self.n);
        let mut acc = 0;
        for (b, &c) in self.counts.iter().enumerate() {
            acc += c;
            if acc >= target {
                return lower(b).min(self.max);
            }
        }
        self.max
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Latency {
    pub mean_cycles: f64,
    pub p50_cycles: u64,
    pub p90_cycles: u64,
    pub p99_cycles: u64,
    pub max_cycles: u64,
    pub mean_ns: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct PeStats {
    pub pe: u32,
    /// The architecture's control core (the XScale of `ixp2400`), index `pe_count`; listed only
    /// when some task is mapped to it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub control_core: bool,
    /// Fractions of the simulated time (sum to 1): a context computing; none computing and one
    /// waiting for memory (or for room in a request queue); none of those and one waiting for a
    /// lock; idle.
    pub busy: f64,
    pub memory_wait: f64,
    pub lock_wait: f64,
    pub idle: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct ResourceStats {
    pub name: String,
    pub requests: u64,
    /// Busy (unpipelined) time over simulated time (per channel for devices: averaged).
    pub utilization: f64,
    /// Mean time a request waited in this resource's queue, cycles.
    pub mean_queue_delay_cycles: f64,
    /// Time-average number of requests waiting.
    pub mean_queue_length: f64,
}

#[derive(Clone, Debug, Serialize)]
pub struct TaskStats {
    pub task: u32,
    pub element: String,
    pub instances: u64,
    pub mean_queue_cycles: f64,
    pub mean_queue_length: f64,
    pub max_queue_length: u64,
    /// Lock-holding time of this task's locks over the simulated time (the mean number of its
    /// locks held; with one lock per task, the share of the time it is held).
    pub lock_held: f64,
    /// Its busiest lock: share of the simulated time it was held.
    pub max_lock_held: f64,
    pub dropped: u64,
    /// Cycles its instances spent computing (instructions), over the whole run: the task's
    /// processing load, which the greedy mapper (seed 000 section 3.1 step 2) balances.
    pub busy_cycles: u64,
    /// Cycles its instances held a context (from dispatch to the end: compute, memory and lock
    /// waits), over the whole run.
    pub occupancy_cycles: u64,
    /// Hand-off requests its instances issued (seed 001 section 3, `np.handoff_requests`):
    /// reads when a packet entered its group, writes when a packet it modified left it.
    pub handoff_reads: u64,
    pub handoff_writes: u64,
}

/// One lock (a group of shared locations, seed 000 section 2.4).
#[derive(Clone, Debug, Serialize)]
pub struct LockStats {
    pub lock: u32,
    pub element: String,
    /// Shared locations grouped under this lock.
    pub locations: u32,
    /// Share of the simulated time it was held.
    pub held: f64,
    pub acquisitions: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct Window {
    pub start_cycle: u64,
    pub end_cycle: u64,
    pub arrivals: u64,
    /// Packets that left the NP (delivered, dropped by the application or held by it) in the
    /// window.
    pub departures: u64,
    pub delivered: u64,
    pub delivered_bytes: u64,
    pub sim_drops: u64,
    pub in_flight_at_start: u64,
    pub in_flight_at_end: u64,
    pub queued_at_start: u64,
    pub queued_at_end: u64,
}

#[derive(Clone, Debug, Serialize)]
pub struct SimReport {
    pub pe_count: u32,
    pub pe_frequency_mhz: u32,
    pub inter_arrival_cycles: f64,
    pub offered_packets_per_second: f64,
    pub injected: u64,
    pub delivered: u64,
    pub dropped_by_app: u64,
    pub held_by_app: u64,
    /// Drops by the simulated NP, by reason.
    pub dropped_by_np: BTreeMap<String, u64>,
    pub dropped_by_app_reasons: BTreeMap<String, u64>,
    pub in_flight_at_end: u64,
    pub mean_wire_bytes: f64,
    pub cycles: u64,
    pub window: Window,
    /// Mean inter-departure time in the window, cycles (departures of every kind).
    pub mean_inter_departure_cycles: f64,
    pub mean_inter_arrival_cycles: f64,
    /// Delivered packets per second in the window.
    pub throughput_packets_per_second: f64,
    pub throughput_gbps: f64,
    pub latency: Latency,
    pub pes: Vec<PeStats>,
    pub buses: Vec<ResourceStats>,
    pub channels: Vec<ResourceStats>,
    /// Per storage: aggregate over its channels (and over PEs when private).
    pub storage: Vec<ResourceStats>,
    pub tasks: Vec<TaskStats>,
    /// Locks created (one per group of shared locations, or per object / task).
    pub lock_count: u64,
    /// The busiest locks (at most 10), most held first.
    pub locks: Vec<LockStats>,
    pub events: u64,
    pub wall_seconds: f64,
    pub events_per_second: f64,
    /// [xform hook] what the transformations did (absent when none is on).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transform: Option<crate::xform::TransformReport>,
    pub invariant_violations: Vec<String>,
}

impl SimReport {
    /// The NP keeps up (seed 000 section 4: "the packet inter-departure time is equivalent"):
    /// departures in the window are at least `1 - tolerance` of the arrivals, the packets in
    /// flight did not grow by more than `tolerance` of the arrivals, and, with `zero_drop`
    /// (seed 004's criterion), the NP dropped nothing in the window.
    pub fn keeps_up(&self, tolerance: f64, zero_drop: bool) -> bool {
        use pktflow_harness::Measured;
        let w = self.window();
        w.keeps_up(tolerance) && (!zero_drop || w.drops == 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_buckets_are_contiguous_and_quantiles_close() {
        for v in [
            0u64,
            1,
            127,
            128,
            129,
            191,
            192,
            255,
            256,
            1000,
            1 << 40,
            u64::MAX,
        ] {
            let b = bucket(v);
            assert!(lower(b) <= v, "{v}");
            if b + 1 < 64 * 57 + 128 {
                assert!(lower(b + 1) > v, "{v}");
            }
        }
        let mut h = Histogram::default();
        for v in 1..=10_000u64 {
            h.add(v);
        }
        let p50 = h.quantile(0.5) as f64;
        assert!((p50 - 5000.0).abs() / 5000.0 < 0.02, "{p50}");
        assert_eq!(h.quantile(1.0), lower(bucket(10_000)));
        assert_eq!(h.max(), 10_000);
        assert!((h.mean() - 5000.5).abs() < 1e-9);
    }
}
