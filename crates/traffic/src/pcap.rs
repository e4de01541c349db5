//! Classic pcap files (reading and writing) and the format-detecting streaming reader
//! [`PcapReader`], which also reads pcapng (see [`crate::pcapng`]).
//!
//! The format code is written here rather than taken from a crate: both formats are small
//! (a 24-byte file header and 16-byte record headers for pcap; five block types for pcapng),
//! and we need exact error messages naming the file and the byte offset of the structure that
//! is truncated or corrupt, plus guaranteed bounded memory and no panics on arbitrary input,
//! which the crates we looked at do not all promise.
//!
//! Classic pcap layout (all fields in the writer's byte order, which the magic reveals):
//! file header `magic u32, version_major u16, version_minor u16, thiszone i32, sigfigs u32,
//! snaplen u32, linktype u32`; then records `ts_sec u32, ts_frac u32, incl_len u32,
//! orig_len u32, data[incl_len]`. Magic 0xa1b2c3d4 means `ts_frac` is in microseconds,
//! 0xa1b23c4d in nanoseconds. The link type is in the low 16 bits of the last header field
//! (the upper bits carry FCS information, which we ignore).

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use crate::packet::Packet;
use crate::pcapng::NgState;
use crate::TrafficError;

/// LINKTYPE_ETHERNET: frames start with a 14-byte Ethernet header (no FCS).
pub const LINKTYPE_ETHERNET: u16 = 1;
/// LINKTYPE_RAW: packets start with the IPv4 or IPv6 header.
pub const LINKTYPE_RAW: u16 = 101;

/// Largest captured length we accept in a packet record (Wireshark's limit for ordinary
/// link types). Anything larger is reported as corruption instead of being allocated.
pub const MAX_CAPLEN: u32 = 262_144;

pub(crate) const MAGIC_USEC: u32 = 0xa1b2_c3d4;
pub(crate) const MAGIC_NSEC: u32 = 0xa1b2_3c4d;
pub(crate) const PCAPNG_SHB: u32 = 0x0a0d_0d0a;

/// One captured packet as stored in a trace file (`Default`: empty, a buffer to read into).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TracePacket {
    /// Capture time in nanoseconds (since the Unix epoch for real captures, since the start
    /// of the trace for generated ones).
    pub timestamp_ns: u64,
    /// Interface the packet was captured on (pcapng interface id; 0 for classic pcap).
    pub iface: u16,
    /// Captured bytes (possibly fewer than `orig_len` if the capture was truncated).
    pub data: Vec<u8>,
    /// Length of the packet on the wire.
    pub orig_len: u32,
}

impl TracePacket {
    /// The capture kept fewer bytes than the packet had on the wire (snap length).
    pub fn is_truncated(&self) -> bool {
        self.as_ref().is_truncated()
    }

    /// Bytes on the wire: the original length, or the captured bytes if a writer recorded less.
    pub fn wire_len(&self) -> u32 {
        self.orig_len
            .max(u32::try_from(self.data.len()).unwrap_or(u32::MAX))
    }

    /// The packet as a borrowed view (what the runtime injects).
    #[inline]
    pub fn as_ref(&self) -> TraceRef<'_> {
        TraceRef {
            timestamp_ns: self.timestamp_ns,
            iface: self.iface,
            data: &self.data,
            orig_len: self.orig_len,
        }
    }

    /// A packet for the functional run: see [`TraceRef::to_packet`].
    pub fn to_packet(&self, id: u64) -> Packet {
        self.as_ref().to_packet(id)
    }
}

/// A captured packet whose bytes are borrowed: from a [`TracePacket`], from a memory-mapped
/// trace file ([`MappedPcap`]) or from a batch of packets handed to a thread. The fields mean
/// what [`TracePacket`]'s do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceRef<'a> {
    pub timestamp_ns: u64,
    pub iface: u16,
    pub data: &'a [u8],
    pub orig_len: u32,
}

