//! Packet sources of a functional run: input-interface rules for trace files, truncated
//! captures, link types, empty and zero-sized sources, the configuration's own sources, counts
//! of generated packets, and synthetic trace writing (size check, atomic file).
use pktflow_profile::run::{
    profile, write_synthetic, write_synthetic_with, InputPort, Source, WriteOptions,
    MAX_SYNTHETIC_PACKETS,
};
use pktflow_traffic::{PcapOptions, PcapReader, PcapWriter, TracePacket};
use serde_json::Value;
use std::path::{Path, PathBuf};

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pktflow-src-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn prof(app: &str, source: &Source, out: &Path) -> Result<Value, String> {
    profile(app, source, out, |_| {})
}

fn pcap(path: &Path, rule: InputPort) -> Source {
    Source::Pcap {
        path: path.to_str().unwrap().into(),
        input_port: rule,
    }
}

fn instr(p: &Value) -> f64 {
    p["instructions_per_packet"]["mean"].as_f64().unwrap()
}

fn drops(p: &Value) -> u64 {
    p["drops"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["count"].as_u64().unwrap())
        .sum()
}

#[test]
fn classic_pcap_and_pcapng_of_the_same_trace_give_the_same_profile() {
    let d = tmpdir("ports");
    let (a, b) = (d.join("t.pcap"), d.join("t.pcapng"));
    write_synthetic(a.to_str().unwrap(), 1500, 3, "router", false).unwrap();
    write_synthetic(b.to_str().unwrap(), 1500, 3, "router", true).unwrap();
    let ng = prof("router", &pcap(&b, InputPort::Auto), &d).unwrap();
    let classic = prof("router", &pcap(&a, InputPort::Auto), &d).unwrap();
    assert_eq!(ng["input_port"]["rule"], "interface-id");
    assert_eq!(classic["input_port"]["rule"], "by-dst-mac");
    assert_eq!(classic["input_port"]["unassigned"], 0);
    assert_eq!(instr(&classic), instr(&ng));
    assert_eq!(classic["drops"], ng["drops"]);
    assert_eq!(
        classic["input_port"]["per_interface"],
        ng["input_port"]["per_interface"]
    );
    // The synthetic trace uses both interfaces, so every packet entering eth0 (the old
    // behaviour for classic pcap) is a different, wrong, run.
    let eth0 = prof("router", &pcap(&a, InputPort::Fixed(0)), &d).unwrap();
    assert!(instr(&eth0) > instr(&ng) && drops(&eth0) > drops(&ng));
    let subnet = prof("router", &pcap(&a, InputPort::BySubnet), &d).unwrap();
    assert_eq!(subnet["input_port"]["rule"], "by-subnet");
    let rr = prof("router", &pcap(&a, InputPort::RoundRobin), &d).unwrap();
    assert_eq!(rr["input_port"]["rule"], "round-robin");
    let e = prof("router", &pcap(&a, InputPort::Fixed(7)), &d).unwrap_err();
    assert!(
        e.contains("--input-port 7") && e.contains("2 input interface"),
        "{e}"
    );
}

#[test]
fn input_port_spellings() {
    for (s, want) in [
        ("auto", InputPort::Auto),
        ("round-robin", InputPort::RoundRobin),
        ("by-dst-mac", InputPort::ByDstMac),
        ("by-subnet", InputPort::BySubnet),
        ("3", InputPort::Fixed(3)),
    ] {
        assert_eq!(InputPort::parse(s).unwrap(), want);
        assert_eq!(InputPort::parse(&want.name()).unwrap(), want);
    }
    for bad in ["", "-1", "70000", "eth0", "1.5"] {
        let e = InputPort::parse(bad).unwrap_err();
        assert!(e.starts_with("--input-port"), "{e}");
    }
}

