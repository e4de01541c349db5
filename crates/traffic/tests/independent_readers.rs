//! Files we write are read back by independent readers: Python's dpkt (timestamps and
//! bytes of every packet) and scapy (IPv4/TCP/UDP/ICMP checksums recomputed by scapy).
//! Skipped with a printed note when python3, dpkt or scapy is missing.
use std::process::Command;

use pktflow_traffic::{RouteTable, SynthConfig, SynthTrace, TracePacket};

const SCRIPT: &str = r#"
import sys, zlib
import dpkt
from scapy.all import rdpcap, IP, TCP, UDP, ICMP, raw
fn = sys.argv[1]
f = open(fn, 'rb')
r = dpkt.pcapng.Reader(f) if fn.endswith('.pcapng') else dpkt.pcap.Reader(f)
for ts, buf in r:
    print('P', round(float(ts) * 1e9), len(buf), zlib.crc32(buf))
bad = 0
for p in rdpcap(fn):
    if IP not in p:
        continue
    ip = p[IP]
    q = IP(raw(ip)[:ip.len]); want = q.chksum; del q.chksum
    if IP(raw(q)).chksum != want: bad += 1
    if ip.flags.MF or ip.frag: continue
    for L in (TCP, UDP, ICMP):
        if L in q:
            q = IP(raw(ip)[:ip.len]); want = q[L].chksum; del q[L].chksum
            if IP(raw(q))[L].chksum != want: bad += 1
print('BAD', bad)
"#;

fn python_ok() -> bool {
    Command::new("python3")
        .args(["-c", "import dpkt, scapy.all"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn crc(b: &[u8]) -> u32 {
    let mut c = flate2::Crc::new();
    c.update(b);
    c.sum()
}

#[test]
fn dpkt_and_scapy_read_our_pcap_and_pcapng() {
    if !python_ok() {
        eprintln!(
            "NOTE: python3 with dpkt and scapy not available; skipping the independent-reader test"
        );
        return;
    }
    let dir = std::env::temp_dir().join(format!("pktflow-traffic-indep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cfg = SynthConfig {
        packets: 400,
        arp_fraction: 0.05,
        ip_options_rate: 0.05,
        ttl1_rate: 0.05,
        df_rate: 0.2,
        fragment_rate: 0.05,
        ..Default::default()
    };
    let routes = RouteTable::generate(1000, 1, 4);
    let expected: Vec<TracePacket> = SynthTrace::new(cfg.clone(), &routes).unwrap().collect();
    for name in ["t.pcap", "t.pcapng"] {
        let path = dir.join(name);
        let t = SynthTrace::new(cfg.clone(), &routes).unwrap();
        if name.ends_with("ng") {
            t.write_pcapng(&path).unwrap();
        } else {
            t.write_pcap(&path).unwrap();
        }
        let out = Command::new("python3")
            .arg("-c")
            .arg(SCRIPT)
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let got: Vec<(u64, usize, u32)> = text
            .lines()
            .filter_map(|l| l.strip_prefix("P "))
            .map(|l| {
                let f: Vec<u64> = l.split(' ').map(|x| x.parse().unwrap()).collect();
                (f[0], f[1] as usize, f[2] as u32)
            })
            .collect();
        let want: Vec<(u64, usize, u32)> = expected
            .iter()
            .map(|p| (p.timestamp_ns, p.data.len(), crc(&p.data)))
            .collect();
        assert_eq!(got, want, "{name}: dpkt sees other packets");
        assert!(
            text.lines().any(|l| l == "BAD 0"),
            "{name}: scapy found bad checksums: {text}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
