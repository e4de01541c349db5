//! pcapng reading (used by [`crate::PcapReader`], which detects the format) and writing.
//!
//! Block layout (pcapng specification, draft-ietf-opsawg-pcapng): `block_type u32,
//! block_total_length u32, body, block_total_length u32`, the length a multiple of 4 and
//! counting the whole block. A Section Header Block (type 0x0a0d0d0a, a palindrome so it can
//! be recognised before the byte order is known) starts each section; its byte-order magic
//! 0x1a2b3c4d fixes the byte order of the section. Supported blocks:
//! - SHB: resets the interface list (a file may hold several sections, in either byte order);
//! - IDB (1): link type, snaplen, options `if_tsresol` (9) and `if_tsoffset` (14);
//! - EPB (6): interface id, 64-bit timestamp in the interface's resolution, captured and
//!   original length, data padded to 4 bytes, options (ignored);
//! - SPB (3): original length and data, interface 0, no timestamp: we give it the timestamp
//!   of the previous packet of the file (0 if none) so timestamps stay monotonic;
//! - the obsolete Packet Block (2), read like an EPB with a 16-bit interface id.
//!
//! Every other block type (name resolution, interface statistics, custom, ...) is skipped
//! without being buffered.
//!
//! We write what Wireshark and tcpdump write: one SHB (with `shb_userappl` = "pktflow"),
//! IDBs with `if_tsresol` = 9 (nanoseconds), and EPBs.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::Path;

use crate::pcap::{
    put_u16, put_u32, u16_at, u32_at, Src, TracePacket, LINKTYPE_ETHERNET, MAX_CAPLEN, PCAPNG_SHB,
};
use crate::TrafficError;

const BOM: u32 = 0x1a2b_3c4d;
const IDB: u32 = 1;
const OPB: u32 = 2;
const SPB: u32 = 3;
const EPB: u32 = 6;
/// Largest block we read into memory (the packet blocks and headers); larger ones are
/// reported as corrupt. Unknown blocks of any size are skipped without buffering.
pub const MAX_BLOCK_LEN: u32 = 16 << 20;

fn block_name(t: u32) -> &'static str {
    match t {
        PCAPNG_SHB => "section header block",
        IDB => "interface description block",
        OPB => "packet block",
        SPB => "simple packet block",
        EPB => "enhanced packet block",
        _ => "block",
    }
}

/// Timestamp resolution of an interface: units per second are 10^d or 2^b.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TsResol {
    Dec(u8),
    Bin(u8),
}

impl TsResol {
    fn to_ns(self, ts: u64) -> u128 {
        match self {
            TsResol::Dec(d) if d <= 9 => ts as u128 * 10u128.pow(9 - d as u32),
            TsResol::Dec(d) if d <= 38 => ts as u128 * 1_000_000_000 / 10u128.pow(d as u32),
            TsResol::Dec(_) => 0,
            TsResol::Bin(b) => (ts as u128 * 1_000_000_000) >> b.min(127),
        }
    }
}

#[derive(Clone, Debug)]
struct NgIface {
    linktype: u16,
    snaplen: u32,
    tsresol: TsResol,
    tsoffset_s: i64,
}

/// Reading state of a pcapng file: the current section's byte order and interfaces.
pub(crate) struct NgState {
    be: bool,
    ifaces: Vec<NgIface>,
    body: Vec<u8>,
    last_ts: u64,
}

impl NgState {
    /// Called after the first 4 bytes (the SHB block type) have been consumed.
    pub(crate) fn start<R: Read>(src: &mut Src<R>) -> Result<Self, TrafficError> {
        let mut st = NgState {
            be: false,
            ifaces: Vec::new(),
            body: Vec::new(),
            last_ts: 0,
        };
        let mut l = [0u8; 4];
        let n = src.fill(&mut l)?;
        if n < 4 {
            return Err(src.err(
                0,
                "truncated section header block",
                format!("8 bytes needed, {} remain", 4 + n),
            ));
        }
        st.read_shb(src, 0, l)?;
        Ok(st)
    }

