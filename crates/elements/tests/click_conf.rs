//! Click's own example configurations (copied unchanged from Click's `conf/` directory into
//! `tests/data/click-conf/`) parse, validate and run: their own sources for a few packets,
//! device inputs with a few hand-built frames.
mod common;
use pktflow_elements::{Router, RouterOptions};
use pktflow_traffic::Packet;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/click-conf")
}

/// The Click files of `tests/data/click-conf/` that pktflow runs as written.
pub const PASSING: &[&str] = &[
    "fake-iprouter.click",
    "mazu-nat.click",
    "fastudpsrc.click",
    "print-pings.click",
    "test-device.click",
    "test.click",
    "test2.click",
    "test3.click",
    "udpcount.click",
    "udpgen.click",
];

fn load(name: &str) -> Router {
    let out_dir = std::env::temp_dir().join(format!("pktflow-click-conf-{}", std::process::id()));
    std::fs::create_dir_all(&out_dir).unwrap();
    common::router_of_file(&dir().join(name), &dir(), &out_dir)
}

/// An Ethernet/IPv4/ICMP echo request (checksums computed by hand in the comments).
fn ping_frame() -> Vec<u8> {
    let mut f = vec![
        0x00, 0x00, 0xc0, 0xae, 0x67, 0xef, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x08, 0x00,
    ];
    // IP: 45 00 001c 0001 0000 40 01 cksum 0a000002 0a000001
    // sum = 4500+001c+0001+0000+4001+0a00+0002+0a00+0001 = 0x8F23 -> cksum = ~0x8F23 = 0x70dc
    f.extend_from_slice(&[
        0x45, 0x00, 0x00, 0x1c, 0x00, 0x01, 0x00, 0x00, 0x40, 0x01, 0x70, 0xdc, 10, 0, 0, 2, 10, 0,
        0, 1,
    ]);
    // ICMP echo: 08 00 cksum 0000 0000 -> ~0x0800 = 0xf7ff
    f.extend_from_slice(&[0x08, 0x00, 0xf7, 0xff, 0, 0, 0, 0]);
    f
}

#[test]
fn every_listed_configuration_runs() {
    for name in PASSING {
        let mut r = load(name);
        let mut n = 0;
        while n < 50 && r.generate_next().is_some() {
            n += 1;
        }
        for i in 0..r.n_sources() {
            r.inject(i, Packet::from_bytes(&ping_frame())).unwrap();
            n += 1;
        }
        assert!(n > 0, "{name}: no packet ran");
        r.finish().unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(r.conservation_errors, 0, "{name}");
    }
}

/// Click 2.1 refuses `urewrite.click` too: an IPRewriter input spec must start with a keyword
/// (`pattern`, `keep`, `drop`, `nochange`, `pass`) or name a mapper element; the bare
/// `7.0.0.2 - 8.0.0.2 -` form is from older Click versions.
#[test]
fn urewrite_is_refused_like_click_does() {
    let p = dir().join("urewrite.click");
    let out = pktflow_click::parse_file(&p).unwrap();
    let err = Router::new(out.graph, &RouterOptions::default())
        .err()
        .expect("refused");
    assert!(err[0].message.contains("input spec"), "{}", err[0].message);
}

/// BandwidthShaper between a Queue and a sink: at 1000 B/s, 100-byte packets arriving every
/// 10 ms (10,000 B/s offered) leave one per 100 ms; the rest wait in the queue.
#[test]
fn bandwidth_shaper_limits_the_rate_in_simulated_time() {
    let conf = "RatedSource(DATA \\<00>, DATASIZE 100, RATE 100, LIMIT 50) -> q :: Queue(1000) -> s :: BandwidthShaper(1000) -> c :: Counter -> Discard;";
    let out = pktflow_click::parse_str(conf, "shaper.click").unwrap();
    let mut r = Router::new(out.graph, &RouterOptions::default()).unwrap();
    while r.generate_next().is_some() {}
    // Packets at 0, 10, ..., 490 ms: the shaper is free at 0, 100, 200, 300, 400 ms.
    assert_eq!(r.read_handler("c.count").unwrap(), "5");
    assert_eq!(r.read_handler("q.length").unwrap(), "45");
    r.finish().unwrap();
}

/// A badly configured element gives one error, not a cascade of "not connected" errors for
/// its neighbours.
#[test]
fn one_error_per_bad_element() {
    let out = pktflow_click::parse_str(
        "InfiniteSource(LIMIT 1) -> RED(100, 10, 2) -> Queue -> Discard;",
        "bad.click",
    )
    .unwrap();
    let errs = Router::new(out.graph, &RouterOptions::default())
        .err()
        .unwrap();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].message.contains("RED"));
}

