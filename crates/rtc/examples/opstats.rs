//! Composition of a workload's programs (ops by kind, mean compute gap).
use pktflow_rtc::api::WorkloadSpec;
use pktflow_rtc::workload::Op;
fn main() {
    for app in ["router", "nat", "echo"] {
        let l = WorkloadSpec {
            app: app.into(),
            packets: 500,
            ..Default::default()
        }
        .load(0)
        .unwrap();
        let w = &l.workload;
        let (mut c, mut ci, mut m, mut k) = (0u64, 0u64, 0u64, 0u64);
        for o in &w.ops {
            match o {
                Op::Compute(n) => {
                    c += 1;
                    ci += *n as u64
                }
                Op::Load { .. } | Op::Store { .. } => m += 1,
                _ => k += 1,
            }
        }
        println!("{app}: instr/pkt {:.0}, compute ops {c} (mean {:.1}), mem ops {m}, lock ops {k}, locks {}", w.mean_instructions(), ci as f64 / c as f64, w.locks);
    }
}