impl TraceRef<'_> {
    /// The capture kept fewer bytes than the packet had on the wire (snap length).
    #[inline]
    pub fn is_truncated(&self) -> bool {
        (self.data.len() as u64) < self.orig_len as u64
    }

    /// An owned copy.
    pub fn to_owned(&self) -> TracePacket {
        TracePacket {
            timestamp_ns: self.timestamp_ns,
            iface: self.iface,
            data: self.data.to_vec(),
            orig_len: self.orig_len,
        }
    }

    /// A packet for the functional run: a copy of the bytes with the timestamp and input
    /// port annotations set (interfaces above 255 saturate at 255, since the annotation is a
    /// byte, as in Click), the wire length of a truncated capture (`orig_len` when it exceeds
    /// the captured bytes) and the trace position `id`.
    pub fn to_packet(&self, id: u64) -> Packet {
        let mut p = Packet::from_bytes(self.data);
        self.annotate(&mut p, id);
        p
    }

    /// Set what [`TraceRef::to_packet`] sets besides the bytes (timestamp, input port, wire
    /// length, `id`) on `p`, a packet holding this record's bytes and default annotations:
    /// for callers that make the packet in a reused buffer.
    #[inline]
    pub fn annotate(&self, p: &mut Packet, id: u64) {
        p.anno.timestamp_ns = self.timestamp_ns;
        p.anno.input_port = u8::try_from(self.iface).unwrap_or(u8::MAX);
        if self.is_truncated() {
            p.anno.wire_len = self.orig_len;
        }
        p.id = id;
    }
}

/// Most bytes [`Src::append`] makes room for before they have arrived.
const APPEND_CHUNK: usize = 1 << 16;

/// A reader that counts the bytes consumed, so errors can name the offset.
pub(crate) struct Src<R> {
    pub r: R,
    pub off: u64,
    pub name: String,
}

impl<R: Read> Src<R> {
    /// Fill `buf` as far as the input allows; returns the number of bytes read (less than
    /// `buf.len()` only at end of file).
    pub fn fill(&mut self, buf: &mut [u8]) -> Result<usize, TrafficError> {
        let mut n = 0;
        while n < buf.len() {
            match self.r.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TrafficError::io(&self.name, e)),
            }
        }
        self.off += n as u64;
        Ok(n)
    }

    /// Append up to `n` bytes to `out` (growing it at most [`APPEND_CHUNK`] bytes ahead of
    /// the data that arrived, so a lying length field cannot make us allocate much more than
    /// the file holds); returns the count appended. A vector with room for the record is not
    /// reallocated: the bytes are read straight into it (no `read_to_end` probing).
    pub fn append(&mut self, out: &mut Vec<u8>, n: u64) -> Result<u64, TrafficError> {
        let mut got = 0u64;
        while got < n {
            let chunk = (n - got).min(APPEND_CHUNK as u64) as usize;
            let start = out.len();
            out.resize(start + chunk, 0);
            let k = match self.fill(&mut out[start..]) {
                Ok(k) => k,
                Err(e) => {
                    out.truncate(start);
                    return Err(e);
                }
            };
            out.truncate(start + k);
            got += k as u64;
            if k < chunk {
                break;
            }
        }
        Ok(got)
    }

    /// Skip up to `n` bytes; returns the count skipped.
    pub fn skip(&mut self, n: u64) -> Result<u64, TrafficError> {
        let got = std::io::copy(&mut (&mut self.r).take(n), &mut std::io::sink())
            .map_err(|e| TrafficError::io(&self.name, e))?;
        self.off += got;
        Ok(got)
    }

    pub fn err(&self, offset: u64, what: &str, detail: String) -> TrafficError {
        TrafficError::format(&self.name, offset, what, detail)
    }
}

/// Create (truncate) `path` for writing through a 64 KiB buffer; returns it with the name used
/// in error messages. Shared by the pcap and pcapng writers.
pub(crate) fn create_buffered(path: &Path) -> Result<(BufWriter<File>, String), TrafficError> {
    let name = path.display().to_string();
    let f = File::create(path).map_err(|e| TrafficError::io(&name, e))?;
    Ok((BufWriter::with_capacity(1 << 16, f), name))
}

#[inline]
pub(crate) fn u16_at(b: &[u8], i: usize, be: bool) -> u16 {
    let a = [b[i], b[i + 1]];
    if be {
        u16::from_be_bytes(a)
    } else {
        u16::from_le_bytes(a)
    }
}

#[inline]
pub(crate) fn u32_at(b: &[u8], i: usize, be: bool) -> u32 {
    let a = [b[i], b[i + 1], b[i + 2], b[i + 3]];
    if be {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    }
}