/// Copy of `src` with every packet cut to `snap` bytes (orig_len kept), as tcpdump -s does.
fn truncated_copy(src: &Path, dst: &Path, snap: u32, linktype: u16) {
    let mut w = PcapWriter::create_with(
        dst,
        PcapOptions {
            linktype,
            snaplen: snap,
            ..PcapOptions::default()
        },
    )
    .unwrap();
    for p in PcapReader::open(src).unwrap() {
        w.write(&p.unwrap()).unwrap();
    }
    w.finish().unwrap();
}

#[test]
fn truncated_captures_count_wire_bytes_from_the_original_length() {
    let d = tmpdir("snap");
    let full = d.join("full.pcap");
    write_synthetic(full.to_str().unwrap(), 800, 5, "router", false).unwrap();
    let cut = d.join("cut.pcap");
    truncated_copy(&full, &cut, 60, 1);
    // One interface, no neighbours answering: every trace is one packet of the file.
    let cfg = d.join("sink.click");
    std::fs::write(&cfg, "FromDevice(eth0) -> Discard;\n").unwrap();
    let app = cfg.to_str().unwrap();
    let a = prof(app, &pcap(&full, InputPort::Fixed(0)), &d).unwrap();
    let b = prof(app, &pcap(&cut, InputPort::Fixed(0)), &d).unwrap();
    let pk: Vec<TracePacket> = PcapReader::open(&full)
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mean = pk.iter().map(|p| p.data.len() as f64).sum::<f64>() / pk.len() as f64;
    assert!((a["wire_bytes_per_packet"].as_f64().unwrap() - mean).abs() < 1e-9);
    assert_eq!(a["truncated_packets"], 0);
    let long = PcapReader::open(&full)
        .unwrap()
        .filter(|p| p.as_ref().unwrap().data.len() > 60)
        .count() as u64;
    assert!(long > 0);
    assert_eq!(b["truncated_packets"], long);
    assert_eq!(a["wire_bytes_per_packet"], b["wire_bytes_per_packet"]);
    assert!(b["notes"].to_string().contains("truncated"));
}

#[test]
fn non_ethernet_link_types_are_refused_naming_file_and_type() {
    let d = tmpdir("lt");
    let full = d.join("full.pcap");
    write_synthetic(full.to_str().unwrap(), 10, 5, "router", false).unwrap();
    for lt in [101u16, 113, 0] {
        let f = d.join(format!("lt{lt}.pcap"));
        truncated_copy(&full, &f, 65535, lt);
        let e = prof("router", &pcap(&f, InputPort::Auto), &d).unwrap_err();
        assert!(e.contains(f.to_str().unwrap()), "{e}");
        assert!(e.contains(&format!("link type {lt} (")), "{e}");
        assert_eq!(e.lines().count(), 1, "{e}");
    }
}

#[test]
fn zero_and_huge_counts_are_refused_and_empty_traces_measure_nothing() {
    let d = tmpdir("zero");
    for n in [0, MAX_SYNTHETIC_PACKETS + 1, u64::MAX] {
        let e = prof(
            "router",
            &Source::Synthetic {
                packets: n,
                seed: 1,
            },
            &d,
        )
        .unwrap_err();
        assert!(e.starts_with("--synthetic"), "{e}");
        let f = d.join("x.pcap");
        let e = write_synthetic(f.to_str().unwrap(), n, 1, "router", false).unwrap_err();
        assert!(e.starts_with("-n/--packets"), "{e}");
        assert!(!f.exists());
    }
    let empty = d.join("empty.pcap");
    PcapWriter::create(&empty, 1).unwrap().finish().unwrap();
    let p = prof("router", &pcap(&empty, InputPort::Auto), &d).unwrap();
    assert_eq!(p["packets"], 0);
    assert!(p["packets_per_second_functional"].is_null());
    assert!(p["instructions_per_packet"].is_null());
    assert!(p["notes"].to_string().contains("no packets"));
}

