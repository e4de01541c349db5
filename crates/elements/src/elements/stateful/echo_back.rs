//! `EchoBack` — the thesis's echo benchmark: returns each packet to where it came from.
//!
//! The NetThreads thesis's echo (Table 3.1 context, chapter 6) copies every packet from the
//! input buffer to the output buffer and sends it. Here the copy also swaps the Ethernet
//! source and destination addresses and, for IPv4, the IP source and destination (the IP and
//! transport checksums stay valid: a one's-complement sum does not depend on word order), so
//! the output can be checked byte by byte.
//!
//! Ports: 1 push input, 1 push output. Frames shorter than an Ethernet header are dropped
//! ("runt frame").
//! Costs: the copy loop over 32-bit words, `256 + 11 * words / 4` instructions: the thesis
//! measured this program at 300 ± 10 dynamic instructions for a 64-byte packet and 1300 ± 10 for
//! a 1518-byte packet, and these two figures fix the per-word cost (2.75) and the fixed cost
//! (256); reads the whole packet and writes the whole packet (the output-buffer copy). No
//! shared state, no lock.
use crate::conf::{Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "EchoBack",
    summary:
        "return each frame with Ethernet and IP source and destination swapped (the thesis's echo)",
    make,
};

struct EchoBack {
    echoed: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    Args::parse("EchoBack", config, &[]).finish()?;
    Ok(Box::new(EchoBack { echoed: 0 }))
}

/// Instructions to echo a packet of `len` bytes.
pub fn echo_instructions(len: usize) -> u32 {
    let words = len.div_ceil(4) as u32;
    256 + 11 * words / 4
}

impl Element for EchoBack {
    fn ports(&self) -> Ports {
        Ports::push(1, 1)
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        let len = p.len();
        cx.instr(echo_instructions(len));
        if len < 14 {
            cx.read_pkt(len as u32);
            cx.drop_packet(p, "runt frame");
            return None;
        }
        cx.read_pkt(len as u32);
        let d = p.data_mut();
        for i in 0..6 {
            d.swap(i, 6 + i);
        }
        if super::parse_ipv4(d).is_some() {
            for i in 0..4 {
                d.swap(26 + i, 30 + i);
            }
        }
        cx.write_pkt(len as u32);
        self.echoed += 1;
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({ "echoed": self.echoed })
    }
    fn code_size(&self) -> u32 {
        40
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elements::stateful::testutil::ipv4_frame;
    use proptest::prelude::*;

    #[test]
    fn swaps_addresses_and_keeps_checksums() {
        let f = ipv4_frame(17, [10, 0, 0, 2], [10, 0, 0, 9], &[0, 1, 0, 2, 0, 8, 0, 0]);
        let mut e = EchoBack { echoed: 0 };
        let mut cx = Cx::new();
        let out = e.simple_action(Packet::from_bytes(&f), &mut cx).unwrap();
        let d = out.data();
        assert_eq!(&d[0..6], &f[6..12]);
        assert_eq!(&d[6..12], &f[0..6]);
        assert_eq!(&d[26..30], &[10, 0, 0, 9]);
        assert_eq!(&d[30..34], &[10, 0, 0, 2]);
        assert_eq!(pktflow_traffic::ip_checksum(&d[14..34]), 0);
        assert_eq!(cx.instr, echo_instructions(f.len()));
    }

    #[test]
    fn cost_reproduces_the_two_measured_points_of_the_thesis() {
        assert_eq!(echo_instructions(64), 300);
        assert!((echo_instructions(1518) as i64 - 1300).abs() <= 10);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]
        #[test]
        fn arbitrary_frames_do_not_panic(bytes in proptest::collection::vec(any::<u8>(), 0..200)) {
            let mut e = EchoBack { echoed: 0 };
            let mut cx = Cx::new();
            let n = bytes.len();
            if let Some(p) = e.simple_action(Packet::from_bytes(&bytes), &mut cx) {
                prop_assert_eq!(p.len(), n);
            } else {
                prop_assert!(n < 14);
            }
        }
    }
}
