//! The NetThreads multithreaded soft multiprocessor (seed 004 chapter 6): fine-grained
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