#[test]
fn generated_packets_are_counted_apart_from_the_users() {
    let d = tmpdir("counts");
    for app in ["router", "nat"] {
        let p = prof(
            app,
            &Source::Synthetic {
                packets: 500,
                seed: 2,
            },
            &d,
        )
        .unwrap();
        let c = &p["packet_counts"];
        let total = c["total"].as_u64().unwrap();
        assert_eq!(c["from_source"], 500);
        assert_eq!(
            total,
            500 + c["neighbor_arp_replies"].as_u64().unwrap()
                + c["far_end_ip_replies"].as_u64().unwrap()
        );
        assert_eq!(p["packets"], total);
        assert!(total > 500, "{app}: neighbours or far ends answer");
    }
}

#[test]
fn a_configuration_with_its_own_source_runs_as_written() {
    let d = tmpdir("own");
    let trace = d.join("in.pcap");
    write_synthetic(trace.to_str().unwrap(), 40, 9, "router", false).unwrap();
    let cfg = d.join("dump.click");
    std::fs::write(
        &cfg,
        "FromDump(in.pcap) -> c :: Counter -> ToDump(out.pcap);\n",
    )
    .unwrap();
    let out = tmpdir("own-out");
    let app = cfg.to_str().unwrap();
    let p = prof(app, &Source::Auto { seed: 1 }, &out).unwrap();
    assert_eq!(p["packets"], 40);
    assert_eq!(p["packet_counts"]["from_source"], 40);
    assert!(p["source"].as_str().unwrap().contains("own sources"));
    let back: Vec<TracePacket> = PcapReader::open(out.join("out.pcap"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(back.len(), 40);
    for s in [
        pcap(&trace, InputPort::Auto),
        Source::Synthetic {
            packets: 5,
            seed: 1,
        },
    ] {
        let e = prof(app, &s, &out).unwrap_err();
        assert!(
            e.contains("reads its own packets") && e.contains("FromDump"),
            "{e}"
        );
    }
}

#[test]
fn gen_trace_refuses_what_does_not_fit_and_leaves_no_partial_file() {
    let d = tmpdir("space");
    let f = d.join("big.pcap");
    let e = write_synthetic_with(
        f.to_str().unwrap(),
        1_000_000,
        1,
        "router",
        false,
        WriteOptions {
            free_space: &|_| Some(1_000_000),
            tick: &mut |_, _| {},
        },
    )
    .unwrap_err();
    assert!(e.contains("need about") && e.contains("1.0 MB free"), "{e}");
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
    // The estimate is close to the real size.
    let mut ticks = 0;
    let s = write_synthetic_with(
        f.to_str().unwrap(),
        20_000,
        1,
        "router",
        true,
        WriteOptions {
            free_space: &|_| None,
            tick: &mut |done, total| {
                assert!(done <= total);
                ticks += 1
            },
        },
    )
    .unwrap();
    assert_eq!(ticks, 2);
    let real = std::fs::metadata(&f).unwrap().len() as f64;
    let est = s["estimated_file_bytes"].as_f64().unwrap();
    assert!(
        (est - real).abs() / real < 0.1,
        "estimate {est}, real {real}"
    );
    let names: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("big.pcap")]);
}

#[test]
fn classic_pcap_default_rule_for_one_interface_or_no_addresses() {
    let d = tmpdir("noaddr");
    let t = d.join("t.pcap");
    write_synthetic(t.to_str().unwrap(), 50, 1, "router", false).unwrap();
    let one = d.join("one.click");
    std::fs::write(&one, "FromDevice(eth0) -> Discard;\n").unwrap();
    let p = prof(one.to_str().unwrap(), &pcap(&t, InputPort::Auto), &d).unwrap();
    assert_eq!(p["input_port"]["rule"], "0");
    assert!(
        p["input_port"].get("warning").is_none(),
        "one interface: nothing to choose"
    );
    let two = d.join("two.click");
    std::fs::write(
        &two,
        "FromDevice(eth0) -> Discard; FromDevice(eth1) -> Discard;\n",
    )
    .unwrap();
    let p = prof(two.to_str().unwrap(), &pcap(&t, InputPort::Auto), &d).unwrap();
    assert_eq!(p["input_port"]["rule"], "0");
    assert!(p["input_port"]["warning"]
        .as_str()
        .unwrap()
        .contains("no interface addresses"));
    let e = prof(two.to_str().unwrap(), &pcap(&t, InputPort::ByDstMac), &d).unwrap_err();
    assert!(e.contains("states no interface addresses"), "{e}");
    let p = prof("router", &pcap(&t, InputPort::Auto), &d).unwrap();
    assert!(p["input_port"]["warning"]
        .as_str()
        .unwrap()
        .contains("destination MAC"));
}

