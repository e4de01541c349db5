//! Network-processor architecture (the `npire` and `ixp2400` presets): multithreaded processing
//! elements, storage devices and buses each with an unpipelined part (occupancy, which limits
//! throughput) and a pipelined part (latency), and the map from the memory types of seed 000
//! section 2.2 to devices (seed 000 Table 2). Every field is named with its unit.
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PeParams {
    /// Processing elements (MEs), count. NPIRE sweeps this (4 to 32).
    pub pe_count: u32,
    pub pe_frequency_mhz: u32,
    pub hardware_contexts_per_pe: u32,
    pub cycles_per_instruction: u32,
    /// Non-blocking loads a context may have outstanding.
    pub pending_loads_per_context: u32,
    pub context_switch_latency_cycles: u32,
    pub rollback_on_failed_speculation_cycles: u32,
    /// Request queue of each bus and memory controller, requests.
    pub queue_size_requests: u32,
    /// PEs reserved for the input/output interface tasks.
    pub interface_pes: u32,
    /// Cycles between a lock's release and its next holder resuming (hand-off). Seed 000 gives
    /// no figure; 0 means the model charges only the waiting.
    #[serde(default)]
    pub lock_handoff_cycles: u32,
    /// Bytes one memory request moves when the compiler does not target wide accesses (the
    /// PE's word; seed 000 section 2.8: without the locality transformation every word of a
    /// data structure is its own request). A traced access of more bytes becomes several
    /// requests. 4 on the 32-bit NPs of the presets.
    #[serde(default = "default_word_bytes")]
    pub memory_word_bytes: u32,
    /// Storage device through which a packet is handed from one task group to another (seed
    /// 001 section 3: a task "must load packet header data from DRAM at its input channels and
    /// if the task modifies the packet header, it must write the changes back to DRAM before
    /// sending the packet to its output channels"). None: hand-offs cost nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub handoff_storage: Option<String>,
    /// Requests on each side of one hand-off between task groups, to `handoff_storage`: the
    /// receiving task reads this many, the sending task writes this many when it modified the
    /// packet. 0 (the default) turns hand-off costs off.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub handoff_requests: u32,
}

/// Largest PE count accepted (every real network processor has far fewer; the simulator
/// allocates per PE).
pub const MAX_PES: u32 = 4096;
/// Largest hardware contexts per PE (IXP2400: 8; real NPs have at most a few tens).
pub const MAX_CONTEXTS_PER_PE: u32 = 256;
/// Largest request queue of a bus or memory controller, requests.
pub const MAX_QUEUE_REQUESTS: u32 = 65_536;
/// Largest channel count of one storage device.
pub const MAX_CHANNELS: u32 = 1024;
/// Largest number of channel queues of all storage devices together (private storage counts
/// once per PE).
pub const MAX_CHANNEL_INSTANCES: u64 = 65_536;
/// Largest outstanding loads per context.
pub const MAX_PENDING_LOADS: u32 = 1024;
/// Largest cycle count of any one latency or occupancy parameter (about 1 s at 1 GHz).
pub const MAX_CYCLES: u32 = 1_000_000_000;

fn default_word_bytes() -> u32 {
    4
}

fn is_zero(x: &u32) -> bool {
    *x == 0
}

