//! IPClassifier: every documented syntax form on hand-built packets, the element's routing,
//! drops and costs in a graph, error messages, and a property test that random expressions,
//! printed in Click's syntax and parsed, evaluate like a reference interpreter.
mod nat_common;
use nat_common::*;
use pktflow_elements::elements::nat::ipfilter::{parse_pattern, Tally};
use proptest::prelude::*;

const A: [u8; 4] = [10, 0, 0, 2];
const B: [u8; 4] = [192, 168, 1, 9];

fn m(pattern: &str, pkt: &[u8]) -> bool {
    parse_pattern(pattern)
        .unwrap_or_else(|e| panic!("'{pattern}': {e}"))
        .matches(pkt)
}

#[test]
fn every_syntax_form_on_hand_built_packets() {
    let tcp = ip_packet(TCP, A, B, 1234, 80, b"x", 0x02); // SYN
    let udp = ip_packet(UDP, B, A, 53, 5353, b"x", 0);
    let icmp = ip_packet(ICMP, A, B, 1, 0, b"x", 0); // echo request
    let cases: &[(&str, [bool; 3])] = &[
        // protocols
        ("tcp", [true, false, false]),
        ("udp", [false, true, false]),
        ("icmp", [false, false, true]),
        ("ip proto 6", [true, false, false]),
        ("ip proto udp", [false, true, false]),
        ("ip proto != 6", [false, true, true]),
        // hosts and nets
        ("src host 10.0.0.2", [true, false, true]),
        ("dst host 10.0.0.2", [false, true, false]),
        ("host 10.0.0.2", [true, true, true]),
        ("src or dst host 192.168.1.9", [true, true, true]),
        ("src and dst host 10.0.0.2", [false, false, false]),
        ("10.0.0.2", [true, true, true]),
        ("src host != 10.0.0.2", [false, true, false]),
        ("net 10.0.0.0/8", [true, true, true]),
        ("src net 10.0.0.0 mask 255.0.0.0", [true, false, true]),
        ("dst net 192.168.1.0/24", [true, false, true]),
        ("10.0.0.0/8 and dst net 192.168.0.0/16", [true, false, true]),
        // ports (imply TCP or UDP)
        ("port 80", [true, false, false]),
        ("port www", [true, false, false]),
        ("src port 53", [false, true, false]),
        ("dst port 5353", [false, true, false]),
        ("tcp port 80", [true, false, false]),
        ("udp port 80", [false, false, false]),
        ("udp dst port 5353", [false, true, false]),
        ("src tcp port 1234", [true, false, false]),
        ("tcp src port 1234", [true, false, false]),
        ("dst tcp port > 1023", [false, false, false]),
        ("dst port > 1023", [false, true, false]),
        ("src port != 5", [true, true, false]),
        ("src port 80 or 53", [false, true, false]),
        ("dns", [false, true, false]),
        // ICMP types, TCP flags
        ("icmp type echo", [false, false, true]),
        ("icmp type 8", [false, false, true]),
        ("icmp type != 8", [false, false, false]),
        ("tcp opt syn", [true, false, false]),
        ("tcp syn", [true, false, false]),
        ("syn", [true, false, false]),
        ("fin ack", [false, false, false]),
        ("tcp win 8192", [true, false, false]),
        // other IP fields
        ("ip vers 4", [true, true, true]),
        ("ip hl 5", [true, true, true]),
        ("ip ttl 64", [true, true, true]),
        ("ip ttl < 10", [false, false, false]),
        ("ip ttl >= 64 and ip ttl <= 64", [true, true, true]),
        ("ip id 0x4242", [true, true, true]),
        ("ip tos 0", [true, true, true]),
        ("ip dscp 0", [true, true, true]),
        ("ip frag", [false, false, false]),
        ("ip unfrag", [true, true, true]),
        ("unfrag", [true, true, true]),
        // connectives
        ("tcp or udp", [true, true, false]),
        ("tcp || udp", [true, true, false]),
        ("tcp and src host 10.0.0.2", [true, false, false]),
        ("tcp && src host 10.0.0.2", [true, false, false]),
        ("tcp src host 10.0.0.2", [true, false, false]),
        ("not tcp", [false, true, true]),
        ("!tcp", [false, true, true]),
        ("! (tcp or udp)", [false, false, true]),
        (
            "(src host 10.0.0.2 or dst host 10.0.0.2) and not icmp",
            [true, true, false],
        ),
        ("tcp ? dst port 80 : udp", [true, true, false]),
        ("true", [true, true, true]),
        ("false", [false, false, false]),
        ("-", [true, true, true]),
        ("any", [true, true, true]),
        ("all", [true, true, true]),
    ];
    for (pat, want) in cases {
        for (i, p) in [&tcp, &udp, &icmp].iter().enumerate() {
            assert_eq!(m(pat, p), want[i], "'{pat}' on packet {i}");
        }
    }
    // Port tests only match first fragments.
    let mut frag = tcp.clone();
    frag[6] = 0x00;
    frag[7] = 0x10; // offset 128 bytes
    assert!(!m("port 80", &frag));
    assert!(m("ip frag", &frag));
    assert!(m("tcp", &frag));
    let mut mf = tcp.clone();
    mf[6] = 0x20; // more fragments, offset 0: still the first fragment
    assert!(m("port 80", &mf) && m("ip frag", &mf));
}

