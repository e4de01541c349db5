//! Mapping tables that several elements of one router use together, as Click's elements call
//! one another's methods: FTPPortMapper installs mappings into the rewriter it names and
//! shifts the sequence numbers of TCPRewriter's control flow; ICMPRewriter reads the mappings
//! of the rewriters it names.
//!
//! Each rewriter's [`FlowTable`] lives in a [`RewriterState`] registered under the rewriter's
//! element name in the router's [`crate::conf::Shared`]. The rewriter holds the table while it
//! processes a packet (it takes it out of the registry's slot and puts it back), so its own
//! code is unchanged; the other elements lock the slot between packets. A functional run is
//! single-threaded, so the locks are never contended.
use super::flow::FlowTable;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A rewriter's table and what the elements that use it need to know.
pub struct RewriterState {
    pub table: Box<FlowTable>,
    /// Graph index of the rewriter (the owner of the table's state objects, for cost records
    /// of accesses other elements make to it). `u32::MAX` until the rewriter registers.
    pub element: u32,
    /// Class of the registered rewriter (`IPRewriter`, `TCPRewriter`, `IPAddrRewriter`), or
    /// empty while none has registered under the name.
    pub class: String,
    /// Lifetime of a mapping installed by another element before the flow has carried data
    /// (the rewriter's TCP_NODATA_TIMEOUT).
    pub new_flow_timeout_ns: u64,
    /// Outputs of the rewriter (mappings installed by others must name one of them).
    pub noutputs: usize,
}

impl Default for RewriterState {
    fn default() -> Self {
        RewriterState {
            table: Box::new(FlowTable::new(1024, 0)),
            element: u32::MAX,
            class: String::new(),
            new_flow_timeout_ns: 300_000_000_000,
            noutputs: 0,
        }
    }
}

pub type SharedRewriter = Arc<Mutex<RewriterState>>;

/// Named shared objects of one router (created on first use, whichever element asks first).
pub struct Registry<T>(Mutex<HashMap<String, Arc<Mutex<T>>>>);

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Registry(Mutex::new(HashMap::new()))
    }
}

impl<T> std::fmt::Debug for Registry<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let n = self.0.lock().map(|m| m.len()).unwrap_or(0);
        write!(f, "Registry({n} entries)")
    }
}

impl<T: Default> Registry<T> {
    /// The object registered under `name`, created empty if none is.
    pub fn get(&self, name: &str) -> Arc<Mutex<T>> {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        m.entry(name.to_string()).or_default().clone()
    }
}

/// Lock a shared object (a poisoned lock only means a panic elsewhere; the data is still
/// consistent for a functional run, which is single-threaded).
pub fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Sequence-number comparison modulo 2^32 (RFC 793): `a` after `b`.
pub fn seq_gt(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_shares_one_object_per_name() {
        let r: Registry<RewriterState> = Registry::default();
        let a = r.get("rw");
        lock(&a).element = 7;
        assert_eq!(lock(&r.get("rw")).element, 7);
        assert_eq!(lock(&r.get("other")).element, u32::MAX);
        assert!(seq_gt(5, 3) && !seq_gt(3, 5) && seq_gt(2, u32::MAX - 1));
    }
}
