//! `ToDump(FILENAME [, SNAPLEN, ENCAP, NANO, USE_ENCAP_FROM, EXTRA_LENGTH])` — writes the
//! packets it receives to a pcap file (with `pktflow_traffic::PcapWriter`).
//!
//! Ports: 1 agnostic input, no outputs (a sink: packets leave the graph here; Click's
//! optional pass-through output is not provided: put a Tee in front to keep a copy going).
//! FILENAME is resolved with the run's output folder. The file is created when the first
//! packet arrives or, for an empty run, by `finish()`, which also flushes it; so validating
//! a configuration writes nothing. ENCAP: `ETHER` (default, link type 1) or `IP` (raw IPv4,
//! link type 101); other Click encapsulations are rejected. SNAPLEN: bytes kept per packet
//! (default 2000; 0 keeps whole packets and, as Click, records 0xFFFFFFFF as the file's snap
//! length); the original length is recorded: the packet's
//! length, or its wire length when it came from a truncated record and was not grown since
//! (Click adds the bytes the capture cut, its EXTRA_LENGTH annotation). NANO: nanosecond
//! timestamps, default true, as Click 2.1 built for Linux writes them (todump.cc: NANO defaults
//! to whether Click's timestamps have nanosecond precision, true unless configured otherwise
//! or built with a libpcap without nanosecond support). The timestamp is the packet's
//! timestamp annotation: a FromDump packet keeps its input record's timestamp, so FromDump ->
//! ToDump copies the record headers. USE_ENCAP_FROM and EXTRA_LENGTH are not supported.
//! A write error is reported by `Router::finish`; packets after it are still counted out.
//! The file is written through `pktflow_traffic::outfile::Output`: packets go to a hidden
//! temporary file beside FILENAME (`.NAME.PID-K.partial`), renamed onto FILENAME by a successful
//! `finish()`; a run that fails, is interrupted or is dropped without `finish()` removes the
//! temporary file, so FILENAME is either this run's complete output or left as it was. A
//! FILENAME that is not a regular file (`/dev/null`, a FIFO) is written directly, never
//! replaced; a symbolic link is written through to its file. The router refuses a FILENAME
//! that is the same file as an input or another output (`Router::new`).
//!
//! Costs: 20 instructions; 12 B meta-data read (timestamp, length); the copy of the packet
//! bytes written (a packet-data read of the captured length) plus 1 instruction per 4 bytes.
use crate::conf::{parse_bool, parse_uint, unquote, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports, Role};
use crate::registry::ClassInfo;
use pktflow_traffic::outfile::Output;
use pktflow_traffic::pcap::MAX_CAPLEN;
use pktflow_traffic::{
    Packet, PcapOptions, PcapWriter, TracePacket, LINKTYPE_ETHERNET, LINKTYPE_RAW,
};
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;

pub const CLASS: ClassInfo = ClassInfo {
    name: "ToDump",
    summary: "write packets to a pcap file",
    make,
};

struct ToDump {
    path: PathBuf,
    /// How `path` is written (planned when the first packet arrives).
    out: Option<Output>,
    opts: PcapOptions,
    writer: Option<PcapWriter<BufWriter<File>>>,
    rec: TracePacket,
    count: u64,
    error: Option<String>,
    finished: bool,
    /// SNAPLEN 0: the header's snap length field is set to 0xFFFFFFFF once written, as Click's.
    whole: bool,
}

