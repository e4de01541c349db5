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

/// Process the options of the IP header at the start of `h` (`hl` bytes), in place.
pub fn process_options(
    h: &mut [u8],
    hl: usize,
    my: [u8; 4],
    others: &[[u8; 4]],
    now_ms: u32,
) -> OptionsResult {
    let mut r = OptionsResult::default();
    let mut off = 20;
    while off < hl {
        let ty = h[off];
        r.options += 1;
        if ty == 0 {
            break;
        }
        if ty == 1 {
            off += 1;
            continue;
        }
        if off + 1 >= hl {
            r.error = Some(off as u8);
            return r;
        }
        let len = h[off + 1] as usize;
        if len < 2 || off + len > hl {
            r.error = Some((off + 1) as u8);
            return r;
        }
        match ty {
            7 => {
                if len < 3 {
                    r.error = Some((off + 1) as u8);
                    return r;
                }
                let p = h[off + 2] as usize;
                if p < 4 {
                    r.error = Some((off + 2) as u8);
                    return r;
                }
                if p + 3 <= len {
                    h[off + p - 1..off + p + 3].copy_from_slice(&my);
                    h[off + 2] += 4;
                    r.changed = true;
                    r.written += 5;
                } else if p <= len {
                    // Some room, but not for a whole address.
                    r.error = Some((off + 2) as u8);
                    return r;
                }
            }
            68 => {
                if len < 4 {
                    r.error = Some((off + 1) as u8);
                    return r;
                }
                let p = h[off + 2] as usize;
                let flag = h[off + 3] & 0x0f;
                let oflw = h[off + 3] >> 4;
                if p < 5 {
                    r.error = Some((off + 2) as u8);
                    return r;
                }
                let entry = match flag {
                    0 => 4,
                    1 | 3 => 8,
                    _ => {
                        r.error = Some((off + 3) as u8);
                        return r;
                    }
                };
                if p + entry - 1 > len {
                    if p <= len && !(len - p + 1).is_multiple_of(entry) {
                        // Pointer leaves a partial slot: malformed.
                        r.error = Some((off + 2) as u8);
                        return r;
                    }
                    if oflw == 15 {
                        r.error = Some((off + 3) as u8);
                        return r;
                    }
                    h[off + 3] = ((oflw + 1) << 4) | flag;
                    r.changed = true;
                    r.written += 1;
                } else {
                    let ts = now_ms.to_be_bytes();
                    let s = off + p - 1;
                    match flag {
                        0 => {
                            h[s..s + 4].copy_from_slice(&ts);
                            h[off + 2] += 4;
                            r.changed = true;
                            r.written += 5;
                        }
                        1 => {
                            h[s..s + 4].copy_from_slice(&my);
                            h[s + 4..s + 8].copy_from_slice(&ts);
                            h[off + 2] += 8;
                            r.changed = true;
                            r.written += 9;
                        }
                        _ => {
                            let want = [h[s], h[s + 1], h[s + 2], h[s + 3]];
                            r.compares += 1 + others.len() as u32;
                            if want == my || others.contains(&want) {
                                h[s + 4..s + 8].copy_from_slice(&ts);
                                h[off + 2] += 8;
                                r.changed = true;
                                r.written += 5;
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        off += len;
    }
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
        if r.changed {
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
        // Full: left alone.
        let before = h.clone();
        let r = process_options(&mut h, 32, MY, &[], 0);
        assert_eq!((r.error, r.changed), (None, false));
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
                proptest::prop_assert!((20..20 + n).contains(&(at as usize)));
            }
            proptest::prop_assert_eq!(&h[..20], &before[..20]);
            proptest::prop_assert_eq!(&h[20 + n..], &before[20 + n..]);
            proptest::prop_assert_eq!(r.changed, h != before);
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