/// A router of one's own that names its interfaces through AddressInfo (`ARPQuerier(lan)`)
/// once looked as if it stated no interface address: `--input-port by-dst-mac` was refused,
/// every packet of a classic pcap entered interface 0, and `gen-trace --app` wrote a
/// one-interface trace. The same router with literal addresses is the reference.
#[test]
fn addressinfo_names_are_interface_addresses() {
    let d = tmpdir("addrinfo");
    // ARPQuerier takes `IP, ETH`, ARPResponder `IP ETH`; a name stands for both
    let body = |lan: &str, wan: &str| {
        let resp = |x: &str| x.replace(", ", " ");
        format!(
            "fd0 :: FromDevice(eth0); fd1 :: FromDevice(eth1);
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
fd0 -> c0; fd1 -> c1;
out0 :: Queue(200) -> ToDevice(eth0); out1 :: Queue(200) -> ToDevice(eth1);
arpq0 :: ARPQuerier({lan}); arpq1 :: ARPQuerier({wan});
c0[0] -> ARPResponder({rlan}) -> out0; c1[0] -> ARPResponder({rwan}) -> out1;
c0[1] -> [1]arpq0; c1[1] -> [1]arpq1; arpq0 -> out0; arpq1 -> out1;
rt :: StaticIPLookup(10.0.0.0/24 0, 192.168.1.0/24 1);
c0[2] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;
c1[2] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;
rt[0] -> DecIPTTL -> [0]arpq0; rt[1] -> DecIPTTL -> [0]arpq1;
c0[3] -> Discard; c1[3] -> Discard;
",
            rlan = resp(lan),
            rwan = resp(wan)
        )
    };
    let named = d.join("named.click");
    std::fs::write(
        &named,
        "AddressInfo(lan 10.0.0.1/24 00:00:c0:ae:67:ef, wan 192.168.1.1/24 00:00:c0:4f:71:ef);\n"
            .to_string()
            + &body("lan", "wan"),
    )
    .unwrap();
    let literal = d.join("literal.click");
    std::fs::write(
        &literal,
        body(
            "10.0.0.1, 00:00:c0:ae:67:ef",
            "192.168.1.1, 00:00:c0:4f:71:ef",
        ),
    )
    .unwrap();
    let (tn, tl) = (d.join("named.pcap"), d.join("literal.pcap"));
    write_synthetic(tn.to_str().unwrap(), 300, 5, named.to_str().unwrap(), false).unwrap();
    write_synthetic(
        tl.to_str().unwrap(),
        300,
        5,
        literal.to_str().unwrap(),
        false,
    )
    .unwrap();
    assert_eq!(
        std::fs::read(&tn).unwrap(),
        std::fs::read(&tl).unwrap(),
        "gen-trace --app: the same trace whether the addresses are named or literal"
    );
    let pn = prof(named.to_str().unwrap(), &pcap(&tn, InputPort::ByDstMac), &d).unwrap();
    let pl = prof(
        literal.to_str().unwrap(),
        &pcap(&tl, InputPort::ByDstMac),
        &d,
    )
    .unwrap();
    assert_eq!(pn["input_port"]["unassigned"], 0);
    assert_eq!(
        pn["input_port"]["per_interface"],
        pl["input_port"]["per_interface"]
    );
    let per: Vec<u64> = pn["input_port"]["per_interface"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap_or(0))
        .collect();
    assert!(per.len() == 2 && per.iter().all(|&n| n > 0), "{per:?}");
}