    pub(crate) fn linktype(&self, iface: u16) -> Option<u16> {
        self.ifaces.get(iface as usize).map(|i| i.linktype)
    }

    /// Read the rest of a block body (`len` counts the whole block) into `self.body` and
    /// check the trailing length.
    fn read_body<R: Read>(
        &mut self,
        src: &mut Src<R>,
        start: u64,
        ty: u32,
        len: u32,
        already: u32,
    ) -> Result<(), TrafficError> {
        let name = block_name(ty);
        let want = (len - 12 - (already - 8)) as u64;
        self.body.clear();
        let got = src.append(&mut self.body, want)?;
        if got < want {
            return Err(src.err(
                start,
                &format!("truncated {name}"),
                format!("header says {len} bytes, {} remain", already as u64 + got),
            ));
        }
        self.check_trailer(src, start, ty, len)
    }

    fn check_trailer<R: Read>(
        &self,
        src: &mut Src<R>,
        start: u64,
        ty: u32,
        len: u32,
    ) -> Result<(), TrafficError> {
        let name = block_name(ty);
        let mut t = [0u8; 4];
        let n = src.fill(&mut t)?;
        if n < 4 {
            return Err(src.err(
                start,
                &format!("truncated {name}"),
                format!(
                    "header says {len} bytes, {} remain",
                    len as u64 - 4 + n as u64
                ),
            ));
        }
        let tl = u32_at(&t, 0, self.be);
        if tl != len {
            return Err(src.err(
                start,
                &format!("corrupt {name}"),
                format!("trailing block length {tl} differs from the leading length {len}"),
            ));
        }
        Ok(())
    }

    fn check_len<R: Read>(
        &self,
        src: &Src<R>,
        start: u64,
        ty: u32,
        len: u32,
        min: u32,
    ) -> Result<(), TrafficError> {
        let name = block_name(ty);
        if len & 3 != 0 || len < min {
            return Err(src.err(
                start,
                &format!("corrupt {name}"),
                format!("block total length {len} is not a multiple of 4 of at least {min}"),
            ));
        }
        if len > MAX_BLOCK_LEN && matches!(ty, PCAPNG_SHB | IDB | OPB | SPB | EPB) {
            return Err(src.err(
                start,
                &format!("corrupt {name}"),
                format!("block total length {len} exceeds the maximum {MAX_BLOCK_LEN}"),
            ));
        }
        Ok(())
    }

    /// Section header block whose type (and the raw length bytes `l`) have been read.
    fn read_shb<R: Read>(
        &mut self,
        src: &mut Src<R>,
        start: u64,
        l: [u8; 4],
    ) -> Result<(), TrafficError> {
        let mut m = [0u8; 4];
        let n = src.fill(&mut m)?;
        if n < 4 {
            return Err(src.err(
                start,
                "truncated section header block",
                format!("12 bytes needed, {} remain", 8 + n),
            ));
        }
        self.be = if u32::from_be_bytes(m) == BOM {
            true
        } else if u32::from_le_bytes(m) == BOM {
            false
        } else {
            return Err(src.err(
                start + 8,
                "corrupt section header block",
                format!(
                    "byte-order magic bytes {:02x} {:02x} {:02x} {:02x}, expected 1a 2b 3c 4d or 4d 3c 2b 1a",
                    m[0], m[1], m[2], m[3]
                ),
            ));
        };
        let len = u32_at(&l, 0, self.be);
        self.check_len(src, start, PCAPNG_SHB, len, 28)?;
        self.read_body(src, start, PCAPNG_SHB, len, 12)?;
        let major = u16_at(&self.body, 0, self.be);
        if major != 1 {
            return Err(src.err(
                start + 12,
                "unsupported pcapng version",
                format!("major version {major}, expected 1"),
            ));
        }
        self.ifaces.clear();
        Ok(())
    }

