//! Reading a trace file without copying it through the kernel: [`TraceFileReader`] maps a
//! classic pcap file into memory and hands out each packet as a [`TraceRef`] borrowing the
//! mapping (no `read` system call and no copy into a buffer of ours: the runtime copies the
//! bytes once, into the packet buffer it reuses). pcapng files, and files that cannot be
//! mapped (a pipe, a special file), are read by the streaming [`PcapReader`] instead, through
//! the same interface, so callers need not care.
//!
//! The mapped reader checks every record exactly as the streaming reader does, with the same
//! error messages and offsets (one record-header check, `PcapState::record`, serves both; a
//! property test compares the two readers on arbitrary bytes). The file must not be shortened
//! while it is read: a mapping cannot detect that (the streaming reader would report a
//! truncated record; a mapping may fault). Click's FromDump maps its input file the same way.
use std::fs::File;
use std::path::Path;

use crate::pcap::{CaptureFormat, PcapReader, PcapState, TracePacket, TraceRef};
use crate::TrafficError;

/// Length of the classic pcap file header, where the first record starts.
const FILE_HEADER: usize = 24;

/// A classic pcap file mapped into memory.
pub struct MappedPcap {
    map: memmap2::Mmap,
    off: usize,
    s: PcapState,
    name: String,
    done: bool,
}

impl MappedPcap {
    /// The next packet, borrowing the mapping; `Ok(None)` at the end, and from then on after
    /// an error or the end.
    #[inline]
    pub fn next_ref(&mut self) -> Result<Option<TraceRef<'_>>, TrafficError> {
        if self.done {
            return Ok(None);
        }
        let start = self.off;
        let rest = &self.map[start..];
        if rest.is_empty() {
            self.done = true;
            return Ok(None);
        }
        let fail = |what: &str, detail: String| {
            TrafficError::format(&self.name, start as u64, what, detail)
        };
        let Some(h) = rest.first_chunk::<16>() else {
            self.done = true;
            return Err(fail(
                "truncated packet record header",
                format!("16 bytes needed, {} remain", rest.len()),
            ));
        };
        let (timestamp_ns, incl, orig) = match self.s.record(h) {
            Ok(r) => r,
            Err((what, detail)) => {
                self.done = true;
                return Err(fail(what, detail));
            }
        };
        let Some(data) = rest.get(16..16 + incl as usize) else {
            self.done = true;
            return Err(fail(
                "truncated packet record",
                format!("header says {incl} bytes, {} remain", rest.len() - 16),
            ));
        };
        self.off = start + 16 + incl as usize;
        prefetch(&self.map, start + PREFETCH_AHEAD, 16 + incl as usize);
        Ok(Some(TraceRef {
            timestamp_ns,
            iface: 0,
            data,
            orig_len: orig,
        }))
    }
}

/// How far ahead of the record being read its bytes are asked for (a few records of a typical
/// trace): the next records' headers form a chain of dependent loads (each gives the next one's
/// offset), which from memory would cost a miss each; asked for early, they are in the cache
/// when read.
const PREFETCH_AHEAD: usize = 2048;

/// Ask the processor to bring `len` bytes of `map` from `at` into the cache (no effect beyond
/// the mapping's end, or off x86-64).
#[inline(always)]
fn prefetch(map: &[u8], at: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let end = at.saturating_add(len).min(map.len());
        let mut i = at;
        while i < end {
            // Safety: `_mm_prefetch` only hints the cache and never faults; `i` is inside the
            // mapping, so the pointer is valid.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    map.as_ptr().add(i) as *const i8,
                );
            }
            i += 64;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (map, at, len);
}

enum Inner {
    Mapped(MappedPcap),
    Stream(PcapReader),
}

/// A pcap or pcapng trace file: mapped when it is a classic pcap file that can be mapped,
/// streamed otherwise (see the module documentation).
pub struct TraceFileReader {
    inner: Inner,
}

