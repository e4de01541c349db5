//! Fuzzing of the configuration surfaces added for Click compatibility: every element class's
//! configuration parser, comment stripping, AddressInfo entries, Script/DriverManager
//! instructions and whole small graphs built from the new classes. Each property asserts no
//! panic and a clean result (Ok or an error message); 256 cases each, a few seconds in all.
use pktflow_elements::conf::{strip_comments, InitEnv};
use pktflow_elements::elements::click::address_info::parse_entries;
use pktflow_elements::elements::click::script::{
    parse_script, Handlers, MAX_OUTPUT_BYTES, MAX_VALUE_BYTES,
};
use pktflow_elements::{Router, RouterOptions};
use pktflow_model::{AppGraph, Span};
use proptest::prelude::*;

const NEW_CLASSES: &[&str] = &[
    "AddressInfo",
    "Script",
    "DriverManager",
    "ScheduleInfo",
    "StaticThreadSched",
    "RandomSeed",
    "ToHost",
    "ToHostSniffers",
    "FromHost",
    "KernelTun",
    "KernelTap",
    "Null",
    "SetTimestamp",
    "Align",
    "Switch",
    "StaticSwitch",
    "RandomSwitch",
    "RoundRobinSwitch",
    "HashSwitch",
    "CheckPaint",
    "PullTee",
    "Unqueue",
    "TimedSink",
    "RoundRobinSched",
    "PrioSched",
    "SimpleQueue",
    "ThreadSafeQueue",
    "FastUDPSource",
    "FastUDPFlows",
    "MarkIPHeader",
    "StripIPHeader",
    "SetIPAddress",
    "StoreIPAddress",
    "SetRandIPAddress",
    "IPEncap",
    "UDPIPEncap",
    "IPMirror",
    "HostEtherFilter",
    "ICMPPingResponder",
    "AverageCounter",
    "RED",
    "IPPrint",
    "TCPRewriter",
    "ICMPPingSource",
    "ICMPSendPings",
    "LinearIPLookup",
    "DirectIPLookup",
    "IPFilter",
    "TimedSource",
    "Counter",
    "BandwidthShaper",
    "ICMPPingRewriter",
    "Meter",
    "FTPPortMapper",
    "ICMPRewriter",
    "ARPTable",
];

/// Near-valid configuration text: words, numbers, addresses, keywords, punctuation, comments.
fn config_text() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("10.0.0.1".to_string()),
        Just("10.0.0.0/8".to_string()),
        Just("0/0".to_string()),
        Just("00:50:ba:85:84:a9".to_string()),
        Just("-1".to_string()),
        Just("0".to_string()),
        Just("65536".to_string()),
        Just("18446744073709551616".to_string()),
        Just("1e9".to_string()),
        Just("NaN".to_string()),
        Just("allow".to_string()),
        Just("tcp".to_string()),
        Just("port".to_string()),
        Just("pattern".to_string()),
        Just("LIMIT".to_string()),
        Just("INTERVAL".to_string()),
        Just("$x".to_string()),
        Just("$(add 1 2)".to_string()),
        Just("wait".to_string()),
        Just("print".to_string()),
        Just("stop".to_string()),
        Just("/* c */".to_string()),
        Just("// c\n".to_string()),
        Just("\\<00 11>".to_string()),
        Just("\"q\"".to_string()),
        "[a-z]{1,6}",
        "[0-9]{1,6}",
        "[ -~]{0,6}",
    ];
    proptest::collection::vec((token, prop_oneof![Just(" "), Just(", "), Just("")]), 0..8)
        .prop_map(|v| v.into_iter().map(|(t, s)| format!("{t}{s}")).collect())
}

struct NoHandlers;
impl Handlers for NoHandlers {
    fn read(&self, spec: &str) -> Result<String, String> {
        if spec == "c.count" {
            Ok("3".into())
        } else {
            Err(format!("no handler {spec}"))
        }
    }
    fn write(&mut self, _spec: &str, _value: &str) -> Result<(), String> {
        Ok(())
    }
}

/// Script's expression handlers and some names that are not handlers.
const OPS: &[&str] = &[
    "add", "sub", "mul", "div", "idiv", "min", "max", "mod", "rem", "neg", "abs", "eq", "ne", "lt",
    "gt", "le", "ge", "not", "and", "or", "nand", "nor", "if", "in", "first", "sprintf", "random",
    "now", "readable", "writable", "length", "unquote", "htons", "htonl", "ntohs", "ntohl", "cat",
    "catq", "get", "shift", "s.add", "xor", "c.count", "",
];

const LEAVES: &[&str] = &[
    "0",
    "1",
    "-1",
    "7",
    "2.5",
    "-0.0",
    "1e308",
    "1e-320",
    "nan",
    "inf",
    "0x10",
    "010",
    "08",
    "9223372036854775807",
    "-9223372036854775808",
    "18446744073709551616",
    "true",
    "false",
    "maybe",
    "x",
    "\"a b\"",
    "'q'",
    "\"%05x\"",
    "\"%999999999999d\"",
    "\"%99999999s\"",
    "\"%-#+ 0.3hx%%\"",
    "\"%*d\"",
    "$x",
    "$y",
    "${x}",
    "$?",
    "$#",
    "$0",
    "$1",
    "$args",
    "$write",
    "$",
    "/dev/zero",
    "/nonexistent",
    "\"\\<41>\"",
    "/* c */",
    "$(",
    ")",
];

