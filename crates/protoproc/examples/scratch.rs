use pktflow_protoproc::sim::*;
use pktflow_protoproc::workload::*;
use pktflow_protoproc::*;
fn main() {
    for (pol, cpus) in [
        (Policy::Fixed, 2),
        (Policy::Single, 1),
        (Policy::Floating, 2),
    ] {
        let cfg = SimConfig {
            policy: pol,
            nodes: 2,
            cpus,
            threads: 1,
            costs: PolicyCosts::table2(),
            bus_share: 0.0,
            seed: 1,
        };
        let r = simulate(&cfg, &App::Microbench(Microbench::default())).unwrap();
        println!(
            "{:?} rt={:.2} lat={:.2} req={:.2} home={:.2} ev={}",
            pol,
            r.execution_time_us / 10000.0,
            r.mean_miss_latency_us,
            r.handler_us_per_node[0] / 10000.0,
            r.handler_us_per_node[1] / 10000.0,
            r.events
        );
    }
    let args: Vec<String> = std::env::args().collect();
    let app = args.get(1).map(|s| s.as_str()).unwrap_or("em3d");
    for (pol, cpus, th) in [
        (Policy::Single, 1, 1),
        (Policy::Single, 1, 2),
        (Policy::Fixed, 2, 1),
        (Policy::Fixed, 2, 2),
        (Policy::Fixed, 3, 1),
        (Policy::Fixed, 4, 1),
        (Policy::Floating, 1, 1),
        (Policy::Floating, 2, 1),
        (Policy::Floating, 2, 2),
        (Policy::Floating, 3, 1),
        (Policy::Floating, 4, 1),
    ] {
        let (a, bus) = match app {
            "em3d" => (App::Em3d(Em3d::default()), 0.0),
            "gauss" => (App::Gauss(Gauss::default()), 0.0),
            "tomcatv" => (App::Tomcatv(Tomcatv::default()), 0.3),
            _ => (App::Synthetic(Synthetic::default()), 0.0),
        };
        let costs = if app == "synthetic" {
            PolicyCosts::from_model(113.0, 55.0, 27.0).unwrap()
        } else {
            PolicyCosts::table2()
        };
        let cfg = SimConfig {
            policy: pol,
            nodes: 4,
            cpus,
            threads: th,
            costs,
            bus_share: bus,
            seed: 1,
        };
        let t0 = std::time::Instant::now();
        let r = simulate(&cfg, &a).unwrap();
        println!("{:?} P={} T={} time={:.0} lat={:.1} wait={:.1} comp={:.0} prot={:.0} poll={:.0} sw={:.0} idle={:.0} ev={} {:?}", pol, cpus, th, r.execution_time_us, r.mean_miss_latency_us, r.mean_queue_wait_us, r.total.compute_us, r.total.protocol_us, r.total.polling_us, r.total.switch_us, r.total.idle_us, r.events, t0.elapsed());
    }
}
