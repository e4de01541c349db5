//! IPRewriter / IPAddrRewriter on hand-built packets in small graphs: both directions rewritten
//! consistently, checksums valid after rewriting (recomputed from scratch), ports allocated
//! within the range and unique among live flows, mappings expiring after their timeout (time
//! advanced through packet timestamps) and ports reusable afterwards, and the recorded
//! flow-table accesses.
mod nat_common;
use nat_common::*;
use pktflow_elements::elements::nat::flow::{OBJ_BUCKETS, OBJ_FLOWS, OBJ_PATTERN0};
use pktflow_model::{AccessKind, MemType};
use std::collections::HashSet;

const IN: [u8; 4] = [10, 0, 0, 2];
const EXT: [u8; 4] = [1, 0, 0, 1];
const SERVER: [u8; 4] = [8, 8, 8, 8];

/// in0 -> [0]rw, in1 -> [1]rw, rw[0] -> out (element 4), rw[1] -> back (element 5).
fn nat(patterns: &str, rw_config: &str) -> pktflow_elements::Router {
    router(graph(
        &[
            ("in0", "FromDevice", "eth0"),
            ("in1", "FromDevice", "eth1"),
            ("pats", "IPRewriterPatterns", patterns),
            ("rw", "IPRewriter", rw_config),
            ("out", "ToDevice", "eth1"),
            ("back", "ToDevice", "eth0"),
        ],
        &[(0, 0, 3, 0), (1, 0, 3, 1), (3, 0, 4, 0), (3, 1, 5, 0)],
    ))
}

const OUT: u32 = 4;
const BACK: u32 = 5;

#[test]
fn both_directions_are_rewritten_consistently_with_valid_checksums() {
    let mut r = nat("NAT 1.0.0.1 50000-50099 - -", "pattern NAT 0 1, drop");
    for (proto, payload) in [(UDP, &b"query"[..]), (TCP, &b"GET / HTTP/1.0\r\n"[..])] {
        let sport = 1234 + proto as u16;
        let (_, out) = send(
            &mut r,
            0,
            pkt(&ip_packet(proto, IN, SERVER, sport, 53, payload, 0x18), 0.0),
        );
        assert_eq!(out.len(), 1);
        let (e, v) = &out[0];
        assert_eq!(*e, OUT);
        let (sa, sp, da, dp) = flow(v);
        assert_eq!((sa, da, dp), (EXT, SERVER, 53));
        assert!((50000..=50099).contains(&sp), "port {sp}");
        assert!(checksums_ok(v), "outbound checksums after rewriting");
        assert_eq!(&v[v.len() - payload.len()..], payload, "payload untouched");

        // The same flow again: same mapping.
        let (_, out2) = send(
            &mut r,
            0,
            pkt(
                &ip_packet(proto, IN, SERVER, sport, 53, b"again", 0x18),
                1.0,
            ),
        );
        assert_eq!(flow(&out2[0].1), (EXT, sp, SERVER, 53));

        // The reply, arriving outside, is rewritten back to the inside host.
        let (_, back) = send(
            &mut r,
            1,
            pkt(&ip_packet(proto, SERVER, EXT, 53, sp, b"answer", 0x18), 2.0),
        );
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].0, BACK);
        assert_eq!(flow(&back[0].1), (SERVER, 53, IN, sport));
        assert!(checksums_ok(&back[0].1), "reply checksums after rewriting");
    }
    // Unsolicited outside traffic: no mapping, dropped by the 'drop' input spec.
    let (t, out) = send(
        &mut r,
        1,
        pkt(&ip_packet(UDP, SERVER, EXT, 53, 40000, b"x", 0), 3.0),
    );
    assert!(out.is_empty());
    assert_eq!(drop_reasons(&t), vec!["no mapping"]);
    // ICMP is not translated by IPRewriter.
    let (t, _) = send(
        &mut r,
        0,
        pkt(&ip_packet(ICMP, IN, SERVER, 7, 0, b"ping", 0), 3.0),
    );
    assert_eq!(drop_reasons(&t), vec!["not TCP/UDP"]);
    assert_eq!(r.stats()["rw"]["table_size"], 2);
    assert_eq!(r.conservation_errors, 0);
}

