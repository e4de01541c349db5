//! Ctrl-C stops the mappers (the refinement and the exact search) with "interrupted". In a test
//! binary of its own: the cancellation flag is process-wide.
use pktflow_model::cancel;

#[test]
fn mappers_stop_with_interrupted() {
    let dir = std::env::temp_dir().join(format!("pktflow-tdpm-cancel-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let g = dir.join("g.toml");
    std::fs::write(
        &g,
        "[[ppf]]\nname = \"a\"\nrate = 1.0\ninstructions = 100\ncode_size = 100\n\
         [[ppf]]\nname = \"b\"\nrate = 1.0\ninstructions = 80\ncode_size = 100\n\
         [[channel]]\nfrom = \"rx\"\nto = \"a\"\nrate = 1.0\n\
         [[channel]]\nfrom = \"a\"\nto = \"b\"\nrate = 1.0\n\
         [[channel]]\nfrom = \"b\"\nto = \"tx\"\nrate = 1.0\n",
    )
    .unwrap();
    for mapper in ["tdpm-refine", "optimal", "tdpm"] {
        let req = serde_json::json!({"app": g.to_str().unwrap(), "mapper": mapper}).to_string();
        cancel::reset();
        assert!(pktflow_tdpm::api::map_json(&req).is_ok(), "{mapper}");
        cancel::request();
        let e = pktflow_tdpm::api::map_json(&req).unwrap_err().to_string();
        cancel::reset();
        assert_eq!(e, "interrupted", "{mapper}");
    }
}
