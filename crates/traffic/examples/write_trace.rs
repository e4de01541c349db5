//! Write a synthetic trace: `write_trace OUT.pcap|OUT.pcapng [PACKETS] [SEED] [ROUTES]`.
//! ROUTES is `none` (default: destinations in the other interface's subnet), `bundled`
//! (the 2014 BGP table) or a number of generated prefixes. Some error cases are switched on
//! so independent readers (dpkt, scapy, tcpdump) see every kind of frame.
use pktflow_traffic::{RouteTable, SynthConfig, SynthTrace};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let out = args
        .get(1)
        .ok_or("usage: write_trace OUT.pcap|OUT.pcapng [PACKETS] [SEED] [ROUTES]")?;
    let packets = args.get(2).map(|s| s.parse()).transpose()?.unwrap_or(1000);
    let seed = args.get(3).map(|s| s.parse()).transpose()?.unwrap_or(1);
    let routes = match args.get(4).map(String::as_str) {
        None | Some("none") => RouteTable::default(),
        Some("bundled") => RouteTable::load_bundled(4)?,
        Some(n) => RouteTable::generate(n.parse()?, seed, 4),
    };
    let cfg = SynthConfig {
        packets,
        seed,
        arp_fraction: 0.05,
        ip_options_rate: 0.02,
        ttl1_rate: 0.02,
        df_rate: 0.1,
        fragment_rate: 0.02,
        ..Default::default()
    };
    let trace = SynthTrace::new(cfg, &routes)?;
    let n = if out.ends_with(".pcapng") {
        trace.write_pcapng(out)?
    } else {
        trace.write_pcap(out)?
    };
    println!("{n} packets written to {out}");
    Ok(())
}
