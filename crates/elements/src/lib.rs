//! Functional Click elements with cost annotations, element registry, validation, and the single-threaded functional run that produces per-packet traces