    fn read_idb<R: Read>(&mut self, src: &Src<R>, start: u64) -> Result<(), TrafficError> {
        let be = self.be;
        let b = &self.body;
        if b.len() < 8 {
            return Err(src.err(
                start,
                "corrupt interface description block",
                format!("body of {} bytes, 8 needed", b.len()),
            ));
        }
        let mut iface = NgIface {
            linktype: u16_at(b, 0, be),
            snaplen: u32_at(b, 4, be),
            tsresol: TsResol::Dec(6),
            tsoffset_s: 0,
        };
        let mut i = 8;
        while i + 4 <= b.len() {
            let code = u16_at(b, i, be);
            let olen = u16_at(b, i + 2, be) as usize;
            if code == 0 {
                break;
            }
            if i + 4 + olen > b.len() {
                return Err(src.err(
                    start + 8 + i as u64,
                    "corrupt interface description block option",
                    format!("option {code} of {olen} bytes runs past the end of the block"),
                ));
            }
            let v = &b[i + 4..i + 4 + olen];
            match (code, olen) {
                (9, 1..) => {
                    iface.tsresol = if v[0] & 0x80 != 0 {
                        TsResol::Bin(v[0] & 0x7f)
                    } else {
                        TsResol::Dec(v[0])
                    };
                }
                (14, 8) => {
                    let a = [v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]];
                    iface.tsoffset_s = if be {
                        i64::from_be_bytes(a)
                    } else {
                        i64::from_le_bytes(a)
                    };
                }
                _ => {}
            }
            i += 4 + olen.div_ceil(4) * 4;
        }
        self.ifaces.push(iface);
        Ok(())
    }

    fn timestamp(&self, iface: usize, ts: u64) -> u64 {
        let f = &self.ifaces[iface];
        let ns = f.tsresol.to_ns(ts) as i128 + f.tsoffset_s as i128 * 1_000_000_000;
        ns.clamp(0, u64::MAX as i128) as u64
    }

    fn iface_index<R: Read>(
        &self,
        src: &Src<R>,
        start: u64,
        ty: u32,
        id: u32,
    ) -> Result<u16, TrafficError> {
        if (id as usize) < self.ifaces.len() {
            if let Ok(v) = u16::try_from(id) {
                return Ok(v);
            }
        }
        Err(src.err(
            start,
            &format!("corrupt {}", block_name(ty)),
            format!(
                "interface {id} is not defined ({} interfaces in this section)",
                self.ifaces.len()
            ),
        ))
    }

    /// The next packet of the file into `out` (its buffer reused), or false at a clean end of
    /// file.
    pub(crate) fn read_packet<R: Read>(
        &mut self,
        src: &mut Src<R>,
        out: &mut TracePacket,
    ) -> Result<bool, TrafficError> {
        loop {
            let start = src.off;
            let mut h = [0u8; 8];
            let n = src.fill(&mut h)?;
            if n == 0 {
                return Ok(false);
            }
            if n < 8 {
                return Err(src.err(
                    start,
                    "truncated block header",
                    format!("8 bytes needed, {n} remain"),
                ));
            }
            if u32::from_le_bytes([h[0], h[1], h[2], h[3]]) == PCAPNG_SHB {
                self.read_shb(src, start, [h[4], h[5], h[6], h[7]])?;
                continue;
            }
            let ty = u32_at(&h, 0, self.be);
            let len = u32_at(&h, 4, self.be);
            let min = match ty {
                IDB => 20,
                EPB | OPB => 32,
                SPB => 16,
                _ => 12,
            };
            self.check_len(src, start, ty, len, min)?;
            match ty {
                IDB | EPB | SPB | OPB => self.read_body(src, start, ty, len, 8)?,
                _ => {
                    let want = (len - 12) as u64;
                    let got = src.skip(want)?;
                    if got < want {
                        return Err(src.err(
                            start,
                            &format!("truncated block of type {ty:#x}"),
                            format!("header says {len} bytes, {} remain", 8 + got),
                        ));
                    }
                    self.check_trailer(src, start, ty, len)?;
                    continue;
                }
            }
            let be = self.be;
            let b = &self.body;
            match ty {
                IDB => {
                    self.read_idb(src, start)?;
                    continue;
                }
                EPB | OPB => {
                    let (id, ts_hi, ts_lo, caplen, orig) = if ty == EPB {
                        (
                            u32_at(b, 0, be),
                            u32_at(b, 4, be),
                            u32_at(b, 8, be),
                            u32_at(b, 12, be),
                            u32_at(b, 16, be),
                        )
                    } else {
                        (
                            u16_at(b, 0, be) as u32,
                            u32_at(b, 4, be),
                            u32_at(b, 8, be),
                            u32_at(b, 12, be),
                            u32_at(b, 16, be),
                        )
                    };
                    let iface = self.iface_index(src, start, ty, id)?;
                    if caplen as usize > b.len() - 20 {
                        return Err(src.err(
                            start,
                            &format!("corrupt {}", block_name(ty)),
                            format!(
                                "captured length {caplen} exceeds the {} bytes of the block body",
                                b.len() - 20
                            ),
                        ));
                    }
                    let ts = self.timestamp(iface as usize, ((ts_hi as u64) << 32) | ts_lo as u64);
                    out.timestamp_ns = ts;
                    out.iface = iface;
                    out.data.clear();
                    out.data.extend_from_slice(&b[20..20 + caplen as usize]);
                    out.orig_len = orig;
                }
                SPB => {
                    if self.ifaces.is_empty() {
                        return Err(src.err(
                            start,
                            "corrupt simple packet block",
                            "no interface description block precedes it".to_string(),
                        ));
                    }
                    let orig = u32_at(b, 0, be);
                    let mut caplen = orig.min((b.len() - 4) as u32);
                    if self.ifaces[0].snaplen != 0 {
                        caplen = caplen.min(self.ifaces[0].snaplen);
                    }
                    out.timestamp_ns = self.last_ts;
                    out.iface = 0;
                    out.data.clear();
                    out.data.extend_from_slice(&b[4..4 + caplen as usize]);
                    out.orig_len = orig;
                }
                _ => unreachable!("other block types are skipped above"),
            }
            self.last_ts = out.timestamp_ns;
            return Ok(true);
        }
    }
}