pub(crate) fn put_u16(out: &mut Vec<u8>, v: u16, be: bool) {
    out.extend_from_slice(&if be { v.to_be_bytes() } else { v.to_le_bytes() });
}

pub(crate) fn put_u32(out: &mut Vec<u8>, v: u32, be: bool) {
    out.extend_from_slice(&if be { v.to_be_bytes() } else { v.to_le_bytes() });
}

/// The format of an open capture, as detected from its magic number.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaptureFormat {
    /// Classic pcap; `nanosecond` for the 0xa1b23c4d magic.
    Pcap { big_endian: bool, nanosecond: bool },
    /// pcapng (the byte order may change from section to section).
    Pcapng,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct PcapState {
    be: bool,
    nano: bool,
    linktype: u16,
    snaplen: u32,
}

impl PcapState {
    /// A record header's (timestamp in ns, captured length, original length), or what is
    /// wrong with it (the mapped and the streaming reader report the same).
    #[inline]
    pub(crate) fn linktype(&self) -> u16 {
        self.linktype
    }

    pub(crate) fn big_endian(&self) -> bool {
        self.be
    }

    pub(crate) fn nanosecond(&self) -> bool {
        self.nano
    }

    #[inline]
    pub(crate) fn record(&self, h: &[u8; 16]) -> Result<(u64, u32, u32), (&'static str, String)> {
        let sec = u32_at(h, 0, self.be) as u64;
        let frac = u32_at(h, 4, self.be) as u64;
        let incl = u32_at(h, 8, self.be);
        let orig = u32_at(h, 12, self.be);
        if incl > MAX_CAPLEN {
            return Err((
                "corrupt packet record",
                format!("captured length {incl} exceeds the maximum {MAX_CAPLEN}"),
            ));
        }
        let ts = sec * 1_000_000_000 + if self.nano { frac } else { frac * 1000 };
        Ok((ts, incl, orig))
    }
}

enum State {
    Pcap(PcapState),
    Ng(NgState),
}

/// Streaming reader for pcap and pcapng files; the format is detected from the magic
/// number. Yields one [`TracePacket`] per packet record; after the first error it yields
/// nothing more. Memory use is bounded by the largest record, independent of file size.
pub struct PcapReader<R: Read = BufReader<File>> {
    src: Src<R>,
    state: State,
    failed: bool,
}

impl PcapReader<BufReader<File>> {
    /// Open `path` and read its file header (pcap) or first section header (pcapng).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, TrafficError> {
        let path = path.as_ref();
        let name = path.display().to_string();
        let f = File::open(path).map_err(|e| TrafficError::io(&name, e))?;
        Self::from_reader(BufReader::with_capacity(1 << 16, f), &name)
    }
}

impl<R: Read> PcapReader<R> {
    /// Read a capture from any byte stream; `name` is used in error messages.
    pub fn from_reader(r: R, name: &str) -> Result<Self, TrafficError> {
        let mut src = Src {
            r,
            off: 0,
            name: name.to_string(),
        };
        let mut m = [0u8; 4];
        let n = src.fill(&mut m)?;
        if n < 4 {
            return Err(src.err(0, "missing file header", format!("file has only {n} bytes")));
        }
        let le = u32::from_le_bytes(m);
        let be = u32::from_be_bytes(m);
        let state = if le == PCAPNG_SHB {
            State::Ng(NgState::start(&mut src)?)
        } else if le == MAGIC_USEC || le == MAGIC_NSEC || be == MAGIC_USEC || be == MAGIC_NSEC {
            let big = be == MAGIC_USEC || be == MAGIC_NSEC;
            let nano = (if big { be } else { le }) == MAGIC_NSEC;
            let mut h = [0u8; 20];
            let n = src.fill(&mut h)?;
            if n < 20 {
                return Err(src.err(
                    0,
                    "truncated pcap file header",
                    format!("24 bytes needed, {} remain", n + 4),
                ));
            }
            let major = u16_at(&h, 0, big);
            if major != 2 {
                return Err(src.err(
                    4,
                    "unsupported pcap version",
                    format!("major version {major}, expected 2"),
                ));
            }
            let snaplen = u32_at(&h, 12, big);
            let linktype = (u32_at(&h, 16, big) & 0xffff) as u16;
            State::Pcap(PcapState {
                be: big,
                nano,
                linktype,
                snaplen,
            })
        } else {
            return Err(src.err(
                0,
                "unknown capture format",
                format!(
                    "magic {le:#010x}; expected pcap (a1b2c3d4 or a1b23c4d, either byte order) or pcapng (0a0d0d0a)"
                ),
            ));
        };
        Ok(PcapReader {
            src,
            state,
            failed: false,
        })
    }

