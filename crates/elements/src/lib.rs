//! Functional Click elements with cost annotations, the element registry, validation of an
//! application graph against it, and the single-threaded functional run that produces the
//! per-packet traces the timing models consume ("functional first, timing second", as in
//! seed 000 section 3).
pub mod conf;
pub mod cx;
pub mod element;
pub mod elements;
pub mod net;
pub mod registry;
pub mod runtime;
pub mod timing;

pub use cx::Cx;
pub use element::{Element, Ports, Processing, Role};
pub use registry::{classes, ClassInfo};
pub use runtime::{run_scripts_across, Router, RouterOptions};
