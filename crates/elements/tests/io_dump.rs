//! FromDump / ToDump / InfiniteSource / RatedSource: pcap written by ToDump read back
//! byte-exact by the traffic crate's reader, timestamps, snap lengths, FORCE_IP, errors.
mod common;
mod nat_common;
use nat_common::*;
use pktflow_elements::{Router, RouterOptions};
use pktflow_traffic::{PcapOptions, PcapReader, PcapWriter, TracePacket, LINKTYPE_ETHERNET};
use std::path::{Path, PathBuf};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pktflow-io-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(g: pktflow_model::AppGraph, dir: &Path, limit: u64) -> (Router, u64) {
    let opts = RouterOptions {
        base_dir: dir.to_path_buf(),
        out_dir: dir.to_path_buf(),
    };
    let mut r = Router::new(g, &opts).unwrap_or_else(|e| {
        panic!(
            "{}",
            e.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join("\n")
        )
    });
    let n = r.run_generators(limit, |_| {});
    (r, n)
}

fn read_all(p: &Path) -> Vec<TracePacket> {
    PcapReader::open(p).unwrap().map(|r| r.unwrap()).collect()
}

#[test]
fn infinite_source_to_dump_reads_back_byte_exact() {
    let dir = tmpdir("inf");
    let g = graph(
        &[
            ("src", "InfiniteSource", "DATA \\<45 00 00 1c 00 01 00 00 40 11 00 00 0a 00 00 01 0a 00 00 02 00 35 00 35 00 08 00 00>, LIMIT 5"),
            ("d", "ToDump", "out.pcap, ENCAP IP, NANO true"),
        ],
        &[(0, 0, 1, 0)],
    );
    let (mut r, n) = run(g, &dir, 100);
    assert_eq!(n, 5, "LIMIT bounds the run");
    r.finish().unwrap();
    assert_eq!(r.conservation_errors, 0);
    let pkts = read_all(&dir.join("out.pcap"));
    assert_eq!(pkts.len(), 5);
    for p in &pkts {
        assert_eq!(p.data.len(), 28);
        assert_eq!(&p.data[..4], &[0x45, 0, 0, 0x1c]);
        assert_eq!(&p.data[20..], &[0, 0x35, 0, 0x35, 0, 8, 0, 0]);
        assert_eq!(p.timestamp_ns, 0);
    }
    let r2 = PcapReader::open(dir.join("out.pcap")).unwrap();
    assert_eq!(r2.linktype(0), Some(pktflow_traffic::LINKTYPE_RAW));
    // Unbounded (Click's default LIMIT -1): the run's limit stops it.
    let g = graph(
        &[("src", "InfiniteSource", ""), ("d", "Discard", "")],
        &[(0, 0, 1, 0)],
    );
    let (_, n) = run(g, &dir, 17);
    assert_eq!(n, 17);
}

#[test]
fn rated_source_timestamps_follow_the_rate() {
    let dir = tmpdir("rated");
    let g = graph(
        &[
            ("src", "RatedSource", "\"abc\\n\", 1000, 4"),
            ("d", "ToDump", "r.pcap, NANO true"),
        ],
        &[(0, 0, 1, 0)],
    );
    let (mut r, n) = run(g, &dir, 100);
    assert_eq!(n, 4);
    r.finish().unwrap();
    let pkts = read_all(&dir.join("r.pcap"));
    let ts: Vec<u64> = pkts.iter().map(|p| p.timestamp_ns).collect();
    assert_eq!(ts, vec![0, 1_000_000, 2_000_000, 3_000_000]);
    assert!(pkts.iter().all(|p| p.data == b"abc\n"));
}

fn frame(i: usize, len: usize) -> Vec<u8> {
    let mut v = vec![0u8; len];
    v[..6].copy_from_slice(&[0xff; 6]);
    v[6..12].copy_from_slice(&[2, 0, 0, 0, 0, i as u8]);
    if i % 5 == 4 {
        v[12] = 0x08;
        v[13] = 0x06; // ARP
    } else {
        let ip = ip_packet(
            UDP,
            [10, 0, 0, i as u8],
            [10, 0, 1, 1],
            1000 + i as u16,
            53,
            &vec![i as u8; len.saturating_sub(42)],
            0,
        );
        v[12] = 0x08;
        v[13] = 0x00;
        v.truncate(14);
        v.extend_from_slice(&ip);
    }
    v
}