fn script_expr() -> impl Strategy<Value = String> {
    let leaf = proptest::sample::select(LEAVES).prop_map(str::to_string);
    leaf.prop_recursive(14, 64, 4, |inner| {
        (
            proptest::sample::select(OPS),
            proptest::collection::vec(inner, 0..4),
        )
            .prop_map(|(op, args)| format!("$({op} {})", args.join(" ")))
    })
}

fn script_instr() -> impl Strategy<Value = String> {
    const WORDS: &[&str] = &[
        "set x",
        "setq y",
        "init x",
        "export z",
        "print",
        "printn",
        "printq",
        "read",
        "write set x",
        "goto l",
        "return",
        "error",
        "errorq",
    ];
    prop_oneof![
        (proptest::sample::select(WORDS), script_expr()).prop_map(|(w, e)| format!("{w} {e}")),
        proptest::sample::select(
            &[
                "label l",
                "wait",
                "loop",
                "stop",
                "end",
                "set x $x$x",
                "set y $(sprintf \"%1000000s\" a)",
                "print $y",
                "goto l $(lt $(length $x) 100000)",
                "set x $(mul $x $x)",
                "print $(cat /dev/zero)",
            ][..]
        )
        .prop_map(str::to_string),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn every_class_parses_any_configuration_cleanly(k in 0..NEW_CLASSES.len(), conf in config_text()) {
        let class = pktflow_elements::registry::find(NEW_CLASSES[k]).expect("registered");
        let dir = std::env::temp_dir();
        let env = InitEnv { base_dir: dir.clone(), out_dir: dir, ..Default::default() };
        if let Err(m) = (class.make)(&conf, &env) {
            prop_assert!(!m.is_empty());
        }
    }

    #[test]
    fn arbitrary_bytes_as_configuration(k in 0..NEW_CLASSES.len(), b in proptest::collection::vec(any::<u8>(), 0..64)) {
        let s = String::from_utf8_lossy(&b);
        let class = pktflow_elements::registry::find(NEW_CLASSES[k]).unwrap();
        let _ = (class.make)(&s, &InitEnv::default());
        let stripped = strip_comments(&s);
        prop_assert_eq!(stripped.len(), s.len(), "comments are blanked in place");
        let _ = parse_entries(&s);
    }

    #[test]
    fn scripts_run_or_fail_cleanly(conf in config_text(), past in any::<bool>()) {
        if let Ok(mut sc) = parse_script("Script", &conf, false) {
            let mut h = NoHandlers;
            let _ = sc.run(&mut h, past);
            let _ = sc.run(&mut h, true);
        }
    }

    /// Scripts built from Click's instructions and every expression handler, with awkward
    /// values (huge sprintf widths, overflowing products, values doubled in loops, deep
    /// nesting, /dev/zero): each runs to its end or fails with one line, within the value
    /// and output limits (no panic, no hang, bounded memory).
    #[test]
    fn expression_scripts_run_or_fail_in_one_line(instrs in proptest::collection::vec(script_instr(), 1..8)) {
        let conf = instrs.join(", ");
        let env = InitEnv { name: "s".into(), base_dir: std::env::temp_dir(), ..Default::default() };
        let class = pktflow_elements::registry::find("Script").unwrap();
        prop_assert!((class.make)(&conf, &env).is_ok() || parse_script("Script", &conf, false).is_err());
        if let Ok(mut sc) = parse_script("Script", &conf, false) {
            let mut h = NoHandlers;
            let r = sc.run(&mut h, false).and_then(|_| sc.run(&mut h, true));
            if let Err(m) = r {
                prop_assert!(!m.is_empty() && !m.contains('\n'), "{}", m);
            }
            let printed: usize = sc.output.iter().map(|l| l.len() + 1).sum();
            prop_assert!(printed <= MAX_OUTPUT_BYTES + MAX_VALUE_BYTES + 1);
        }
    }

    #[test]
    fn small_graphs_of_new_classes_validate_and_run_cleanly(
        picks in proptest::collection::vec((0..NEW_CLASSES.len(), config_text()), 1..5),
    ) {
        let mut g = AppGraph::new("fuzz.click");
        g.add_element("src", "InfiniteSource", "LIMIT 3", Span::new("fuzz.click", 1, 1));
        for (i, (k, conf)) in picks.iter().enumerate() {
            g.add_element(&format!("e{i}"), NEW_CLASSES[*k], conf, Span::new("fuzz.click", i as u32 + 2, 1));
            g.connect(i, 0, i + 1, 0, Span::new("fuzz.click", 100 + i as u32, 1));
        }
        let dir = std::env::temp_dir();
        match Router::new(g, &RouterOptions { base_dir: dir.clone(), out_dir: dir }) {
            Err(d) => prop_assert!(!d.is_empty() && !d[0].message.is_empty()),
            Ok(mut r) => {
                let mut n = 0;
                while n < 10 && r.generate_next().is_some() {
                    n += 1;
                }
                let _ = r.finish();
                prop_assert_eq!(r.conservation_errors, 0);
            }
        }
    }
}