    pub fn format(&self) -> CaptureFormat {
        match &self.state {
            State::Pcap(s) => CaptureFormat::Pcap {
                big_endian: s.be,
                nanosecond: s.nano,
            },
            State::Ng(_) => CaptureFormat::Pcapng,
        }
    }

    /// Link type of interface `iface` (classic pcap has one interface, 0). For pcapng,
    /// interfaces are known once their description block has been read.
    pub fn linktype(&self, iface: u16) -> Option<u16> {
        match &self.state {
            State::Pcap(s) => (iface == 0).then_some(s.linktype),
            State::Ng(ng) => ng.linktype(iface),
        }
    }

    /// Snapshot length of the classic pcap file header (None for pcapng).
    pub fn snaplen(&self) -> Option<u32> {
        match &self.state {
            State::Pcap(s) => Some(s.snaplen),
            State::Ng(_) => None,
        }
    }

    /// The classic pcap header read (None for pcapng).
    pub(crate) fn pcap_state(&self) -> Option<PcapState> {
        match &self.state {
            State::Pcap(s) => Some(*s),
            State::Ng(_) => None,
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.src.name
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.src.off
    }

    /// Read the next packet into `out`, reusing its buffer: `out.data` is cleared and refilled,
    /// so once its capacity holds the largest packet, reading allocates nothing (the
    /// [`Iterator`] returns each packet in a new vector). Returns `Ok(false)` at the end of the
    /// file; after the first error or the end, `Ok(false)` from then on. `out` is unspecified
    /// after an error.
    pub fn read_into(&mut self, out: &mut TracePacket) -> Result<bool, TrafficError> {
        if self.failed {
            return Ok(false);
        }
        let r = match &mut self.state {
            State::Pcap(s) => Self::read_pcap(&mut self.src, s, out),
            State::Ng(ng) => ng.read_packet(&mut self.src, out),
        };
        match r {
            Ok(true) => Ok(true),
            Ok(false) => {
                self.failed = true;
                Ok(false)
            }
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    fn read_pcap(
        src: &mut Src<R>,
        s: &PcapState,
        out: &mut TracePacket,
    ) -> Result<bool, TrafficError> {
        let start = src.off;
        let mut h = [0u8; 16];
        let n = src.fill(&mut h)?;
        if n == 0 {
            return Ok(false);
        }
        if n < 16 {
            return Err(src.err(
                start,
                "truncated packet record header",
                format!("16 bytes needed, {n} remain"),
            ));
        }
        let (timestamp_ns, incl, orig) = s.record(&h).map_err(|d| src.err(start, d.0, d.1))?;
        out.data.clear();
        let got = src.append(&mut out.data, incl as u64)?;
        if got < incl as u64 {
            return Err(src.err(
                start,
                "truncated packet record",
                format!("header says {incl} bytes, {got} remain"),
            ));
        }
        out.timestamp_ns = timestamp_ns;
        out.iface = 0;
        out.orig_len = orig;
        Ok(true)
    }
}

impl<R: Read> Iterator for PcapReader<R> {
    type Item = Result<TracePacket, TrafficError>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut p = TracePacket::default();
        match self.read_into(&mut p) {
            Ok(true) => Some(Ok(p)),
            Ok(false) => None,
            Err(e) => Some(Err(e)),
        }
    }
}

/// Options of [`PcapWriter`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PcapOptions {
    pub linktype: u16,
    /// Nanosecond timestamps (magic 0xa1b23c4d). Default true, since generated traces have
    /// nanosecond timestamps; libpcap >= 1.5 (tcpdump), Wireshark, dpkt and scapy read it.
    /// Set false for the microsecond format that every pcap reader knows.
    pub nanosecond: bool,
    /// Write big-endian (default: little-endian, like tcpdump on x86).
    pub big_endian: bool,
    /// Snapshot length: longer packets are truncated to it (`orig_len` keeps the length).
    pub snaplen: u32,
}

impl Default for PcapOptions {
    fn default() -> Self {
        PcapOptions {
            linktype: LINKTYPE_ETHERNET,
            nanosecond: true,
            big_endian: false,
            snaplen: MAX_CAPLEN,
        }
    }
}

/// Writer for classic pcap files.
pub struct PcapWriter<W: Write = BufWriter<File>> {
    w: W,
    name: String,
    opts: PcapOptions,
    rec: Vec<u8>,
    count: u64,
}

impl PcapWriter<BufWriter<File>> {
    /// Create `path` (truncating it) with nanosecond little-endian timestamps.
    pub fn create(path: impl AsRef<Path>, linktype: u16) -> Result<Self, TrafficError> {
        Self::create_with(
            path,
            PcapOptions {
                linktype,
                ..PcapOptions::default()
            },
        )
    }