fn write_input(path: &Path, n: usize) -> Vec<TracePacket> {
    let mut w = PcapWriter::create_with(
        path,
        PcapOptions {
            linktype: LINKTYPE_ETHERNET,
            ..Default::default()
        },
    )
    .unwrap();
    let mut v = Vec::new();
    for i in 0..n {
        let data = frame(i, 60 + (i * 97) % 1400);
        let tp = TracePacket {
            timestamp_ns: 1_600_000_000_000_000_000 + i as u64 * 1_234_567,
            iface: 0,
            orig_len: data.len() as u32,
            data,
        };
        w.write(&tp).unwrap();
        v.push(tp);
    }
    w.finish().unwrap();
    v
}

#[test]
fn from_dump_to_dump_round_trip_is_byte_exact() {
    let dir = tmpdir("rt");
    let input = write_input(&dir.join("in.pcap"), 25);
    let g = graph(
        &[
            ("src", "FromDump", "in.pcap, STOP true"),
            ("d", "ToDump", "out.pcap, SNAPLEN 0, NANO true"),
        ],
        &[(0, 0, 1, 0)],
    );
    let (mut r, n) = run(g, &dir, 1000);
    assert_eq!(n, 25);
    r.finish().unwrap();
    let out = read_all(&dir.join("out.pcap"));
    assert_eq!(out.len(), input.len());
    for (a, b) in input.iter().zip(&out) {
        assert_eq!(a.data, b.data, "packet bytes");
        assert_eq!(a.orig_len, b.orig_len);
        // Click's FromDump keeps each record's timestamp and ToDump writes it back.
        assert_eq!(a.timestamp_ns, b.timestamp_ns, "the record's own timestamp");
    }
    assert_eq!(r.stats()["d"]["count"], 25);
    assert_eq!(r.conservation_errors, 0);
    assert!(
        r.generators_finite(),
        "a FromDump ends with its file: no cap needed"
    );
}

/// An InfiniteSource may never end: a configuration with one is capped by `pktflow run`.
#[test]
fn a_configuration_with_an_infinite_source_is_not_finite() {
    let dir = tmpdir("finite");
    write_input(&dir.join("in.pcap"), 3);
    let g = graph(
        &[
            ("a", "FromDump", "in.pcap"),
            ("b", "InfiniteSource", "LIMIT 2"),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 2, 0), (1, 0, 2, 0)],
    );
    let (r, n) = run(g, &dir, 1000);
    assert_eq!(n, 5);
    assert!(!r.generators_finite());
}