/// Options of [`PcapngWriter`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcapngOptions {
    /// Link type of every interface.
    pub linktype: u16,
    /// Write the section big-endian (default little-endian).
    pub big_endian: bool,
    /// Snapshot length recorded in the IDBs; longer packets are truncated to it.
    pub snaplen: u32,
    /// Interfaces to describe up front; interfaces referenced by later packets are added
    /// on demand (an IDB may appear anywhere in a section before its first use).
    pub interfaces: u16,
}

impl Default for PcapngOptions {
    fn default() -> Self {
        PcapngOptions {
            linktype: LINKTYPE_ETHERNET,
            big_endian: false,
            snaplen: MAX_CAPLEN,
            interfaces: 1,
        }
    }
}

/// Writer for pcapng files: one section, one IDB per interface (nanosecond timestamps),
/// one EPB per packet carrying the packet's interface number.
pub struct PcapngWriter<W: Write = BufWriter<File>> {
    w: W,
    name: String,
    opts: PcapngOptions,
    n_ifaces: u32,
    blk: Vec<u8>,
    count: u64,
}

impl PcapngWriter<BufWriter<File>> {
    pub fn create(path: impl AsRef<Path>, linktype: u16) -> Result<Self, TrafficError> {
        Self::create_with(
            path,
            PcapngOptions {
                linktype,
                ..PcapngOptions::default()
            },
        )
    }

    pub fn create_with(path: impl AsRef<Path>, opts: PcapngOptions) -> Result<Self, TrafficError> {
        let (w, name) = crate::pcap::create_buffered(path.as_ref())?;
        Self::new(w, &name, opts)
    }
}

