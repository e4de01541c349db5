//! The recording and the fast build of the elements under the same driver, on 300,000 synthetic
//! packets held in memory (no pcap reading; `PKTFLOW_TRACE=FILE.pcap` for a trace file's packets):
//! packets/s of each, three alternating rounds.
//! Separates the gain of compiling cost recording out from the driver and the trace reader.
//!
//! Run: `cargo run --release -p pktflow-runtime --example same_driver -- nat`
use pktflow_profile::app::load_app;
use pktflow_profile::run::{packets, Source};
use pktflow_runtime::driver::Driver;
use pktflow_runtime::engine::{Fast, Recording};
use std::time::Instant;
fn main() {
    let app = std::env::args().nth(1).unwrap_or_else(|| "router".into());
    let a = load_app(&app).unwrap();
    let src = Source::Synthetic {
        packets: 300_000,
        seed: 1,
    };
    let mut pk: Vec<_> = packets(&a, &src).unwrap().collect();
    // PKTFLOW_TRACE=FILE.pcap: that trace (all of it, held in memory) instead of synthetic.
    if let Ok(path) = std::env::var("PKTFLOW_TRACE") {
        pk = pktflow_traffic::PcapReader::open(&path)
            .unwrap()
            .map(|r| Ok(r.unwrap()))
            .collect();
    }
    let out = std::path::Path::new("/tmp");
    for round in 0..3 {
        let e = Recording::new(&a.graph, &a.base_dir, out).unwrap();
        let mut d = Driver::new(e, &a.graph, None, None).unwrap();
        let t = Instant::now();
        d.run_stream(&mut pk.iter().cloned(), |_| {}).unwrap();
        let r = t.elapsed().as_secs_f64();
        let e = Fast::new(&a.graph, &a.base_dir, out, Default::default()).unwrap();
        let mut d = Driver::new(e, &a.graph, None, None).unwrap();
        let t = Instant::now();
        d.run_stream(&mut pk.iter().cloned(), |_| {}).unwrap();
        let f = t.elapsed().as_secs_f64();
        println!(
            "{app} round {round}: recording {:.0} pps, fast {:.0} pps",
            300000.0 / r,
            300000.0 / f
        );
    }
}
