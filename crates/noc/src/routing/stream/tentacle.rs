//! `tentacle`: the paper's sequential depth-first circuit search with hard link reservations
//! (`routing::tentacle`), retried over `retries` other stream orders; circuits when every
//! stream finds a path, else every stream falls back to XY packet routing.
use super::{circuits_or_dor, Routed, StreamInput, StreamRouting};
use crate::routing::tentacle_retry;

pub struct Tentacle;

impl StreamRouting for Tentacle {
    fn name(&self) -> &'static str {
        "tentacle"
    }
    fn describe(&self) -> &'static str {
        "circuits found by a sequential depth-first search with link reservations; falls back to dor"
    }
    fn relayout_on_fallback(&self) -> bool {
        true
    }
    fn route(&self, input: &StreamInput) -> Routed {
        let (res, attempts) = tentacle_retry(input.mesh, input.streams, input.retries, input.seed);
        let detail = match res.failed_stream {
            Some(s) => format!(
                "stream {s} found no free path after exhaustive search; all streams fall back to DOR"
            ),
            None => format!("disjoint paths for all {} streams", input.streams.len()),
        };
        let failed = res.failed_stream;
        let paths = res.paths.clone();
        circuits_or_dor(paths, failed, attempts, detail, Some(res))
    }
}
