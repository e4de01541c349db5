//! Transactions replayed offline, without timing (appendix A of the NetThreads thesis): each with
//! the exact sets of shared words it reads and writes, the transactions that run beside it, and
//! whether it truly conflicts with one of them. The signature study and the trie's refinement
//! steps both measure false conflicts on such a replay.
//!
//! Concurrency: transaction `i` runs beside the `contexts - 1` transactions before it in the
//! pool's order (as if the machine's contexts took consecutive transactions), leaving out those of
//! its own packet (one thread runs them one after another). Two transactions conflict when "their
//! write sets intersect or a write set intersects a read set".
use pktflow_model::sorted_sets_meet;

/// One transaction: its packet and sorted distinct byte addresses (word-aligned) read/written.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tx {
    pub packet: u32,
    pub r: Vec<u32>,
    pub w: Vec<u32>,
}

impl Tx {
    /// A transaction of `packet` reading `r` and writing `w` (byte addresses, word-aligned;
    /// sorted and deduplicated here).
    pub fn new(packet: u32, mut r: Vec<u32>, mut w: Vec<u32>) -> Tx {
        for v in [&mut r, &mut w] {
            v.sort_unstable();
            v.dedup();
        }
        Tx { packet, r, w }
    }
}

/// The exact conflict rule on two transactions' sets.
pub fn exact_conflict(a: &Tx, b: &Tx) -> bool {
    sorted_sets_meet(&a.w, &b.w) || sorted_sets_meet(&a.w, &b.r) || sorted_sets_meet(&a.r, &b.w)
}

/// Transactions with their concurrent partners and real conflicts.
#[derive(Clone, Debug)]
pub struct Replay {
    pub txs: Vec<Tx>,
    /// Indices of the transactions each one runs beside (earlier ones, other packets).
    pub partners: Vec<Vec<u32>>,
    /// Whether each transaction conflicts, with exact sets, with one of its partners.
    pub real: Vec<bool>,
}

impl Replay {
    /// `contexts` (at least 1) transactions run at once.
    pub fn new(txs: Vec<Tx>, contexts: u32) -> Replay {
        let c = contexts.max(1) as usize;
        let partners: Vec<Vec<u32>> = (0..txs.len())
            .map(|i| {
                (i.saturating_sub(c - 1)..i)
                    .filter(|&j| txs[j].packet != txs[i].packet)
                    .map(|j| j as u32)
                    .collect()
            })
            .collect();
        let real = (0..txs.len())
            .map(|i| {
                partners[i]
                    .iter()
                    .any(|&j| exact_conflict(&txs[i], &txs[j as usize]))
            })
            .collect();
        Replay {
            txs,
            partners,
            real,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tx(packet: u32, r: &[u32], w: &[u32]) -> Tx {
        Tx::new(packet, r.to_vec(), w.to_vec())
    }

    #[test]
    fn partners_are_earlier_transactions_of_other_packets_and_reads_alone_do_not_conflict() {
        let txs = vec![
            tx(0, &[4], &[]),
            tx(0, &[8], &[4]), // same packet as 0: not a partner of it
            tx(1, &[4], &[]),  // reads what transaction 1 writes: real
            tx(2, &[4], &[]),  // window of 2: only transaction 2 beside it, read/read
        ];
        let r = Replay::new(txs, 2);
        assert_eq!(r.partners, vec![vec![], vec![], vec![1], vec![2]]);
        assert_eq!(r.real, vec![false, false, true, false]);
    }
}