impl TraceFileReader {
    /// Open `path` and read its header (errors as [`PcapReader::open`]'s).
    pub fn open(path: impl AsRef<Path>) -> Result<Self, TrafficError> {
        let path = path.as_ref();
        let stream = PcapReader::open(path)?;
        let Some(s) = stream.pcap_state() else {
            return Ok(TraceFileReader {
                inner: Inner::Stream(stream),
            });
        };
        let name = stream.name().to_string();
        // Safety: the mapping is read-only and private to this reader; the file must not be
        // shortened while it is read (module documentation).
        let map = File::open(path)
            .and_then(|f| unsafe { memmap2::Mmap::map(&f) })
            .ok()
            .filter(|m| m.len() >= FILE_HEADER);
        let Some(map) = map else {
            return Ok(TraceFileReader {
                inner: Inner::Stream(stream),
            });
        };
        #[cfg(unix)]
        let _ = map.advise(memmap2::Advice::Sequential);
        Ok(TraceFileReader {
            inner: Inner::Mapped(MappedPcap {
                map,
                off: FILE_HEADER,
                s,
                name,
                done: false,
            }),
        })
    }

    /// Whether the file is read through a memory mapping.
    pub fn is_mapped(&self) -> bool {
        matches!(self.inner, Inner::Mapped(_))
    }

    pub fn format(&self) -> CaptureFormat {
        match &self.inner {
            Inner::Mapped(m) => CaptureFormat::Pcap {
                big_endian: m.s.big_endian(),
                nanosecond: m.s.nanosecond(),
            },
            Inner::Stream(r) => r.format(),
        }
    }

    /// Link type of interface `iface` (as [`PcapReader::linktype`]).
    pub fn linktype(&self, iface: u16) -> Option<u16> {
        match &self.inner {
            Inner::Mapped(m) => (iface == 0).then_some(m.s.linktype()),
            Inner::Stream(r) => r.linktype(iface),
        }
    }