impl<W: Write> PcapngWriter<W> {
    /// Write the section header (and `opts.interfaces` IDBs) to `w`.
    pub fn new(w: W, name: &str, opts: PcapngOptions) -> Result<Self, TrafficError> {
        if opts.snaplen == 0 || opts.snaplen > MAX_CAPLEN {
            return Err(TrafficError::Config(format!(
                "{name}: pcapng snaplen {} must be in 1..={MAX_CAPLEN}",
                opts.snaplen
            )));
        }
        let mut wr = PcapngWriter {
            w,
            name: name.to_string(),
            opts,
            n_ifaces: 0,
            blk: Vec::with_capacity(2048),
            count: 0,
        };
        let be = opts.big_endian;
        let b = &mut wr.blk;
        put_u32(b, PCAPNG_SHB, be);
        put_u32(b, 44, be);
        put_u32(b, BOM, be);
        put_u16(b, 1, be);
        put_u16(b, 0, be);
        b.extend_from_slice(&[0xff; 8]); // section length: unknown (-1)
        put_u16(b, 4, be); // shb_userappl
        put_u16(b, 7, be);
        b.extend_from_slice(b"pktflow\0");
        put_u32(b, 0, be); // opt_endofopt
        put_u32(b, 44, be);
        debug_assert_eq!(b.len(), 44);
        wr.flush_block()?;
        for _ in 0..opts.interfaces {
            wr.add_interface()?;
        }
        Ok(wr)
    }

    fn flush_block(&mut self) -> Result<(), TrafficError> {
        self.w
            .write_all(&self.blk)
            .map_err(|e| TrafficError::io(&self.name, e))?;
        self.blk.clear();
        Ok(())
    }

    /// Describe one more interface (link type from the options); returns its number.
    pub fn add_interface(&mut self) -> Result<u32, TrafficError> {
        let be = self.opts.big_endian;
        let b = &mut self.blk;
        put_u32(b, IDB, be);
        put_u32(b, 32, be);
        put_u16(b, self.opts.linktype, be);
        put_u16(b, 0, be);
        put_u32(b, self.opts.snaplen, be);
        put_u16(b, 9, be); // if_tsresol = 10^-9
        put_u16(b, 1, be);
        b.extend_from_slice(&[9, 0, 0, 0]);
        put_u32(b, 0, be); // opt_endofopt
        put_u32(b, 32, be);
        self.flush_block()?;
        self.n_ifaces += 1;
        Ok(self.n_ifaces - 1)
    }

