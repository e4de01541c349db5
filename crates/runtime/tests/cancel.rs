//! Ctrl-C: with the process-wide flag raised, `pktflow run` stops with `interrupted` on one and on
//! several threads, and leaves no output file. (A file of its own: the flag is global.)
use pktflow_model::cancel;
use pktflow_runtime::api::{run, Request};

#[test]
fn interrupted_runs_stop_and_leave_nothing() {
    let out = std::env::temp_dir().join(format!("pktflow-rt-cancel-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    for threads in [1, 2] {
        let req = Request::from_json(
            &serde_json::json!({
                "app": "router",
                "synthetic": 50_000,
                "threads": threads,
                "out_dir": out.to_str().unwrap(),
            })
            .to_string(),
        )
        .unwrap();
        cancel::request();
        let r = run(&req, &mut |_| {});
        cancel::reset();
        assert_eq!(r.unwrap_err(), "interrupted", "{threads} thread(s)");
        let left: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
        assert!(
            left.is_empty(),
            "files left after an interrupted run: {left:?}"
        );
    }
    interrupted_own_tasks_stop_and_leave_nothing();
}

/// The same for a configuration's own tasks on 2 threads (each thread checks the flag while
/// its sources run): `interrupted`, nothing left, the ToDump files included. Called from the
/// test above: the flag is process-wide, so the two must not run at once.
fn interrupted_own_tasks_stop_and_leave_nothing() {
    let dir = std::env::temp_dir().join(format!("pktflow-rt-cancel-tasks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let conf = dir.join("two.click");
    std::fs::write(
        &conf,
        "a :: InfiniteSource(LIMIT 400000) -> Queue(1000000) -> ta :: ToDump(a.pcap);
         b :: InfiniteSource(LIMIT 400000) -> Queue(1000000) -> tb :: ToDump(b.pcap);
         StaticThreadSched(a 0, ta 0, b 1, tb 1);",
    )
    .unwrap();
    let req = Request::from_json(
        &serde_json::json!({
            "app": conf.to_str().unwrap(),
            "threads": 2,
            "out_dir": out.to_str().unwrap(),
        })
        .to_string(),
    )
    .unwrap();
    cancel::request();
    let r = run(&req, &mut |_| {});
    cancel::reset();
    assert_eq!(r.unwrap_err(), "interrupted");
    let left: Vec<_> = std::fs::read_dir(&out).unwrap().collect();
    assert!(
        left.is_empty(),
        "files left after an interrupted run: {left:?}"
    );
}
