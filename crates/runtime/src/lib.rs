//! The real runtime behind `pktflow run`: the application's elements, compiled a second time with
//! cost recording compiled out (`pktflow-elements-fast`), run on the host's cores.
//!
//! - [`engine`]: the recording and the fast build of the elements behind one interface.
//! - [`driver`]: one router fed from a packet source, with the functional run's link neighbours,
//!   writing each `ToDevice` to a pcap.
//! - [`batch`]: trace packets for one thread, their bytes in one reused buffer.
//! - [`ring`]: the bounded single-producer single-consumer ring between threads.
//! - [`hostcost`]: what each element costs on this host (the timed build, one thread), for
//!   `pktflow run --predict host`.
//! - [`api`]: the JSON request and result of `pktflow run`; one thread, or run-to-completion
//!   copies of the graph on several threads fed by flow hash from an I/O thread.
//! - [`clickref`]: the same application and trace written for Click, to measure both side by
//!   side.
//! - [`mapping`] and [`staged`]: element groups on threads joined by rings (`--model pipeline`,
//!   `--model hybrid --mapping FILE`).
//!
//! Conventions (docs/runtime.md): a rate is packets taken from the source per second of wall
//! time between the first packet read and the last one processed (setup and flushing the output
//! files excluded); neighbour answers are processed but not counted in it.
pub mod api;
pub mod batch;
pub mod clickref;
pub mod driver;
pub mod engine;
pub mod flow;
pub mod hostcost;
pub mod mapping;
pub mod merge;
pub mod ring;
pub mod staged;
pub mod tasks;
