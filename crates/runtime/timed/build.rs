//! Compile the elements' sources as the fast build (cost recording compiled out) with each
//! element visit timed (see crates/elements/src/timing.rs).
fn main() {
    println!("cargo:rustc-check-cfg=cfg(pktflow_fast)");
    println!("cargo:rustc-check-cfg=cfg(pktflow_timed)");
    println!("cargo:rustc-cfg=pktflow_fast");
    println!("cargo:rustc-cfg=pktflow_timed");
}