    pub fn create_with(path: impl AsRef<Path>, opts: PcapOptions) -> Result<Self, TrafficError> {
        let (w, name) = create_buffered(path.as_ref())?;
        Self::new(w, &name, opts)
    }
}

impl<W: Write> PcapWriter<W> {
    /// Write the file header to `w`; `name` is used in error messages.
    pub fn new(w: W, name: &str, opts: PcapOptions) -> Result<Self, TrafficError> {
        if opts.snaplen == 0 || opts.snaplen > MAX_CAPLEN {
            return Err(TrafficError::Config(format!(
                "{name}: pcap snaplen {} must be in 1..={MAX_CAPLEN}",
                opts.snaplen
            )));
        }
        let mut wr = PcapWriter {
            w,
            name: name.to_string(),
            opts,
            rec: Vec::with_capacity(2048),
            count: 0,
        };
        let be = opts.big_endian;
        let mut h = Vec::with_capacity(24);
        put_u32(
            &mut h,
            if opts.nanosecond {
                MAGIC_NSEC
            } else {
                MAGIC_USEC
            },
            be,
        );
        put_u16(&mut h, 2, be);
        put_u16(&mut h, 4, be);
        put_u32(&mut h, 0, be); // thiszone
        put_u32(&mut h, 0, be); // sigfigs
        put_u32(&mut h, opts.snaplen, be);
        put_u32(&mut h, opts.linktype as u32, be);
        wr.w.write_all(&h)
            .map_err(|e| TrafficError::io(&wr.name, e))?;
        Ok(wr)
    }

    /// Append one packet record. The interface number is not stored (classic pcap has one).
    pub fn write(&mut self, p: &TracePacket) -> Result<(), TrafficError> {
        let be = self.opts.big_endian;
        let sec = p.timestamp_ns / 1_000_000_000;
        let sec = u32::try_from(sec).map_err(|_| {
            TrafficError::Config(format!(
                "{}: timestamp {} ns does not fit pcap's 32-bit seconds",
                self.name, p.timestamp_ns
            ))
        })?;
        let sub = p.timestamp_ns % 1_000_000_000;
        let frac = if self.opts.nanosecond {
            sub
        } else {
            sub / 1000
        } as u32;
        let incl = p.data.len().min(self.opts.snaplen as usize);
        let orig = p
            .orig_len
            .max(u32::try_from(p.data.len()).unwrap_or(u32::MAX));
        self.rec.clear();
        put_u32(&mut self.rec, sec, be);
        put_u32(&mut self.rec, frac, be);
        put_u32(&mut self.rec, incl as u32, be);
        put_u32(&mut self.rec, orig, be);
        self.rec.extend_from_slice(&p.data[..incl]);
        self.w
            .write_all(&self.rec)
            .map_err(|e| TrafficError::io(&self.name, e))?;
        self.count += 1;
        Ok(())
    }

    /// Packets written so far.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Flush and return the underlying writer.
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
    use proptest::prelude::*;

    fn pkt(ts: u64, len: usize, orig: u32) -> TracePacket {
        TracePacket {
            timestamp_ns: ts,
            iface: 0,
            data: (0..len).map(|i| i as u8).collect(),
            orig_len: orig,
        }
    }

    fn write_mem(opts: PcapOptions, pkts: &[TracePacket]) -> Vec<u8> {
        let mut w = PcapWriter::new(Vec::new(), "mem.pcap", opts).unwrap();
        for p in pkts {
            w.write(p).unwrap();
        }
        w.finish().unwrap()
    }

