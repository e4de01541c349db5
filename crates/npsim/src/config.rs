//! Simulation parameters: the mapping of tasks to PEs (seed 000 sections 3.1 and 5), the run
//! (arrival rate, measurement window, queue bound, seed) and the idealizations of section 5.
use serde::{Deserialize, Serialize};

/// Replication scopes of seed 000 section 5 ("no transformation", "rep on PE", "subset rep",
/// "rep+global task queue").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Replication {
    /// One instance of a task at a time, on its PE.
    None,
    /// Replicas on the task's PE: any of its contexts.
    Pe,
    /// Replicas on a small subset of PEs sharing one queue.
    Subset,
    /// Any context of any processing PE (global task queue).
    Global,
}

impl Replication {
    pub fn parse(s: &str) -> Result<Replication, String> {
        Ok(match s {
            "none" => Replication::None,
            "pe" => Replication::Pe,
            "subset" => Replication::Subset,
            "global" => Replication::Global,
            _ => {
                return Err(format!(
                    "unknown replication '{s}' (expected none, pe, subset or global)"
                ))
            }
        })
    }
}

/// Where one task runs: the PEs whose contexts may take its instances from its (shared) queue,
/// and how many instances may run at once (1 = not replicated). PE index `pe_count` is the
/// architecture's control core (the XScale of `ixp2400`) when it has one.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskMap {
    pub pes: Vec<u32>,
    pub max_concurrent: u32,
    /// Task group (seed 001: the elements grouped into one task). When a packet's next visit
    /// runs in another group, the sender writes and the receiver reads the packet header
    /// through the architecture's `handoff_storage` (`np.handoff_requests` each; the write only
    /// when the sender's group modified the packet). None: the task takes no part in hand-offs
    /// (interface tasks; every task of the mappers here).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<u32>,
}

impl TaskMap {
    /// A task on `pes` with no group.
    pub fn new(pes: Vec<u32>, max_concurrent: u32) -> TaskMap {
        TaskMap {
            pes,
            max_concurrent,
            group: None,
        }
    }
}

/// Tasks (one per element, by element index) to PEs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mapping {
    pub tasks: Vec<TaskMap>,
}

impl Mapping {
    /// The default mapping of a replication scope. Interface tasks (`interface[i]`) are bound
    /// round-robin to PEs `0..interface_pes` of their own (seed 000 section 4: "each application
    /// has two input and two output interface tasks"; section 5: "four is the minimum number of
    /// PEs allowing us to bind each interface task to a PE"); the other tasks are spread
    /// round-robin over the remaining PEs (all PEs when none remain, the paper's 4-PE case).
    /// `subset_size`: PEs per group for [`Replication::Subset`]. The greedy mapper of section 3.1
    /// step 2 will replace the round-robin spreading.
    pub fn default_for(
        interface: &[bool],
        pe_count: u32,
        interface_pes: u32,
        rep: Replication,
        subset_size: u32,
    ) -> Result<Mapping, String> {
        if pe_count == 0 {
            return Err("the number of PEs must be at least 1".into());
        }
        if subset_size == 0 {
            return Err("the subset size must be at least 1 PE".into());
        }
        let ifp = interface_pes.min(pe_count);
        let proc: Vec<u32> = if pe_count > ifp {
            (ifp..pe_count).collect()
        } else {
            (0..pe_count).collect()
        };
        let ifaces: Vec<u32> = if ifp > 0 {
            (0..ifp).collect()
        } else {
            proc.clone()
        };
        let groups: Vec<Vec<u32>> = proc
            .chunks(subset_size as usize)
            .map(|c| c.to_vec())
            .collect();
        let conc = match rep {
            Replication::None => 1,
            _ => u32::MAX,
        };
        let (mut ni, mut np) = (0usize, 0usize);
        let tasks = interface
            .iter()
            .map(|&is_if| {
                if is_if {
                    let pe = ifaces[ni % ifaces.len()];
                    ni += 1;
                    TaskMap::new(vec![pe], conc)
                } else {
                    let k = np;
                    np += 1;
                    let pes = match rep {
                        Replication::None | Replication::Pe => vec![proc[k % proc.len()]],
                        Replication::Subset => groups[k % groups.len()].clone(),
                        // "any task or replica can execute on any available context of any
                        // PE" (section 5): interface PEs included.
                        Replication::Global => (0..pe_count).collect(),
                    };
                    TaskMap::new(pes, conc)
                }
            })
            .collect();
        Ok(Mapping { tasks })
    }

