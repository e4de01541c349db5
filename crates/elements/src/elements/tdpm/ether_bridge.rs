//! `EtherBridge(PORTS n, MAC, ...)` — a layer-2 learning bridge in front of a router (the
//! bridging half of an L3 switch). Frames arrive on input `i` (the bridge port). The source
//! MAC is learned (MAC -> port, in a table of dynamic state); a frame whose destination is one
//! of the router's MACs leaves on output 0 (to layer-3 forwarding); any other frame is bridged:
//! to output `1 + port` of its learned destination, or, unknown or broadcast, flooded (sent to
//! the next port, `1 + (i + 1) % n`, as the single copy a two-port bridge floods).
//!
//! Ports: `n` push inputs, `n + 1` push outputs. `PORTS` defaults to 2.
//!
//! Costs: 10 instructions and a 12-byte packet-data read (both addresses); hashing the source
//! and learning it: 12 instructions, an 8-byte dynamic-state read and an 8-byte write of the
//! table slot (object 0, key = slot); router MAC comparison: 3 instructions per MAC; a bridged
//! frame looks its destination up: 12 instructions and an 8-byte dynamic-state read.
use crate::conf::{parse_ether, parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;
use std::collections::HashMap;

pub const CLASS: ClassInfo = ClassInfo {
    name: "EtherBridge",
    summary: "MAC-learning bridge: router MACs to output 0, other frames bridged to 1 + port",
    make,
};

struct EtherBridge {
    ports: usize,
    router: Vec<[u8; 6]>,
    table: HashMap<[u8; 6], u16>,
    routed: u64,
    bridged: u64,
    flooded: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("EtherBridge", config, &["PORTS"]);
    let ports = match a.keyword("PORTS") {
        Some(p) => parse_uint(&p).map_err(|e| format!("EtherBridge: PORTS: {e}"))? as usize,
        None => 2,
    };
    if !(1..=64).contains(&ports) {
        return Err(format!("EtherBridge: PORTS must be 1 to 64 (got {ports})"));
    }
    let mut router = Vec::new();
    for m in a.take_all_positional() {
        router.push(parse_ether(m.trim()).map_err(|e| format!("EtherBridge: {e}"))?);
    }
    a.finish()?;
    Ok(Box::new(EtherBridge {
        ports,
        router,
        table: HashMap::new(),
        routed: 0,
        bridged: 0,
        flooded: 0,
    }))
}

fn slot(mac: &[u8; 6]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in mac {
        h = (h ^ *b as u64).wrapping_mul(0x100_0000_01b3);
    }
    h & 0xffff
}

impl Element for EtherBridge {
    fn ports(&self) -> Ports {
        Ports::push(self.ports, self.ports + 1)
    }
    fn push(&mut self, port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(10);
        if p.len() < 14 {
            cx.drop_packet(p, "runt frame");
            return;
        }
        cx.read_pkt(12);
        let d = p.data();
        let dst: [u8; 6] = d[0..6].try_into().expect("6 bytes");
        let src: [u8; 6] = d[6..12].try_into().expect("6 bytes");
        cx.instr(12);
        let s = slot(&src);
        cx.dynamic_state(Read, 0, s, 8);
        if src[0] & 1 == 0 {
            cx.dynamic_state(Write, 0, s, 8);
            self.table.insert(src, port as u16);
        }
        cx.instr(3 * self.router.len().max(1) as u32);
        if self.router.contains(&dst) {
            self.routed += 1;
            cx.emit(0, p);
            return;
        }
        cx.instr(12);
        cx.dynamic_state(Read, 0, slot(&dst), 8);
        let out = match self.table.get(&dst) {
            Some(&q) if dst[0] & 1 == 0 => {
                self.bridged += 1;
                q as usize
            }
            _ => {
                self.flooded += 1;
                (port + 1) % self.ports
            }
        };
        cx.emit(1 + out, p);
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"routed": self.routed, "bridged": self.bridged, "flooded": self.flooded, "learned": self.table.len()})
    }
    fn code_size(&self) -> u32 {
        180
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(dst: [u8; 6], src: [u8; 6]) -> Packet {
        let mut v = vec![0u8; 60];
        v[0..6].copy_from_slice(&dst);
        v[6..12].copy_from_slice(&src);
        v[12..14].copy_from_slice(&[0x08, 0x00]);
        Packet::from_bytes(&v)
    }

    #[test]
    fn routes_learns_and_bridges() {
        let r = [0, 0, 0xc0, 0xae, 0x67, 0xef];
        let mut e = make("PORTS 2, 00:00:c0:ae:67:ef", &InitEnv::default()).unwrap();
        assert_eq!(e.ports(), Ports::push(2, 3));
        let (a, b) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
        let mut cx = Cx::new();
        e.push(0, frame(r, a), &mut cx);
        assert_eq!(
            cx.take_emitted().pop().unwrap().0,
            0,
            "router MAC goes to layer 3"
        );
        // b unknown: flooded to the other port; then b speaks on port 1 and is learned.
        e.push(0, frame(b, a), &mut cx);
        assert_eq!(cx.take_emitted().pop().unwrap().0, 2);
        e.push(1, frame(a, b), &mut cx);
        assert_eq!(
            cx.take_emitted().pop().unwrap().0,
            1,
            "a was learned on port 0"
        );
        e.push(0, frame(b, a), &mut cx);
        assert_eq!(
            cx.take_emitted().pop().unwrap().0,
            2,
            "b was learned on port 1"
        );
        assert!(make("PORTS 0", &InitEnv::default()).is_err());
        assert!(make("zz:00", &InitEnv::default()).is_err());
    }
}
