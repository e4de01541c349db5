//! Read a pcap or pcapng file and print one line per packet (timestamp in ns, interface,
//! captured and original length) and the total, or the error with its byte offset.
use pktflow_traffic::PcapReader;

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: read_trace FILE.pcap|FILE.pcapng");
        std::process::exit(2);
    };
    let mut n = 0u64;
    let result = PcapReader::open(&path).and_then(|r| {
        println!(
            "format {:?}, linktype of interface 0: {:?}",
            r.format(),
            r.linktype(0)
        );
        for p in r {
            let p = p?;
            println!(
                "{} {} {} {}",
                p.timestamp_ns,
                p.iface,
                p.data.len(),
                p.orig_len
            );
            n += 1;
        }
        Ok(())
    });
    println!("{n} packets");
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}