#[test]
fn udp_without_checksum_keeps_zero_and_source_port_is_preferred() {
    let mut r = nat("NAT 1.0.0.1 1024-65535 - -", "pattern NAT 0 1, drop");
    let mut v = ip_packet(UDP, IN, SERVER, 5353, 53, b"nosum", 0);
    v[26] = 0;
    v[27] = 0;
    let (_, out) = send(&mut r, 0, pkt(&v, 0.0));
    let o = &out[0].1;
    assert_eq!(be16(o, 26), 0, "a zero UDP checksum stays zero");
    assert_eq!(
        flow(o).1,
        5353,
        "the packet's own source port is preferred when free"
    );
    assert!(checksums_ok(o));
    // Another inside host with the same source port to the same server gets another port.
    let (_, out) = send(
        &mut r,
        0,
        pkt(
            &ip_packet(UDP, [10, 0, 0, 3], SERVER, 5353, 53, b"x", 0),
            0.0,
        ),
    );
    assert_ne!(flow(&out[0].1).1, 5353);
    assert!(checksums_ok(&out[0].1));
}

#[test]
fn ports_stay_in_range_unique_among_live_flows_and_run_out() {
    let mut r = nat(
        "NAT 1.0.0.1 50000-50009# - -",
        "pattern NAT 0 1, drop, UDP_TIMEOUT 30",
    );
    let mut ports = HashSet::new();
    for i in 0..10u16 {
        let src = [10, 0, (i / 3) as u8, 2 + (i % 3) as u8];
        let (_, out) = send(
            &mut r,
            0,
            pkt(
                &ip_packet(UDP, src, SERVER, 4000 + i % 2, 53, b"q", 0),
                i as f64,
            ),
        );
        let p = flow(&out[0].1).1;
        assert!((50000..=50009).contains(&p), "port {p}");
        assert!(ports.insert(p), "port {p} given to two live flows");
    }
    // Range exhausted for this destination: the 11th flow is dropped.
    let (t, out) = send(
        &mut r,
        0,
        pkt(&ip_packet(UDP, [10, 9, 9, 9], SERVER, 1, 53, b"q", 0), 10.0),
    );
    assert!(out.is_empty());
    assert_eq!(drop_reasons(&t), vec!["no free port"]);
    // A different destination may reuse ports (the reply flow ids differ).
    let (_, out) = send(
        &mut r,
        0,
        pkt(
            &ip_packet(UDP, [10, 9, 9, 9], [9, 9, 9, 9], 1, 53, b"q", 0),
            10.0,
        ),
    );
    assert!((50000..=50009).contains(&flow(&out[0].1).1));
    assert_eq!(r.stats()["rw"]["mapping_failures"], 1);

    // The first flow (created at t=0) expires at t=30: its port is free again at t=30.5,
    // while the flows created at t>=1 are still alive.
    let (t, out) = send(
        &mut r,
        0,
        pkt(&ip_packet(UDP, [10, 9, 9, 8], SERVER, 1, 53, b"q", 0), 30.5),
    );
    assert!(drop_reasons(&t).is_empty(), "{:?}", t.fates);
    assert_eq!(
        flow(&out[0].1).1,
        50000,
        "the expired mapping's port is reused"
    );
    // The old reply flow now belongs to the new mapping (not the expired one).
    let (_, back) = send(
        &mut r,
        1,
        pkt(&ip_packet(UDP, SERVER, EXT, 53, 50000, b"a", 0), 31.0),
    );
    assert_eq!(flow(&back[0].1).2, [10, 9, 9, 8]);
    assert_eq!(r.conservation_errors, 0);
}

