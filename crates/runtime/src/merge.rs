//! Merge the per-thread pcaps of a multithreaded run into one file per output.
//!
//! Each thread writes what its copy of the graph outputs in the order it processed it. The merge
//! takes, at each step, the record with the earliest timestamp among the threads' next records
//! (ties: the lower thread first), so each thread's records, and therefore each flow's, keep
//! their order; records of different flows interleave by time. With one part the file is copied
//! record for record, unchanged.
use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

struct Part {
    r: BufReader<File>,
    be: bool,
    next: Option<(u64, Vec<u8>)>,
    name: String,
}

fn u32_of(b: &[u8], be: bool) -> u32 {
    let a = [b[0], b[1], b[2], b[3]];
    if be {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    }
}

impl Part {
    fn open(path: &Path) -> Result<(Part, [u8; 24]), String> {
        let name = path.display().to_string();
        let mut r = BufReader::new(File::open(path).map_err(|e| format!("{name}: {e}"))?);
        let mut h = [0u8; 24];
        r.read_exact(&mut h)
            .map_err(|e| format!("{name}: pcap header: {e}"))?;
        let be = match h[0..4] {
            [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => false,
            [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => true,
            _ => return Err(format!("{name}: not a classic pcap file")),
        };
        let mut p = Part {
            r,
            be,
            next: None,
            name,
        };
        p.advance()?;
        Ok((p, h))
    }

    fn advance(&mut self) -> Result<(), String> {
        let mut rh = [0u8; 16];
        match self.r.read_exact(&mut rh) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                self.next = None;
                return Ok(());
            }
            Err(e) => return Err(format!("{}: {e}", self.name)),
        }
        let sec = u32_of(&rh[0..4], self.be) as u64;
        let frac = u32_of(&rh[4..8], self.be) as u64;
        let incl = u32_of(&rh[8..12], self.be) as usize;
        if incl > pktflow_traffic::pcap::MAX_CAPLEN as usize {
            return Err(format!("{}: record of {incl} bytes", self.name));
        }
        let mut rec = rh.to_vec();
        rec.resize(16 + incl, 0);
        self.r
            .read_exact(&mut rec[16..])
            .map_err(|e| format!("{}: truncated record: {e}", self.name))?;
        self.next = Some(((sec << 32) | frac, rec));
        Ok(())
    }
}

/// Merge `parts` (those that exist) into `out` through a temporary file renamed on success.
/// Returns false when no part exists (nothing written).
pub fn merge_pcaps(parts: &[PathBuf], out: &Path) -> Result<bool, String> {
    let mut open = Vec::new();
    let mut header = None;
    for p in parts.iter().filter(|p| p.exists()) {
        let (part, h) = Part::open(p)?;
        if let Some(first) = header {
            if first != h {
                return Err(format!(
                    "{}: pcap header differs from the other threads' ({})",
                    part.name,
                    out.display()
                ));
            }
        }
        header = Some(h);
        open.push(part);
    }
    let Some(header) = header else {
        return Ok(false);
    };
    // Written through `Output`: a temporary file renamed onto a regular file (removed on an
    // error), or straight into a device or FIFO; a symbolic link is written through.
    let mut target = pktflow_traffic::Output::plan(out)?;
    let result = (|| -> Result<(), String> {
        let f = target
            .open()
            .map_err(|e| format!("{}: {e}", target.writing().display()))?;
        let mut w = BufWriter::new(f);
        let err = |e: std::io::Error| format!("{}: {e}", out.display());
        w.write_all(&header).map_err(err)?;
        loop {
            let mut best: Option<(usize, u64)> = None;
            for (k, p) in open.iter().enumerate() {
                if let Some((ts, _)) = &p.next {
                    if best.is_none_or(|(_, b)| *ts < b) {
                        best = Some((k, *ts));
                    }
                }
            }
            let Some((k, _)) = best else { break };
            let (_, rec) = open[k].next.take().expect("chosen part has a record");
            w.write_all(&rec).map_err(err)?;
            open[k].advance()?;
        }
        w.flush().map_err(err)?;
        Ok(())
    })();
    match result {
        Ok(()) => {
            target.commit()?;
            Ok(true)
        }
        Err(e) => {
            target.discard();
            Err(e)
        }
    }
}
