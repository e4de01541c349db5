//! MPLS label switching on Ethernet frames (RFC 3032 label stack entry: label 20 bits, traffic
//! class 3, bottom-of-stack 1, TTL 8; EtherType 0x8847).
//!
//! `MPLSPush(PREFIX LABEL, ...)` — the ingress label edge router: the IPv4 destination of an
//! Ethernet/IPv4 frame is matched against the forwarding equivalence classes (longest prefix
//! wins, entries scanned in order); a match pushes one label stack entry (bottom of stack,
//! TTL copied from the IP header) and leaves on output 0; no match leaves unchanged on
//! output 1. Costs: 8 instructions and a 4-byte packet read (destination); per FEC entry
//! scanned 4 instructions and an 8-byte static-state read (object 0, key = entry); a push 14
//! instructions, a 1-byte packet read (TTL) and an 18-byte packet write (moved MACs, EtherType,
//! label entry).
//!
//! `MPLSSwap(LABEL OUT, LABEL pop, ...)` — the label switching router: the top label is looked
//! up in the incoming label map (a hash table); `OUT` swaps it (TTL decremented), output 0;
//! `pop` removes the entry (penultimate-hop popping: the frame becomes Ethernet/IPv4 again),
//! output 1. Unknown labels, non-MPLS frames and expiring TTLs are dropped. Costs: 8
//! instructions and a 6-byte packet read (EtherType, label entry); the map lookup 10
//! instructions and an 8-byte static-state read (object 0, key = label); a swap 6 instructions
//! and a 4-byte packet write; a pop 12 instructions and a 14-byte packet write.
//!
//! Ports (both): 1 push input, 2 push outputs.
use crate::conf::{parse_prefix, parse_uint, split_words, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::Read;
use pktflow_traffic::Packet;
use std::collections::HashMap;

pub const PUSH: ClassInfo = ClassInfo {
    name: "MPLSPush",
    summary: "push an MPLS label chosen by the IPv4 destination's FEC (output 1: no FEC)",
    make: make_push,
};
pub const SWAP: ClassInfo = ClassInfo {
    name: "MPLSSwap",
    summary: "swap (output 0) or pop (output 1) the top MPLS label by the incoming label map",
    make: make_swap,
};

const ETH_MPLS: [u8; 2] = [0x88, 0x47];
const ETH_IP: [u8; 2] = [0x08, 0x00];
const MAX_LABEL: u64 = (1 << 20) - 1;

fn parse_label(s: &str, class: &str) -> Result<u32, String> {
    let v = parse_uint(s).map_err(|e| format!("{class}: label '{s}': {e}"))?;
    if v > MAX_LABEL {
        return Err(format!("{class}: label {v} does not fit 20 bits"));
    }
    Ok(v as u32)
}

struct MplsPush {
    fecs: Vec<(u32, u8, u32)>, // prefix, length, label
    pushed: u64,
}

fn make_push(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("MPLSPush", config, &[]);
    let mut fecs = Vec::new();
    for arg in a.take_all_positional() {
        let w = split_words(&arg);
        if w.len() != 2 {
            return Err(format!("MPLSPush: expected 'PREFIX LABEL', got '{arg}'"));
        }
        let (ip, len) = parse_prefix(&w[0]).map_err(|e| format!("MPLSPush: {e}"))?;
        let m = crate::conf::mask(len);
        fecs.push((
            u32::from_be_bytes(ip) & m,
            len,
            parse_label(&w[1], "MPLSPush")?,
        ));
    }
    a.finish()?;
    if fecs.is_empty() {
        return Err("MPLSPush: no FEC entry".into());
    }
    Ok(Box::new(MplsPush { fecs, pushed: 0 }))
}

impl Element for MplsPush {
    fn ports(&self) -> Ports {
        Ports::push(1, 2)
    }
    fn push(&mut self, _port: usize, mut p: Packet, cx: &mut Cx) {
        cx.instr(8);
        let d = p.data();
        if d.len() < 34 || d[12..14] != ETH_IP {
            cx.emit(1, p);
            return;
        }
        cx.read_pkt(4);
        let dst = u32::from_be_bytes([d[30], d[31], d[32], d[33]]);
        let mut best: Option<(u8, u32)> = None;
        for (k, &(pre, len, label)) in self.fecs.iter().enumerate() {
            cx.instr(4);
            cx.static_state(Read, 0, k as u64, 8);
            if dst & crate::conf::mask(len) == pre && best.is_none_or(|b| len > b.0) {
                best = Some((len, label));
            }
        }
        let Some((_, label)) = best else {
            cx.emit(1, p);
            return;
        };
        cx.instr(14);
        cx.read_pkt(1);
        let ttl = p.data()[22];
        p.push_front(4);
        let d = p.data_mut();
        d.copy_within(4..16, 0);
        d[12..14].copy_from_slice(&ETH_MPLS);
        let entry = (label << 12) | (1 << 8) | ttl as u32;
        d[14..18].copy_from_slice(&entry.to_be_bytes());
        cx.write_pkt(18);
        self.pushed += 1;
        cx.emit(0, p);
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"pushed": self.pushed, "fecs": self.fecs.len()})
    }
    fn code_size(&self) -> u32 {
        160
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Op {
    Swap(u32),
    Pop,
}

struct MplsSwap {
    ilm: HashMap<u32, Op>,
    swapped: u64,
    popped: u64,
}

fn make_swap(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("MPLSSwap", config, &[]);
    let mut ilm = HashMap::new();
    for arg in a.take_all_positional() {
        let w = split_words(&arg);
        if w.len() != 2 {
            return Err(format!(
                "MPLSSwap: expected 'LABEL OUT' or 'LABEL pop', got '{arg}'"
            ));
        }
        let inl = parse_label(&w[0], "MPLSSwap")?;
        let op = if w[1] == "pop" {
            Op::Pop
        } else {
            Op::Swap(parse_label(&w[1], "MPLSSwap")?)
        };
        if ilm.insert(inl, op).is_some() {
            return Err(format!("MPLSSwap: label {inl} appears twice"));
        }
    }
    a.finish()?;
    Ok(Box::new(MplsSwap {
        ilm,
        swapped: 0,
        popped: 0,
    }))
}

impl Element for MplsSwap {
    fn ports(&self) -> Ports {
        Ports::push(1, 2)
    }
    fn push(&mut self, _port: usize, mut p: Packet, cx: &mut Cx) {
        cx.instr(8);
        let d = p.data();
        if d.len() < 18 || d[12..14] != ETH_MPLS {
            cx.drop_packet(p, "not an MPLS frame");
            return;
        }
        cx.read_pkt(6);
        let entry = u32::from_be_bytes([d[14], d[15], d[16], d[17]]);
        let (label, ttl) = (entry >> 12, (entry & 0xff) as u8);
        cx.instr(10);
        cx.static_state(Read, 0, label as u64, 8);
        let Some(&op) = self.ilm.get(&label) else {
            cx.drop_packet(p, "unknown MPLS label");
            return;
        };
        if ttl <= 1 {
            cx.drop_packet(p, "MPLS TTL expired");
            return;
        }
        match op {
            Op::Swap(out) => {
                cx.instr(6);
                let e = (out << 12) | (entry & 0xf00) | (ttl - 1) as u32;
                p.data_mut()[14..18].copy_from_slice(&e.to_be_bytes());
                cx.write_pkt(4);
                self.swapped += 1;
                cx.emit(0, p);
            }
            Op::Pop => {
                cx.instr(12);
                let d = p.data_mut();
                d.copy_within(0..12, 4);
                p.strip_front(4);
                p.data_mut()[12..14].copy_from_slice(&ETH_IP);
                cx.write_pkt(14);
                self.popped += 1;
                cx.emit(1, p);
            }
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"swapped": self.swapped, "popped": self.popped, "labels": self.ilm.len()})
    }
    fn code_size(&self) -> u32 {
        140
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip_frame(dst: [u8; 4], ttl: u8) -> Packet {
        let mut v = vec![0u8; 60];
        v[0..6].copy_from_slice(&[1, 2, 3, 4, 5, 6]);
        v[6..12].copy_from_slice(&[7, 8, 9, 10, 11, 12]);
        v[12..14].copy_from_slice(&ETH_IP);
        v[14] = 0x45;
        v[22] = ttl;
        v[30..34].copy_from_slice(&dst);
        Packet::from_bytes(&v)
    }

    #[test]
    fn push_swap_pop_round_trip() {
        let env = InitEnv::default();
        let mut push = make_push("10.0.0.0/8 100, 10.1.0.0/16 200", &env).unwrap();
        let mut swap = make_swap("100 300, 200 pop", &env).unwrap();
        let mut cx = Cx::new();
        let orig = ip_frame([10, 1, 2, 3], 64);
        let before = orig.data().to_vec();
        push.push(0, orig, &mut cx);
        let (port, p) = cx.pop_emitted().unwrap();
        assert_eq!(port, 0);
        assert_eq!(p.len(), 64);
        assert_eq!(&p.data()[12..14], &ETH_MPLS);
        let e = u32::from_be_bytes(p.data()[14..18].try_into().unwrap());
        assert_eq!(
            (e >> 12, (e >> 8) & 1, e & 0xff),
            (200, 1, 64),
            "longest prefix wins"
        );
        assert_eq!(&p.data()[0..12], &before[0..12]);
        swap.push(0, p, &mut cx);
        let (port, p) = cx.pop_emitted().unwrap();
        assert_eq!(port, 1, "label 200 pops");
        assert_eq!(p.data(), &before[..], "pop restores the original frame");
        // Swap path.
        push.push(0, ip_frame([10, 9, 9, 9], 64), &mut cx);
        let (_, p) = cx.pop_emitted().unwrap();
        swap.push(0, p, &mut cx);
        let (port, p) = cx.pop_emitted().unwrap();
        let e = u32::from_be_bytes(p.data()[14..18].try_into().unwrap());
        assert_eq!((port, e >> 12, e & 0xff), (0, 300, 63));
        // No FEC: output 1 unchanged; unknown label dropped.
        push.push(0, ip_frame([192, 168, 0, 1], 64), &mut cx);
        assert_eq!(cx.pop_emitted().unwrap().0, 1);
        assert!(make_swap("5 6, 5 pop", &env).is_err());
        assert!(make_push("10.0.0.0/8 2000000", &env).is_err());
    }
}