#[test]
fn mappings_expire_after_their_timeouts() {
    let mut r = nat(
        "NAT 1.0.0.1 50000-50999 - -",
        "pattern NAT 0 1, drop, UDP_TIMEOUT 30, TCP_NODATA_TIMEOUT 60, TCP_DONE_TIMEOUT 10, TCP_TIMEOUT 3600",
    );
    let up = |r: &mut pktflow_elements::Router, proto, sport, t, flags, data: &[u8]| {
        send(
            r,
            0,
            pkt(&ip_packet(proto, IN, SERVER, sport, 80, data, flags), t),
        )
        .1[0]
            .1
            .clone()
    };
    let down = |r: &mut pktflow_elements::Router, proto, dport, t, flags, data: &[u8]| {
        let (tr, out) = send(
            r,
            1,
            pkt(&ip_packet(proto, SERVER, EXT, 80, dport, data, flags), t),
        );
        (drop_reasons(&tr), out)
    };
    // UDP: refreshed by every packet, dead 30 s after the last.
    let p = flow(&up(&mut r, UDP, 1000, 0.0, 0, b"a")).1;
    assert!(
        down(&mut r, UDP, p, 29.0, 0, b"r").0.is_empty(),
        "alive at 29 s"
    );
    assert!(
        down(&mut r, UDP, p, 58.0, 0, b"r").0.is_empty(),
        "the reply at 29 s refreshed it"
    );
    assert_eq!(
        down(&mut r, UDP, p, 88.5, 0, b"r").0,
        vec!["no mapping"],
        "dead 30 s after the last packet"
    );

    // TCP without data both ways: TCP_NODATA_TIMEOUT.
    let t0 = 100.0;
    let p = flow(&up(&mut r, TCP, 2000, t0, 0x02, b"")).1;
    assert!(down(&mut r, TCP, p, t0 + 59.0, 0x12, b"").0.is_empty());
    assert_eq!(
        down(&mut r, TCP, p, t0 + 119.5, 0x10, b"").0,
        vec!["no mapping"]
    );

    // TCP with data both ways: TCP_TIMEOUT (an hour here).
    let t1 = 300.0;
    let p = flow(&up(&mut r, TCP, 3000, t1, 0x18, b"req")).1;
    assert!(down(&mut r, TCP, p, t1 + 1.0, 0x18, b"resp").0.is_empty());
    assert!(
        down(&mut r, TCP, p, t1 + 1000.0, 0x10, b"").0.is_empty(),
        "bidirectional: long timeout"
    );
    // A FIN makes it done: TCP_DONE_TIMEOUT.
    up(&mut r, TCP, 3000, t1 + 1001.0, 0x11, b"");
    assert_eq!(
        down(&mut r, TCP, p, t1 + 1012.0, 0x10, b"").0,
        vec!["no mapping"]
    );
    assert_eq!(r.conservation_errors, 0);
}

#[test]
fn periodic_sweep_removes_expired_mappings() {
    let mut r = nat(
        "NAT 1.0.0.1 50000-50999 - -",
        "pattern NAT 0 1, drop, UDP_TIMEOUT 5, REAP_INTERVAL 10",
    );
    for i in 0..20u16 {
        send(
            &mut r,
            0,
            pkt(&ip_packet(UDP, IN, SERVER, 1000 + i, 53, b"q", 0), 0.0),
        );
    }
    assert_eq!(r.stats()["rw"]["table_size"], 20);
    // A packet of another flow after the reap interval triggers the sweep.
    let (t, _) = send(
        &mut r,
        0,
        pkt(&ip_packet(UDP, IN, SERVER, 9999, 53, b"q", 0), 11.0),
    );
    assert_eq!(r.stats()["rw"]["table_size"], 1);
    assert_eq!(r.stats()["rw"]["expired"], 20);
    // The sweep's removals were charged to that packet as dynamic-state writes.
    let writes = t
        .accesses
        .iter()
        .filter(|a| a.mem == MemType::DynamicState && a.kind == AccessKind::Write)
        .count();
    assert!(writes > 40, "{writes}");
}

