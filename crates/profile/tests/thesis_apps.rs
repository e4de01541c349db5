//! The NetThreads thesis's benchmark applications (apps/classifier.click, nat-nt, udhcp,
//! intruder, intruder2, echo) run on their own seeded workloads: every packet accounted for,
//! the stateful ones write shared state inside their lock sections, and the per-packet
//! statistics of docs/thesis-apps.md (printed with `--nocapture`).
use pktflow_model::{AccessKind, PacketTrace};
use pktflow_profile::run::{Run, Source};
use std::collections::HashSet;

#[derive(Default)]
struct Acc {
    n: f64,
    s: [f64; 5],
    q: [f64; 5],
    writers: u64,
}

impl Acc {
    fn add(&mut self, t: &PacketTrace) {
        let instr = t.instructions() as f64;
        let mut crit = 0u64;
        let (mut rd, mut wr) = (HashSet::new(), HashSet::new());
        for v in &t.visits {
            let acc = t.accesses_of(v);
            let p: Vec<_> = acc.iter().filter(|a| a.mem.is_persistent()).collect();
            if let (Some(f), Some(l)) = (p.first(), p.last()) {
                crit += (l.at_instr - f.at_instr) as u64;
            }
            for a in p {
                let k = (a.object, a.key);
                match a.kind {
                    AccessKind::Read => rd.insert(k),
                    AccessKind::Write => wr.insert(k),
                };
            }
        }
        if !wr.is_empty() {
            self.writers += 1;
        }
        let share = if instr > 0.0 {
            100.0 * crit as f64 / instr
        } else {
            0.0
        };
        let x = [instr, share, rd.len() as f64, wr.len() as f64, crit as f64];
        self.n += 1.0;
        for (i, v) in x.iter().enumerate() {
            self.s[i] += v;
            self.q[i] += v * v;
        }
    }
    fn ms(&self, i: usize) -> (f64, f64) {
        let m = self.s[i] / self.n;
        (m, (self.q[i] / self.n - m * m).max(0.0).sqrt())
    }
}

fn measure(app: &str, packets: u64) -> Acc {
    let dir = std::env::temp_dir();
    let mut run = Run::start(app, &Source::Synthetic { packets, seed: 1 }, &dir)
        .unwrap_or_else(|e| panic!("{app}: {e}"));
    let mut acc = Acc::default();
    while let Some(t) = run.next_trace().unwrap() {
        acc.add(t);
    }
    acc
}

#[test]
fn thesis_apps_run_on_their_workloads_and_report_their_statistics() {
    let n: u64 = std::env::var("THESIS_PACKETS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(400);
    println!("| app | instructions/packet | critical-section share % | unique shared reads | unique shared writes | packets writing shared state % |");
    println!("|---|---|---|---|---|---|");
    for app in [
        "classifier",
        "nat-nt",
        "udhcp",
        "intruder",
        "intruder2",
        "echo",
    ] {
        let a = measure(app, n);
        assert_eq!(a.n as u64, n, "{app}");
        let (i, is) = a.ms(0);
        let (c, cs) = a.ms(1);
        let (r, rs) = a.ms(2);
        let (w, ws) = a.ms(3);
        let wp = 100.0 * a.writers as f64 / a.n;
        println!("| {app} | {i:.0} ± {is:.0} | {c:.1} ± {cs:.1} | {r:.1} ± {rs:.1} | {w:.1} ± {ws:.1} | {wp:.0} |");
        assert!(i > 0.0, "{app}");
        if app == "echo" {
            assert_eq!(a.writers, 0);
        } else {
            assert!(a.writers > 0, "{app}: no packet wrote shared state");
        }
    }
}
