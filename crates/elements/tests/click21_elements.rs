//! pktflow against Click 2.1's recorded output, element class by class.
//!
//! Each folder of `tests/data/click21/` holds a configuration (`conf.click`) that reads the
//! shared input trace `tests/data/click21/awkward.pcap` with FromDump and writes every output
//! port of the element under test with ToDump (`out0.pcap`, `out1.pcap`), and the files Click
//! 2.1 wrote for it. The expectations are Click 2.1's recorded output: the userlevel driver
//! (kohler/click, built with `--enable-userlevel --disable-linuxmodule`) was run as
//! `click conf.click` in each folder, and its ToDump files were copied here unchanged (data,
//! not code). The input trace is 358 seeded awkward frames (IP options including record
//! route, timestamps and source routes; bad IP, TCP and UDP checksums; truncated and padded
//! packets; bad data-offset and UDP lengths; TTL 0 and 1; DF and large packets; fragments;
//! ICMP echo and errors; ARP, non-IP and runt frames; broadcast and multicast addresses;
//! zero UDP checksums) and 21 hand-made ones (short TCP segments, malformed RR/TS pointers,
//! payloads whose UDP checksum is 0, colliding pings). Frames that Click's FromDump FORCE_IP
//! treats differently from pktflow's (802.1Q, IPv6, IPv4 headers longer than the capture)
//! are left out. See `docs/elements.md`.
//!
//! The records are compared byte for byte and in order; their timestamps are not compared
//! here (Click stamps the packets it builds, ICMP errors and echo replies, with its own clock).
mod common;
use pktflow_traffic::PcapReader;
use std::path::{Path, PathBuf};

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/click21")
}

fn records(path: &Path) -> Vec<Vec<u8>> {
    PcapReader::open(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .map(|p| p.unwrap().data)
        .collect()
}

/// Records of `file` listed in the folder's `ignore.txt` (`FILE RECORD REASON` lines): the
/// few where Click 2.1 reads or writes past the end of the packet data, so that its bytes
/// are whatever followed the packet in its buffer (documented in `docs/elements.md`).
fn ignored(dir: &Path, file: &str) -> Vec<usize> {
    let Ok(text) = std::fs::read_to_string(dir.join("ignore.txt")) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some(file)).then(|| w.next().unwrap().parse().unwrap())
        })
        .collect()
}

/// Run `tests/data/click21/NAME/conf.click` and compare each output file with Click's.
fn matches_click(name: &str) {
    let dir = data().join(name);
    let out = std::env::temp_dir().join(format!("pktflow-click21-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    let mut r = common::router_of_file(&dir.join("conf.click"), &dir, &out);
    while r.generate_next().is_some() {}
    r.finish().unwrap();
    let mut compared = 0;
    for k in 0..4 {
        let file = format!("out{k}.pcap");
        let want_path = dir.join(&file);
        if !want_path.exists() {
            continue;
        }
        let want = records(&want_path);
        let got = records(&out.join(&file));
        let ignored = ignored(&dir, &file);
        let differ: Vec<usize> = (0..want.len().min(got.len()))
            .filter(|&i| want[i] != got[i] && !ignored.contains(&i))
            .collect();
        if let Some(&i) = differ.first() {
            let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
            panic!(
                "{name}/{file}: {} of {} records differ from Click 2.1's; first, record {i}:\n click   {}\n pktflow {}",
                differ.len(),
                want.len(),
                hex(&want[i]),
                hex(&got[i])
            );
        }
        assert_eq!(
            got.len(),
            want.len(),
            "{name}/{file}: Click 2.1 wrote {} records, pktflow {}",
            want.len(),
            got.len()
        );
        compared += 1;
    }
    assert!(compared > 0, "{name}: no recorded output");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn iprewriter_seq_matches_click() {
    matches_click("iprewriter_seq");
}

#[test]
fn iprewriter_keep_matches_click() {
    matches_click("iprewriter_keep");
}

#[test]
fn iprewriter_fixed_matches_click() {
    matches_click("iprewriter_fixed");
}

#[test]
fn ipaddrrewriter_fixed_matches_click() {
    matches_click("ipaddrrewriter_fixed");
}

#[test]
fn ipaddrrewriter_range_matches_click() {
    matches_click("ipaddrrewriter_range");
}

#[test]
fn icmperror_timeexceeded_matches_click() {
    matches_click("icmperror_timeexceeded");
}

#[test]
fn icmperror_needfrag_matches_click() {
    matches_click("icmperror_needfrag");
}

#[test]
fn icmperror_unchecked_matches_click() {
    matches_click("icmperror_unchecked");
}

#[test]
fn icmperror_paramprob_matches_click() {
    matches_click("icmperror_paramprob");
}

#[test]
fn ipgwoptions_matches_click() {
    matches_click("ipgwoptions");
}

#[test]
fn checktcpheader_matches_click() {
    matches_click("checktcpheader");
}

#[test]
fn checktcpheader_unchecked_matches_click() {
    matches_click("checktcpheader_unchecked");
}

#[test]
fn checkudpheader_matches_click() {
    matches_click("checkudpheader");
}

#[test]
fn checkudpheader_unchecked_matches_click() {
    matches_click("checkudpheader_unchecked");
}

#[test]
fn settcpchecksum_matches_click() {
    matches_click("settcpchecksum");
}

#[test]
fn settcpchecksum_fixoff_matches_click() {
    matches_click("settcpchecksum_fixoff");
}

#[test]
fn setudpchecksum_matches_click() {
    matches_click("setudpchecksum");
}

#[test]
fn ipmirror_matches_click() {
    matches_click("ipmirror");
}

#[test]
fn udpipencap_matches_click() {
    matches_click("udpipencap");
}

#[test]
fn icmppingresponder_matches_click() {
    matches_click("icmppingresponder");
}

#[test]
fn icmppingresponder_checked_matches_click() {
    matches_click("icmppingresponder_checked");
}

#[test]
fn icmppingrewriter_matches_click() {
    matches_click("icmppingrewriter");
}

#[test]
fn icmppingrewriter_seq_matches_click() {
    matches_click("icmppingrewriter_seq");
}

#[test]
fn hostetherfilter_matches_click() {
    matches_click("hostetherfilter");
}

#[test]
fn arpresponder_matches_click() {
    matches_click("arpresponder");
}

#[test]
fn storeipaddress_matches_click() {
    matches_click("storeipaddress");
}
