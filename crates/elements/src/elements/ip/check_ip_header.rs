//! `CheckIPHeader([OFFSET, keywords OFFSET, INTERFACES, BADSRC, GOODDST, CHECKSUM, VERBOSE,
//! DETAILS])` — checks that the packet holds a valid IPv4 header starting OFFSET bytes in.
//!
//! Checks, in order, each with its drop reason: at least 20 bytes (`tiny packet`), version 4
//! (`bad IP version`), header length >= 20 and inside the packet (`bad IP header length`),
//! header checksum when CHECKSUM is true, the default (`bad IP checksum`), total length >=
//! header length and <= the bytes present (`bad IP length`), and, when any of INTERFACES,
//! BADSRC or GOODDST is given (RFC 1812 5.3.7), the source address (`bad source address`):
//! a source that is 0.0.0.0, 255.255.255.255 or on the BADSRC list is bad unless the
//! destination is on the GOODDST list. As in Click, multicast and class-E sources are not
//! refused here (the routing table and ICMPError deal with them). `INTERFACES a/len ...` adds each
//! interface's directed broadcast address to BADSRC and the interface address to GOODDST.
//! The old syntax `CheckIPHeader(BADSRC2 [, OFFSET])` (a first argument that is a list of
//! addresses) works like BADSRC.
//!
//! Valid packets are trimmed to the IP total length (Ethernet padding), get the network-header
//! annotation (OFFSET, header length) and the destination IP annotation, and leave on output
//! 0. Invalid packets leave on output 1 when it is connected, as in Click, else they are
//! dropped with the reason above; the `drops` read handler counts them either way.
//!
//! Ports: 1 agnostic input, 1-2 outputs (output 0 agnostic, output 1 push).
//! Costs: 6 instructions and a 1-byte packet-data read (version/length); with CHECKSUM one
//! instruction per 16-bit header word and a read of the rest of the header (header length - 1
//! bytes; else a 2-byte read of the total length); 3 instructions per source-address list entry
//! compared, and, when source checks are on without CHECKSUM, a 4+4-byte read of the addresses;
//! 4 instructions, a 2-byte meta-data read of the packet length, and on success a 2-byte
//! network-header and 4-byte destination annotation write (+2 bytes when trimming changes the
//! length). Address lists are immediates.
//!
//! Why the header is counted once: Click's `CheckIPHeader::simple_action` reads `ip_v`/`ip_hl`,
//! sums the `hlen` header bytes (`click_in_cksum`), then reads `ip_len`, `ip_src` and `ip_dst`,
//! all inside those same `hlen` bytes; a compiled NP task keeps the header it summed in its
//! transfer registers, so the distinct packet bytes it touches are the header, once (20 B for
//! a header without options). The earlier rule counted the version byte, the header and the
//! addresses again: 29 B per packet.
use crate::conf::{parse_bool, parse_ip, parse_prefix, parse_uint, split_words, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "CheckIPHeader",
    summary: "check IP headers (version, lengths, checksum, bad sources); set the network header",
    make,
};

pub struct CheckIPHeader {
    offset: usize,
    checksum: bool,
    check_src: bool,
    badsrc: Vec<[u8; 4]>,
    gooddst: Vec<[u8; 4]>,
    count: u64,
    drops: u64,
    /// Connected outputs: with 2, invalid packets leave on output 1.
    nout: usize,
}