fn make(config: &str, env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse(
        "ToDump",
        config,
        &[
            "FILENAME",
            "SNAPLEN",
            "ENCAP",
            "NANO",
            "USE_ENCAP_FROM",
            "EXTRA_LENGTH",
            "UNBUFFERED",
        ],
    );
    let err = |e: String| format!("ToDump: {e}");
    let file = unquote(
        &a.keyword_or_positional("FILENAME")
            .ok_or("ToDump: missing argument FILENAME")?,
    );
    if file == "-" {
        return Err(err(
            "writing to standard output ('-') is not supported".into()
        ));
    }
    // SNAPLEN 0 keeps whole packets; Click then records 0xFFFFFFFF as the file's snap length.
    let mut whole = false;
    let snaplen = match a.keyword_or_positional("SNAPLEN") {
        Some(s) => match parse_uint(&s).map_err(|e| err(format!("SNAPLEN: {e}")))? {
            0 => {
                whole = true;
                MAX_CAPLEN
            }
            n => (n as u32).min(MAX_CAPLEN),
        },
        None => 2000,
    };
    let linktype = match a.keyword_or_positional("ENCAP").as_deref().map(str::trim) {
        None | Some("ETHER") => LINKTYPE_ETHERNET,
        Some("IP") | Some("RAW") => LINKTYPE_RAW,
        Some(o) => {
            return Err(err(format!(
                "ENCAP {o} is not supported (expected ETHER or IP)"
            )))
        }
    };
    let nanosecond = match a.keyword("NANO") {
        Some(s) => parse_bool(&s).map_err(|e| err(format!("NANO: {e}")))?,
        None => true,
    };
    for k in ["USE_ENCAP_FROM", "EXTRA_LENGTH"] {
        if a.keyword(k).is_some() {
            return Err(err(format!("{k} is not supported")));
        }
    }
    a.keyword("UNBUFFERED");
    a.finish()?;
    let path = env.resolve_output(&file);
    Ok(Box::new(ToDump {
        out: None,
        path,
        opts: PcapOptions {
            linktype,
            nanosecond,
            big_endian: false,
            snaplen,
        },
        writer: None,
        rec: TracePacket {
            timestamp_ns: 0,
            iface: 0,
            data: Vec::with_capacity(2048),
            orig_len: 0,
        },
        count: 0,
        error: None,
        finished: false,
        whole,
    }))
}

impl Drop for ToDump {
    /// A run that ends without `finish()` (an error elsewhere, Ctrl-C) leaves no partial file.
    fn drop(&mut self) {
        self.writer = None;
        self.out = None;
    }
}

/// Writes 0xFFFFFFFF into the snap length field of the (little-endian) pcap header at `path`.
fn mark_whole_packets(path: &std::path::Path) -> std::io::Result<()> {
    use std::io::{Seek, SeekFrom, Write};
    let mut f = std::fs::OpenOptions::new().write(true).open(path)?;
    f.seek(SeekFrom::Start(16))?;
    f.write_all(&u32::MAX.to_le_bytes())
}

impl ToDump {
    fn open(&mut self) {
        if self.writer.is_none() && self.error.is_none() && !self.finished {
            let opened = Output::plan(&self.path).and_then(|out| {
                let f = out
                    .open()
                    .map_err(|e| format!("{}: {e}", out.writing().display()))?;
                let name = self.path.display().to_string();
                let w = PcapWriter::new(BufWriter::new(f), &name, self.opts)
                    .map_err(|e| e.to_string())?;
                Ok((out, w))
            });
            match opened {
                Ok((out, w)) => {
                    self.out = Some(out);
                    self.writer = Some(w);
                }
                Err(e) => self.error = Some(e),
            }
        }
    }
}

impl Element for ToDump {
    fn ports(&self) -> Ports {
        Ports::agnostic(1, 0)
    }
    fn role(&self) -> Role {
        Role::Sink
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        let incl = p.len().min(self.opts.snaplen as usize);
        cx.instr(20 + incl as u32 / 4);
        cx.read_meta(12);
        cx.read_pkt(incl as u32);
        self.open();
        if let Some(w) = self.writer.as_mut() {
            self.rec.timestamp_ns = p.anno.timestamp_ns;
            self.rec.orig_len = (p.len() as u32).max(p.anno.wire_len);
            self.rec.data.clear();
            self.rec.data.extend_from_slice(&p.data()[..incl]);
            if let Err(e) = w.write(&self.rec) {
                self.error = Some(e.to_string());
                self.writer = None;
            }
        }
        self.count += 1;
        cx.output(p);
    }
    fn finish(&mut self) -> Result<(), String> {
        self.open();
        self.finished = true;
        if let Some(w) = self.writer.take() {
            if let Err(e) = w.finish() {
                self.error = Some(e.to_string());
            }
        }
        if self.whole && self.error.is_none() {
            // the header's snap length, patched in the file being written (a device or FIFO
            // written directly cannot seek back: its header keeps the writer's own value)
            if let Some(out) = self.out.as_ref().filter(|o| !o.is_direct()) {
                if let Err(e) = mark_whole_packets(out.writing()) {
                    self.error = Some(format!("{}: {e}", self.path.display()));
                }
            }
        }
        if self.error.is_none() {
            if let Some(out) = self.out.as_mut() {
                if let Err(e) = out.commit() {
                    self.error = Some(e);
                }
            }
        }
        match &self.error {
            Some(e) => {
                self.out = None;
                Err(e.clone())
            }
            None => Ok(()),
        }
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"count": self.count, "file": self.path.display().to_string()})
    }
    fn code_size(&self) -> u32 {
        80
    }
}
