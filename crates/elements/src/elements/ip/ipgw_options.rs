//! `IPGWOptions(MYADDR [, OTHERADDRS])` — processes the IP options every router processes
//! (RFC 791, RFC 1812 4.2.2.2): Record Route (type 7) and Internet Timestamp (type 68); other
//! options are skipped by their length (source routes are not processed, as in Click).
//!
//! Record Route: if the pointer shows room, MYADDR (the address of the interface downstream of
//! this element) is written at the pointer and the pointer advances by 4; a full option is left
//! alone; a pointer below 4 or partial room is an error. Timestamp: flag 0 writes a timestamp,
//! flag 1 MYADDR and a timestamp, flag 3 a timestamp only where the prespecified address is
//! MYADDR or one of OTHERADDRS; a full option increments the overflow count (an error when it
//! wraps); pointer below 5 or an unknown flag is an error. Timestamps are milliseconds since
//! midnight UT of the packet's trace time. Option list errors (length below 2 or past the
//! header) are errors too. The header checksum is recomputed when the header changed.
//!
//! An erroneous packet goes unchanged to output 1 with the ICMP parameter-problem annotation
//! set to the offset of the offending byte from the start of the IP header (for
//! `ICMPError(.., parameterproblem)`). The IP header is the network-header annotation, or the
//! front of the packet.
//!
//! Ports: 1 push input, 1-2 push outputs.
//! Costs: 4 instructions and a 1-byte packet-data read of the header length; packets without
//! options stop there. With options: a read of the option bytes, 6 instructions per option
//! examined, 4 per address compared, and per entry written 6 instructions and a 4/8-byte write
//! (+1 byte pointer); a changed header adds one instruction per 16-bit word, a header read and a
//! 2-byte checksum write; an error adds 3 instructions and a 1-byte meta-data write.
use super::ip_header_offset;
use crate::conf::{parse_ip, split_words, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "IPGWOptions",
    summary: "process record-route and timestamp IP options; bad options to output 1",
    make,
};

pub struct IPGWOptions {
    myaddr: [u8; 4],
    others: Vec<[u8; 4]>,
    processed: u64,
    errors: u64,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("IPGWOptions", config, &["MYADDR", "OTHERADDRS"]);
    let my = a
        .keyword_or_positional("MYADDR")
        .ok_or("IPGWOptions: missing argument MYADDR")?;
    let myaddr = parse_ip(&my).map_err(|e| format!("IPGWOptions: MYADDR: {e}"))?;
    let mut others = Vec::new();
    if let Some(o) = a.keyword_or_positional("OTHERADDRS") {
        for w in split_words(&o) {
            others.push(parse_ip(&w).map_err(|e| format!("IPGWOptions: OTHERADDRS: {e}"))?);
        }
    }
    a.finish()?;
    Ok(Box::new(IPGWOptions {
        myaddr,
        others,
        processed: 0,
        errors: 0,
    }))
}

/// What processing the options of one header did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct OptionsResult {
    /// Offset (from the IP header) of the offending byte.
    pub error: Option<u8>,
    pub changed: bool,
    pub options: u32,
    pub compares: u32,
    pub written: u32,
}