#[test]
fn force_ip_annotations_and_snaplen() {
    let dir = tmpdir("force");
    write_input(&dir.join("in.pcap"), 10);
    // FORCE_IP skips the ARP frames (packets 4 and 9); IP packets carry the IP header
    // annotation, so an IPClassifier can look at them straight away.
    let g = graph(
        &[
            ("src", "FromDump", "FILENAME in.pcap, FORCE_IP true"),
            ("c", "IPClassifier", "udp and dst port 53, -"),
            ("d", "ToDump", "udp.pcap, SNAPLEN 100"),
            ("x", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (1, 1, 3, 0)],
    );
    let (mut r, n) = run(g, &dir, 1000);
    assert_eq!(n, 8);
    r.finish().unwrap();
    assert_eq!(r.stats()["src"]["skipped"], 2);
    let out = read_all(&dir.join("udp.pcap"));
    assert_eq!(out.len(), 8);
    for p in &out {
        assert!(p.data.len() <= 100, "SNAPLEN truncates");
        assert!(p.orig_len as usize >= p.data.len());
    }
    assert!(out.iter().any(|p| p.orig_len > 100));
    // Nanosecond timestamps by default (NANO true), as Click 2.1 built for Linux writes them.
    let fmt = PcapReader::open(dir.join("udp.pcap")).unwrap().format();
    assert_eq!(
        fmt,
        pktflow_traffic::pcap::CaptureFormat::Pcap {
            big_endian: false,
            nanosecond: true
        }
    );
}

#[test]
fn errors_name_the_file_and_offset() {
    let dir = tmpdir("err");
    let g = graph(
        &[("src", "FromDump", "missing.pcap"), ("d", "Discard", "")],
        &[(0, 0, 1, 0)],
    );
    let e = Router::new(
        g,
        &RouterOptions {
            base_dir: dir.clone(),
            out_dir: dir.clone(),
        },
    )
    .err()
    .unwrap();
    assert!(e[0].to_string().contains("missing.pcap"), "{}", e[0]);
    // A truncated file: the packets before the damage come out, then finish() reports it.
    write_input(&dir.join("t.pcap"), 5);
    let bytes = std::fs::read(dir.join("t.pcap")).unwrap();
    std::fs::write(dir.join("t.pcap"), &bytes[..bytes.len() - 10]).unwrap();
    let g = graph(
        &[("src", "FromDump", "t.pcap"), ("d", "Discard", "")],
        &[(0, 0, 1, 0)],
    );
    let (mut r, n) = run(g, &dir, 100);
    assert_eq!(n, 4);
    let e = r.finish().unwrap_err();
    assert!(e.contains("offset") && e.contains("t.pcap"), "{e}");
    // Configuration errors.
    for (cls, cfg, msg) in [
        (
            "ToDump",
            "x.pcap, ENCAP FDDI",
            "ENCAP FDDI is not supported",
        ),
        ("InfiniteSource", "\\<0>", "odd number of hex digits"),
        ("RatedSource", "x, 0", "RATE must be positive"),
        ("InfiniteSource", "x, LIMIT lots", "LIMIT"),
    ] {
        let g = if cls == "ToDump" {
            graph(
                &[("s", "InfiniteSource", ""), ("d", cls, cfg)],
                &[(0, 0, 1, 0)],
            )
        } else {
            graph(&[("s", cls, cfg), ("d", "Discard", "")], &[(0, 0, 1, 0)])
        };
        let e = Router::new(g, &RouterOptions::default()).err().unwrap();
        assert!(e[0].to_string().contains(msg), "{cls}({cfg}): {}", e[0]);
    }
    // Validation alone writes nothing: ToDump creates its file on the first packet or finish.
    let g = graph(
        &[
            ("s", "InfiniteSource", "LIMIT 0"),
            ("d", "ToDump", "never.pcap"),
        ],
        &[(0, 0, 1, 0)],
    );
    let mut r = Router::new(
        g,
        &RouterOptions {
            base_dir: dir.clone(),
            out_dir: dir.clone(),
        },
    )
    .unwrap();
    assert!(!dir.join("never.pcap").exists());
    r.finish().unwrap();
    assert_eq!(
        read_all(&dir.join("never.pcap")).len(),
        0,
        "an empty run leaves a valid empty capture"
    );
}

/// Files in `dir` (names), sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn to_dump_is_atomic_no_partial_or_half_written_file() {
    let dir = tmpdir("atomic");
    let g = || {
        graph(
            &[
                ("src", "InfiniteSource", "LIMIT 50"),
                ("d", "ToDump", "atomic.pcap"),
            ],
            &[(0, 0, 1, 0)],
        )
    };
    // A previous complete output.
    std::fs::write(dir.join("atomic.pcap"), b"previous").unwrap();
    // A run that stops before finish() (an error elsewhere, Ctrl-C): the router is dropped.
    {
        let (_r, n) = run(g(), &dir, 20);
        assert_eq!(n, 20);
        assert!(
            names_in(&dir).iter().any(|f| f.ends_with(".partial")),
            "packets go to a temporary file while running: {:?}",
            names_in(&dir)
        );
    }
    assert_eq!(names_in(&dir), vec!["atomic.pcap".to_string()]);
    assert_eq!(std::fs::read(dir.join("atomic.pcap")).unwrap(), b"previous");
    // A finished run replaces the file with the complete output.
    let (mut r, _) = run(g(), &dir, 100);
    r.finish().unwrap();
    assert_eq!(names_in(&dir), vec!["atomic.pcap".to_string()]);
    assert_eq!(read_all(&dir.join("atomic.pcap")).len(), 50);
}