#[test]
fn errors_give_column_and_expectation() {
    for (pat, col, msg) in [
        ("src hots 10.0.0.1", 5, "expected 'host', 'net', 'port'"),
        ("tcp and", 8, "expected a pattern term"),
        ("(tcp or udp", 12, "expected ')'"),
        ("dst port 99999", 10, "out of range"),
        ("src host 10.0.0", 10, "expected IP address"),
        ("ip ttl x", 8, "expected TTL"),
        ("icmp type nonsense", 11, "ICMP type"),
        ("tcp opt bogus", 9, "TCP flag"),
        ("net 10.0.0.0/33", 5, "bad prefix length"),
        ("tcp ? udp", 10, "':'"),
        ("tcp )", 5, "expected 'and', 'or' or end of pattern"),
        ("src port & 10 == 8", 10, "not supported"),
    ] {
        let e = parse_pattern(pat).expect_err(pat);
        assert_eq!(e.column, col, "'{pat}': {e}");
        assert!(e.message.contains(msg), "'{pat}': {e}");
    }
    // The element reports the pattern number and text.
    let g = graph(
        &[
            ("in", "FromDevice", "eth0"),
            ("c", "IPClassifier", "tcp, src hots 1.2.3.4"),
            ("o", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (1, 1, 2, 0)],
    );
    let e = pktflow_elements::Router::new(g, &Default::default())
        .err()
        .unwrap();
    let s = e[0].to_string();
    assert!(
        s.contains("IPClassifier: pattern 1 'src hots 1.2.3.4': column 5: expected"),
        "{s}"
    );
}

#[test]
fn element_routes_to_first_match_drops_the_rest_and_charges_per_term() {
    let mut r = router(graph(
        &[
            ("in", "FromDevice", "eth0"),
            (
                "c",
                "IPClassifier",
                "dst tcp port www or dst tcp port https, udp, src net 10.0.0.0/8",
            ),
            ("o0", "ToDevice", "a"),
            ("o1", "ToDevice", "b"),
            ("o2", "ToDevice", "c"),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (1, 1, 3, 0), (1, 2, 4, 0)],
    ));
    let (t0, out) = send(
        &mut r,
        0,
        pkt(&ip_packet(TCP, A, B, 1, 443, b"", 0x10), 0.0),
    );
    assert_eq!(out[0].0, 2);
    let (_, out) = send(&mut r, 0, pkt(&ip_packet(UDP, B, A, 1, 2, b"", 0), 0.0));
    assert_eq!(out[0].0, 3);
    let (t2, out) = send(&mut r, 0, pkt(&ip_packet(ICMP, A, B, 1, 2, b"", 0), 0.0));
    assert_eq!(out[0].0, 4);
    let (t3, out) = send(&mut r, 0, pkt(&ip_packet(ICMP, B, A, 1, 2, b"", 0), 0.0));
    assert!(out.is_empty());
    assert_eq!(drop_reasons(&t3), vec!["no match"]);
    // No IP header annotation: dropped with a reason.
    r.set_tap(true);
    let t = r
        .inject(0, pktflow_traffic::Packet::from_bytes(&[0u8; 40]))
        .unwrap()
        .clone();
    assert_eq!(drop_reasons(&t), vec!["no IP header"]);
    // Costs grow with the terms tested: the ICMP packet from 10/8 tests every pattern.
    let instr = |t: &pktflow_model::PacketTrace| {
        t.visits
            .iter()
            .find(|v| v.element == 1)
            .unwrap()
            .instructions
    };
    assert!(instr(&t2) > instr(&t0), "{} vs {}", instr(&t2), instr(&t0));
    assert_eq!(r.stats()["c"]["counts"], serde_json::json!([1, 1, 1]));
    assert_eq!(r.conservation_errors, 0);
    // Tally of one evaluation: protocol+fragment (3 B) then the port (2 B).
    let e = parse_pattern("dst port 80").unwrap();
    let mut t = Tally::default();
    assert!(e.eval(&ip_packet(TCP, A, B, 1, 80, b"", 0), &mut t));
    assert_eq!(t.bytes, 5);
}

// ---- property test: random expressions against a reference interpreter ----

#[derive(Clone, Debug)]
enum Op {
    Eq,
    Ne,
    Lt,
    Gt,
    Le,
    Ge,
}

impl Op {
    fn s(&self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Gt => ">",
            Op::Le => "<=",
            Op::Ge => ">=",
        }
    }
    fn t(&self, x: u32, v: u32) -> bool {
        match self {
            Op::Eq => x == v,
            Op::Ne => x != v,
            Op::Lt => x < v,
            Op::Gt => x > v,
            Op::Le => x <= v,
            Op::Ge => x >= v,
        }
    }
}

