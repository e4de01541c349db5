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
}
