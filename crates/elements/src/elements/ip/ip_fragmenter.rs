//! `IPFragmenter(MTU [, keywords HONOR_DF, VERBOSE, HEADROOM])` — fragments IP packets longer
//! than MTU bytes (RFC 791).
//!
//! A packet of at most MTU bytes (from the IP header on) leaves on output 0 unchanged. A longer
//! packet with the don't-fragment bit set goes to output 1 (normally `ICMPError(..,
//! unreachable, needfrag)`), unless `HONOR_DF false`. Otherwise it is split: every fragment but
//! the last carries a multiple of 8 payload bytes and MF; offsets add to the original offset
//! (fragments of fragments work); the last keeps the original MF. The first fragment keeps all
//! options; later ones keep only options whose copy flag (0x80) is set (RFC 791 3.1), padded
//! with end-of-list to a multiple of 4. Every fragment has a correct total length and header
//! checksum and a copy of the annotations; fragments leave in order, first first. The first
//! fragment reuses the original buffer (trimmed); later ones are new packets. The IP header is
//! the network-header annotation or the front of the packet; bytes before it (a MAC header)
//! stay only on the first fragment, as in Click.
//!
//! Ports: 1 push input, 1-2 push outputs.
//! Costs: 6 instructions, a 2-byte meta-data read (length) and a 4-byte packet-data read
//! (total length, flags). Fragmenting adds, per fragment, 20 instructions + 1 per 16-bit
//! header word (checksum) + 1 per 4 bytes copied, a packet-data read and write of the payload
//! copied (none for the first), a packet-data write of its header and 16 B of meta-data
//! writes (annotations); the option scan adds 3 instructions per option.
use super::ip_header_offset;
use crate::conf::{parse_bool, parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::net;
use crate::registry::ClassInfo;
use pktflow_traffic::Packet;

pub const CLASS: ClassInfo = ClassInfo {
    name: "IPFragmenter",
    summary: "fragment IP packets longer than the MTU; DF packets to output 1",
    make,
};

pub struct IPFragmenter {
    mtu: usize,
    honor_df: bool,
    fragmented: u64,
    fragments: u64,
    df_drops: u64,
    /// The later fragments of the packet being cut, held until the first (the original,
    /// trimmed) has gone out; kept between packets, so cutting allocates no vector.
    later: Vec<Packet>,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let c = "IPFragmenter";
    let mut a = Args::parse(c, config, &["MTU", "HONOR_DF", "VERBOSE", "HEADROOM"]);
    let mtu = a
        .keyword_or_positional("MTU")
        .ok_or("IPFragmenter: missing argument MTU")?;
    let mtu = parse_uint(&mtu).map_err(|e| format!("{c}: MTU: {e}"))? as usize;
    if !(28..=65535).contains(&mtu) {
        return Err(format!("{c}: MTU must be between 28 and 65535"));
    }
    let honor_df = match a.keyword("HONOR_DF") {
        Some(s) => parse_bool(&s).map_err(|e| format!("{c}: HONOR_DF: {e}"))?,
        None => true,
    };
    if let Some(s) = a.keyword("VERBOSE") {
        parse_bool(&s).map_err(|e| format!("{c}: VERBOSE: {e}"))?;
    }
    if let Some(s) = a.keyword("HEADROOM") {
        parse_uint(&s).map_err(|e| format!("{c}: HEADROOM: {e}"))?;
    }
    a.finish()?;
    Ok(Box::new(IPFragmenter {
        mtu,
        honor_df,
        fragmented: 0,
        fragments: 0,
        df_drops: 0,
        later: Vec::new(),
    }))
}

/// The options of header `h` (`hl` bytes) to copy into later fragments, padded to 4 bytes.
/// Returns the copied option bytes' length (before padding) and the options scanned.
fn copied_options(h: &[u8], hl: usize, out: &mut [u8; 40]) -> (usize, u32) {
    let (mut off, mut n, mut scanned) = (20, 0, 0);
    while off < hl {
        let ty = h[off];
        scanned += 1;
        if ty == 0 {
            break;
        }
        if ty == 1 {
            off += 1;
            continue;
        }
        if off + 1 >= hl {
            break;
        }
        let len = (h[off + 1] as usize).max(2);
        if off + len > hl {
            break;
        }
        if ty & 0x80 != 0 {
            out[n..n + len].copy_from_slice(&h[off..off + len]);
            n += len;
        }
        off += len;
    }
    (n, scanned)
}

impl IPFragmenter {
    /// A packet longer than the MTU: checked, then sent to output 1 or fragmented. Out of
    /// line, so that the common case (the packet fits) does not pay for its stack frame.
    #[cold]
    #[inline(never)]
    fn push_long(&mut self, mut p: Packet, off: usize, cx: &mut Cx) {
        let h = &p.data()[off..];
        if !net::ip_header_ok(h) {
            cx.drop_packet(p, "bad IP header");
            return;
        }
        cx.read_pkt(4);
        if net::ip_total_len(h) <= self.mtu {
            // Only link padding makes it long.
            cx.emit(0, p);
            return;
        }
        let frag = net::ip_frag_field(h);
        if frag & net::IP_DF != 0 && self.honor_df {
            self.df_drops += 1;
            cx.emit(1, p);
            return;
        }
        let hl = net::ip_hl(h);
        let total = net::ip_total_len(h);
        if hl + 8 > self.mtu {
            cx.drop_packet(p, "MTU below header length");
            return;
        }
        let base_off = (frag & net::IP_OFFMASK) as usize * 8;
        let orig_mf = frag & net::IP_MF;
        let mut opts = [0u8; 40];
        let (nopt, scanned) = copied_options(h, hl, &mut opts);
        cx.instr(3 * scanned);
        let hl2 = 20 + nopt.div_ceil(4) * 4;
        let payload = &h[hl..total];
        let first_len = (self.mtu - hl) / 8 * 8;
        let later_len = (self.mtu - hl2) / 8 * 8;
        // Later fragments: new packets built from the original's payload.
        let mut rest = std::mem::take(&mut self.later);
        let mut pos = first_len;
        while pos < payload.len() {
            let n = later_len.min(payload.len() - pos);
            let last = pos + n == payload.len();
            let mut q = cx.new_packet(hl2 + n);
            q.anno = p.anno.clone();
            q.id = p.id;
            let d = q.data_mut();
            d[..20].copy_from_slice(&h[..20]);
            d[0] = 0x40 | (hl2 / 4) as u8;
            d[20..20 + nopt].copy_from_slice(&opts[..nopt]);
            net::set_ip_total_len(d, (hl2 + n) as u16);
            let fo = ((base_off + pos) / 8) as u16 | if last { orig_mf } else { net::IP_MF };
            net::set_be16(d, 6, fo | (frag & net::IP_DF));
            d[hl2..].copy_from_slice(&payload[pos..pos + n]);
            net::set_ip_checksum(d);
            q.set_ip_header(0, hl2);
            cx.instr(20 + hl2 as u32 / 2 + n as u32 / 4);
            cx.read_pkt(n as u32);
            cx.write_pkt((hl2 + n) as u32);
            cx.write_meta(16);
            rest.push(q);
            pos += n;
        }
        // First fragment: the original, trimmed.
        let cut = p.len() - (off + hl + first_len);
        p.take(cut);
        {
            let d = &mut p.data_mut()[off..];
            net::set_ip_total_len(d, (hl + first_len) as u16);
            net::set_be16(
                d,
                6,
                (base_off / 8) as u16 | net::IP_MF | (frag & net::IP_DF),
            );
            net::set_ip_checksum(d);
        }
        cx.instr(20 + hl as u32 / 2);
        cx.write_pkt(6);
        cx.write_meta(2);
        self.fragmented += 1;
        self.fragments += 1 + rest.len() as u64;
        cx.emit(0, p);
        for q in rest.drain(..) {
            cx.emit(0, q);
        }
        self.later = rest;
    }
}

impl Element for IPFragmenter {
    fn ports(&self) -> Ports {
        Ports::push(1, 1).with_outputs(1, 2)
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.instr(6);
        cx.read_meta(2);
        let off = ip_header_offset(&p);
        let iplen = p.len() - off;
        if iplen <= self.mtu {
            cx.emit(0, p);
            return;
        }
        self.push_long(p, off, cx);
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"fragmented": self.fragmented, "fragments": self.fragments, "df": self.df_drops})
    }
    fn code_size(&self) -> u32 {
        240
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use crate::net;
    use pktflow_traffic::Packet;

    /// Reassemble (test reassembler) and return (header fields, payload).
    fn reassemble(frags: &[Vec<u8>]) -> (Vec<u8>, Vec<u8>) {
        let mut fs: Vec<&Vec<u8>> = frags.iter().collect();
        fs.sort_by_key(|f| net::ip_frag_offset(f));
        let mut payload = Vec::new();
        for (i, f) in fs.iter().enumerate() {
            assert!(net::ip_header_ok(f) && net::ip_total_len(f) == f.len());
            assert_eq!(net::ip_header_sum(f), 0, "fragment {i} checksum");
            assert_eq!(net::ip_frag_offset(f), payload.len(), "fragment {i} offset");
            assert_eq!(
                net::ip_frag_field(f) & net::IP_MF != 0,
                i + 1 < fs.len(),
                "MF of {i}"
            );
            payload.extend_from_slice(&f[net::ip_hl(f)..]);
        }
        (fs[0][..net::ip_hl(fs[0])].to_vec(), payload)
    }

    #[test]
    fn fragments_reassemble_to_the_original() {
        // Options: a copied one (type 0x88 stream id, 4 bytes) and a record route (not copied).
        let opts = [0x88, 4, 0x12, 0x34, 7, 7, 4, 0, 0, 0, 0, 0];
        let orig = ipv4([10, 0, 0, 2], [192, 168, 1, 9], 64, &opts, 1400, 0);
        let mut e = make("IPFragmenter", "576");
        let mut p = Packet::from_bytes(&orig);
        p.anno.paint = 7;
        let (out, t) = push(e.as_mut(), 0, p);
        assert!(t.fates.is_empty());
        assert!(out.len() >= 3);
        let frags: Vec<Vec<u8>> = out
            .iter()
            .map(|(port, q)| {
                assert_eq!(*port, 0);
                assert!(q.len() <= 576);
                assert_eq!(q.anno.paint, 7, "annotations copied");
                q.data().to_vec()
            })
            .collect();
        // In order, first first; first keeps all options, later ones only the copied one.
        assert_eq!(net::ip_frag_offset(&frags[0]), 0);
        assert_eq!(net::ip_hl(&frags[0]), 32);
        for f in &frags[1..] {
            assert_eq!(net::ip_hl(f), 24);
            assert_eq!(&f[20..24], &opts[..4]);
        }
        for f in &frags[..frags.len() - 1] {
            assert_eq!((f.len() - net::ip_hl(f)) % 8, 0);
        }
        let (h, payload) = reassemble(&frags);
        assert_eq!(payload, &orig[32..]);
        assert_eq!(h[0], 0x48);
        assert_eq!(&h[4..6], &orig[4..6], "identification");
        assert_eq!(net::ip_frag_field(&h) & !net::IP_MF, 0);
        assert_eq!(&h[8..10], &orig[8..10]);
        assert_eq!(&h[12..], &orig[12..32]);
    }

    #[test]
    fn one_fragmenter_cuts_packet_after_packet() {
        // The later fragments of one packet are held in a vector the element keeps for the
        // next packet: each packet's fragments, and only they, leave, first one first.
        let mut e = make("IPFragmenter", "576");
        for (k, len) in [1400usize, 900, 3000, 100, 1400].into_iter().enumerate() {
            let orig = ipv4([10, 0, 0, 2], [192, 168, 1, k as u8], 64, &[], len, 0);
            let (out, t) = push(e.as_mut(), 0, Packet::from_bytes(&orig));
            assert!(t.fates.is_empty());
            let frags: Vec<Vec<u8>> = out.iter().map(|(_, q)| q.data().to_vec()).collect();
            if orig.len() <= 576 {
                assert_eq!(frags, vec![orig.clone()]);
                continue;
            }
            assert_eq!(net::ip_frag_offset(&frags[0]), 0, "packet {k}: first first");
            let (h, payload) = reassemble(&frags);
            assert_eq!(payload, &orig[20..], "packet {k}");
            assert_eq!(&h[12..20], &orig[12..20], "packet {k}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        #[test]
        fn random_fragmentation_reassembles(payload in 0usize..3000, mtu in 68usize..1600,
                                            with_rr in proptest::prelude::any::<bool>(),
                                            with_sid in proptest::prelude::any::<bool>()) {
            let mut opts = Vec::new();
            if with_sid { opts.extend_from_slice(&[0x88, 4, 0xab, 0xcd]); }
            if with_rr { opts.extend_from_slice(&[7, 7, 4, 0, 0, 0, 0, 1]); }
            let orig = ipv4([10, 0, 0, 2], [192, 168, 1, 9], 64, &opts, payload, 0);
            let mut e = make("IPFragmenter", &mtu.to_string());
            let (out, t) = push(e.as_mut(), 0, Packet::from_bytes(&orig));
            proptest::prop_assert!(t.fates.is_empty());
            let frags: Vec<Vec<u8>> = out.iter().map(|(_, q)| q.data().to_vec()).collect();
            for f in &frags {
                proptest::prop_assert!(frags.len() == 1 || f.len() <= mtu);
            }
            if orig.len() <= mtu {
                proptest::prop_assert_eq!(&frags, &vec![orig.clone()]);
            } else {
                let (h, data) = reassemble(&frags);
                proptest::prop_assert_eq!(&data[..], &orig[20 + opts.len()..]);
                proptest::prop_assert_eq!(&h[12..], &orig[12..20 + opts.len()]);
                for f in &frags[1..] {
                    proptest::prop_assert_eq!(net::ip_hl(f), if with_sid { 24 } else { 20 });
                }
            }
        }
    }

    #[test]
    fn small_df_and_refragmentation() {
        let mut e = make("IPFragmenter", "576");
        let small = ipv4([1, 1, 1, 1], [2, 2, 2, 2], 9, &[], 556, 0);
        let (out, _) = push(e.as_mut(), 0, Packet::from_bytes(&small));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].1.data(), &small[..]);
        let df = ipv4([1, 1, 1, 1], [2, 2, 2, 2], 9, &[], 1000, net::IP_DF);
        let (out, _) = push(e.as_mut(), 0, Packet::from_bytes(&df));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, 1, "DF packets go to output 1 unchanged");
        assert_eq!(out[0].1.data(), &df[..]);
        let mut nodf = make("IPFragmenter", "576, HONOR_DF false");
        assert!(push(nodf.as_mut(), 0, Packet::from_bytes(&df)).0.len() > 1);
        // A middle fragment (offset 1000, MF set) fragmented again keeps offsets and MF.
        let mid = ipv4([1, 1, 1, 1], [2, 2, 2, 2], 9, &[], 1200, net::IP_MF | 125);
        let (out, _) = push(e.as_mut(), 0, Packet::from_bytes(&mid));
        let frags: Vec<Vec<u8>> = out.iter().map(|(_, q)| q.data().to_vec()).collect();
        assert_eq!(net::ip_frag_offset(&frags[0]), 1000);
        let mut total = 0;
        for f in &frags {
            assert_eq!(net::ip_frag_offset(f), 1000 + total);
            assert!(
                net::ip_frag_field(f) & net::IP_MF != 0,
                "all keep MF (original had it)"
            );
            total += f.len() - 20;
        }
        assert_eq!(total, 1200);
    }
}