    /// The next packet: borrowed from the mapping, or read into `scratch` (its buffer reused)
    /// and borrowed from it. `Ok(None)` at the end of the file, and from then on after an error
    /// or the end.
    #[inline]
    pub fn next_ref<'a>(
        &'a mut self,
        scratch: &'a mut TracePacket,
    ) -> Result<Option<TraceRef<'a>>, TrafficError> {
        match &mut self.inner {
            Inner::Mapped(m) => m.next_ref(),
            Inner::Stream(r) => Ok(r.read_into(scratch)?.then(|| scratch.as_ref())),
        }
    }

    /// [`TraceFileReader::next_ref`] with the link type of the packet's interface (as
    /// [`TraceFileReader::linktype`], which the borrowed packet would not let the caller ask).
    #[inline]
    pub fn next_with_linktype<'a>(
        &'a mut self,
        scratch: &'a mut TracePacket,
    ) -> Result<Option<(TraceRef<'a>, Option<u16>)>, TrafficError> {
        match &mut self.inner {
            Inner::Mapped(m) => {
                let lt = m.s.linktype();
                Ok(m.next_ref()?.map(|r| (r, Some(lt))))
            }
            Inner::Stream(r) => {
                if !r.read_into(scratch)? {
                    return Ok(None);
                }
                let lt = r.linktype(scratch.iface);
                Ok(Some((scratch.as_ref(), lt)))
            }
        }
    }

    /// The next packet copied into `out` (its buffer reused): as [`PcapReader::read_into`].
    pub fn read_into(&mut self, out: &mut TracePacket) -> Result<bool, TrafficError> {
        match &mut self.inner {
            Inner::Mapped(m) => match m.next_ref()? {
                Some(r) => {
                    out.timestamp_ns = r.timestamp_ns;
                    out.iface = r.iface;
                    out.orig_len = r.orig_len;
                    out.data.clear();
                    out.data.extend_from_slice(r.data);
                    Ok(true)
                }
                None => Ok(false),
            },
            Inner::Stream(r) => r.read_into(out),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pcap::{PcapOptions, PcapWriter, LINKTYPE_ETHERNET};
    use proptest::prelude::*;

    fn packets(n: usize) -> Vec<TracePacket> {
        (0..n)
            .map(|i| TracePacket {
                timestamp_ns: 1_000 * i as u64 + 7,
                iface: 0,
                data: (0..(14 + i % 90)).map(|b| (b + i) as u8).collect(),
                orig_len: (14 + i % 90 + (i % 3) * 10) as u32,
            })
            .collect()
    }

    fn write(path: &Path, pk: &[TracePacket], nano: bool) {
        let opts = PcapOptions {
            linktype: LINKTYPE_ETHERNET,
            nanosecond: nano,
            big_endian: !nano,
            ..PcapOptions::default()
        };
        let mut w = PcapWriter::create_with(path, opts).unwrap();
        for p in pk {
            w.write(p).unwrap();
        }
        w.finish().unwrap();
    }

    /// Every packet and the final outcome of reading `path` through each reader.
    fn read_all(path: &Path) -> (bool, Vec<TracePacket>, Option<String>) {
        let mut r = TraceFileReader::open(path).unwrap();
        let mapped = r.is_mapped();
        let mut scratch = TracePacket::default();
        let mut got = Vec::new();
        loop {
            match r.next_ref(&mut scratch) {
                Ok(Some(p)) => got.push(p.to_owned()),
                Ok(None) => return (mapped, got, None),
                Err(e) => return (mapped, got, Some(e.to_string())),
            }
        }
    }

    fn read_stream(path: &Path) -> (Vec<TracePacket>, Option<String>) {
        let mut got = Vec::new();
        for p in PcapReader::open(path).unwrap() {
            match p {
                Ok(p) => got.push(p),
                Err(e) => return (got, Some(e.to_string())),
            }
        }
        (got, None)
    }

    #[test]
    fn a_mapped_file_reads_as_the_stream() {
        let dir = std::env::temp_dir().join(format!("pktflow-mapped-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for nano in [false, true] {
            let path = dir.join(format!("t{nano}.pcap"));
            let pk = packets(200);
            write(&path, &pk, nano);
            let (mapped, got, err) = read_all(&path);
            assert!(mapped, "a classic pcap file is mapped");
            assert_eq!(err, None);
            assert_eq!(got, read_stream(&path).0);
            assert_eq!(got.len(), 200);
            // read_into gives the same packets.
            let mut r = TraceFileReader::open(&path).unwrap();
            let mut tp = pk[0].clone();
            for want in &got {
                assert!(r.read_into(&mut tp).unwrap());
                assert_eq!(&tp, want);
            }
            assert!(!r.read_into(&mut tp).unwrap());
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// A valid file cut anywhere, or with bytes overwritten: the mapped reader yields the
        /// same packets and the same error (message and offset) as the streaming reader.
        #[test]
        fn mapped_and_stream_agree_on_damaged_files(
            n in 1usize..30,
            cut in 0usize..4000,
            flips in proptest::collection::vec((0usize..4000, any::<u8>()), 0..4),
        ) {
            let dir = std::env::temp_dir().join(format!("pktflow-mapped-p{}", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join("t.pcap");
            write(&path, &packets(n), false);
            let mut bytes = std::fs::read(&path).unwrap();
            for (at, v) in flips {
                // Leave the file header alone: a damaged header is the open's error, tested
                // with the streaming reader.
                if at >= FILE_HEADER && at < bytes.len() {
                    bytes[at] = v;
                }
            }
            bytes.truncate(cut.max(FILE_HEADER));
            std::fs::write(&path, &bytes).unwrap();
            let (_, got, err) = read_all(&path);
            let (want, want_err) = read_stream(&path);
            prop_assert_eq!(got, want);
            prop_assert_eq!(err, want_err);
        }
    }
}
