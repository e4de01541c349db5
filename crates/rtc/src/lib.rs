//! Run-to-completion packet processing on fine-grained multithreaded cores (the NetThreads
//! soft multiprocessor) with locks or transactional memory (NetTM), after the NetThreads thesis
//! (docs/sources.md). See docs/rtc.md for every convention.
//!
//! * [`workload`]: thread programs from functional traces (run to completion: a packet's whole
//!   trace), the thesis's echo, and appendix B's parametric benchmark;
//! * [`engine`]: the cycle-level machine (cores, thread contexts, schedulers, shared data cache,
//!   memory queue, mutex unit, input buffering, NetTM);
//! * [`engines`]: the harness's engine registry (`npsim`, `rtc`);
//! * [`tm`]: the reusable conflict-detection layer (signatures, hashes, contention managers),
//!   independent of the engine;
//! * [`compare`]: every execution model an architecture supports, side by side;
//! * [`plan`]: a TDPM plan as an explicit mapping of the NP simulator;
//! * [`conflicts`]: conflicting packets within windows, from the traces alone;
//! * [`study`]: appendix A's study of signature hashes (false conflicts against signature size);
//! * [`api`]: the JSON request/result of `pktflow rtc` and `pktflow conflicts`, and the maximum
//!   sustainable rate search.
pub mod api;
pub mod compare;
pub mod conflicts;
pub mod engine;
pub mod engines;
pub mod plan;
pub mod study;
pub mod tm;
pub mod workload;
