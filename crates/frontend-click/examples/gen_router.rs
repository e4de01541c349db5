//! Print the generated N-interface IP router: `cargo run -p pktflow-click --example gen_router -- 64 > apps/router64.click`.
fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(64);
    if n == 0 || n > pktflow_click::gen::MAX_INTERFACES {
        eprintln!(
            "gen_router: interface count must be 1..={}",
            pktflow_click::gen::MAX_INTERFACES
        );
        std::process::exit(2);
    }
    print!("{}", pktflow_click::gen::ip_router(n));
}