#[test]
fn flow_table_accesses_are_recorded_exactly() {
    let mut r = nat("NAT 1.0.0.1 50000-50999 - -", "pattern NAT 0 1, drop");
    let rw = 3u32;
    let obj = |o: u8| (rw << 8) | o as u32;
    let dyn_acc = |t: &pktflow_model::PacketTrace| {
        t.accesses
            .iter()
            .filter(|a| a.mem == MemType::DynamicState)
            .map(|a| (a.object, a.key, a.kind))
            .collect::<Vec<_>>()
    };
    let (t_new, _) = send(
        &mut r,
        0,
        pkt(&ip_packet(TCP, IN, SERVER, 1234, 80, b"", 0x02), 0.0),
    );
    let (t_hit, _) = send(
        &mut r,
        0,
        pkt(&ip_packet(TCP, IN, SERVER, 1234, 80, b"data", 0x18), 0.1),
    );
    let new = dyn_acc(&t_new);
    let hit = dyn_acc(&t_hit);
    // New flow: the pattern's allocator is read and written once.
    let pat = obj(OBJ_PATTERN0);
    assert_eq!(
        new.iter()
            .filter(|a| a.0 == pat && a.2 == AccessKind::Read)
            .count(),
        1
    );
    assert_eq!(
        new.iter()
            .filter(|a| a.0 == pat && a.2 == AccessKind::Write)
            .count(),
        1
    );
    // Hit: no allocator access, the same bucket read first, one flow record read and written.
    assert!(hit.iter().all(|a| a.0 != pat));
    assert_eq!(hit[0].0, obj(OBJ_BUCKETS));
    assert_eq!(new[0], hit[0], "both packets hash to the same bucket");
    let rec: Vec<_> = hit.iter().filter(|a| a.0 == obj(OBJ_FLOWS)).collect();
    assert_eq!(rec.len(), 2);
    assert_eq!((rec[0].2, rec[1].2), (AccessKind::Read, AccessKind::Write));
    assert_eq!(rec[0].1, rec[1].1, "same flow slot");
    // The creation wrote both entries' buckets.
    let bucket_writes = new
        .iter()
        .filter(|a| a.0 == obj(OBJ_BUCKETS) && a.2 == AccessKind::Write)
        .count();
    assert_eq!(bucket_writes, 2);
    // The rewriter visit also has packet reads and writes and a stack temporary.
    let v = t_hit.visits.iter().find(|v| v.element == rw).unwrap();
    let acc = t_hit.accesses_of(v);
    assert!(acc
        .iter()
        .any(|a| a.mem == MemType::PacketData && a.kind == AccessKind::Write));
    assert!(acc.iter().any(|a| a.mem == MemType::Stack));
    assert!(
        v.instructions > 40 && v.instructions < 200,
        "{}",
        v.instructions
    );
}

#[test]
fn keep_pass_and_inline_patterns() {
    let mut r = router(graph(
        &[
            ("in0", "FromDevice", "eth0"),
            ("in1", "FromDevice", "eth1"),
            ("in2", "FromDevice", "eth2"),
            (
                "rw",
                "IPRewriter",
                "keep 0 1, pattern - - 10.0.0.80 8080 0 1, pass 2",
            ),
            ("o0", "ToDevice", "a"),
            ("o1", "ToDevice", "b"),
            ("o2", "ToDevice", "c"),
        ],
        &[
            (0, 0, 3, 0),
            (1, 0, 3, 1),
            (2, 0, 3, 2),
            (3, 0, 4, 0),
            (3, 1, 5, 0),
            (3, 2, 6, 0),
        ],
    ));
    // keep: unchanged, but a mapping is installed for the reply.
    let v = ip_packet(TCP, IN, SERVER, 1111, 22, b"k", 0x02);
    let (_, out) = send(&mut r, 0, pkt(&v, 0.0));
    assert_eq!(out, vec![(4, v.clone())]);
    let (_, out) = send(
        &mut r,
        2,
        pkt(&ip_packet(TCP, SERVER, IN, 22, 1111, b"r", 0x12), 0.1),
    );
    assert_eq!(
        out[0].0, 5,
        "the reply of a kept flow takes the reply output even on a pass input"
    );
    // Inline pattern: destination rewritten (a port forward), reply source rewritten back.
    let (_, out) = send(
        &mut r,
        1,
        pkt(&ip_packet(TCP, SERVER, EXT, 5555, 80, b"w", 0x02), 0.2),
    );
    assert_eq!(flow(&out[0].1), (SERVER, 5555, [10, 0, 0, 80], 8080));
    assert!(checksums_ok(&out[0].1));
    let (_, back) = send(
        &mut r,
        0,
        pkt(
            &ip_packet(TCP, [10, 0, 0, 80], SERVER, 8080, 5555, b"a", 0x12),
            0.3,
        ),
    );
    assert_eq!(back[0].0, 5);
    assert_eq!(flow(&back[0].1), (EXT, 80, SERVER, 5555));
    assert!(checksums_ok(&back[0].1));
    // pass: no mapping, unchanged, even for non-TCP/UDP.
    let v = ip_packet(ICMP, SERVER, IN, 1, 0, b"p", 0);
    let (_, out) = send(&mut r, 2, pkt(&v, 0.4));
    assert_eq!(out, vec![(6, v)]);
    assert_eq!(r.conservation_errors, 0);
}

