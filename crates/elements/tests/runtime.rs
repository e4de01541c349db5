//! Runtime tests on small hand-built graphs: delivery, drops, validation messages.
use pktflow_elements::{Router, RouterOptions};
use pktflow_model::{AppGraph, Fate, Span};
use pktflow_traffic::Packet;

fn sp(line: u32) -> Span {
    Span::new("t.click", line, 1)
}

fn graph(elems: &[(&str, &str, &str)], conns: &[(usize, usize, usize, usize)]) -> AppGraph {
    let mut g = AppGraph::new("t.click");
    for (i, (n, c, cfg)) in elems.iter().enumerate() {
        g.add_element(n, c, cfg, sp(i as u32 + 1));
    }
    for (i, &(a, ap, b, bp)) in conns.iter().enumerate() {
        g.connect(a, ap, b, bp, sp(100 + i as u32));
    }
    g
}

#[test]
fn queue_then_device_delivers_and_counts() {
    let g = graph(
        &[
            ("in", "FromDevice", "eth0"),
            ("c", "Counter", ""),
            ("q", "Queue", "10"),
            ("out", "ToDevice", "eth0"),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0)],
    );
    let mut r = Router::new(g, &RouterOptions::default()).unwrap();
    for i in 0..5 {
        let mut p = Packet::from_bytes(&[0u8; 60]);
        p.id = i;
        let t = r.inject(0, p).unwrap();
        assert_eq!(t.fates, vec![Fate::Output { element: 3 }]);
        // source, counter, queue push, queue pull, device
        assert_eq!(t.visits.len(), 5);
        assert!(t.instructions() > 0);
    }
    assert_eq!(r.conservation_errors, 0);
    assert_eq!(r.stats()["c"]["count"], 5);
    assert_eq!(r.stats()["out"]["count"], 5);
}

#[test]
fn tee_copies_are_accounted() {
    let g = graph(
        &[
            ("in", "FromDevice", "eth0"),
            ("t", "Tee", "3"),
            ("d0", "Discard", ""),
            ("d1", "Discard", ""),
            ("q", "Queue", ""),
            ("o", "ToDevice", "x"),
        ],
        &[
            (0, 0, 1, 0),
            (1, 0, 2, 0),
            (1, 1, 3, 0),
            (1, 2, 4, 0),
            (4, 0, 5, 0),
        ],
    );
    let mut r = Router::new(g, &RouterOptions::default()).unwrap();
    let t = r.inject(0, Packet::from_bytes(&[1u8; 64])).unwrap();
    assert_eq!(t.fates.len(), 3);
    assert_eq!(r.conservation_errors, 0);
}

#[test]
fn full_queue_drops_with_reason() {
    let g = graph(
        &[
            ("in", "FromDevice", "eth0"),
            ("q", "Queue", "2"),
            ("i", "Idle", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0)],
    );
    let mut r = Router::new(g, &RouterOptions::default()).unwrap();
    for _ in 0..2 {
        assert!(r
            .inject(0, Packet::from_bytes(&[0u8; 60]))
            .unwrap()
            .fates
            .is_empty());
    }
    let t = r.inject(0, Packet::from_bytes(&[0u8; 60])).unwrap();
    assert!(matches!(
        t.fates[0],
        Fate::Drop {
            reason: "queue full",
            ..
        }
    ));
    assert_eq!(r.held(), vec![("q".to_string(), 2)]);
    assert_eq!(r.conservation_errors, 0);
}

fn errors(g: AppGraph) -> Vec<String> {
    match Router::new(g, &RouterOptions::default()) {
        Ok(_) => panic!("expected validation errors"),
        Err(e) => e.iter().map(|d| d.to_string()).collect(),
    }
}

#[test]
fn validation_names_file_line_and_problem() {
    let e = errors(graph(&[("a", "Qeue", "")], &[]));
    assert!(
        e[0].starts_with("t.click:1:1: error: unknown element class 'Qeue'"),
        "{e:?}"
    );
    assert!(e[0].contains("did you mean 'Queue'"));

    let e = errors(graph(&[("q", "Queue", "abc")], &[]));
    assert!(
        e[0].contains(
            "bad configuration for 'q': Queue: CAPACITY: expected unsigned integer, found 'abc'"
        ),
        "{e:?}"
    );

    let e = errors(graph(
        &[("in", "FromDevice", "eth0"), ("d", "Discard", "")],
        &[(0, 1, 1, 0)],
    ));
    assert!(
        e.iter().any(|m| m.contains("t.click:100:1")
            && m.contains("has 1 output port, but the connection uses output 1")),
        "{e:?}"
    );

    let e = errors(graph(
        &[
            ("t", "Tee", "2"),
            ("in", "FromDevice", "eth0"),
            ("d", "Discard", ""),
        ],
        &[(1, 0, 0, 0), (0, 0, 2, 0)],
    ));
    assert!(
        e.iter()
            .any(|m| m.contains("output 1 of 't' (Tee) is not connected")),
        "{e:?}"
    );

    // Tee(100000000) asked for 10^8 ports, a "not connected" error for each, and gigabytes
    let e = errors(graph(
        &[
            ("t", "Tee", "100000000"),
            ("in", "FromDevice", "eth0"),
            ("d", "Discard", ""),
        ],
        &[(1, 0, 0, 0), (0, 0, 2, 0)],
    ));
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("Tee needs 1 inputs and 100000000 outputs; at most 65535 ports"),
        "{e:?}"
    );

    // pull output of a Queue into a push-only Tee
    let e = errors(graph(
        &[
            ("in", "FromDevice", "eth0"),
            ("q", "Queue", ""),
            ("t", "Tee", "1"),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 3, 0)],
    ));
    assert!(
        e.iter()
            .any(|m| m.contains("pull output 0 of 'q' is connected to push input 0 of 't'")),
        "{e:?}"
    );

    // a push cycle
    let e = errors(graph(
        &[
            ("in", "FromDevice", "eth0"),
            ("t", "Tee", "2"),
            ("c", "Counter", ""),
            ("d", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (1, 0, 2, 0), (2, 0, 1, 0), (1, 1, 3, 0)],
    ));
    assert!(
        e.iter()
            .any(|m| m.contains("push connections form a cycle through c, t")),
        "{e:?}"
    );

    // output connected twice
    let e = errors(graph(
        &[
            ("in", "FromDevice", "eth0"),
            ("d", "Discard", ""),
            ("d2", "Discard", ""),
        ],
        &[(0, 0, 1, 0), (0, 0, 2, 0)],
    ));
    assert!(
        e.iter().any(|m| m.contains("connected more than once")),
        "{e:?}"
    );
}