/// A connection from an output port the element does not have, to an input port it does not
/// have, or from an output already connected is one error: the element at its other end is
/// not also reported as unconnected (the fuzz test of numeric arguments found `m[2] ->
/// Discard` on a one-rate Meter giving two lines).
#[test]
fn one_error_per_bad_connection() {
    for conf in [
        "InfiniteSource(LIMIT 1) -> m :: Meter(1) -> Discard; m[1] -> Discard; m[2] -> Discard;",
        "InfiniteSource(LIMIT 1) -> t :: Tee(1); Idle -> [1]t; t -> Discard;",
        "InfiniteSource(LIMIT 1) -> Discard; s :: InfiniteSource(LIMIT 1) -> Discard; s -> Discard;",
    ] {
        let out = pktflow_click::parse_str(conf, "bad.click").unwrap();
        let errs = Router::new(out.graph, &RouterOptions::default())
            .err()
            .unwrap_or_else(|| panic!("{conf}: accepted"));
        assert_eq!(errs.len(), 1, "{conf}: {errs:?}");
    }
}

/// LinkUnqueue: 1000-byte packets every 1 ms into a 500,000 B/s link (2 ms per packet) with
/// 5 ms latency: every other packet finds the link free; each arrives 2 ms + 5 ms after it was
/// taken.
#[test]
fn link_unqueue_stamps_arrival_times() {
    let dir = std::env::temp_dir().join(format!("pktflow-link-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let conf = "RatedSource(DATA \\<00>, DATASIZE 1000, RATE 1000, LIMIT 6) -> q :: Queue -> LinkUnqueue(5ms, 500000) -> ToDump(link.pcap, NANO true);";
    let out = pktflow_click::parse_str(conf, "link.click").unwrap();
    let mut r = Router::new(
        out.graph,
        &RouterOptions {
            base_dir: dir.clone(),
            out_dir: dir.clone(),
        },
    )
    .unwrap();
    while r.generate_next().is_some() {}
    r.finish().unwrap();
    let ts: Vec<u64> = pktflow_traffic::PcapReader::open(dir.join("link.pcap"))
        .unwrap()
        .map(|p| p.unwrap().timestamp_ns)
        .collect();
    // The link takes a packet at 0, 2 and 4 ms (the packets arriving at 1, 3 and 5 ms find it
    // busy; the queue is FIFO, so the three taken are the first three), 2 ms each, + 5 ms.
    assert_eq!(ts, vec![7_000_000, 9_000_000, 11_000_000]);
    assert_eq!(r.read_handler("q.length").unwrap(), "3");
}

/// ScheduleInfo and StaticThreadSched are accepted; the thread hints are kept for the mappers.
#[test]
fn thread_hints_are_kept() {
    let conf = "src :: InfiniteSource(LIMIT 1) -> q :: Queue -> d :: Discard; ScheduleInfo(src .1, d 1); StaticThreadSched(src 0, d 1);";
    let out = pktflow_click::parse_str(conf, "sched.click").unwrap();
    let r = Router::new(out.graph, &RouterOptions::default()).unwrap();
    assert_eq!(
        r.thread_hints(),
        vec![("src".to_string(), 0), ("d".to_string(), 1)]
    );
}

/// Several routers of one graph, each running some of its sources (`keep_tasks`, `pktflow run
/// --threads N`), and their scripts run once against all of them (`run_scripts_across`): the
/// first phase before any packet, the rest at the end, each element's handlers those of the
/// router that ran it; routers built with `new_deferred` run no script themselves.
#[test]
fn scripts_run_once_across_routers() {
    let conf = "a :: InfiniteSource(LIMIT 3) -> c :: Counter -> Discard;
                b :: InfiniteSource(LIMIT 2) -> d :: Counter -> Discard;
                dm :: DriverManager(print \"before $(c.count) $(d.count)\", wait, print \"after $(c.count) $(d.count)\", stop);";
    let g = pktflow_click::parse_str(conf, "across.click")
        .unwrap()
        .graph;
    let names: Vec<&str> = g.elements.iter().map(|e| e.name.as_str()).collect();
    let idx = |n: &str| names.iter().position(|x| *x == n).unwrap();
    let mut routers: Vec<Router> = (0..2)
        .map(|_| {
            Router::new_deferred(g.clone(), &RouterOptions::default(), Default::default()).unwrap()
        })
        .collect();
    // Router 0 runs a and c (and the script), router 1 b and d.
    let mut owner = vec![0usize; names.len()];
    owner[idx("b")] = 1;
    owner[idx("d")] = 1;
    for (k, r) in routers.iter_mut().enumerate() {
        let tasks: Vec<bool> = owner.iter().map(|&o| o == k).collect();
        r.keep_tasks(&tasks);
    }
    {
        let mut rs: Vec<&mut Router> = routers.iter_mut().collect();
        assert!(!pktflow_elements::run_scripts_across(&mut rs, &owner, false).unwrap());
    }
    let made: Vec<u64> = routers
        .iter_mut()
        .map(|r| r.run_generators(100, |_| {}))
        .collect();
    assert_eq!(made, vec![3, 2]);
    for r in routers.iter_mut() {
        r.finish().unwrap(); // runs no script: the deferred routers leave them
    }
    let mut rs: Vec<&mut Router> = routers.iter_mut().collect();
    assert!(pktflow_elements::run_scripts_across(&mut rs, &owner, true).unwrap());
    assert_eq!(
        routers[0].stats()["dm"]["output"],
        serde_json::json!(["before 0 0", "after 3 2"])
    );
    assert_eq!(routers[1].stats()["dm"]["output"], serde_json::json!([]));
}

/// An Ethernet/IPv4/TCP frame (checksums computed over the finished headers).
fn tcp_frame(
    src: ([u8; 4], u16),
    dst: ([u8; 4], u16),
    seq: u32,
    flags: u8,
    payload: &[u8],
) -> Vec<u8> {
    use pktflow_traffic::checksum::{ip_checksum, l4_checksum};
    let mut ip = vec![0u8; 40];
    ip[0] = 0x45;
    ip[2..4].copy_from_slice(&((40 + payload.len()) as u16).to_be_bytes());
    ip[8] = 64;
    ip[9] = 6;
    ip[12..16].copy_from_slice(&src.0);
    ip[16..20].copy_from_slice(&dst.0);
    let s = ip_checksum(&ip[..20]);
    ip[10..12].copy_from_slice(&s.to_be_bytes());
    ip[20..22].copy_from_slice(&src.1.to_be_bytes());
    ip[22..24].copy_from_slice(&dst.1.to_be_bytes());
    ip[24..28].copy_from_slice(&seq.to_be_bytes());
    ip[32] = 0x50;
    ip[33] = flags;
    ip.extend_from_slice(payload);
    let c = l4_checksum(src.0, dst.0, 6, &ip[20..]);
    ip[36..38].copy_from_slice(&c.to_be_bytes());
    let mut f = vec![
        0x00, 0x50, 0xba, 0x85, 0x84, 0xa9, 0x02, 0, 0, 0, 0, 5, 0x08, 0x00,
    ];
    f.extend_from_slice(&ip);
    f
}

/// mazu-nat.click with an inside host's active FTP session: the SYN to port 21 creates the
/// control mapping in tcp_rw, the PORT command is rewritten to the gateway's outside address
/// and a port of to_world_pat, and the data mapping appears in rw.
#[test]
fn mazu_nat_rewrites_an_ftp_port_command() {
    use pktflow_traffic::checksum::{ip_checksum, l4_checksum_ok};
    let mut r = load("mazu-nat.click");
    r.set_tap(true);
    let intern = (0..r.n_sources())
        .find(|&i| {
            r.inject(
                i,
                Packet::from_bytes(&tcp_frame(
                    ([10, 0, 0, 5], 4000),
                    ([1, 2, 3, 4], 21),
                    100,
                    0x02,
                    b"",
                )),
            )
            .is_ok()
                && r.read_handler("tcp_rw.table_size").as_deref() == Ok("1")
        })
        .expect("the inside device");
    let cmd = b"PORT 10,0,0,5,4,1\r\n";
    r.inject(
        intern,
        Packet::from_bytes(&tcp_frame(
            ([10, 0, 0, 5], 4000),
            ([1, 2, 3, 4], 21),
            101,
            0x18,
            cmd,
        )),
    )
    .unwrap();
    assert_eq!(r.read_handler("rw.table_size").unwrap(), "1");
    let out: Vec<Vec<u8>> = r.take_departed().map(|(_, p)| p.data().to_vec()).collect();
    let port = out
        .iter()
        .find(|f| f.len() > 54 && &f[54..59] == b"PORT " && f[26..30] == [209, 6, 198, 213])
        .expect("the rewritten PORT packet left the gateway (the inside copies keep 10.0.0.5)");
    let ip = &port[14..];
    assert_eq!(ip_checksum(&ip[..20]), 0);
    assert_eq!(u16::from_be_bytes([ip[2], ip[3]]) as usize, ip.len());
    assert_eq!(&ip[12..16], &[209, 6, 198, 213]);
    assert!(l4_checksum_ok(
        [209, 6, 198, 213],
        [1, 2, 3, 4],
        6,
        &ip[20..]
    ));
    let text = std::str::from_utf8(&ip[45..]).unwrap();
    let nums: Vec<u32> = text
        .trim_end()
        .split(',')
        .map(|x| x.parse().unwrap())
        .collect();
    assert_eq!(&nums[..4], &[209, 6, 198, 213]);
    assert!(
        (50000..=65535).contains(&(nums[4] * 256 + nums[5])),
        "{text}"
    );
    r.finish().unwrap();
    assert_eq!(r.conservation_errors, 0);
}