#[derive(Clone, Debug)]
enum Prim {
    Proto(u8),
    Host(u8, [u8; 4]), // 0 src, 1 dst, 2 src or dst, 3 src and dst
    Net(u8, [u8; 4], u8),
    Port(u8, Option<u8>, Op, u16), // sd 0..2
    IcmpType(Op, u8),
    TcpFlag(&'static str, u8),
    Ttl(Op, u8),
    Frag(bool),
}

#[derive(Clone, Debug)]
enum E {
    T,
    F,
    P(Prim),
    Not(Box<E>, bool),
    And(Box<E>, Box<E>, u8),
    Or(Box<E>, Box<E>, bool),
}

const ADDRS: [[u8; 4]; 4] = [[10, 0, 0, 1], [10, 0, 1, 2], [192, 168, 0, 1], [8, 8, 8, 8]];
const PORTS: [u16; 4] = [53, 80, 1024, 50000];
const PROTOS: [u8; 4] = [1, 6, 17, 2];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        Just(Op::Eq),
        Just(Op::Ne),
        Just(Op::Lt),
        Just(Op::Gt),
        Just(Op::Le),
        Just(Op::Ge)
    ]
}

fn prim() -> impl Strategy<Value = Prim> {
    prop_oneof![
        (0..4usize).prop_map(|i| Prim::Proto(PROTOS[i])),
        (0..4u8, 0..4usize).prop_map(|(s, a)| Prim::Host(s, ADDRS[a])),
        (
            0..4u8,
            0..4usize,
            prop_oneof![Just(8u8), Just(16), Just(24), Just(32)]
        )
            .prop_map(|(s, a, l)| Prim::Net(s, ADDRS[a], l)),
        (
            0..3u8,
            prop_oneof![Just(None), Just(Some(6u8)), Just(Some(17u8))],
            op(),
            0..4usize
        )
            .prop_map(|(s, p, o, v)| Prim::Port(s, p, o, PORTS[v])),
        (op(), prop_oneof![Just(0u8), Just(3), Just(8), Just(11)])
            .prop_map(|(o, v)| Prim::IcmpType(o, v)),
        prop_oneof![Just(("syn", 2u8)), Just(("ack", 0x10)), Just(("fin", 1))]
            .prop_map(|(n, b)| Prim::TcpFlag(n, b)),
        (op(), prop_oneof![Just(1u8), Just(64), Just(128)]).prop_map(|(o, v)| Prim::Ttl(o, v)),
        any::<bool>().prop_map(Prim::Frag),
    ]
}

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![
        1 => Just(E::T),
        1 => Just(E::F),
        8 => prim().prop_map(E::P),
    ];
    leaf.prop_recursive(5, 32, 2, |inner| {
        prop_oneof![
            (inner.clone(), any::<bool>()).prop_map(|(e, b)| E::Not(Box::new(e), b)),
            (inner.clone(), inner.clone(), 0..3u8).prop_map(|(a, b, k)| E::And(
                Box::new(a),
                Box::new(b),
                k
            )),
            (inner.clone(), inner, any::<bool>()).prop_map(|(a, b, k)| E::Or(
                Box::new(a),
                Box::new(b),
                k
            )),
        ]
    })
}