    /// Idealization I (infinite PEs): every task on PEs of its own, `per_task` of them (1: as
    /// many PEs as tasks, the task and its replicas on one PE's contexts; more lets a replicated
    /// task use that many PEs' contexts). Keeps each task's `max_concurrent`. Returns the PE
    /// count and the mapping.
    pub fn infinite(&self, per_task: u32) -> (u32, Mapping) {
        let k = per_task.max(1);
        let tasks = self
            .tasks
            .iter()
            .enumerate()
            .map(|(i, t)| TaskMap {
                pes: (i as u32 * k..(i as u32 + 1) * k).collect(),
                max_concurrent: t.max_concurrent,
                group: t.group,
            })
            .collect();
        (self.tasks.len() as u32 * k, Mapping { tasks })
    }

    pub fn validate(&self, pe_count: u32) -> Result<(), String> {
        for (i, t) in self.tasks.iter().enumerate() {
            if t.pes.is_empty() {
                return Err(format!("mapping: task {i} has no PE"));
            }
            if t.max_concurrent == 0 {
                return Err(format!("mapping: task {i} allows 0 concurrent instances"));
            }
            if let Some(p) = t.pes.iter().find(|&&p| p >= pe_count) {
                return Err(format!(
                    "mapping: task {i} is mapped to PE {p} but there are {pe_count} PEs"
                ));
            }
        }
        Ok(())
    }
}

/// Idealized executions of seed 000 section 5 (Figure 8). Infinite PEs (I) acts on the mapping
/// ([`Mapping::infinite`], applied by [`crate::app::Prepared`]), the others on the simulator.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Ideal {
    /// I: infinite PEs (each task on PEs of its own).
    pub infinite_pes: bool,
    /// Z: zero-cycle instructions.
    pub zero_instructions: bool,
    /// S: no synchronization ("there are no critical sections and we ignore inter-replica
    /// dependences").
    pub no_sync: bool,
    /// B: perfect bus pipelining (a bus's unpipelined time is 1 cycle; the rest moves to its
    /// pipelined part so the zero-load latency is unchanged).
    pub bus_pipelined: bool,
    /// M: "maximum memory pipelining ... the unpipelined time for a request is 1 cycle" (the
    /// rest moves to the pipelined part).
    pub mem_pipelined: bool,
}

impl Ideal {
    /// From Figure 8's letters, e.g. `"IZS"` (any order; `""` or `"none"` = no idealization).
    pub fn parse(s: &str) -> Result<Ideal, String> {
        let mut i = Ideal::default();
        if s.eq_ignore_ascii_case("none") {
            return Ok(i);
        }
        for c in s.chars() {
            let f = match c.to_ascii_uppercase() {
                'I' => &mut i.infinite_pes,
                'Z' => &mut i.zero_instructions,
                'S' => &mut i.no_sync,
                'B' => &mut i.bus_pipelined,
                'M' => &mut i.mem_pipelined,
                _ => {
                    return Err(format!(
                    "unknown idealization '{c}' in '{s}' (letters: I infinite PEs, Z zero-cycle \
                         instructions, S no synchronization, B perfect bus pipelining, M memories \
                         with 1-cycle unpipelined time)"
                ))
                }
            };
            if *f {
                return Err(format!("idealization '{c}' repeated in '{s}'"));
            }
            *f = true;
        }
        Ok(i)
    }

    /// Figure 8's letters in the order I, Z, S, B, M (`"none"` when nothing is idealized).
    pub fn label(&self) -> String {
        let mut s = String::new();
        for (on, c) in [
            (self.infinite_pes, 'I'),
            (self.zero_instructions, 'Z'),
            (self.no_sync, 'S'),
            (self.bus_pipelined, 'B'),
            (self.mem_pipelined, 'M'),
        ] {
            if on {
                s.push(c);
            }
        }
        if s.is_empty() {
            s.push_str("none");
        }
        s
    }

    /// Both idealizations together.
    pub fn union(&self, o: &Ideal) -> Ideal {
        Ideal {
            infinite_pes: self.infinite_pes || o.infinite_pes,
            zero_instructions: self.zero_instructions || o.zero_instructions,
            no_sync: self.no_sync || o.no_sync,
            bus_pipelined: self.bus_pipelined || o.bus_pipelined,
            mem_pipelined: self.mem_pipelined || o.mem_pipelined,
        }
    }
}

/// A number from a JSON request: a JSON number, or one of the strings `"NaN"`, `"Infinity"`,
/// `"-Infinity"` (JSON has no literal for them; the Python front sends these so that the value
/// reaches validation, which then names the option).
pub fn lenient_f64<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum F {
        N(f64),
        S(String),
    }
    match F::deserialize(d)? {
        F::N(x) => Ok(x),
        F::S(s) => match s.as_str() {
            "NaN" | "nan" => Ok(f64::NAN),
            "Infinity" | "inf" | "+inf" => Ok(f64::INFINITY),
            "-Infinity" | "-inf" => Ok(f64::NEG_INFINITY),
            _ => Err(serde::de::Error::custom(format!(
                "expected a number, got \"{s}\""
            ))),
        },
    }
}