fn one() -> u32 {
    1
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Storage {
    pub unpipelined_cycles: u32,
    pub pipelined_read_cycles: u32,
    pub pipelined_write_cycles: u32,
    /// Independent channels (each with its own controller queue).
    pub channels: u32,
    /// Bus that reaches it (`none` for storage private to a PE).
    pub bus: String,
    #[serde(default)]
    pub private_per_pe: bool,
    #[serde(default)]
    pub capacity_bytes: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BusOrganization {
    /// One read bus and one write bus for each half of the PEs (four buses).
    PerHalfReadWrite,
    /// One bus shared by all PEs.
    Shared,
    /// One bus per PE.
    PerPe,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bus {
    pub unpipelined_cycles: u32,
    pub pipelined_cycles: u32,
    pub organization: BusOrganization,
}

/// Device each memory type is mapped to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MemoryMap {
    pub packet_data: String,
    pub packet_meta: String,
    pub static_state: String,
    pub dynamic_state: String,
    pub stack: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlStore {
    /// Static instructions one engine can hold (4K on the IXP2400, seed 001 section 2).
    pub instructions_per_engine: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ControlCore {
    pub name: String,
    pub frequency_mhz: u32,
    /// Core cycles per instruction (the timing simulator converts to PE cycles with the two
    /// clocks).
    pub cycles_per_instruction: u32,
    /// Hardware thread contexts of the core (1: a single-threaded core).
    #[serde(default = "one")]
    pub hardware_contexts: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NpArch {
    pub np: PeParams,
    pub storage: BTreeMap<String, Storage>,
    pub bus: BTreeMap<String, Bus>,
    pub memory_map: MemoryMap,
    #[serde(default)]
    pub control_store: Option<ControlStore>,
    #[serde(default)]
    pub control_core: Option<ControlCore>,
}

impl NpArch {
    /// Total latency of a read from `device` at zero load: bus + device, unpipelined + pipelined
    /// (seed 000 Table 3: external SRAM 4+51+5+81 = 141 cycles).
    pub fn zero_load_read_cycles(&self, device: &str) -> Option<u32> {
        let s = self.storage.get(device)?;
        let b = self
            .bus
            .get(&s.bus)
            .map(|b| b.unpipelined_cycles + b.pipelined_cycles)
            .unwrap_or(0);
        Some(b + s.unpipelined_cycles + s.pipelined_read_cycles)
    }

    pub fn validate(&self) -> Vec<String> {
        let mut e = Vec::new();
        let p = &self.np;
        if p.pe_count == 0 {
            e.push("np.pe_count must be at least 1".to_string());
        }
        if p.pe_frequency_mhz == 0 {
            e.push("np.pe_frequency_mhz must be positive".to_string());
        }
        if p.hardware_contexts_per_pe == 0 {
            e.push("np.hardware_contexts_per_pe must be at least 1".to_string());
        }
        if p.cycles_per_instruction == 0 {
            e.push("np.cycles_per_instruction must be at least 1".to_string());
        }
        if p.memory_word_bytes == 0 {
            e.push("np.memory_word_bytes must be at least 1".to_string());
        }
        if p.pending_loads_per_context == 0 {
            e.push("np.pending_loads_per_context must be at least 1".to_string());
        }
        if p.queue_size_requests == 0 {
            e.push("np.queue_size_requests must be at least 1".to_string());
        }
        for (name, v, max) in [
            ("np.pe_count", p.pe_count, MAX_PES),
            (
                "np.hardware_contexts_per_pe",
                p.hardware_contexts_per_pe,
                MAX_CONTEXTS_PER_PE,
            ),
            (
                "np.queue_size_requests",
                p.queue_size_requests,
                MAX_QUEUE_REQUESTS,
            ),
            (
                "np.pending_loads_per_context",
                p.pending_loads_per_context,
                MAX_PENDING_LOADS,
            ),
            ("np.interface_pes", p.interface_pes, MAX_PES),
            ("np.memory_word_bytes", p.memory_word_bytes, 4096),
            ("np.handoff_requests", p.handoff_requests, 4096),
            (
                "np.cycles_per_instruction",
                p.cycles_per_instruction,
                MAX_CYCLES,
            ),
            (
                "np.context_switch_latency_cycles",
                p.context_switch_latency_cycles,
                MAX_CYCLES,
            ),
            (
                "np.rollback_on_failed_speculation_cycles",
                p.rollback_on_failed_speculation_cycles,
                MAX_CYCLES,
            ),
            ("np.lock_handoff_cycles", p.lock_handoff_cycles, MAX_CYCLES),
        ] {
            if v > max {
                e.push(format!("{name} = {v} is larger than the {max} supported"));
            }
        }
        if p.interface_pes >= p.pe_count && p.pe_count > 0 {
            e.push(format!(
                "np.interface_pes = {} leaves no PE for processing with np.pe_count = {}",
                p.interface_pes, p.pe_count
            ));
        }
        for (name, s) in &self.storage {
            if s.channels == 0 {
                e.push(format!("storage.{name}.channels must be at least 1"));
            }
            if s.channels > MAX_CHANNELS {
                e.push(format!(
                    "storage.{name}.channels = {} is larger than the {MAX_CHANNELS} supported",
                    s.channels
                ));
            }
            for (f, v) in [
                ("unpipelined_cycles", s.unpipelined_cycles),
                ("pipelined_read_cycles", s.pipelined_read_cycles),
                ("pipelined_write_cycles", s.pipelined_write_cycles),
            ] {
                if v > MAX_CYCLES {
                    e.push(format!(
                        "storage.{name}.{f} = {v} is larger than the {MAX_CYCLES} supported"
                    ));
                }
            }
            if s.bus != "none" && !self.bus.contains_key(&s.bus) {
                e.push(format!(
                    "storage.{name}.bus names unknown bus '{}' (buses: {})",
                    s.bus,
                    keys(&self.bus)
                ));
            }
            if s.unpipelined_cycles == 0 {
                e.push(format!("storage.{name}.unpipelined_cycles must be at least 1 (a device serving requests in 0 cycles has infinite bandwidth)"));
            }
        }
        let instances: u64 = self
            .storage
            .values()
            .map(|s| {
                s.channels as u64
                    * if s.private_per_pe {
                        p.pe_count as u64
                    } else {
                        1
                    }
            })
            .sum();
        if instances > MAX_CHANNEL_INSTANCES {
            e.push(format!(
                "the storage has {instances} channel queues in all (channels, times np.pe_count \
                 for private_per_pe storage), more than the {MAX_CHANNEL_INSTANCES} supported"
            ));
        }
        if self.storage.len() > 255 {
            e.push(format!(
                "{} storage devices: at most 255 are supported",
                self.storage.len()
            ));
        }
        if self.bus.len() > 1024 {
            e.push(format!(
                "{} buses: at most 1024 are supported",
                self.bus.len()
            ));
        }
        for (name, b) in &self.bus {
            if b.unpipelined_cycles == 0 {
                e.push(format!("bus.{name}.unpipelined_cycles must be at least 1"));
            }
            for (f, v) in [
                ("unpipelined_cycles", b.unpipelined_cycles),
                ("pipelined_cycles", b.pipelined_cycles),
            ] {
                if v > MAX_CYCLES {
                    e.push(format!(
                        "bus.{name}.{f} = {v} is larger than the {MAX_CYCLES} supported"
                    ));
                }
            }
        }
        let m = &self.memory_map;
        for (ty, dev) in [
            ("packet_data", &m.packet_data),
            ("packet_meta", &m.packet_meta),
            ("static_state", &m.static_state),
            ("dynamic_state", &m.dynamic_state),
            ("stack", &m.stack),
        ] {
            if !self.storage.contains_key(dev) {
                e.push(format!(
                    "memory_map.{ty} names unknown storage '{dev}' (storage: {})",
                    keys(&self.storage)
                ));
            }
        }
        if let Some(dev) = &p.handoff_storage {
            if !self.storage.contains_key(dev) {
                e.push(format!(
                    "np.handoff_storage names unknown storage '{dev}' (storage: {})",
                    keys(&self.storage)
                ));
            }
        } else if p.handoff_requests > 0 {
            e.push("np.handoff_requests > 0 needs np.handoff_storage (a storage device)".into());
        }
        if let Some(cc) = &self.control_core {
            if cc.frequency_mhz == 0 {
                e.push("control_core.frequency_mhz must be positive".to_string());
            }
            if cc.cycles_per_instruction == 0 {
                e.push("control_core.cycles_per_instruction must be at least 1".to_string());
            }
            if cc.hardware_contexts == 0 {
                e.push("control_core.hardware_contexts must be at least 1".to_string());
            }
            if cc.hardware_contexts > MAX_CONTEXTS_PER_PE {
                e.push(format!(
                    "control_core.hardware_contexts = {} is larger than the {MAX_CONTEXTS_PER_PE} supported",
                    cc.hardware_contexts
                ));
            }
            if cc.cycles_per_instruction > MAX_CYCLES {
                e.push(format!(
                    "control_core.cycles_per_instruction = {} is larger than the {MAX_CYCLES} supported",
                    cc.cycles_per_instruction
                ));
            }
        }
        if let Some(cs) = &self.control_store {
            if cs.instructions_per_engine == 0 {
                e.push("control_store.instructions_per_engine must be at least 1".to_string());
            }
        }
        e
    }
}

fn keys<V>(m: &BTreeMap<String, V>) -> String {
    m.keys().cloned().collect::<Vec<_>>().join(", ")
}