#[test]
fn configuration_errors_are_clear() {
    let err = |cfg: &str| match pktflow_elements::Router::new(
        graph(
            &[
                ("in", "FromDevice", "eth0"),
                ("rw", "IPRewriter", cfg),
                ("o", "ToDevice", "x"),
            ],
            &[(0, 0, 1, 0), (1, 0, 2, 0)],
        ),
        &Default::default(),
    ) {
        Ok(_) => panic!("expected an error for '{cfg}'"),
        Err(e) => e[0].to_string(),
    };
    assert!(err("pattern NOPE 0 0").contains("no pattern named 'NOPE'"));
    assert!(err("pattern 1.0.0.1 9-3 - - 0 0").contains("bad source port range"));
    assert!(err("keep 0").contains("bad input spec"));
    assert!(err("drop, UDP_TIMEOUT soon").contains("UDP_TIMEOUT"));
    assert!(err("").contains("expected at least one INPUTSPEC"));
}

#[test]
fn addr_rewriter_translates_any_protocol_both_ways() {
    let mut r = router(graph(
        &[
            ("in0", "FromDevice", "eth0"),
            ("in1", "FromDevice", "eth1"),
            (
                "irw",
                "IPAddrRewriter",
                "pattern 1.0.0.1 - 0 1, drop, TIMEOUT 60",
            ),
            ("out", "ToDevice", "eth1"),
            ("back", "ToDevice", "eth0"),
        ],
        &[(0, 0, 2, 0), (1, 0, 2, 1), (2, 0, 3, 0), (2, 1, 4, 0)],
    ));
    let (_, out) = send(
        &mut r,
        0,
        pkt(&ip_packet(ICMP, IN, SERVER, 77, 0, b"ping", 0), 0.0),
    );
    assert_eq!(out[0].0, 3);
    assert_eq!(&out[0].1[12..20], &[1, 0, 0, 1, 8, 8, 8, 8]);
    assert!(checksums_ok(&out[0].1));
    // TCP from the same host: same address mapping, L4 checksum updated for the address.
    let (_, out) = send(
        &mut r,
        0,
        pkt(&ip_packet(TCP, IN, SERVER, 4444, 80, b"t", 0x02), 1.0),
    );
    assert_eq!(flow(&out[0].1), (EXT, 4444, SERVER, 80));
    assert!(checksums_ok(&out[0].1));
    // Replies to 1.0.0.1 go back to 10.0.0.2.
    let (_, back) = send(
        &mut r,
        1,
        pkt(&ip_packet(ICMP, SERVER, EXT, 77, 0, b"pong", 0), 2.0),
    );
    assert_eq!(back[0].0, 4);
    assert_eq!(&back[0].1[12..20], &[8, 8, 8, 8, 10, 0, 0, 2]);
    assert!(checksums_ok(&back[0].1));
    // The only public address is taken: as in Click 2.1, a second inside host's new mapping
    // takes the address over and the first host's mapping is removed
    // (elements/ip/iprewriterbase.cc, store_flow), so replies now go to the second host.
    let (t, out) = send(
        &mut r,
        0,
        pkt(&ip_packet(ICMP, [10, 0, 0, 3], SERVER, 1, 0, b"x", 0), 3.0),
    );
    assert!(drop_reasons(&t).is_empty());
    let (_, back) = send(
        &mut r,
        1,
        pkt(&ip_packet(ICMP, SERVER, EXT, 77, 0, b"pong", 0), 4.0),
    );
    assert_eq!(&back[0].1[12..20], &[8, 8, 8, 8, 10, 0, 0, 3]);
    assert_eq!(&out[0].1[12..16], &EXT);
    assert_eq!(r.conservation_errors, 0);
}

