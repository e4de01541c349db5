//! Packets whose processing conflicts within a window of consecutive packets (Figure 8.1 of the
//! NetThreads thesis), from the functional traces alone.
//!
//! Conventions: a packet's read set and write set are the persistent-state locations (object and
//! key) its trace reads and writes (static and dynamic state; packet data, meta-data and stack
//! are private to the packet). Two packets conflict when "their write sets intersect or a write
//! set intersects a read set" (the thesis's definition). For a window of `w` packets, the packet
//! sequence is cut into consecutive non-overlapping windows of `w` packets (a last partial
//! window is ignored), as if `w` threads processed them at once; a packet counts as conflicting
//! when it conflicts with at least one other packet of its window. The fraction is conflicting
//! packets over packets in whole windows.
//!
//! Lock words: accesses the trace marks as an application's software lock
//! ([`pktflow_model::LockMark`]) are left out by default, so the sets hold data only, as in the
//! thesis's Figure 8.1 (its NetTM programs have no lock words: the lock calls are transaction
//! boundaries). [`Sets::of`] with `lock_words` keeps them (every packet then meets every other
//! packet that takes the same lock).
use pktflow_model::{sorted_sets_meet, AccessKind, PacketTrace};
use serde::Serialize;

/// Read and write sets of one packet, as sorted location lists.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sets {
    pub reads: Vec<(u32, u64)>,
    pub writes: Vec<(u32, u64)>,
}

impl Sets {
    /// The sets of one traced packet; `lock_words`: include the lock-word accesses.
    pub fn of(t: &PacketTrace, lock_words: bool) -> Sets {
        let mut s = Sets::default();
        for a in &t.accesses {
            if !a.mem.is_persistent() || (!lock_words && !a.lock.is_none()) {
                continue;
            }
            match a.kind {
                AccessKind::Read => s.reads.push((a.object, a.key)),
                AccessKind::Write => s.writes.push((a.object, a.key)),
            }
        }
        s.reads.sort_unstable();
        s.reads.dedup();
        s.writes.sort_unstable();
        s.writes.dedup();
        s
    }
}

/// The thesis's conflict relation between two packets.
pub fn conflict(a: &Sets, b: &Sets) -> bool {
    sorted_sets_meet(&a.writes, &b.writes)
        || sorted_sets_meet(&a.writes, &b.reads)
        || sorted_sets_meet(&a.reads, &b.writes)
}

/// Objects in the intersections of conflicting packet pairs within windows of `w` packets:
/// `(object, pairs)`, most pairs first.
pub fn conflicting_objects(sets: &[Sets], w: u32) -> Vec<(u32, u64)> {
    let mut count: std::collections::BTreeMap<u32, u64> = Default::default();
    let mut objs: Vec<u32> = Vec::new();
    for chunk in sets.chunks_exact(w.max(2) as usize) {
        for i in 0..chunk.len() {
            for j in i + 1..chunk.len() {
                objs.clear();
                let (a, b) = (&chunk[i], &chunk[j]);
                for (x, y) in [
                    (&a.writes, &b.writes),
                    (&a.writes, &b.reads),
                    (&a.reads, &b.writes),
                ] {
                    for l in x {
                        if y.binary_search(l).is_ok() && !objs.contains(&l.0) {
                            objs.push(l.0);
                        }
                    }
                }
                for o in &objs {
                    *count.entry(*o).or_default() += 1;
                }
            }
        }
    }
    let mut v: Vec<(u32, u64)> = count.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct WindowPoint {
    pub window: u32,
    pub packets: u64,
    pub conflicting: u64,
    pub fraction: f64,
}

/// Largest window accepted.
pub const MAX_WINDOW: u32 = 4096;

/// Conflict fractions for every window size in `lo..=hi`.
pub fn windows(sets: &[Sets], lo: u32, hi: u32) -> Result<Vec<WindowPoint>, String> {
    if lo < 2 || hi < lo || hi > MAX_WINDOW {
        return Err(format!(
            "--window must be LO:HI with 2 <= LO <= HI <= {MAX_WINDOW}, got {lo}:{hi}"
        ));
    }
    let mut out = Vec::new();
    let mut hit = vec![false; hi as usize];
    for w in lo..=hi {
        let w = w as usize;
        let mut packets = 0u64;
        let mut conflicting = 0u64;
        for chunk in sets.chunks_exact(w) {
            pktflow_model::cancel::check().map_err(|e| e.to_string())?;
            hit[..w].fill(false);
            for i in 0..w {
                for j in i + 1..w {
                    if (!hit[i] || !hit[j]) && conflict(&chunk[i], &chunk[j]) {
                        hit[i] = true;
                        hit[j] = true;
                    }
                }
            }
            packets += w as u64;
            conflicting += hit[..w].iter().filter(|&&h| h).count() as u64;
        }
        out.push(WindowPoint {
            window: w as u32,
            packets,
            conflicting,
            fraction: if packets == 0 {
                0.0
            } else {
                conflicting as f64 / packets as f64
            },
        });
    }
    Ok(out)
}

/// Parse `LO:HI` (or a single `N`).
pub fn parse_window(s: &str) -> Result<(u32, u32), String> {
    let bad = || format!("--window must be LO:HI (e.g. 2:16) or N, got '{s}'");
    let (a, b) = match s.split_once(':') {
        Some((a, b)) => (a, b),
        None => (s, s),
    };
    let lo: u32 = a.trim().parse().map_err(|_| bad())?;
    let hi: u32 = b.trim().parse().map_err(|_| bad())?;
    if lo < 2 || hi < lo || hi > MAX_WINDOW {
        return Err(format!(
            "--window must be LO:HI with 2 <= LO <= HI <= {MAX_WINDOW}, got '{s}'"
        ));
    }
    Ok((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(r: &[u64], w: &[u64]) -> Sets {
        Sets {
            reads: r.iter().map(|&k| (1, k)).collect(),
            writes: w.iter().map(|&k| (1, k)).collect(),
        }
    }

    #[test]
    fn read_read_does_not_conflict_but_any_write_overlap_does() {
        assert!(!conflict(&s(&[1], &[]), &s(&[1], &[])));
        assert!(conflict(&s(&[1], &[]), &s(&[], &[1])));
        assert!(conflict(&s(&[], &[1]), &s(&[], &[1])));
        assert!(!conflict(&s(&[1], &[2]), &s(&[3], &[4])));
    }

    #[test]
    fn fraction_counts_packets_with_a_conflicting_partner_in_their_window() {
        // Packets 0 and 1 write key 7; 2 and 3 are independent.
        let v = vec![s(&[], &[7]), s(&[], &[7]), s(&[1], &[2]), s(&[3], &[4])];
        let p = windows(&v, 2, 4).unwrap();
        assert_eq!(p[0].conflicting, 2); // windows {0,1} {2,3}
        assert_eq!(p[0].packets, 4);
        assert_eq!(p[1].packets, 3); // one window {0,1,2}
        assert_eq!(p[1].conflicting, 2);
        assert!((p[2].fraction - 0.5).abs() < 1e-12);
        assert!(windows(&v, 1, 4).is_err());
        assert!(windows(&v, 5, 4).is_err());
        let objs = conflicting_objects(&v, 2);
        assert_eq!(objs, vec![(1, 1)]);
    }

    #[test]
    fn window_parsing() {
        assert_eq!(parse_window("2:16").unwrap(), (2, 16));
        assert_eq!(parse_window("8").unwrap(), (8, 8));
        for bad in ["", "1:4", "4:2", "a:b", "2:99999", "-2:4"] {
            assert!(parse_window(bad).is_err(), "{bad}");
        }
    }
}