    /// Append one packet as an enhanced packet block on interface `p.iface`.
    pub fn write(&mut self, p: &TracePacket) -> Result<(), TrafficError> {
        while self.n_ifaces <= p.iface as u32 {
            self.add_interface()?;
        }
        let be = self.opts.big_endian;
        let caplen = p.data.len().min(self.opts.snaplen as usize);
        let padded = caplen.div_ceil(4) * 4;
        let len = (32 + padded) as u32;
        let orig = p
            .orig_len
            .max(u32::try_from(p.data.len()).unwrap_or(u32::MAX));
        let b = &mut self.blk;
        put_u32(b, EPB, be);
        put_u32(b, len, be);
        put_u32(b, p.iface as u32, be);
        put_u32(b, (p.timestamp_ns >> 32) as u32, be);
        put_u32(b, p.timestamp_ns as u32, be);
        put_u32(b, caplen as u32, be);
        put_u32(b, orig, be);
        b.extend_from_slice(&p.data[..caplen]);
        b.resize(b.len() + padded - caplen, 0);
        put_u32(b, len, be);
        self.flush_block()?;
        self.count += 1;
        Ok(())
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn finish(mut self) -> Result<W, TrafficError> {
        self.w
            .flush()
            .map_err(|e| TrafficError::io(&self.name, e))?;
        Ok(self.w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pcap::{CaptureFormat, PcapReader, LINKTYPE_RAW};
    use proptest::prelude::*;

    fn pkt(ts: u64, iface: u16, len: usize) -> TracePacket {
        TracePacket {
            timestamp_ns: ts,
            iface,
            data: (0..len).map(|i| (i * 7) as u8).collect(),
            orig_len: len as u32,
        }
    }

    fn write_mem(opts: PcapngOptions, pkts: &[TracePacket]) -> Vec<u8> {
        let mut w = PcapngWriter::new(Vec::new(), "mem.pcapng", opts).unwrap();
        for p in pkts {
            w.write(p).unwrap();
        }
        w.finish().unwrap()
    }

    fn read_all(b: &[u8]) -> Result<Vec<TracePacket>, TrafficError> {
        PcapReader::from_reader(b, "trace.pcapng")?.collect()
    }

    /// Little helpers to build blocks by hand from the specification.
    struct B {
        be: bool,
        v: Vec<u8>,
    }
    impl B {
        fn u16(&mut self, x: u16) -> &mut Self {
            put_u16(&mut self.v, x, self.be);
            self
        }
        fn u32(&mut self, x: u32) -> &mut Self {
            put_u32(&mut self.v, x, self.be);
            self
        }
        fn bytes(&mut self, x: &[u8]) -> &mut Self {
            self.v.extend_from_slice(x);
            self
        }
        /// Append a block of type `ty` with `body` (padded to 4 bytes).
        fn block(&mut self, ty: u32, body: &[u8]) -> &mut Self {
            let padded = body.len().div_ceil(4) * 4;
            let len = (12 + padded) as u32;
            self.u32(ty).u32(len).bytes(body);
            self.v.resize(self.v.len() + padded - body.len(), 0);
            self.u32(len)
        }
        fn body(&self) -> B {
            B {
                be: self.be,
                v: Vec::new(),
            }
        }
    }

    fn shb(f: &mut B) {
        let mut body = f.body();
        body.u32(BOM).u16(1).u16(0).bytes(&[0xff; 8]);
        f.block(PCAPNG_SHB, &body.v);
    }

    fn idb(f: &mut B, linktype: u16, tsresol: Option<u8>, tsoffset: Option<i64>) {
        let mut body = f.body();
        body.u16(linktype).u16(0).u32(0);
        if let Some(r) = tsresol {
            body.u16(9).u16(1).bytes(&[r, 0, 0, 0]);
        }
        if let Some(o) = tsoffset {
            let ob = if f.be {
                o.to_be_bytes()
            } else {
                o.to_le_bytes()
            };
            body.u16(14).u16(8).bytes(&ob);
        }
        body.u16(0).u16(0);
        f.block(IDB, &body.v);
    }

    fn epb(f: &mut B, iface: u32, ts: u64, data: &[u8], orig: u32) {
        let mut body = f.body();
        body.u32(iface)
            .u32((ts >> 32) as u32)
            .u32(ts as u32)
            .u32(data.len() as u32)
            .u32(orig)
            .bytes(data);
        body.v.resize(body.v.len().div_ceil(4) * 4, 0);
        // An option (opt_comment "hi") after the data, then end of options.
        body.u16(1).u16(2).bytes(b"hi\0\0").u16(0).u16(0);
        f.block(EPB, &body.v);
    }

    #[test]
    fn hand_built_sections_interfaces_resolutions_and_block_kinds() {
        for be in [false, true] {
            let mut f = B { be, v: Vec::new() };
            shb(&mut f);
            idb(&mut f, LINKTYPE_ETHERNET, None, None); // microseconds by default
            idb(&mut f, LINKTYPE_RAW, Some(0x80 | 10), Some(2)); // 2^-10 s, +2 s
            f.block(0x0000_0bad, &[1, 2, 3, 4, 5]); // unknown block, skipped
            epb(&mut f, 0, 1_500_000, &[1, 2, 3], 3); // 1.5 s in microseconds
            epb(&mut f, 1, 1024 * 3 + 512, &[9; 5], 70); // 3.5 s + 2 s offset
            let mut spb = f.body();
            spb.u32(4).bytes(&[7, 7, 7, 7]);
            f.block(SPB, &spb.v);
            // Obsolete packet block: iface u16, drops u16, ts, caplen, len.
            let mut opb = f.body();
            opb.u16(1)
                .u16(0)
                .u32(0)
                .u32(2048)
                .u32(1)
                .u32(1)
                .bytes(&[0xee]);
            f.block(OPB, &opb.v);
            // A second section in the other byte order with its own interface list.
            let mut g = B {
                be: !be,
                v: Vec::new(),
            };
            shb(&mut g);
            idb(&mut g, LINKTYPE_RAW, Some(9), None);
            epb(&mut g, 0, 42, &[0x45], 1);
            f.v.extend_from_slice(&g.v);

            let mut r = PcapReader::from_reader(&f.v[..], "h.pcapng").unwrap();
            assert_eq!(r.format(), CaptureFormat::Pcapng);
            let a = r.next().unwrap().unwrap();
            assert_eq!(
                (a.timestamp_ns, a.iface, a.data.clone(), a.orig_len),
                (1_500_000_000, 0, vec![1, 2, 3], 3)
            );
            assert_eq!(r.linktype(0), Some(LINKTYPE_ETHERNET));
            assert_eq!(r.linktype(1), Some(LINKTYPE_RAW));
            let b = r.next().unwrap().unwrap();
            assert_eq!(
                (b.timestamp_ns, b.iface, b.data.len(), b.orig_len),
                (5_500_000_000, 1, 5, 70)
            );
            let c = r.next().unwrap().unwrap();
            assert_eq!(
                (c.timestamp_ns, c.iface, c.data.clone(), c.orig_len),
                (5_500_000_000, 0, vec![7; 4], 4)
            );
            let d = r.next().unwrap().unwrap();
            assert_eq!(
                (d.timestamp_ns, d.iface, d.data.clone()),
                (4_000_000_000, 1, vec![0xee])
            );
            let e = r.next().unwrap().unwrap();
            assert_eq!(
                (e.timestamp_ns, e.iface, e.data.clone()),
                (42, 0, vec![0x45])
            );
            assert_eq!(r.linktype(1), None, "new section resets interfaces");
            assert!(r.next().is_none());
        }
    }

    #[test]
    fn round_trip_both_endians_multi_interface_nanoseconds() {
        let pkts = vec![
            pkt(0, 0, 60),
            pkt(1_000_000_001, 2, 61),
            pkt(u64::MAX - 5, 1, 62),
            pkt(17, 0, 1514),
            pkt(18, 3, 0),
        ];
        for be in [false, true] {
            let opts = PcapngOptions {
                big_endian: be,
                linktype: LINKTYPE_RAW,
                ..Default::default()
            };
            let bytes = write_mem(opts, &pkts);
            let mut r = PcapReader::from_reader(&bytes[..], "m").unwrap();
            let back: Vec<_> = r.by_ref().collect::<Result<_, _>>().unwrap();
            assert_eq!(back, pkts);
            for i in 0..4 {
                assert_eq!(r.linktype(i), Some(LINKTYPE_RAW));
            }
        }
    }

    #[test]
    fn truncation_reports_offsets() {
        // SHB 44 + IDB 32 + EPB (32 + 60) = 168 bytes.
        let bytes = write_mem(PcapngOptions::default(), &[pkt(5, 0, 60), pkt(6, 0, 60)]);
        assert_eq!(bytes.len(), 44 + 32 + 92 + 92);
        let err = |n: usize| read_all(&bytes[..n]).unwrap_err().to_string();
        assert_eq!(err(6), "trace.pcapng: truncated section header block at byte offset 0: 8 bytes needed, 6 remain");
        assert_eq!(err(30), "trace.pcapng: truncated section header block at byte offset 0: header says 44 bytes, 30 remain");
        assert_eq!(
            err(47),
            "trace.pcapng: truncated block header at byte offset 44: 8 bytes needed, 3 remain"
        );
        assert_eq!(err(60), "trace.pcapng: truncated interface description block at byte offset 44: header says 32 bytes, 16 remain");
        assert_eq!(err(106), "trace.pcapng: truncated enhanced packet block at byte offset 76: header says 92 bytes, 30 remain");
        assert_eq!(err(166), "trace.pcapng: truncated enhanced packet block at byte offset 76: header says 92 bytes, 90 remain");
        assert_eq!(err(250), "trace.pcapng: truncated enhanced packet block at byte offset 168: header says 92 bytes, 82 remain");
        assert_eq!(read_all(&bytes[..168]).unwrap().len(), 1);
    }

    #[test]
    fn corruption_reports_offsets() {
        let good = write_mem(PcapngOptions::default(), &[pkt(5, 0, 60)]);
        let err = |b: &[u8]| read_all(b).unwrap_err().to_string();
        let mut b = good.clone();
        b[8] = 0x11; // byte-order magic
        assert_eq!(
            err(&b),
            "trace.pcapng: corrupt section header block at byte offset 8: byte-order magic bytes 11 3c 2b 1a, expected 1a 2b 3c 4d or 4d 3c 2b 1a"
        );
        let mut b = good.clone();
        b[76 + 4] = 93; // EPB length not a multiple of 4
        assert_eq!(
            err(&b),
            "trace.pcapng: corrupt enhanced packet block at byte offset 76: block total length 93 is not a multiple of 4 of at least 32"
        );
        let mut b = good.clone();
        b[76 + 8] = 1; // interface 1 is not described
        assert_eq!(
            err(&b),
            "trace.pcapng: corrupt enhanced packet block at byte offset 76: interface 1 is not defined (1 interfaces in this section)"
        );
        let mut b = good.clone();
        b[76 + 20] = 61; // captured length larger than the body
        assert_eq!(
            err(&b),
            "trace.pcapng: corrupt enhanced packet block at byte offset 76: captured length 61 exceeds the 60 bytes of the block body"
        );
        let mut b = good.clone();
        let n = b.len();
        b[n - 4] = 96; // trailing length
        assert_eq!(
            err(&b),
            "trace.pcapng: corrupt enhanced packet block at byte offset 76: trailing block length 96 differs from the leading length 92"
        );
        let mut b = good.clone();
        b[44 + 18] = 0x40; // if_tsresol option length 0x4001
        assert!(err(&b).starts_with("trace.pcapng: corrupt interface description block option at byte offset 60: option 9"), "{}", err(&b));
        let mut b = good;
        b[76 + 4..76 + 8].copy_from_slice(&(MAX_BLOCK_LEN + 4).to_le_bytes());
        assert!(err(&b).contains("exceeds the maximum"));
    }

    #[test]
    fn huge_unknown_block_is_skipped_not_buffered() {
        let mut f = B {
            be: false,
            v: Vec::new(),
        };
        shb(&mut f);
        idb(&mut f, 1, None, None);
        let body = vec![0u8; (MAX_BLOCK_LEN as usize) + 8];
        f.block(0x0000_0005, &body); // interface statistics block, oversized
        epb(&mut f, 0, 1, &[1], 1);
        assert_eq!(read_all(&f.v).unwrap().len(), 1);
    }

    #[test]
    fn spb_before_idb_is_an_error() {
        let mut f = B {
            be: false,
            v: Vec::new(),
        };
        shb(&mut f);
        let mut s = f.body();
        s.u32(1).bytes(&[1]);
        f.block(SPB, &s.v);
        assert_eq!(
            read_all(&f.v).unwrap_err().to_string(),
            "trace.pcapng: corrupt simple packet block at byte offset 28: no interface description block precedes it"
        );
    }

    proptest! {
        #[test]
        fn arbitrary_bytes_after_shb_never_panic(be in any::<bool>(), tail in proptest::collection::vec(any::<u8>(), 0..500)) {
            let mut b = write_mem(PcapngOptions { big_endian: be, interfaces: 2, ..Default::default() }, &[]);
            b.extend_from_slice(&tail);
            for x in PcapReader::from_reader(&b[..], "fuzz").unwrap() { let _ = x; }
        }

        /// Mutating single bytes of a valid file never panics.
        #[test]
        fn mutated_valid_file_never_panics(pos in 0usize..400, val in any::<u8>(), cut in 0usize..400) {
            let mut b = write_mem(PcapngOptions::default(), &[pkt(1, 0, 60), pkt(2, 1, 100), pkt(3, 0, 30)]);
            let p = pos % b.len();
            b[p] = val;
            b.truncate(b.len() - cut.min(b.len()));
            if let Ok(r) = PcapReader::from_reader(&b[..], "fuzz") { for x in r { let _ = x; } }
        }
    }
}