/// Process the options of the IP header at the start of `h` (`hl` bytes), in place, as
/// Click 2.1's IPGWOptions does (elements/ip/ipgwoptions.cc; checked against its output in
/// `crates/elements/tests/click21_elements.rs`):
///
/// - NOP is skipped, EOL ends the list; any other option's length byte must be at least 2
///   and keep the option inside the header, else the error points at the length byte.
/// - Options other than Record Route and Timestamp are skipped.
/// - Record Route with pointer P (1-origin): room for an address (P >= 4 and P + 3 <= length)
///   gets MYADDR and P advances by 4; P = length + 1 (full) is left alone; any other P is an
///   error pointing at the pointer byte.
/// - Timestamp: P < 5 is an error at the pointer. Flag 0 writes a timestamp and flag 1 MYADDR
///   and a timestamp where there is room, else the overflow count is incremented; flag 3 with
///   room for an entry stamps it if its address is MYADDR or one of OTHERADDRS; flag 3
///   without room and any other flag are an error at the flag byte, and so is an overflow
///   count that would pass 15.
/// - A Record Route or Timestamp option, changed or not, marks the header for a checksum
///   recomputation (`changed`) unless an error stops the processing; an error leaves what
///   was written before it in place, with the old checksum, as Click does.
///
/// Bytes an option reads past the header (a length or pointer byte) are read from the
/// packet data that follows, as Click does; past the end of `h` they read as 0.
pub fn process_options(
    h: &mut [u8],
    hl: usize,
    my: [u8; 4],
    others: &[[u8; 4]],
    now_ms: u32,
) -> OptionsResult {
    let mut r = OptionsResult::default();
    let byte = |h: &[u8], i: usize| h.get(i).copied().unwrap_or(0) as usize;
    let mut oi = 20;
    let mut seen = false;
    while oi < hl {
        let ty = h[oi];
        r.options += 1;
        if ty == 1 {
            oi += 1;
            continue;
        }
        if ty == 0 {
            break;
        }
        let len = byte(h, oi + 1);
        if len < 2 || oi + len > hl {
            r.error = Some((oi + 1) as u8);
            return r;
        }
        if ty != 7 && ty != 68 {
            oi += len;
            continue;
        }
        seen = true;
        let p = byte(h, oi + 2).wrapping_sub(1);
        if ty == 7 {
            if byte(h, oi + 2) >= 4 && p + 4 <= len {
                h[oi + p..oi + p + 4].copy_from_slice(&my);
                h[oi + 2] += 4;
                r.written += 5;
            } else if byte(h, oi + 2) != len + 1 {
                r.error = Some((oi + 2) as u8);
                return r;
            }
        } else {
            let fl = byte(h, oi + 3);
            let (oflw, flag) = (fl >> 4, fl & 0x0f);
            if byte(h, oi + 2) < 5 {
                r.error = Some((oi + 2) as u8);
                return r;
            }
            let ts = now_ms.to_be_bytes();
            let mut overflowed = false;
            match flag {
                0 if p + 4 <= len => {
                    h[oi + p..oi + p + 4].copy_from_slice(&ts);
                    h[oi + 2] += 4;
                    r.written += 5;
                }
                1 if p + 8 <= len => {
                    h[oi + p..oi + p + 4].copy_from_slice(&my);
                    h[oi + p + 4..oi + p + 8].copy_from_slice(&ts);
                    h[oi + 2] += 8;
                    r.written += 9;
                }
                0 | 1 => overflowed = true,
                3 if p + 8 <= len => {
                    let want = [h[oi + p], h[oi + p + 1], h[oi + p + 2], h[oi + p + 3]];
                    r.compares += 1 + others.len() as u32;
                    if want == my || others.contains(&want) {
                        h[oi + p + 4..oi + p + 8].copy_from_slice(&ts);
                        h[oi + 2] += 8;
                        r.written += 5;
                    }
                }
                _ => {
                    r.error = Some((oi + 3) as u8);
                    return r;
                }
            }
            if overflowed {
                if oflw < 15 {
                    if let Some(b) = h.get_mut(oi + 3) {
                        *b = (((oflw + 1) << 4) | flag) as u8;
                    }
                    r.written += 1;
                } else {
                    r.error = Some((oi + 3) as u8);
                    return r;
                }
            }
        }
        oi += len;
    }
    r.changed = seen;
    r
}

impl IPGWOptions {
    /// A header with options (`hl` bytes, at `off`): processed, the checksum redone if they
    /// changed. Out of line: most packets have none, and need not pay for this path's frame.
    #[cold]
    #[inline(never)]
    fn push_options(&mut self, mut p: Packet, off: usize, hl: usize, cx: &mut Cx) {
        let now_ms = ((cx.now_ns / 1_000_000) % 86_400_000) as u32;
        let h = &mut p.data_mut()[off..];
        if hl > h.len() {
            cx.drop_packet(p, "bad IP header length");
            return;
        }
        cx.read_pkt(hl as u32 - 20);
        let r = process_options(h, hl, self.myaddr, &self.others, now_ms);
        cx.instr(6 * r.options + 4 * r.compares + 6 * (r.written / 4));
        if r.written > 0 {
            cx.write_pkt(r.written);
        }
        if r.changed && r.error.is_none() {
            net::set_ip_checksum(h);
            cx.instr(hl as u32 / 2);
            cx.read_pkt(20);
            cx.write_pkt(2);
        }
        self.processed += 1;
        match r.error {
            None => cx.emit(0, p),
            Some(at) => {
                // The header is unchanged up to the error only if nothing was written before
                // it; Click sends the packet as it is, and so do we (checksum kept valid).
                cx.instr(3);
                p.anno.icmp_param_prob = at;
                cx.write_meta(1);
                self.errors += 1;
                cx.emit(1, p);
            }
        }
    }
}