#[test]
fn checksum_elements_recompute_and_check() {
    let mut r = router(graph(
        &[
            ("in", "FromDevice", "eth0"),
            ("cl", "IPClassifier", "tcp, udp, -"),
            ("st", "SetTCPChecksum", ""),
            ("su", "SetUDPChecksum", ""),
            ("ct", "CheckTCPHeader", ""),
            ("cu", "CheckUDPHeader", ""),
            ("si", "SetIPChecksum", ""),
            ("o", "ToDevice", "x"),
        ],
        &[
            (0, 0, 1, 0),
            (1, 0, 2, 0),
            (1, 1, 3, 0),
            (1, 2, 6, 0),
            (2, 0, 4, 0),
            (3, 0, 5, 0),
            (4, 0, 6, 0),
            (5, 0, 6, 0),
            (6, 0, 7, 0),
        ],
    ));
    for proto in [TCP, UDP, ICMP] {
        let mut v = ip_packet(proto, IN, SERVER, 1, 2, b"some payload", 0x10);
        v[10] ^= 0x55; // corrupt the IP checksum
        v[30] ^= 0x0f; // and the L4 checksum or payload
        let (_, out) = send(&mut r, 0, pkt(&v, 0.0));
        assert_eq!(out.len(), 1, "proto {proto}");
        if proto != ICMP {
            assert!(checksums_ok(&out[0].1), "proto {proto}");
        } else {
            assert_eq!(pktflow_traffic::checksum::ip_checksum(&out[0].1[..20]), 0);
        }
    }
    // CheckTCPHeader alone drops a bad checksum.
    let mut r = router(graph(
        &[
            ("in", "FromDevice", "eth0"),
            ("ct", "CheckTCPHeader", ""),
            ("o", "ToDevice", "x"),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0)],
    ));
    let mut v = ip_packet(TCP, IN, SERVER, 1, 2, b"payload", 0x10);
    let (_, out) = send(&mut r, 0, pkt(&v, 0.0));
    assert_eq!(out.len(), 1);
    v[45] ^= 1;
    let (t, _) = send(&mut r, 0, pkt(&v, 0.0));
    assert_eq!(drop_reasons(&t), vec!["bad TCP checksum"]);
    let (t, _) = send(
        &mut r,
        0,
        pkt(&ip_packet(UDP, IN, SERVER, 1, 2, b"u", 0), 0.0),
    );
    assert_eq!(drop_reasons(&t), vec!["not TCP"]);
}

/// Click's port choice: `L-H#` hands out L, L+1, L+2, ... to flows whose own source port is
/// outside the range; `L-H` starts each scan at a pseudo-random port (and keeps a flow's own
/// source port when it is inside the range and free).
#[test]
fn sequential_and_random_port_ranges() {
    let ports = |spec: &str| -> Vec<u16> {
        let mut r = nat(&format!("NAT 1.0.0.1 {spec} - -"), "pattern NAT 0 1, drop");
        (0..4u16)
            .map(|k| {
                let (_, out) = send(
                    &mut r,
                    0,
                    pkt(&ip_packet(UDP, IN, SERVER, 1000 + k, 53, b"q", 0), 0.0),
                );
                flow(&out[0].1).1
            })
            .collect()
    };
    assert_eq!(ports("50000-50999#"), vec![50000, 50001, 50002, 50003]);
    let random = ports("50000-50999");
    assert!(random.iter().all(|p| (50000..=50999).contains(p)));
    assert_ne!(random, vec![50000, 50001, 50002, 50003], "not sequential");
    let unique: HashSet<u16> = random.iter().copied().collect();
    assert_eq!(unique.len(), 4);
    assert_eq!(
        random,
        ports("50000-50999"),
        "reproducible for the same configuration"
    );
    // The flow's own source port is kept when it lies in the range.
    let mut r = nat("NAT 1.0.0.1 1000-2000 - -", "pattern NAT 0 1, drop");
    let (_, out) = send(
        &mut r,
        0,
        pkt(&ip_packet(UDP, IN, SERVER, 1500, 53, b"q", 0), 0.0),
    );
    assert_eq!(flow(&out[0].1).1, 1500);
}
