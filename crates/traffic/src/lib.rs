//! Traffic: the packet buffer with Click-style annotations, pcap/pcapng reading and writing,
//! seeded synthetic traces, and routing tables (loaded from a BGP dump or generated).
pub mod checksum;
pub mod devices;
pub mod mapped;
pub mod outfile;
pub mod packet;
pub mod pcap;
pub mod pcapng;
pub mod routes;
pub mod synth;
pub mod thesis;

pub use checksum::{incremental_update, ip_checksum, l4_checksum, pseudo_header_sum};
pub use devices::{device_file_name, DevicePcaps};
pub use mapped::{MappedPcap, TraceFileReader};
pub use outfile::Output;
pub use packet::{packets_created, Annotations, Packet};
pub use pcap::{
    CaptureFormat, PcapOptions, PcapReader, PcapWriter, TracePacket, TraceRef, LINKTYPE_ETHERNET,
    LINKTYPE_RAW,
};
pub use pcapng::{PcapngOptions, PcapngWriter};
pub use routes::{bundled_table_path, Route, RouteTable};
pub use synth::{
    FlowSize, InterfaceConfig, Ipv4Prefix, MacAddr, PrefixWeighting, ProtocolMix, SizeMix,
    SynthConfig, SynthTrace,
};

/// Errors of the traffic crate. Every variant that concerns a file names it; format errors
/// carry the byte offset of the offending structure so a bad capture can be inspected with
/// a hex editor (`xxd -s OFFSET`).
#[derive(Debug, thiserror::Error)]
pub enum TrafficError {
    /// An operating-system error while opening, reading or writing `path`.
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// A malformed or truncated capture file: `what` names the structure (e.g. "truncated
    /// packet record"), `detail` says what was expected and what was found.
    #[error("{path}: {what} at byte offset {offset}: {detail}")]
    Format {
        path: String,
        offset: u64,
        what: String,
        detail: String,
    },
    /// A bad line in a text input (routing table dump), `line` counted from 1.
    #[error("{path}:{line}: {detail}")]
    Parse {
        path: String,
        line: usize,
        detail: String,
    },
    /// An invalid parameter (synthetic trace configuration, writer options, ...).
    #[error("invalid configuration: {0}")]
    Config(String),
}

impl TrafficError {
    pub(crate) fn io(path: &str, source: std::io::Error) -> Self {
        TrafficError::Io {
            path: path.to_string(),
            source,
        }
    }
    pub(crate) fn format(path: &str, offset: u64, what: &str, detail: String) -> Self {
        TrafficError::Format {
            path: path.to_string(),
            offset,
            what: what.to_string(),
            detail,
        }
    }
}
