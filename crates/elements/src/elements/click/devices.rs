//! Device elements beyond FromDevice/PollDevice/ToDevice, accepted so device-based
//! configurations run unchanged:
//!
//! - `ToHost([DEVNAME])`, `ToHostSniffers([DEVNAME])`: 1 push input, no outputs. Packets for
//!   the host's own network stack (or its packet sniffers) leave the graph here: their fate
//!   is `output` at this element (a sink), as at ToDevice. Read handler `count`.
//! - `FromHost(DEVNAME, ADDR/MASK [, keywords])`: no inputs, 1 push output: a trace input
//!   like FromDevice (trace interface i enters at the i-th input device, FromDevice,
//!   PollDevice, FromHost, KernelTun, KernelTap, in declaration order).
//! - `KernelTun(ADDR/MASK [, GATEWAY] [, keywords])`, `KernelTap(...)`: a trace input
//!   (output 0, push; device name DEVNAME, default `tun`/`tap`) and, on its input (0 or 1,
//!   agnostic), a sink to the host like ToHost. Output 1 (optional) is never used: pktflow
//!   does not read malformed packets from a kernel.
//!
//! Costs: a sink visit is 6 instructions and an 8 B meta-data read (as ToDevice); input
//! devices cost the runtime's receive visit (4 instructions, 16 B meta-data write).
use crate::conf::{unquote, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Role};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const TO_HOST: ClassInfo = ClassInfo {
    name: "ToHost",
    summary: "packets for the host's stack leave the graph (a sink)",
    make: make_to_host,
};
pub const TO_HOST_SNIFFERS: ClassInfo = ClassInfo {
    name: "ToHostSniffers",
    summary: "packets for the host's sniffers leave the graph (a sink)",
    make: make_to_host,
};
pub const FROM_HOST: ClassInfo = ClassInfo {
    name: "FromHost",
    summary: "trace packets enter here, as from the host's stack",
    make: make_from_host,
};
pub const KERNEL_TUN: ClassInfo = ClassInfo {
    name: "KernelTun",
    summary: "tunnel device: trace packets enter at output 0, input is a sink to the host",
    make: make_tun,
};
pub const KERNEL_TAP: ClassInfo = ClassInfo {
    name: "KernelTap",
    summary: "tap device: trace packets enter at output 0, input is a sink to the host",
    make: make_tap,
};

struct Dev {
    dev: String,
    ports: Ports,
    role: Role,
    count: u64,
}

fn make_to_host(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse(
        "ToHost",
        config,
        &[
            "DEVNAME",
            "SNIFFERS",
            "QUIET",
            "ALLOW_NONEXISTENT",
            "HEADROOM",
        ],
    );
    let dev = a
        .keyword_or_positional("DEVNAME")
        .map(|s| unquote(&s))
        .unwrap_or_default();
    for k in ["SNIFFERS", "QUIET", "ALLOW_NONEXISTENT", "HEADROOM"] {
        a.keyword(k);
    }
    a.finish()?;
    Ok(Box::new(Dev {
        dev,
        ports: Ports::push(1, 0),
        role: Role::Sink,
        count: 0,
    }))
}

fn make_from_host(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse(
        "FromHost",
        config,
        &["DEVNAME", "DST", "ETHER", "HEADROOM", "BURST", "CLEAR_ANNO"],
    );
    let dev = unquote(
        &a.keyword_or_positional("DEVNAME")
            .ok_or("FromHost: missing argument DEVNAME")?,
    );
    if let Some(d) = a.keyword_or_positional("DST") {
        crate::conf::parse_prefix(&d).map_err(|e| format!("FromHost: DST: {e}"))?;
    }
    if let Some(e) = a.keyword("ETHER") {
        crate::conf::parse_ether(&e).map_err(|e| format!("FromHost: ETHER: {e}"))?;
    }
    for k in ["HEADROOM", "BURST", "CLEAR_ANNO"] {
        a.keyword(k);
    }
    a.finish()?;
    Ok(Box::new(Dev {
        dev,
        ports: Ports::push(0, 1),
        role: Role::Source,
        count: 0,
    }))
}

fn make_kernel(class: &str, default_dev: &str, config: &str) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse(
        class,
        config,
        &[
            "ADDR",
            "GATEWAY",
            "TAP",
            "HEADROOM",
            "ETHER",
            "MTU",
            "DEVNAME",
            "IGNORE_QUEUE_OVERFLOWS",
            "DEV_NAME",
            "BURST",
            "DATA_IN_QUEUE",
            "CHECK",
            "DEVNAME_PATTERN",
        ],
    );
    let addr = a
        .keyword_or_positional("ADDR")
        .ok_or_else(|| format!("{class}: missing argument ADDR"))?;
    crate::conf::parse_prefix(&addr).map_err(|e| format!("{class}: ADDR: {e}"))?;
    if let Some(g) = a.keyword_or_positional("GATEWAY") {
        crate::conf::parse_ip(&g).map_err(|e| format!("{class}: GATEWAY: {e}"))?;
    }
    let dev = a
        .keyword("DEVNAME")
        .or_else(|| a.keyword("DEV_NAME"))
        .map(|s| unquote(&s))
        .unwrap_or_else(|| default_dev.to_string());
    for k in [
        "TAP",
        "HEADROOM",
        "ETHER",
        "MTU",
        "IGNORE_QUEUE_OVERFLOWS",
        "BURST",
        "DATA_IN_QUEUE",
        "CHECK",
        "DEVNAME_PATTERN",
    ] {
        a.keyword(k);
    }
    a.finish()?;
    let ports = Ports {
        inputs: (0, 1),
        outputs: (1, 2),
        input_processing: crate::element::Processing::Agnostic,
        output_processing: crate::element::Processing::Push,
    };
    Ok(Box::new(Dev {
        dev,
        ports,
        role: Role::Source,
        count: 0,
    }))
}

fn make_tun(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    make_kernel("KernelTun", "tun", config)
}
fn make_tap(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    make_kernel("KernelTap", "tap", config)
}

impl Element for Dev {
    fn ports(&self) -> Ports {
        self.ports
    }
    fn role(&self) -> Role {
        self.role
    }
    fn device(&self) -> Option<&str> {
        (self.role == Role::Source || !self.dev.is_empty()).then_some(self.dev.as_str())
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(6);
        cx.read_meta(8);
        self.count += 1;
        cx.output(p);
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"device": self.dev, "count": self.count})
    }
    fn code_size(&self) -> u32 {
        40
    }
}

#[cfg(test)]
mod tests {
    use crate::elements::ip::testutil::{make, push};
    use pktflow_traffic::Packet;

    #[test]
    fn host_sinks_output_and_sources_have_devices() {
        let mut h = make("ToHost", "");
        let (out, t) = push(h.as_mut(), 0, Packet::from_bytes(&[1, 2, 3]));
        assert!(out.is_empty());
        assert!(matches!(t.fates[0], pktflow_model::Fate::Output { .. }));
        assert_eq!(make("KernelTun", "1.0.0.1/8").device(), Some("tun"));
        assert_eq!(
            make("KernelTap", "1.0.0.1/8, DEVNAME tap3").device(),
            Some("tap3")
        );
        assert_eq!(
            make("FromHost", "fake0, 10.0.0.1/8").device(),
            Some("fake0")
        );
        assert!(
            (crate::registry::find("KernelTun").unwrap().make)("", &Default::default()).is_err()
        );
    }
}