/// A positive, finite number at most `max`, or an error naming `what`.
pub fn check_positive(what: &str, v: f64, max: f64) -> Result<(), String> {
    if !v.is_finite() || v <= 0.0 {
        return Err(format!("{what} must be a positive number, got {v}"));
    }
    if v > max {
        return Err(format!(
            "{what} = {v:e} is larger than the {max:e} supported"
        ));
    }
    Ok(())
}

/// Largest task queue, instances.
pub const MAX_TASK_QUEUE: u32 = 1 << 20;
/// Largest inter-arrival time, cycles (1,000 s at 1 GHz).
pub const MAX_INTER_ARRIVAL_CYCLES: f64 = 1e12;
/// Smallest inter-arrival time, cycles: the maximum-rate search's floor (arrivals land on whole
/// cycles, so below this every packet of a run arrives in the same cycle and no rate is defined).
pub const MIN_INTER_ARRIVAL_CYCLES: f64 = 1e-3;

/// One simulation run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SimConfig {
    /// Fixed packet inter-arrival time, PE cycles (may be fractional).
    #[serde(deserialize_with = "lenient_f64")]
    pub inter_arrival_cycles: f64,
    /// Packets simulated (at most; the source may end earlier). 0 = the whole source.
    pub packets: u64,
    /// Packets before the measurement window opens. In a JSON request that leaves it out, a
    /// fifth of the spec's packets (at least 1; see `api::parse`); 1,000 when a [`SimConfig`]
    /// is built in Rust with `Default`.
    pub warmup_packets: u64,
    /// Instances a task queue holds; an instance arriving at a full queue is dropped
    /// ("task queue full").
    pub task_queue_capacity: u32,
    /// Seed of the address interleaving over channels.
    pub seed: u64,
    pub ideal: Ideal,
    /// What one lock protects: `location` (seed 000 section 2.4), `object` or `task`.
    pub lock_granularity: crate::prog::LockGranularity,
    /// How a PE with a free context picks the next instance ([`Scheduling`]).
    pub scheduling: Scheduling,
    /// Wide memory accesses (the locality transformation of seed 000 section 2.8): one request
    /// per traced access. Off (the paper's untransformed baseline): one request per
    /// `memory_word_bytes` of the access.
    pub wide_accesses: bool,
    /// When a context releases a lock: `after_issue` (default; section 2.4: "the task releases
    /// the lock after the last read or write to that location": right after the section's
    /// last access is issued, posted writes and non-blocking loads included) or
    /// `after_completion` (once every access the context issued has completed: a conservative
    /// alternative that holds the lock for the memory latency too).
    pub lock_release: LockRelease,
    /// When packets arrive: `fixed` (every `inter_arrival_cycles`, the maximum-rate search's
    /// mode) or `recorded` (at the trace's timestamps, relative to the first packet, converted
    /// to PE cycles and multiplied by `time_scale`).
    pub arrivals: Arrivals,
    /// Factor on the recorded gaps between packets (`recorded` arrivals only): 0.5 replays the
    /// trace twice as fast.
    #[serde(deserialize_with = "lenient_f64")]
    pub time_scale: f64,
    /// Elements, by name, whose accesses take no lock: the S idealization for these elements
    /// only (e.g. queues on hardware rings with atomic enqueue and dequeue).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub no_sync_elements: Vec<String>,
    /// [xform hook] the task transformations of section 2 (`--transform`).
    pub transform: crate::xform::Transforms,
    /// [slowpath hook] where slow-path elements run (`--slow-path-policy`).
    pub slow_path: crate::slowpath::SlowPath,
}

/// How packet arrival times are set ([`SimConfig::arrivals`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    #[default]
    Fixed,
    Recorded,
}

/// When a lock is released ([`SimConfig::lock_release`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LockRelease {
    AfterCompletion,
    #[default]
    AfterIssue,
}

impl LockRelease {
    pub fn parse(s: &str) -> Result<LockRelease, String> {
        match s {
            "after-completion" | "after_completion" => Ok(LockRelease::AfterCompletion),
            "after-issue" | "after_issue" => Ok(LockRelease::AfterIssue),
            _ => Err(format!(
                "unknown lock release '{s}' (expected after-completion or after-issue)"
            )),
        }
    }
}

/// Task scheduling on a PE (seed 000 section 3.1, "Task Scheduling").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheduling {
    /// The paper's: "an instance of a task ... is queued before each PE. A task is executed when
    /// it reaches the head of the queue and a hardware context is free to execute it." One FIFO
    /// per PE (shared by a group for replicas on several PEs): when the head's task already runs
    /// as many instances as it may (one, unreplicated), the PE waits (head-of-line blocking).
    #[default]
    Fifo,
    /// An out-of-order alternative: a free context takes the oldest instance whose task may
    /// start one more, skipping blocked heads.
    FirstEligible,
}