fn ip(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

fn sd(s: u8) -> &'static str {
    ["src", "dst", "src or dst", "src and dst"][s as usize]
}

fn print(e: &E) -> String {
    match e {
        E::T => "true".into(),
        E::F => "false".into(),
        E::P(p) => match p {
            Prim::Proto(6) => "tcp".into(),
            Prim::Proto(17) => "ip proto udp".into(),
            Prim::Proto(n) => format!("ip proto {n}"),
            Prim::Host(s, a) => format!("{} host {}", sd(*s), ip(*a)),
            Prim::Net(s, a, l) => format!("{} net {}/{}", sd(*s), ip(*a), l),
            Prim::Port(s, p, o, v) => format!(
                "{} {}port {} {}",
                sd(*s),
                match p {
                    Some(6) => "tcp ",
                    Some(_) => "udp ",
                    None => "",
                },
                o.s(),
                v
            ),
            Prim::IcmpType(o, v) => format!("icmp type {} {}", o.s(), v),
            Prim::TcpFlag(n, _) => format!("tcp opt {n}"),
            Prim::Ttl(o, v) => format!("ip ttl {} {}", o.s(), v),
            Prim::Frag(true) => "ip frag".into(),
            Prim::Frag(false) => "ip unfrag".into(),
        },
        E::Not(e, b) => format!("{} ({})", if *b { "not" } else { "!" }, print(e)),
        E::And(a, b, k) => match k {
            0 => format!("({}) and ({})", print(a), print(b)),
            1 => format!("({}) && ({})", print(a), print(b)),
            _ => format!("({}) ({})", print(a), print(b)),
        },
        E::Or(a, b, k) => format!(
            "({}) {} ({})",
            print(a),
            if *k { "or" } else { "||" },
            print(b)
        ),
    }
}

#[derive(Clone, Debug)]
struct Pk {
    proto: u8,
    src: [u8; 4],
    dst: [u8; 4],
    sport: u16,
    dport: u16,
    ttl: u8,
    flags: u8,
    icmp_type: u8,
    frag: u16,
}

fn pk() -> impl Strategy<Value = Pk> {
    (
        (0..4usize, 0..4usize, 0..4usize, 0..4usize, 0..4usize),
        prop_oneof![Just(1u8), Just(64), Just(128), Just(200)],
        any::<u8>(),
        prop_oneof![Just(0u8), Just(3), Just(8), Just(11)],
        prop_oneof![3 => Just(0u16), 1 => Just(0x2000u16), 1 => Just(0x0010u16)],
    )
        .prop_map(|((p, s, d, sp, dp), ttl, flags, it, frag)| Pk {
            proto: PROTOS[p],
            src: ADDRS[s],
            dst: ADDRS[d],
            sport: PORTS[sp],
            dport: PORTS[dp],
            ttl,
            flags: flags & 0x3f,
            icmp_type: it,
            frag,
        })
}

