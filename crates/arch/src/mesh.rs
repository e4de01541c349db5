//! 2D-mesh many-core network-on-chip architecture (issue 4).
//!
//! Every field is named with its unit. Defaults live in ONE place, `presets/mesh.toml`
//! (the `mesh` preset), and follow Seo & Thottethodi, "Disjoint-Path Routing: Efficient
//! Communication for Streaming Applications", IPDPS 2009 (`seeds/002_8aeb0170294135a1.txt`):
//! "PoPnet models a four-stage pipelined router for packet-switching network. Once the circuits
//! for disjoint paths are setup, the packets go through only two stages (switch traversal and
//! link traversal)", Table 1 "VCS/PC 2, 4", and "we evaluate packet-switching network with four
//! virtual channels".
use serde::{Deserialize, Serialize};

/// Parameters of a k x l mesh of input-queued virtual-channel routers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeshArch {
    /// Columns of the mesh (x extent), tiles.
    pub cols: usize,
    /// Rows of the mesh (y extent), tiles.
    pub rows: usize,
    /// Virtual channels per input port (packet switching).
    pub virtual_channels: usize,
    /// Buffer depth of each virtual channel, flits.
    pub buffer_depth_flits: usize,
    /// Link traversal (also the injection and ejection channel), cycles.
    pub link_latency_cycles: u32,
    /// Router pipeline stage 1: route computation, cycles.
    pub route_compute_cycles: u32,
    /// Router pipeline stage 2: virtual-channel allocation, cycles.
    pub vc_alloc_cycles: u32,
    /// Router pipeline stage 3: switch allocation, cycles.
    pub switch_alloc_cycles: u32,
    /// Router pipeline stage 4: switch (crossbar) traversal, cycles.
    pub switch_traversal_cycles: u32,
    /// Delay of a credit from the downstream input buffer back to the upstream router, cycles.
    pub credit_delay_cycles: u32,
    /// Stages of a circuit-switched hop once the circuit is set up (switch + link), cycles.
    pub circuit_stages: u32,
    /// Width of a flit, bits.
    pub flit_width_bits: u32,
    /// Size of one stream data item (StreamIt float/int), bits.
    pub item_bits: u32,
    /// Flits of one stream data packet (push data packet, or pull response), flits.
    pub data_packet_flits: usize,
    /// Flits of one pull request packet, flits.
    pub request_packet_flits: usize,
    /// Latency of the ideal network (paper section 3: "a latency of one cycle"), cycles.
    pub ideal_latency_cycles: u32,
    /// Injection bandwidth of a node (ideal network and network interface), flits per cycle.
    pub node_injection_flits_per_cycle: u32,
    /// Ejection bandwidth of a node (ideal network and network interface), flits per cycle.
    pub node_ejection_flits_per_cycle: u32,
}

impl MeshArch {
    /// Number of tiles (routers).
    pub fn tiles(&self) -> usize {
        self.cols * self.rows
    }

    /// Stream data items carried by one data packet.
    pub fn items_per_packet(&self) -> usize {
        (self.data_packet_flits * self.flit_width_bits as usize / self.item_bits.max(1) as usize)
            .max(1)
    }

    /// Cycles a head flit spends in one router at zero load (the four pipeline stages).
    pub fn router_pipeline_cycles(&self) -> u32 {
        self.route_compute_cycles
            + self.vc_alloc_cycles
            + self.switch_alloc_cycles
            + self.switch_traversal_cycles
    }

    /// Check that every parameter is possible; the message names the field and the value.
    pub fn validate(&self) -> Result<(), String> {
        let mut errs = Vec::new();
        if self.cols == 0 || self.rows == 0 {
            errs.push(format!(
                "mesh must have at least 1 column and 1 row (cols = {}, rows = {})",
                self.cols, self.rows
            ));
        }
        if self.cols * self.rows > 65_536 {
            errs.push(format!(
                "mesh of {}x{} = {} tiles is larger than the 65536 supported",
                self.cols,
                self.rows,
                self.cols * self.rows
            ));
        }
        if self.virtual_channels == 0 || self.virtual_channels > 11 {
            errs.push(format!(
                "virtual_channels must be 1..=11 (got {})",
                self.virtual_channels
            ));
        }
        if self.buffer_depth_flits == 0 || self.buffer_depth_flits > 1024 {
            errs.push(format!(
                "buffer_depth_flits must be 1..=1024 (got {})",
                self.buffer_depth_flits
            ));
        }
        for (name, v) in [
            ("link_latency_cycles", self.link_latency_cycles),
            ("route_compute_cycles", self.route_compute_cycles),
            ("vc_alloc_cycles", self.vc_alloc_cycles),
            ("switch_alloc_cycles", self.switch_alloc_cycles),
            ("switch_traversal_cycles", self.switch_traversal_cycles),
            ("credit_delay_cycles", self.credit_delay_cycles),
            ("circuit_stages", self.circuit_stages),
            ("ideal_latency_cycles", self.ideal_latency_cycles),
        ] {
            if v == 0 || v > 64 {
                errs.push(format!("{name} must be 1..=64 cycles (got {v})"));
            }
        }
        if self.circuit_stages < 2 {
            errs.push(format!(
                "circuit_stages must be at least 2 (switch + link), got {}",
                self.circuit_stages
            ));
        }
        if self.flit_width_bits == 0 || self.item_bits == 0 {
            errs.push(format!(
                "flit_width_bits and item_bits must be positive (got {} and {})",
                self.flit_width_bits, self.item_bits
            ));
        }
        if self.data_packet_flits == 0 || self.data_packet_flits > 4096 {
            errs.push(format!(
                "data_packet_flits must be 1..=4096 (got {})",
                self.data_packet_flits
            ));
        }
        if self.request_packet_flits == 0 || self.request_packet_flits > 4096 {
            errs.push(format!(
                "request_packet_flits must be 1..=4096 (got {})",
                self.request_packet_flits
            ));
        }
        if self.node_injection_flits_per_cycle == 0 || self.node_ejection_flits_per_cycle == 0 {
            errs.push(format!(
                "node_injection_flits_per_cycle and node_ejection_flits_per_cycle must be >= 1 (got {} and {})",
                self.node_injection_flits_per_cycle, self.node_ejection_flits_per_cycle
            ));
        }
        if errs.is_empty() {
            Ok(())
        } else {
            Err(format!("invalid mesh architecture: {}", errs.join("; ")))
        }
    }
}
