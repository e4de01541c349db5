//! A configuration written as a Click user writes it (`apps/capture-filter.click`): FromDump
//! reads its own capture, AddressInfo names the server, ToDump writes the kept packets,
//! DriverManager prints counters and stops. The expected output is derived from the packets
//! built here, not from a previous run.
mod common;
mod nat_common;
use nat_common::*;
use pktflow_elements::Router;
use pktflow_traffic::{PcapOptions, PcapReader, PcapWriter, TracePacket, LINKTYPE_ETHERNET};
use std::path::PathBuf;

fn frame(src: [u8; 4], dst: [u8; 4], k: u8) -> Vec<u8> {
    let mut f = vec![
        0, 0x50, 0xba, 0x85, 0x84, 0xa9, 2, 0, 0, 0, 0, k, 0x08, 0x00,
    ];
    f.extend(ip_packet(UDP, src, dst, 1000 + k as u16, 53, &[k; 6], 0));
    f
}

/// Write `frames` as an Ethernet pcap, one per millisecond from time 0.
fn write_trace(path: &std::path::Path, frames: impl IntoIterator<Item = Vec<u8>>) {
    let mut w = PcapWriter::create_with(
        path,
        PcapOptions {
            linktype: LINKTYPE_ETHERNET,
            ..Default::default()
        },
    )
    .unwrap();
    for (i, f) in frames.into_iter().enumerate() {
        w.write(&TracePacket {
            timestamp_ns: i as u64 * 1_000_000,
            iface: 0,
            orig_len: f.len() as u32,
            data: f,
        })
        .unwrap();
    }
    w.finish().unwrap();
}

/// What the configuration's DriverManager printed.
fn driver_manager_lines(r: &Router) -> Vec<String> {
    let stats = r.stats();
    let (_, dm) = stats
        .as_object()
        .unwrap()
        .iter()
        .find(|(k, _)| k.starts_with("DriverManager"))
        .expect("the DriverManager's statistics");
    dm["output"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn capture_filter_runs_as_written() {
    let dir = std::env::temp_dir().join(format!("pktflow-click-user-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../apps/capture-filter.click");
    std::fs::copy(&conf, dir.join("capture-filter.click")).unwrap();
    let server = [10, 0, 0, 10];
    let frames = [
        frame([10, 0, 0, 1], server, 1),        // kept (to the server)
        frame([10, 0, 0, 2], [10, 0, 0, 3], 2), // not kept
        frame(server, [192, 168, 1, 1], 3),     // kept (from the server)
        {
            let mut arp = vec![0xff; 6];
            arp.extend_from_slice(&[2, 0, 0, 0, 0, 4, 0x08, 0x06]);
            arp.extend_from_slice(&[0; 28]);
            arp
        }, // not IPv4
    ];
    write_trace(&dir.join("capture.pcap"), frames.iter().cloned());

    let mut r = common::router_of_file(&dir.join("capture-filter.click"), &dir, &dir);
    let mut n = 0;
    while r.generate_next().is_some() {
        n += 1;
    }
    assert_eq!(n, 4);
    r.finish().unwrap();
    assert_eq!(r.conservation_errors, 0);
    let kept: Vec<TracePacket> = PcapReader::open(dir.join("server.pcap"))
        .unwrap()
        .map(|p| p.unwrap())
        .collect();
    assert_eq!(kept.len(), 2);
    assert_eq!(
        kept[0].data, frames[0],
        "kept packets are written unchanged"
    );
    assert_eq!(kept[1].data, frames[2]);
    assert_eq!(kept[1].timestamp_ns, 2_000_000);
    // Each kept frame: 14 + 20 + 8 + 6 = 48 bytes.
    let lines = driver_manager_lines(&r);
    assert_eq!(lines, vec!["read 4 kept 2", "kept.byte_count:", "96"]);
}

/// Issue 29: a DriverManager that times its own run with `set`, `$(now)` and arithmetic, as
/// Click users write it, through the configuration parser (which must leave `$t0`/`$t1` to
/// the script) and the router. Click 2.1 prints one line of the form `rate 8065969.23076`
/// (or `rate 8192000`) for this configuration over 1000 packets; pktflow's must have the
/// same form.
#[test]
fn driver_manager_computes_its_own_rate() {
    let dir = std::env::temp_dir().join(format!("pktflow-click-rate-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    write_trace(
        &dir.join("trace.pcap"),
        (0..1000u32).map(|k| frame([10, 0, 0, 1], [10, 0, 0, 2], k as u8)),
    );
    std::fs::write(
        dir.join("rate.click"),
        "FromDump(trace.pcap, STOP true) -> c :: Counter -> Discard;\n\
         DriverManager(set t0 $(now), wait_stop, set t1 $(now),\n\
         \x20             print \"rate $(div $(c.count) $(sub $t1 $t0))\", stop)\n",
    )
    .unwrap();
    let mut r = common::router_of_file(&dir.join("rate.click"), &dir, &dir);
    while r.generate_next().is_some() {}
    r.finish().unwrap();
    let lines = driver_manager_lines(&r);
    assert_eq!(lines.len(), 1, "{lines:?}");
    let rate = lines[0].strip_prefix("rate ").expect("a rate line");
    // `%.12g` of a positive real: digits, at most 12 significant, or inf for a zero interval.
    assert!(
        rate == "inf"
            || (rate.parse::<f64>().unwrap() > 0.0
                && rate.chars().filter(|c| c.is_ascii_digit()).count() <= 14),
        "{rate}"
    );
    std::fs::remove_dir_all(&dir).ok();
}
