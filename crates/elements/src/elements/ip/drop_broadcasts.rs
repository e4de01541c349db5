//! `DropBroadcasts` — drops packets that arrived as link-level broadcasts or multicasts (the
//! packet-type annotation the receiving device sets), so a router never forwards them
//! (RFC 1812 5.3.4). Drop reason `link broadcast`.
//!
//! Ports: 1 agnostic input, 1 agnostic output.
//! Costs: 2 instructions and a 1-byte meta-data read.
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::packet::PacketType;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "DropBroadcasts",
    summary: "drop packets that arrived as link-level broadcasts",
    make,
};

struct DropBroadcasts {
    drops: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("DropBroadcasts", config, &[]).finish()?;
    Ok(Box::new(DropBroadcasts { drops: 0 }))
}

impl Element for DropBroadcasts {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.instr(2);
        cx.read_meta(1);
        if matches!(
            p.anno.packet_type,
            PacketType::Broadcast | PacketType::Multicast
        ) {
            self.drops += 1;
            cx.drop_packet(p, "link broadcast");
            return None;
        }
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"drops": self.drops})
    }
    fn code_size(&self) -> u32 {
        10
    }
}