fn ip_list(class: &str, what: &str, s: &str) -> Result<Vec<[u8; 4]>, String> {
    split_words(s)
        .iter()
        .map(|w| parse_ip(w).map_err(|e| format!("{class}: {what}: {e}")))
        .collect()
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "CheckIPHeader";
    let mut a = Args::parse(
        c,
        config,
        &[
            "OFFSET",
            "INTERFACES",
            "BADSRC",
            "GOODDST",
            "CHECKSUM",
            "VERBOSE",
            "DETAILS",
        ],
    );
    let mut badsrc = Vec::new();
    let mut gooddst = Vec::new();
    let mut check_src = false;
    let mut offset = 0usize;
    // Old syntax: CheckIPHeader(BADSRC2 [, OFFSET]).
    if let Some(first) = a.optional() {
        if first.contains('.') {
            badsrc = ip_list(c, "BADSRC", &first)?;
            check_src = true;
            if let Some(o) = a.optional() {
                offset = parse_uint(&o).map_err(|e| format!("{c}: OFFSET: {e}"))? as usize;
            }
        } else {
            offset = parse_uint(&first).map_err(|e| format!("{c}: OFFSET: {e}"))? as usize;
        }
    }
    if let Some(o) = a.keyword("OFFSET") {
        offset = parse_uint(&o).map_err(|e| format!("{c}: OFFSET: {e}"))? as usize;
    }
    if let Some(s) = a.keyword("BADSRC") {
        badsrc.extend(ip_list(c, "BADSRC", &s)?);
        check_src = true;
    }
    if let Some(s) = a.keyword("GOODDST") {
        gooddst.extend(ip_list(c, "GOODDST", &s)?);
        check_src = true;
    }
    if let Some(s) = a.keyword("INTERFACES") {
        for w in split_words(&s) {
            let (ip, len) = parse_prefix(&w).map_err(|e| format!("{c}: INTERFACES: {e}"))?;
            let m = crate::conf::mask(len);
            let bcast = (u32::from_be_bytes(ip) & m) | !m;
            badsrc.push(bcast.to_be_bytes());
            gooddst.push(ip);
        }
        check_src = true;
    }
    let checksum = match a.keyword("CHECKSUM") {
        Some(s) => parse_bool(&s).map_err(|e| format!("{c}: CHECKSUM: {e}"))?,
        None => true,
    };
    for k in ["VERBOSE", "DETAILS"] {
        if let Some(s) = a.keyword(k) {
            parse_bool(&s).map_err(|e| format!("{c}: {k}: {e}"))?;
        }
    }
    a.finish()?;
    badsrc.sort();
    badsrc.dedup();
    Ok(Box::new(CheckIPHeader {
        offset,
        checksum,
        check_src,
        badsrc,
        gooddst,
        count: 0,
        drops: 0,
        nout: 1,
    }))
}

impl CheckIPHeader {
    /// The drop reason for the header at `h` (slice from the IP header to the end of the
    /// packet), or None when valid. Charges its costs to `cx`.
    fn check(&self, h: &[u8], cx: &mut Cx) -> Option<&'static str> {
        cx.instr(6);
        if h.len() < net::IP_MIN_LEN {
            return Some("tiny packet");
        }
        cx.read_pkt(1);
        if net::ip_version(h) != 4 {
            return Some("bad IP version");
        }
        let hl = net::ip_hl(h);
        if hl < net::IP_MIN_LEN || hl > h.len() {
            return Some("bad IP header length");
        }
        if self.checksum {
            // The checksum loop reads the rest of the header (the first byte is already
            // loaded); every later field it needs comes from this one read of the header.
            cx.instr(hl as u32 / 2);
            cx.read_pkt(hl as u32 - 1);
            if net::ip_header_sum(h) != 0 {
                return Some("bad IP checksum");
            }
        } else {
            cx.read_pkt(2);
        }
        let len = net::ip_total_len(h);
        if len < hl || len > h.len() {
            return Some("bad IP length");
        }
        if self.check_src {
            if !self.checksum {
                cx.read_pkt(8);
            }
            let src = net::ip_src(h);
            let dst = net::ip_dst(h);
            cx.instr(4 + 3 * self.badsrc.len() as u32);
            let bad = src == [0; 4] || src == [255; 4] || self.badsrc.contains(&src);
            if bad {
                cx.instr(3 * self.gooddst.len() as u32);
                if !self.gooddst.contains(&dst) {
                    return Some("bad source address");
                }
            }
        }
        None
    }
}