/// `FromDump(in.pcap, STOP true) -> ToDump(out0.pcap)` writes the file Click 2.1 wrote, byte
/// for byte, record headers included: Click's recorded output (tests/data/click-ref, a
/// microsecond input, a nanosecond input with sub-microsecond parts, and one with records cut
/// by a snap length) is the reference.
#[test]
fn from_dump_to_dump_matches_click_byte_for_byte() {
    let refdir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/click-ref");
    for trace in ["awk1", "awk2", "snap1"] {
        let pair = refdir.join(format!("pairs/FromDump-ToDump--{trace}"));
        let dir = tmpdir(&format!("clickref-{trace}"));
        std::fs::copy(
            refdir.join(format!("traces/{trace}.pcap")),
            dir.join("in.pcap"),
        )
        .unwrap();
        std::fs::copy(pair.join("config.click"), dir.join("config.click")).unwrap();
        let mut r = common::router_of_file(&dir.join("config.click"), &dir, &dir);
        while r.generate_next().is_some() {}
        r.finish().unwrap();
        let ours = std::fs::read(dir.join("out0.pcap")).unwrap();
        let click = std::fs::read(pair.join("click/out0.pcap")).unwrap();
        assert_eq!(ours.len(), click.len(), "{trace}: file length");
        let first = ours.iter().zip(&click).position(|(a, b)| a != b);
        assert_eq!(first, None, "{trace}: first differing byte");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

fn errors(g: pktflow_model::AppGraph, dir: &Path) -> String {
    let opts = RouterOptions {
        base_dir: dir.to_path_buf(),
        out_dir: dir.to_path_buf(),
    };
    match Router::new(g, &opts) {
        Ok(_) => String::new(),
        Err(e) => e
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

#[test]
fn to_dump_onto_its_own_input_or_another_to_dump_is_refused() {
    let dir = tmpdir("collide");
    let input = dir.join("x.pcap");
    write_input(&input, 3);
    let before = std::fs::read(&input).unwrap();
    // The same file, by its name and through a symbolic link to it.
    let link = dir.join("alias.pcap");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&input, &link).unwrap();
    for out in ["x.pcap", "./x.pcap", "alias.pcap"] {
        let g = graph(
            &[("src", "FromDump", "x.pcap"), ("dst", "ToDump", out)],
            &[(0, 0, 1, 0)],
        );
        let e = errors(g, &dir);
        assert!(
            e.contains("'dst' (ToDump)") && e.contains("'src' (FromDump)") && e.contains("input"),
            "{out}: {e}"
        );
        assert_eq!(e.lines().count(), 1, "{e}");
    }
    assert_eq!(std::fs::read(&input).unwrap(), before);
    let g = graph(
        &[
            ("src", "InfiniteSource", "LIMIT 5"),
            ("t", "Tee", "2"),
            ("a", "ToDump", "same.pcap"),
            ("b", "ToDump", "./same.pcap"),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (1, 1, 3, 0)],
    );
    let e = errors(g, &dir);
    assert!(
        e.contains("'b' (ToDump)") && e.contains("'a' (ToDump)") && e.contains("one file"),
        "{e}"
    );
}

#[test]
fn to_dump_writes_through_a_symlink_and_a_fifo() {
    let dir = tmpdir("through");
    let real = dir.join("real.pcap");
    std::fs::write(&real, b"old").unwrap();
    let link = dir.join("link.pcap");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let g = graph(
        &[
            ("src", "InfiniteSource", "LIMIT 7"),
            ("d", "ToDump", "link.pcap"),
        ],
        &[(0, 0, 1, 0)],
    );
    let (mut r, _) = run(g, &dir, 100);
    r.finish().unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(read_all(&real).len(), 7);
    // A FIFO: written into, never replaced by a regular file.
    let fifo = dir.join("pipe.pcap");
    let _ = std::fs::remove_file(&fifo);
    assert!(std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let g = graph(
        &[
            ("src", "InfiniteSource", "LIMIT 4"),
            ("d", "ToDump", "pipe.pcap"),
        ],
        &[(0, 0, 1, 0)],
    );
    let (mut r, _) = run(g, &dir, 100);
    r.finish().unwrap();
    drop(r);
    let bytes = reader.join().unwrap();
    let n = PcapReader::from_reader(&bytes[..], "pipe").unwrap().count();
    assert_eq!(n, 4);
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(!names_in(&dir).iter().any(|f| f.ends_with(".partial")));
}