impl Element for IPGWOptions {
    fn ports(&self) -> Ports {
        Ports::push(1, 1).with_outputs(1, 2)
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(4);
        let off = ip_header_offset(&p);
        let Some(&v) = p.data().get(off) else {
            cx.drop_packet(p, "packet too short");
            return;
        };
        cx.read_pkt(1);
        let hl = usize::from(v & 0x0f) * 4;
        if hl <= net::IP_MIN_LEN {
            cx.emit(0, p);
            return;
        }
        self.push_options(p, off, hl, cx);
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"processed": self.processed, "errors": self.errors})
    }
    fn code_size(&self) -> u32 {
        260
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr(opts: &[u8]) -> Vec<u8> {
        let hl = 20 + opts.len();
        assert_eq!(hl % 4, 0);
        let mut h = vec![0u8; hl + 8];
        h[0] = 0x40 | (hl / 4) as u8;
        net::set_be16(&mut h, 2, (hl + 8) as u16);
        h[8] = 64;
        h[20..hl].copy_from_slice(opts);
        net::set_ip_checksum(&mut h);
        h
    }

    const MY: [u8; 4] = [192, 168, 1, 1];

    #[test]
    fn record_route_fills_then_stops() {
        // RR with room for two addresses, then a NOP and EOL.
        let mut h = hdr(&[7, 11, 4, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        let r = process_options(&mut h, 32, MY, &[], 0);
        assert_eq!((r.error, r.changed), (None, true));
        assert_eq!(&h[23..27], &MY);
        assert_eq!(h[22], 8);
        let r = process_options(&mut h, 32, [10, 0, 0, 1], &[], 0);
        assert!(r.changed);
        assert_eq!(&h[27..31], &[10, 0, 0, 1]);
        assert_eq!(h[22], 12);
        // Full: left alone (the header checksum is still recomputed, as Click does).
        let before = h.clone();
        let r = process_options(&mut h, 32, MY, &[], 0);
        assert_eq!((r.error, r.changed, r.written), (None, true, 0));
        assert_eq!(h, before);
    }

    #[test]
    fn errors_point_at_the_bad_byte() {
        let mut h = hdr(&[7, 7, 3, 0, 0, 0, 0, 0]);
        assert_eq!(process_options(&mut h, 28, MY, &[], 0).error, Some(22));
        let mut h = hdr(&[7, 40, 4, 0]);
        assert_eq!(process_options(&mut h, 24, MY, &[], 0).error, Some(21));
        let mut h = hdr(&[68, 8, 5, 0x02, 0, 0, 0, 0]);
        assert_eq!(process_options(&mut h, 28, MY, &[], 0).error, Some(23));
        let mut h = hdr(&[68, 8, 9, 0xf0, 0, 0, 0, 0]);
        assert_eq!(
            process_options(&mut h, 28, MY, &[], 0).error,
            Some(23),
            "overflow wraps"
        );
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Arbitrary option bytes never panic; errors point inside the options; only option
        /// bytes change.
        #[test]
        fn arbitrary_options_are_safe(words in 1usize..11, bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 40)) {
            let n = words * 4;
            let mut opts = bytes[..n].to_vec();
            // Bias towards the processed types.
            if opts[0] % 3 == 0 { opts[0] = 7 } else if opts[0] % 3 == 1 { opts[0] = 68 }
            let mut h = hdr(&opts);
            let before = h.clone();
            let r = process_options(&mut h, 20 + n, MY, &[[1, 2, 3, 4]], 99);
            if let Some(at) = r.error {
                proptest::prop_assert!((20..20 + n + 3).contains(&(at as usize)));
            }
            proptest::prop_assert_eq!(&h[..20], &before[..20]);
            // Only a short timestamp option's overflow byte may lie past the options.
            proptest::prop_assert_eq!(&h[20 + n + 3..], &before[20 + n + 3..]);
            if h != before {
                proptest::prop_assert!(r.written > 0);
            }
        }
    }

    #[test]
    fn timestamps() {
        let mut h = hdr(&[68, 12, 5, 0x01, 0, 0, 0, 0, 0, 0, 0, 0]);
        let r = process_options(&mut h, 32, MY, &[], 1234);
        assert!(r.changed && r.error.is_none());
        assert_eq!(&h[24..28], &MY);
        assert_eq!(&h[28..32], &1234u32.to_be_bytes());
        assert_eq!(h[22], 13);
        // Full now: overflow count increments.
        process_options(&mut h, 32, MY, &[], 1);
        assert_eq!(h[23] >> 4, 1);
        // Prespecified: only our address gets a stamp.
        let mut h = hdr(&[
            68, 20, 5, 0x03, 10, 0, 0, 9, 0, 0, 0, 0, 192, 168, 1, 1, 0, 0, 0, 0,
        ]);
        let r = process_options(&mut h, 40, MY, &[[10, 0, 0, 9]], 77);
        assert!(r.changed);
        assert_eq!(&h[28..32], &77u32.to_be_bytes());
        assert_eq!(h[22], 13);
    }
}
