//! One pcap per output device: what leaves an application through each `ToDevice(DEV)` written
//! to `DIR/DEV.pcap` (classic pcap, nanosecond timestamps, little-endian, link type Ethernet; a
//! packet's timestamp is its `timestamp_ns` annotation, the one of the trace packet that caused
//! it). Each file is written through [`crate::outfile::Output`]: to a temporary file in `DIR`
//! renamed into place by [`DevicePcaps::finish`] (dropped unfinished, the temporary files are
//! removed), or straight into a target that is not a regular file (a FIFO, `/dev/null`); a
//! symbolic link is written through.
//!
//! Shared by the real runtime (`crates/runtime`, `pktflow run`) and the functional run
//! (`crates/profile`, `pktflow profile`), so both write byte-identical files for the same
//! departures.
use crate::outfile::Output;
use crate::{Packet, PcapOptions, PcapWriter, TracePacket};
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// A device name as a file name: characters other than letters, digits, `.`, `_`, `-` become `_`.
pub fn device_file_name(dev: &str) -> String {
    let s: String = dev
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{}.pcap", if s.is_empty() { "_" } else { &s })
}

/// The device pcaps of one run. See the module documentation.
pub struct DevicePcaps {
    dir: PathBuf,
    /// Device name, writer, how the file is written, final path.
    writers: Vec<(String, PcapWriter<BufWriter<File>>, Output, PathBuf)>,
    scratch: TracePacket,
}

impl DevicePcaps {
    /// No file is created before [`DevicePcaps::open`].
    pub fn new(dir: &Path) -> Self {
        DevicePcaps {
            dir: dir.to_path_buf(),
            writers: Vec::new(),
            scratch: TracePacket {
                timestamp_ns: 0,
                iface: 0,
                data: Vec::with_capacity(2048),
                orig_len: 0,
            },
        }
    }

    /// The writer index of device `dev`, creating its temporary file on first use (several
    /// `ToDevice` of one device share one file).
    pub fn open(&mut self, dev: &str) -> Result<usize, String> {
        if let Some(k) = self.writers.iter().position(|(d, ..)| d == dev) {
            return Ok(k);
        }
        let name = device_file_name(dev);
        let path = self.dir.join(&name);
        let out = Output::plan(&path)?;
        let f = out
            .open()
            .map_err(|e| format!("{}: {e}", out.writing().display()))?;
        let w = PcapWriter::new(
            BufWriter::new(f),
            &path.display().to_string(),
            PcapOptions::default(),
        )
        .map_err(|e| e.to_string())?;
        self.writers.push((dev.to_string(), w, out, path));
        Ok(self.writers.len() - 1)
    }

    /// Append packet `p` to the file of writer `k` (from [`DevicePcaps::open`]).
    pub fn write(&mut self, k: usize, p: &Packet) -> Result<(), String> {
        let s = &mut self.scratch;
        s.timestamp_ns = p.anno.timestamp_ns;
        s.data.clear();
        s.data.extend_from_slice(p.data());
        s.orig_len = (p.len() as u32).max(p.anno.wire_len);
        self.writers[k].1.write(s).map_err(|e| e.to_string())
    }

    /// Flush every file and rename it into place; returns the final paths, in opening order.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, String> {
        let mut done = Vec::new();
        for (_, w, mut out, path) in std::mem::take(&mut self.writers) {
            if let Err(e) = w.finish() {
                return Err(e.to_string());
            }
            out.commit()?;
            done.push(path);
        }
        Ok(done)
    }

    /// Remove the temporary files without renaming them (after an error or Ctrl-C).
    pub fn discard(mut self) {
        self.remove_partial();
    }

    fn remove_partial(&mut self) {
        for (_, w, mut out, _) in self.writers.drain(..) {
            drop(w);
            out.discard();
        }
    }
}

impl Drop for DevicePcaps {
    fn drop(&mut self) {
        self.remove_partial();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::PcapReader;

    fn tmpdir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("pktflow-devices-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn packet(ts: u64, bytes: &[u8]) -> Packet {
        TracePacket {
            timestamp_ns: ts,
            iface: 0,
            data: bytes.to_vec(),
            orig_len: bytes.len() as u32,
        }
        .to_packet(0)
    }

    #[test]
    fn file_names_keep_safe_characters_only() {
        assert_eq!(device_file_name("eth0"), "eth0.pcap");
        assert_eq!(device_file_name("a/b c:d"), "a_b_c_d.pcap");
        assert_eq!(device_file_name(""), "_.pcap");
        assert_eq!(device_file_name("x.y_z-1"), "x.y_z-1.pcap");
    }

    #[test]
    fn one_file_per_device_renamed_on_finish() {
        let d = tmpdir("finish");
        let mut o = DevicePcaps::new(&d);
        let a = o.open("eth0").unwrap();
        let b = o.open("eth1").unwrap();
        assert_eq!(o.open("eth0").unwrap(), a);
        o.write(a, &packet(5, &[1; 60])).unwrap();
        o.write(b, &packet(7, &[2; 64])).unwrap();
        o.write(a, &packet(9, &[3; 70])).unwrap();
        // Nothing final before finish: only the temporary files exist.
        assert!(!d.join("eth0.pcap").exists());
        let done = o.finish().unwrap();
        assert_eq!(done, vec![d.join("eth0.pcap"), d.join("eth1.pcap")]);
        let got: Vec<TracePacket> = PcapReader::open(d.join("eth0.pcap"))
            .unwrap()
            .map(|r| r.unwrap())
            .collect();
        assert_eq!(got.len(), 2);
        assert_eq!((got[0].timestamp_ns, got[0].data.len()), (5, 60));
        assert_eq!((got[1].timestamp_ns, got[1].data[0]), (9, 3));
        let left: Vec<_> = std::fs::read_dir(&d).unwrap().collect();
        assert_eq!(left.len(), 2, "no temporary file left");
        std::fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn dropped_unfinished_leaves_nothing() {
        let d = tmpdir("drop");
        {
            let mut o = DevicePcaps::new(&d);
            let a = o.open("eth0").unwrap();
            o.write(a, &packet(1, &[0; 60])).unwrap();
        }
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        std::fs::remove_dir_all(&d).unwrap();
    }
}
