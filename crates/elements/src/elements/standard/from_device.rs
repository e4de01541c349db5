//! `FromDevice(DEVNAME)` (also `PollDevice`) — where trace packets enter the graph.
//!
//! Ports: no inputs, 1 push output. In a functional run, trace packets received on interface
//! i enter at the i-th FromDevice/PollDevice in declaration order (modulo their number).
//! Costs: the runtime charges the receive visit 4 instructions and a 16 B meta-data write
//! (setting the packet's annotations); the packet bytes themselves arrive by DMA.
use crate::conf::{unquote, Args, InitEnv};
use crate::element::{Element, Ports, Role};
use crate::registry::ClassInfo;

pub const FROM_DEVICE: ClassInfo = ClassInfo {
    name: "FromDevice",
    summary: "trace packets enter here (interface i -> i-th device)",
    make,
};
pub const POLL_DEVICE: ClassInfo = ClassInfo {
    name: "PollDevice",
    summary: "same as FromDevice (polling receive)",
    make,
};

struct FromDevice {
    dev: String,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse(
        "FromDevice",
        config,
        &[
            "DEVNAME", "PROMISC", "SNIFFER", "BURST", "QUIET", "OUTBOUND", "HEADROOM", "METHOD",
        ],
    );
    let dev = unquote(
        &a.keyword_or_positional("DEVNAME")
            .ok_or("FromDevice: missing argument DEVNAME")?,
    );
    for k in [
        "PROMISC", "SNIFFER", "BURST", "QUIET", "OUTBOUND", "HEADROOM", "METHOD",
    ] {
        a.keyword(k);
    }
    a.take_all_positional();
    Ok(Box::new(FromDevice { dev }))
}

impl Element for FromDevice {
    fn ports(&self) -> Ports {
        Ports::push(0, 1)
    }
    fn role(&self) -> Role {
        Role::Source
    }
    fn device(&self) -> Option<&str> {
        Some(&self.dev)
    }
    fn code_size(&self) -> u32 {
        40
    }
}
