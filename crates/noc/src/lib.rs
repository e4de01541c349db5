//! Stream graphs on 2D-mesh many-cores: balancing, layout, routing, cycle-level NoC simulator
//! (issue 4). Source paper: Seo & Thottethodi, "Disjoint-Path Routing: Efficient Communication
//! for Streaming Applications", IPDPS 2009 (`seeds/002_8aeb0170294135a1.txt`).
pub mod api;
pub mod balance;
pub mod bench;
pub mod booksim;
pub mod config;
pub mod error;
pub mod graph;
pub mod layout;
pub mod report;
pub mod req;
pub mod routing;
pub mod sim;

pub use error::{NocError, Result};