impl Element for CheckIPHeader {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 1).with_outputs(1, 2)
    }
    fn output_processing_of(&self, port: usize) -> crate::element::Processing {
        if port == 0 {
            crate::element::Processing::Agnostic
        } else {
            crate::element::Processing::Push
        }
    }
    fn set_port_counts(&mut self, _inputs: usize, outputs: usize) {
        self.nout = outputs.max(1);
    }
    #[inline(always)]
    fn simple_action(&mut self, mut p: Packet, cx: &mut Cx) -> Option<Packet> {
        cx.read_meta(2);
        let off = self.offset.min(p.len());
        let verdict = self.check(&p.data()[off..], cx);
        cx.instr(4);
        if let Some(reason) = verdict {
            self.drops += 1;
            if self.nout > 1 {
                cx.emit(1, p);
            } else {
                cx.drop_packet(p, reason);
            }
            return None;
        }
        let h = &p.data()[off..];
        let (hl, len, dst) = (net::ip_hl(h), net::ip_total_len(h), net::ip_dst(h));
        let extra = h.len() - len;
        if extra > 0 {
            p.take(extra);
            cx.write_meta(2);
        }
        p.set_ip_header(off, hl);
        p.anno.dst_ip = dst;
        cx.write_meta(2);
        cx.write_meta(4);
        self.count += 1;
        Some(p)
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count, "drops": self.drops})
    }
    fn code_size(&self) -> u32 {
        110
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::net;
    use pktflow_traffic::Packet;

    const CFG: &str = "INTERFACES 10.0.0.1/8 192.168.1.1/24";

    fn verdict(cfg: &str, bytes: &[u8]) -> Result<Packet, &'static str> {
        let mut e = make("CheckIPHeader", cfg);
        let (mut out, t) = push_e(e.as_mut(), Packet::from_bytes(bytes));
        match out.pop() {
            Some(p) => Ok(p),
            None => Err(drop_reasons(&t)[0]),
        }
    }

    fn push_e(
        e: &mut dyn crate::element::Element,
        p: Packet,
    ) -> (Vec<Packet>, pktflow_model::PacketTrace) {
        let mut cx = crate::cx::Cx::new();
        let r = e.simple_action(p, &mut cx);
        (r.into_iter().collect(), cx.trace().clone())
    }

    /// Bytes of memory type `m` a trace reads (`r`) or writes.
    fn bytes(t: &pktflow_model::PacketTrace, m: pktflow_model::MemType, r: bool) -> u32 {
        let k = if r {
            pktflow_model::AccessKind::Read
        } else {
            pktflow_model::AccessKind::Write
        };
        t.accesses
            .iter()
            .filter(|a| a.mem == m && a.kind == k)
            .map(|a| a.bytes)
            .sum()
    }

    #[test]
    fn the_header_is_read_once() {
        use pktflow_model::MemType::{PacketData, PacketMeta};
        // 20-byte header, checksum and source checks on (the router's configuration).
        let b = ipv4([10, 0, 0, 2], [192, 168, 1, 9], 64, &[], 30, 0);
        let mut e = make("CheckIPHeader", CFG);
        let (out, t) = push_e(e.as_mut(), Packet::from_bytes(&b));
        assert_eq!(out.len(), 1);
        assert_eq!(bytes(&t, PacketData, true), 20);
        assert_eq!(bytes(&t, PacketData, false), 0);
        assert_eq!(bytes(&t, PacketMeta, true), 2);
        assert_eq!(bytes(&t, PacketMeta, false), 6);
        // A 24-byte header (one option word): 24 bytes.
        let b = ipv4([10, 0, 0, 2], [192, 168, 1, 9], 64, &[1, 1, 1, 0], 30, 0);
        let (_, t) = push_e(e.as_mut(), Packet::from_bytes(&b));
        assert_eq!(bytes(&t, PacketData, true), 24);
        // Without CHECKSUM: the version byte, the total length, the two addresses.
        let mut e = make("CheckIPHeader", "CHECKSUM false, BADSRC 1.2.3.4");
        let b = ipv4([10, 0, 0, 2], [192, 168, 1, 9], 64, &[], 30, 0);
        let (_, t) = push_e(e.as_mut(), Packet::from_bytes(&b));
        assert_eq!(bytes(&t, PacketData, true), 1 + 2 + 8);
    }

    #[test]
    fn good_packet_gets_annotations_and_loses_padding() {
        let mut b = ipv4([10, 0, 0, 2], [192, 168, 1, 9], 64, &[1, 1, 1, 0], 30, 0);
        b.extend_from_slice(&[0; 6]); // link padding
        let p = verdict(CFG, &b).unwrap();
        assert_eq!(p.len(), 54);
        assert_eq!(p.ip_offset(), Some(0));
        assert_eq!(p.anno.network_header_len, 24);
        assert_eq!(p.anno.dst_ip, [192, 168, 1, 9]);
    }

    #[test]
    fn bad_packets_go_to_output_1_when_it_is_connected() {
        let mut e = crate::elements::ip::testutil::make("CheckIPHeader", "");
        e.set_port_counts(1, 2);
        let mut b = ipv4([10, 0, 0, 2], [10, 0, 0, 3], 64, &[], 8, 0);
        b[0] = 0x65; // version 6
        let (out, t) = crate::elements::ip::testutil::push(e.as_mut(), 0, Packet::from_bytes(&b));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, 1);
        assert!(t.fates.is_empty(), "not dropped");
    }

    #[test]
    fn bad_packets_are_dropped_with_their_reason() {
        let good = ipv4([10, 0, 0, 2], [192, 168, 1, 9], 64, &[], 30, 0);
        assert_eq!(verdict(CFG, &good[..19]).unwrap_err(), "tiny packet");
        let mut b = good.clone();
        b[0] = 0x65;
        assert_eq!(verdict(CFG, &b).unwrap_err(), "bad IP version");
        let mut b = good.clone();
        b[0] = 0x44;
        net::set_ip_checksum(&mut b);
        assert_eq!(verdict(CFG, &b).unwrap_err(), "bad IP header length");
        let mut b = good.clone();
        b[24] ^= 0xff; // payload: checksum still fine
        assert!(verdict(CFG, &b).is_ok());
        b[15] ^= 1; // source address: checksum now wrong
        assert_eq!(verdict(CFG, &b).unwrap_err(), "bad IP checksum");
        assert!(verdict(&format!("{CFG}, CHECKSUM false"), &b).is_ok());
        let mut b = good.clone();
        net::set_ip_total_len(&mut b, 60);
        net::set_ip_checksum(&mut b);
        assert_eq!(verdict(CFG, &b).unwrap_err(), "bad IP length");
        net::set_ip_total_len(&mut b, 16);
        net::set_ip_checksum(&mut b);
        assert_eq!(verdict(CFG, &b).unwrap_err(), "bad IP length");
        // Bad sources: interface broadcast, limited broadcast, multicast.
        for src in [
            [10, 255, 255, 255],
            [192, 168, 1, 255],
            [255, 255, 255, 255],
        ] {
            let b = ipv4(src, [192, 168, 1, 9], 64, &[], 30, 0);
            assert_eq!(
                verdict(CFG, &b).unwrap_err(),
                "bad source address",
                "{src:?}"
            );
        }
        // Multicast and class-E sources are not refused by CheckIPHeader (as in Click).
        for src in [[224, 0, 0, 5], [240, 0, 0, 1]] {
            assert!(verdict(CFG, &ipv4(src, [192, 168, 1, 9], 64, &[], 30, 0)).is_ok());
        }
        // ... unless addressed to one of our interfaces (GOODDST).
        let b = ipv4([10, 255, 255, 255], [10, 0, 0, 1], 64, &[], 30, 0);
        assert!(verdict(CFG, &b).is_ok());
        // Without source checks the broadcast source passes.
        let b = ipv4([10, 255, 255, 255], [192, 168, 1, 9], 64, &[], 30, 0);
        assert!(verdict("", &b).is_ok());
        // Old syntax and OFFSET.
        let b = ipv4([18, 26, 4, 255], [1, 2, 3, 4], 64, &[], 0, 0);
        assert_eq!(
            verdict("18.26.4.255", &b).unwrap_err(),
            "bad source address"
        );
        let mut framed = vec![0u8; 14];
        framed.extend_from_slice(&good);
        let p = verdict("14", &framed).unwrap();
        assert_eq!(p.ip_offset(), Some(14));
    }
}
