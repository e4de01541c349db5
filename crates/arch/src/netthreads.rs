//! The NetThreads multithreaded soft multiprocessor (chapter 6 of the NetThreads thesis): fine-grained
//! multithreaded in-order cores sharing a data cache, packet buffers and a mutex unit.
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetThreadsArch {
    pub cores: u32,
    pub threads_per_core: u32,
    pub clock_mhz: u32,
    pub pipeline_stages: u32,
    pub instruction_cache_bytes_per_core: u64,
    pub data_cache_bytes_shared: u64,
    pub data_cache_line_bytes: u32,
    pub input_buffer_bytes: u64,
    pub input_buffer_packet_slots: u32,
    pub output_buffer_bytes: u64,
    pub bus_width_bits: u32,
    pub onchip_access_cycles: u32,
    pub mutexes: u32,
    pub memory_queue_entries: u32,
    pub sdram_clock_mhz: u32,
    pub sdram_bytes: u64,
    pub mac_input_buffer_bytes: u64,
    pub ethernet_ports: u32,
    pub port_rate_gbps: u32,
    /// Cycles from a data-cache load miss to its data. Not given for the NetFPGA system (a
    /// calibrated input): chapter 5's system has "a load-miss latency of only 8 processor
    /// cycles" at 50 MHz, i.e. 160 ns; the same 160 ns at 125 MHz is 20 cycles.
    #[serde(default = "default_miss_latency")]
    pub miss_latency_cycles: u32,
    /// Cycles the memory controller is busy per 32-bit request (its service rate; requests
    /// queue in order behind it). Not given in the thesis (a calibrated input): 2 processor
    /// cycles, one DDR2 transfer at 200 MHz plus arbitration.
    #[serde(default = "default_request_cycles")]
    pub memory_request_cycles: u32,
    /// Bits (rows) of the NetTM signature table: "a signature table composed of at most two
    /// block RAMs", each row 32 bits (R, W and a 2-bit version for 8 contexts): 2 x 512 rows.
    #[serde(default = "default_signature_bits")]
    pub signature_bits: u32,
    /// Undo-log entries per thread context: "1024 words and addresses for 8 threads".
    #[serde(default = "default_undo_entries")]
    pub undo_log_entries_per_thread: u32,
}

fn default_miss_latency() -> u32 {
    20
}
fn default_request_cycles() -> u32 {
    2
}
fn default_signature_bits() -> u32 {
    1024
}
fn default_undo_entries() -> u32 {
    1024
}

impl NetThreadsArch {
    pub fn validate(&self) -> Vec<String> {
        let mut e = Vec::new();
        for (name, v) in [
            ("cores", self.cores as u64),
            ("threads_per_core", self.threads_per_core as u64),
            ("clock_mhz", self.clock_mhz as u64),
            ("pipeline_stages", self.pipeline_stages as u64),
            ("data_cache_line_bytes", self.data_cache_line_bytes as u64),
            (
                "input_buffer_packet_slots",
                self.input_buffer_packet_slots as u64,
            ),
            ("bus_width_bits", self.bus_width_bits as u64),
            ("memory_queue_entries", self.memory_queue_entries as u64),
            ("ethernet_ports", self.ethernet_ports as u64),
            ("miss_latency_cycles", self.miss_latency_cycles as u64),
            ("memory_request_cycles", self.memory_request_cycles as u64),
            ("signature_bits", self.signature_bits as u64),
            (
                "undo_log_entries_per_thread",
                self.undo_log_entries_per_thread as u64,
            ),
        ] {
            if v == 0 {
                e.push(format!("netthreads.{name} must be at least 1"));
            }
        }
        if self.data_cache_line_bytes > 0
            && !self
                .data_cache_bytes_shared
                .is_multiple_of(self.data_cache_line_bytes as u64)
        {
            e.push(format!(
                "netthreads.data_cache_bytes_shared = {} is not a multiple of data_cache_line_bytes = {}",
                self.data_cache_bytes_shared, self.data_cache_line_bytes
            ));
        }
        e
    }
}