    fn read_all(bytes: &[u8]) -> Result<Vec<TracePacket>, TrafficError> {
        PcapReader::from_reader(bytes, "trace.pcap")?.collect()
    }

    /// A pcap built by hand from the format description: big-endian, microsecond magic,
    /// link type RAW, one 4-byte packet at 1.000002 s with original length 60.
    #[test]
    fn hand_built_big_endian_usec() {
        let mut b = vec![
            0xa1, 0xb2, 0xc3, 0xd4, 0, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0,
            101,
        ];
        b.extend_from_slice(&[
            0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 60, 0x45, 0, 0, 20,
        ]);
        let r = PcapReader::from_reader(&b[..], "x.pcap").unwrap();
        assert_eq!(
            r.format(),
            CaptureFormat::Pcap {
                big_endian: true,
                nanosecond: false
            }
        );
        assert_eq!(r.linktype(0), Some(LINKTYPE_RAW));
        assert_eq!(r.snaplen(), Some(65535));
        let v: Vec<_> = r.collect::<Result<_, _>>().unwrap();
        assert_eq!(
            v,
            vec![TracePacket {
                timestamp_ns: 1_000_002_000,
                iface: 0,
                data: vec![0x45, 0, 0, 20],
                orig_len: 60
            }]
        );
    }

    /// Little-endian nanosecond magic as bytes on disk: 4d 3c b2 a1.
    #[test]
    fn hand_built_little_endian_nsec() {
        let mut b = vec![
            0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0,
        ];
        b.extend_from_slice(&[5, 0, 0, 0, 7, 0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0xaa, 0xbb]);
        let r = PcapReader::from_reader(&b[..], "x.pcap").unwrap();
        assert_eq!(
            r.format(),
            CaptureFormat::Pcap {
                big_endian: false,
                nanosecond: true
            }
        );
        assert_eq!(r.linktype(0), Some(LINKTYPE_ETHERNET));
        let v: Vec<_> = r.collect::<Result<_, _>>().unwrap();
        assert_eq!(v[0].timestamp_ns, 5_000_000_007);
        assert_eq!(v[0].data, vec![0xaa, 0xbb]);
    }

    #[test]
    fn round_trip_all_variants() {
        let pkts = vec![
            pkt(0, 60, 60),
            pkt(1_234_567_891, 1514, 1514),
            pkt(4_000_000_000_000_000_001, 0, 0),
            pkt(7, 100, 1500),
        ];
        for be in [false, true] {
            for nano in [false, true] {
                let opts = PcapOptions {
                    linktype: LINKTYPE_RAW,
                    nanosecond: nano,
                    big_endian: be,
                    ..Default::default()
                };
                let bytes = write_mem(opts, &pkts);
                let back = read_all(&bytes).unwrap();
                assert_eq!(back.len(), pkts.len());
                for (a, b) in pkts.iter().zip(&back) {
                    let ts = if nano {
                        a.timestamp_ns
                    } else {
                        a.timestamp_ns / 1000 * 1000
                    };
                    assert_eq!(b.timestamp_ns, ts, "be={be} nano={nano}");
                    assert_eq!(b.data, a.data);
                    assert_eq!(b.orig_len, a.orig_len);
                }
                let r = PcapReader::from_reader(&bytes[..], "m").unwrap();
                assert_eq!(
                    r.format(),
                    CaptureFormat::Pcap {
                        big_endian: be,
                        nanosecond: nano
                    }
                );
                assert_eq!(r.linktype(0), Some(LINKTYPE_RAW));
            }
        }
    }

    /// Every packet read with `read_into` into one reused `TracePacket`.
    fn read_reused(bytes: &[u8]) -> (Vec<TracePacket>, Vec<*const u8>, Result<(), String>) {
        let mut r = PcapReader::from_reader(bytes, "trace.pcap").unwrap();
        let mut p = TracePacket {
            timestamp_ns: 0,
            iface: 0,
            data: Vec::with_capacity(2048),
            orig_len: 0,
        };
        let (mut got, mut ptrs) = (Vec::new(), Vec::new());
        loop {
            match r.read_into(&mut p) {
                Ok(true) => {
                    got.push(p.clone());
                    ptrs.push(p.data.as_ptr());
                }
                Ok(false) => break,
                Err(e) => return (got, ptrs, Err(e.to_string())),
            }
        }
        // After the end (or an error) it keeps answering false.
        assert!(!r.read_into(&mut p).unwrap());
        (got, ptrs, Ok(()))
    }