impl Scheduling {
    pub fn parse(s: &str) -> Result<Scheduling, String> {
        match s {
            "fifo" => Ok(Scheduling::Fifo),
            "first-eligible" | "first_eligible" => Ok(Scheduling::FirstEligible),
            _ => Err(format!(
                "unknown scheduling '{s}' (expected fifo or first-eligible)"
            )),
        }
    }
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            inter_arrival_cycles: 1000.0,
            packets: 0,
            warmup_packets: 1000,
            task_queue_capacity: 1024,
            seed: 1,
            ideal: Ideal::default(),
            lock_granularity: Default::default(),
            scheduling: Scheduling::Fifo,
            wide_accesses: false,
            lock_release: LockRelease::AfterIssue,
            arrivals: Arrivals::Fixed,
            time_scale: 1.0,
            no_sync_elements: Vec::new(),
            transform: Default::default(), // [xform hook]
            slow_path: Default::default(), // [slowpath hook]
        }
    }
}

impl SimConfig {
    pub fn validate(&self) -> Result<(), String> {
        check_positive(
            "inter_arrival_cycles (--inter-arrival)",
            self.inter_arrival_cycles,
            MAX_INTER_ARRIVAL_CYCLES,
        )?;
        if self.inter_arrival_cycles < MIN_INTER_ARRIVAL_CYCLES {
            return Err(format!(
                "inter_arrival_cycles (--inter-arrival) = {:e} is below the {MIN_INTER_ARRIVAL_CYCLES:e} cycles supported (arrivals land on whole cycles)",
                self.inter_arrival_cycles
            ));
        }
        check_positive("time_scale (--time-scale)", self.time_scale, 1e6)?;
        self.slow_path.validate()?; // [slowpath hook]
        if self.task_queue_capacity == 0 {
            return Err("task_queue_capacity must be at least 1".into());
        }
        if self.task_queue_capacity > MAX_TASK_QUEUE {
            return Err(format!(
                "task_queue_capacity = {} is larger than the {MAX_TASK_QUEUE} supported",
                self.task_queue_capacity
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_mappings_bind_interface_tasks_to_their_own_pes() {
        let iface = [true, false, false, true, false];
        let m = Mapping::default_for(&iface, 8, 2, Replication::None, 2).unwrap();
        assert_eq!(m.tasks[0].pes, vec![0]);
        assert_eq!(m.tasks[3].pes, vec![1]);
        assert_eq!(m.tasks[1].pes, vec![2]);
        assert_eq!(m.tasks[2].pes, vec![3]);
        assert_eq!(m.tasks[1].max_concurrent, 1);
        let g = Mapping::default_for(&iface, 8, 2, Replication::Global, 2).unwrap();
        assert_eq!(g.tasks[4].pes, (0..8).collect::<Vec<_>>());
        assert_eq!(
            g.tasks[0].pes,
            vec![0],
            "interface tasks stay bound to their PE"
        );
        let s = Mapping::default_for(&iface, 8, 2, Replication::Subset, 2).unwrap();
        assert_eq!(s.tasks[1].pes, vec![2, 3]);
        assert_eq!(s.tasks[2].pes, vec![4, 5]);
        // 4 PEs, 4 interface PEs: processing tasks share all PEs.
        let f = Mapping::default_for(&iface, 4, 4, Replication::Pe, 2).unwrap();
        assert_eq!(f.tasks[1].pes, vec![0]);
        assert!(f.validate(4).is_ok());
        assert!(f.validate(0).is_err());
        assert!(Replication::parse("everywhere").is_err());
        let (n, inf) = g.infinite(3);
        assert_eq!(n, 15);
        assert_eq!(inf.tasks[1].pes, vec![3, 4, 5]);
        assert!(inf.validate(n).is_ok());
    }

    #[test]
    fn idealizations_parse_from_figure_8_letters() {
        let i = Ideal::parse("izsb").unwrap();
        assert!(i.infinite_pes && i.zero_instructions && i.no_sync && i.bus_pipelined);
        assert!(!i.mem_pipelined);
        assert_eq!(i.label(), "IZSB");
        assert_eq!(Ideal::parse("none").unwrap().label(), "none");
        assert_eq!(Ideal::parse("SI").unwrap().label(), "IS");
        assert!(Ideal::parse("IX")
            .unwrap_err()
            .contains("unknown idealization 'X'"));
        assert!(Ideal::parse("SS").unwrap_err().contains("repeated"));
    }
}