fn build(p: &Pk) -> Vec<u8> {
    let mut v = vec![0u8; 40];
    v[0] = 0x45;
    v[2..4].copy_from_slice(&40u16.to_be_bytes());
    v[6..8].copy_from_slice(&p.frag.to_be_bytes());
    v[8] = p.ttl;
    v[9] = p.proto;
    v[12..16].copy_from_slice(&p.src);
    v[16..20].copy_from_slice(&p.dst);
    if p.proto == 1 {
        v[20] = p.icmp_type;
    } else {
        v[20..22].copy_from_slice(&p.sport.to_be_bytes());
        v[22..24].copy_from_slice(&p.dport.to_be_bytes());
        v[33] = p.flags;
    }
    v
}

fn mask(l: u8) -> u32 {
    if l == 0 {
        0
    } else {
        u32::MAX << (32 - l as u32)
    }
}

fn both(s: u8, f: impl Fn(bool) -> bool) -> bool {
    match s {
        0 => f(true),
        1 => f(false),
        2 => f(true) || f(false),
        _ => f(true) && f(false),
    }
}

fn reference(e: &E, p: &Pk) -> bool {
    let first = p.frag & 0x1fff == 0;
    match e {
        E::T => true,
        E::F => false,
        E::Not(e, _) => !reference(e, p),
        E::And(a, b, _) => reference(a, p) && reference(b, p),
        E::Or(a, b, _) => reference(a, p) || reference(b, p),
        E::P(pr) => match pr {
            Prim::Proto(n) => p.proto == *n,
            Prim::Host(s, a) => both(*s, |src| if src { p.src == *a } else { p.dst == *a }),
            Prim::Net(s, a, l) => both(*s, |src| {
                let x = u32::from_be_bytes(if src { p.src } else { p.dst });
                x & mask(*l) == u32::from_be_bytes(*a) & mask(*l)
            }),
            Prim::Port(s, pr, o, v) => {
                let proto_ok = match pr {
                    Some(x) => p.proto == *x,
                    None => p.proto == 6 || p.proto == 17,
                };
                // Click's meaning of '!=': 'src or dst port != 53' is true when neither port
                // is 53 (the negation of 'src or dst port 53'), so the join flips.
                let s = match (s, o) {
                    (2, Op::Ne) => 3,
                    (3, Op::Ne) => 2,
                    (s, _) => *s,
                };
                proto_ok
                    && first
                    && both(s, |src| {
                        o.t(if src { p.sport } else { p.dport } as u32, *v as u32)
                    })
            }
            Prim::IcmpType(o, v) => p.proto == 1 && first && o.t(p.icmp_type as u32, *v as u32),
            Prim::TcpFlag(_, b) => p.proto == 6 && first && p.flags & b != 0,
            Prim::Ttl(o, v) => o.t(p.ttl as u32, *v as u32),
            Prim::Frag(f) => (p.frag & 0x3fff != 0) == *f,
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]
    #[test]
    fn random_expressions_match_the_reference(e in expr(), pkts in proptest::collection::vec(pk(), 8)) {
        let text = print(&e);
        let parsed = parse_pattern(&text).map_err(|err| TestCaseError::fail(format!("'{text}': {err}")))?;
        for p in &pkts {
            prop_assert_eq!(parsed.matches(&build(p)), reference(&e, p), "pattern '{}' on {:?}", text, p);
        }
    }

    #[test]
    fn arbitrary_text_never_panics(s in "[a-z0-9 ()!&|=<>?:./-]{0,40}") {
        let _ = parse_pattern(&s);
    }
}