    #[test]
    fn read_into_reuses_one_buffer_and_equals_the_iterator() {
        let pkts = vec![
            pkt(0, 60, 60),
            pkt(1_234_567_891, 1514, 1514),
            pkt(9, 0, 0),
            pkt(7, 100, 1500),
            pkt(8, 64, 64),
        ];
        let mut files = Vec::new();
        for be in [false, true] {
            for nano in [false, true] {
                let opts = PcapOptions {
                    nanosecond: nano,
                    big_endian: be,
                    ..Default::default()
                };
                files.push(write_mem(opts, &pkts));
            }
        }
        let mut w = crate::PcapngWriter::new(Vec::new(), "m.pcapng", Default::default()).unwrap();
        for p in &pkts {
            w.write(p).unwrap();
        }
        files.push(w.finish().unwrap());
        for (i, bytes) in files.iter().enumerate() {
            let by_iter = read_all(bytes).unwrap();
            let (reused, ptrs, end) = read_reused(bytes);
            end.unwrap();
            assert_eq!(reused, by_iter, "file {i}");
            assert_eq!(reused.len(), pkts.len());
            // One allocation (the 2,048 bytes given) served every packet.
            assert!(
                ptrs.windows(2).all(|w| w[0] == w[1]),
                "file {i}: the buffer moved"
            );
        }
    }

    #[test]
    fn read_into_reports_the_iterators_errors() {
        let bytes = write_mem(PcapOptions::default(), &[pkt(1, 60, 60), pkt(2, 100, 100)]);
        let cut = &bytes[..bytes.len() - 10];
        let e_iter = read_all(cut).unwrap_err().to_string();
        let (got, _, end) = read_reused(cut);
        assert_eq!(got.len(), 1);
        assert_eq!(end.unwrap_err(), e_iter);
    }

    #[test]
    fn snaplen_truncates_and_keeps_orig_len() {
        let opts = PcapOptions {
            snaplen: 10,
            ..Default::default()
        };
        let back = read_all(&write_mem(opts, &[pkt(1, 50, 50)])).unwrap();
        assert_eq!(back[0].data.len(), 10);
        assert_eq!(back[0].orig_len, 50);
    }

