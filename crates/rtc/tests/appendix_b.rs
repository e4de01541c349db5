//! Appendix B's parametric benchmark: with mostly critical code, transactions keep many
//! contexts active where locks keep one; scaling to 8 cores.
use pktflow_rtc::api::{rtc, Criterion, EngineOverrides, RtcRequest, SearchSpec, WorkloadSpec};
use pktflow_rtc::engine::{Scheduler, SyncMode};
use pktflow_rtc::workload::Parametric;

fn run(cores: u32, sync: SyncMode, iter_tm: u32, range: u32) -> pktflow_rtc::api::RtcResult {
    rtc(
        &RtcRequest {
            workload: WorkloadSpec {
                app: "parametric".into(),
                packets: 500,
                parametric: Parametric {
                    iter_non_tm: 1,
                    iter_tm,
                    range,
                    work_instructions: 20,
                },
                ..Default::default()
            },
            engine: EngineOverrides {
                cores: Some(cores),
                sync: Some(sync),
                scheduler: Some(Scheduler::LockAware),
                ..Default::default()
            },
            search: SearchSpec {
                criterion: Criterion::Saturation,
                window_seconds: 0.002,
                ..Default::default()
            },
            ..Default::default()
        },
        &mut |_, _| {},
    )
    .unwrap()
}

#[test]
fn mostly_critical_code_transactions_beat_locks_and_scale() {
    let nt2 = run(2, SyncMode::Locks, 16, 1024);
    let tm2 = run(2, SyncMode::Tm, 16, 1024);
    let speedup = tm2.packets_per_second / nt2.packets_per_second;
    // One lock holder alone at IPC ~0.5 against 8 contexts keeping two cores at IPC ~1.
    assert!(speedup > 2.5, "TM2P / NT2P = {speedup}");
    assert!(nt2.report.mean_active_contexts < 2.0);
    assert!(tm2.report.mean_active_contexts > 4.0);
    let tm8 = run(8, SyncMode::Tm, 16, 1024);
    assert!(tm8.packets_per_second > 1.5 * tm2.packets_per_second);
    // High conflict intensity (range 8): more aborts per transaction, fewer active contexts.
    let hi = run(8, SyncMode::Tm, 16, 8);
    assert!(hi.aborts_per_transaction > tm8.aborts_per_transaction);
    assert!(hi.packets_per_second < tm8.packets_per_second);
    // Locks are not affected by the range.
    let nt_hi = run(2, SyncMode::Locks, 16, 8);
    let r = nt_hi.packets_per_second / nt2.packets_per_second;
    assert!((r - 1.0).abs() < 0.05, "{r}");
}
