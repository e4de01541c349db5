//! `DecIPTTL` — decrements the IP time-to-live and updates the header checksum incrementally
//! (RFC 1624: one 16-bit word, TTL and protocol, changes). A packet whose TTL is 1 or 0 is
//! expired: it goes unchanged to output 1 (normally an `ICMPError(.., timeexceeded)`).
//!
//! Ports: 1 agnostic input, 1-2 outputs (output 1 push). Keyword `MULTICAST` (Click: whether to
//! decrement multicast packets; default true) is accepted; false passes multicast packets
//! unchanged. The IP header is the network-header annotation, or the front of the packet.
//!
//! Costs: 4 instructions and a 1-byte packet-data read of the TTL; expired packets stop there
//! (+2 instructions). Otherwise +8 instructions, a 2-byte read of the checksum and a 3-byte
//! packet-data write (TTL and checksum).
use super::ip_header_offset;
use crate::conf::{parse_bool, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "DecIPTTL",
    summary: "decrement the IP TTL (incremental checksum); expired packets to output 1",
    make,
};

struct DecIPTTL {
    multicast: bool,
    expired: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("DecIPTTL", config, &["MULTICAST", "ACTIVE"]);
    let multicast = match a.keyword("MULTICAST") {
        Some(s) => parse_bool(&s).map_err(|e| format!("DecIPTTL: MULTICAST: {e}"))?,
        None => true,
    };
    a.keyword("ACTIVE");
    a.finish()?;
    Ok(Box::new(DecIPTTL {
        multicast,
        expired: 0,
    }))
}

/// Decrement the TTL of the header at the start of `h` with an RFC 1624 checksum update.
/// Returns false (and leaves `h` unchanged) when the TTL is 0 or 1.
#[inline]
pub fn dec_ttl(h: &mut [u8]) -> bool {
    if h[8] <= 1 {
        return false;
    }
    let old = net::be16(h, 8);
    h[8] -= 1;
    net::ip_sum_update16(h, old, net::be16(h, 8));
    true
}

impl Element for DecIPTTL {
    fn ports(&self) -> Ports {
        Ports::push(1, 1).with_outputs(1, 2)
    }
    fn push(&mut self, _port: usize, mut p: Packet, cx: &mut Cx) {
        cx.instr(4);
        let off = ip_header_offset(&p);
        let h = &mut p.data_mut()[off..];
        if h.len() < net::IP_MIN_LEN {
            cx.drop_packet(p, "packet too short");
            return;
        }
        cx.read_pkt(1);
        if !self.multicast && net::ip_dst(h)[0] >> 4 == 0xe {
            cx.emit(0, p);
            return;
        }
        if !dec_ttl(h) {
            cx.instr(2);
            self.expired += 1;
            cx.emit(1, p);
            return;
        }
        cx.instr(8);
        cx.read_pkt(2);
        cx.write_pkt(3);
        cx.emit(0, p);
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"expired": self.expired})
    }
    fn code_size(&self) -> u32 {
        36
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(500))]
        #[test]
        fn incremental_checksum_equals_recomputation(mut h in proptest::array::uniform20(any::<u8>()), opts in 0usize..5, extra in proptest::collection::vec(any::<u8>(), 40)) {
            h[0] = 0x45 + opts as u8;
            let mut v = h.to_vec();
            v.extend_from_slice(&extra[..opts * 4]);
            net::set_ip_checksum(&mut v);
            let ttl = v[8];
            let ok = dec_ttl(&mut v);
            prop_assert_eq!(ok, ttl > 1);
            if ok {
                prop_assert_eq!(v[8], ttl - 1);
                let inc = net::ip_sum(&v);
                let mut w = v.clone();
                net::set_ip_checksum(&mut w);
                // 0x0000 and 0xffff are the same one's-complement value; RFC 1624 eqn. 3 never
                // yields 0xffff from a nonzero sum, and a full recomputation never yields 0xffff.
                prop_assert_eq!(inc, net::ip_sum(&w));
                prop_assert_eq!(net::ip_header_sum(&v), 0);
            }
        }
    }
}