    #[test]
    fn file_round_trip_and_to_packet() {
        let dir = std::env::temp_dir().join(format!("pktflow-traffic-pcap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.pcap");
        let mut w = PcapWriter::create(&path, LINKTYPE_ETHERNET).unwrap();
        w.write(&pkt(42, 64, 64)).unwrap();
        w.finish().unwrap();
        let v: Vec<_> = PcapReader::open(&path)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let p = v[0].to_packet(9);
        assert_eq!(p.data(), &v[0].data[..]);
        assert_eq!((p.anno.timestamp_ns, p.anno.input_port, p.id), (42, 0, 9));
        let big = TracePacket {
            iface: 300,
            ..v[0].clone()
        };
        assert_eq!(big.to_packet(0).anno.input_port, 255);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn missing_file_names_path() {
        let e = PcapReader::open("/nonexistent/dir/trace.pcap")
            .err()
            .unwrap()
            .to_string();
        assert!(e.starts_with("/nonexistent/dir/trace.pcap: "), "{e}");
    }

    #[test]
    fn truncation_reports_offsets() {
        // Header (24) + record 1 (16 + 60) + record 2 (16 + 100) = 216 bytes.
        let bytes = write_mem(PcapOptions::default(), &[pkt(1, 60, 60), pkt(2, 100, 100)]);
        assert_eq!(bytes.len(), 216);
        let err = |n: usize| read_all(&bytes[..n]).unwrap_err().to_string();
        assert_eq!(
            err(0),
            "trace.pcap: missing file header at byte offset 0: file has only 0 bytes"
        );
        assert_eq!(
            err(10),
            "trace.pcap: truncated pcap file header at byte offset 0: 24 bytes needed, 10 remain"
        );
        assert_eq!(err(30), "trace.pcap: truncated packet record header at byte offset 24: 16 bytes needed, 6 remain");
        assert_eq!(err(60), "trace.pcap: truncated packet record at byte offset 24: header says 60 bytes, 20 remain");
        assert_eq!(err(105), "trace.pcap: truncated packet record header at byte offset 100: 16 bytes needed, 5 remain");
        assert_eq!(err(200), "trace.pcap: truncated packet record at byte offset 100: header says 100 bytes, 84 remain");
        // Cut exactly at a record boundary: a valid shorter file.
        assert_eq!(read_all(&bytes[..100]).unwrap().len(), 1);
        assert_eq!(read_all(&bytes[..24]).unwrap().len(), 0);
        // The packets before the damage are delivered first.
        let mut r = PcapReader::from_reader(&bytes[..200], "t").unwrap();
        assert!(r.next().unwrap().is_ok());
        assert!(r.next().unwrap().is_err());
        assert!(r.next().is_none());
    }

    #[test]
    fn corrupt_fields_report_offsets() {
        let mut bytes = write_mem(PcapOptions::default(), &[pkt(1, 60, 60), pkt(2, 100, 100)]);
        bytes[100 + 8..100 + 12].copy_from_slice(&0x0100_0000u32.to_le_bytes());
        assert_eq!(
            read_all(&bytes).unwrap_err().to_string(),
            "trace.pcap: corrupt packet record at byte offset 100: captured length 16777216 exceeds the maximum 262144"
        );
        let mut b2 = bytes.clone();
        b2[0] = 0x00;
        let e = read_all(&b2).unwrap_err().to_string();
        assert!(
            e.starts_with("trace.pcap: unknown capture format at byte offset 0: magic 0xa1b23c00"),
            "{e}"
        );
        let mut b3 = bytes;
        b3[4] = 9;
        assert_eq!(
            read_all(&b3).unwrap_err().to_string(),
            "trace.pcap: unsupported pcap version at byte offset 4: major version 9, expected 2"
        );
    }

    #[test]
    fn writer_rejects_unrepresentable_timestamp() {
        let mut w = PcapWriter::new(Vec::new(), "w.pcap", PcapOptions::default()).unwrap();
        assert!(w.write(&pkt(u64::MAX, 1, 1)).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

        /// Mutating bytes of a valid file (headers, lengths, data) and cutting its tail never
        /// panics; errors name the file and a byte offset within it.
        #[test]
        fn mutated_valid_file_never_panics(muts in proptest::collection::vec((0usize..400, any::<u8>()), 1..4),
                                           cut in 0usize..300, be in any::<bool>()) {
            let mut b = write_mem(PcapOptions { big_endian: be, ..Default::default() },
                                  &[pkt(1, 60, 60), pkt(2, 100, 1500), pkt(3, 30, 30)]);
            for (pos, val) in muts {
                let p = pos % b.len();
                b[p] = val;
            }
            b.truncate(b.len() - cut.min(b.len()));
            let len = b.len() as u64;
            match PcapReader::from_reader(&b[..], "fuzz.pcap") {
                Ok(r) => {
                    for x in r {
                        if let Err(e) = x {
                            let m = e.to_string();
                            prop_assert!(m.starts_with("fuzz.pcap: ") && !m.contains('\n'), "{}", m);
                            if let TrafficError::Format { offset, .. } = e {
                                prop_assert!(offset <= len);
                            }
                        }
                    }
                }
                Err(e) => prop_assert!(e.to_string().starts_with("fuzz.pcap: ")),
            }
        }

        #[test]
        fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..600)) {
            if let Ok(r) = PcapReader::from_reader(&b[..], "fuzz") {
                for _ in r {}
            }
        }

        /// Valid headers followed by garbage exercise the record paths more often.
        #[test]
        fn garbage_after_valid_header_never_panics(be in any::<bool>(), nano in any::<bool>(),
                                                   tail in proptest::collection::vec(any::<u8>(), 0..400)) {
            let mut b = write_mem(PcapOptions { big_endian: be, nanosecond: nano, ..Default::default() }, &[]);
            b.extend_from_slice(&tail);
            let r = PcapReader::from_reader(&b[..], "fuzz").unwrap();
            let mut last_ok = true;
            for x in r {
                prop_assert!(last_ok, "no item after an error");
                last_ok = x.is_ok();
            }
        }
    }
}
