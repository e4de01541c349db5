//! Application-specific trie signature (appendix A of the NetThreads thesis), built greedily.
//!
//! Training (steps 1 to 4 of the thesis's construction, [`Trie::train`]): the word addresses that
//! transactions accessed in a training trace, with their access counts, form a binary trie of
//! address prefixes. Starting from one leaf covering every address, the leaf with the most
//! accesses that still covers two or more distinct words is split at the highest address bit on
//! which its words differ (path compression: a split always yields two non-empty children), until
//! the leaves plus one catch-all bit reach the bit budget. Each leaf is one signature bit; an
//! address that leaves the trained prefixes (not seen in training) sets the catch-all bit, so the
//! scheme stays safe (no missed conflicts).
//!
//! Refinement (steps 5 to 7, [`Trie::build`]), on a replay of the training trace's transactions
//! ([`super::replay::Replay`]):
//! 5. "Replay the trace and expand the branches causing the most false conflicts": steps 1 to 4
//!    keep [`INITIAL_LEAVES`] leaves; then, while bits remain, the leaf (of two or more words) whose bit is
//!    shared in the most falsely conflicting pairs is split, until no leaf is to blame (the
//!    target: no false conflict on the training replay that a split can remove) or the budget is
//!    spent.
//! 6. "Greedily remove bits that do not hurt": from the least accessed leaf up, a leaf's bit is
//!    given to the neighbouring leaf in address order when that does not raise the training
//!    replay's false conflicts.
//! 7. "Merge bits set together in more than 80% of non-aborted transactions": two bits that are
//!    both set in more than 80% of the training transactions without a conflict (real or false)
//!    that set either become one.
//!
//! A merged bit is still one bit per address, so the scheme stays safe: merging can only add
//! false conflicts, never hide a real one.
use super::replay::Replay;
use std::collections::BTreeMap;

#[derive(Clone, Debug)]
enum Node {
    /// Addresses with `w & mask == value` set signature bit `bit`.
    Leaf { mask: u32, value: u32, bit: u32 },
    /// Addresses with `w & mask == value` go to `kids[(w >> test) & 1]`.
    Inner {
        mask: u32,
        value: u32,
        test: u32,
        kids: [u32; 2],
    },
}

/// A trained trie: a map from byte addresses to signature bits.
#[derive(Clone, Debug)]
pub struct Trie {
    nodes: Vec<Node>,
    bits: u32,
}

/// The common-prefix mask of two words: the bits above the highest bit where they differ.
fn common_mask(a: u32, b: u32) -> u32 {
    let d = a ^ b;
    if d == 0 {
        u32::MAX
    } else {
        !(u32::MAX >> d.leading_zeros())
    }
}

/// A trie under construction: the sorted trained words with their access counts, the nodes, and
/// the leaves as (node, first word, one past the last word, accesses).
struct Builder {
    w: Vec<(u32, u64)>,
    nodes: Vec<Node>,
    leaves: Vec<(u32, usize, usize, u64)>,
}

impl Builder {
    fn new(counts: impl IntoIterator<Item = (u32, u64)>) -> Builder {
        let mut words: BTreeMap<u32, u64> = BTreeMap::new();
        for (a, c) in counts {
            *words.entry(a >> 2).or_default() += c;
        }
        let w: Vec<(u32, u64)> = words.into_iter().collect();
        let mut b = Builder {
            w,
            nodes: Vec::new(),
            leaves: Vec::new(),
        };
        if !b.w.is_empty() {
            let (m, v, c) = b.leaf(0, b.w.len());
            b.nodes.push(Node::Leaf {
                mask: m,
                value: v,
                bit: 0,
            });
            b.leaves.push((0, 0, b.w.len(), c));
        }
        b
    }

    /// Mask, value and accesses of a leaf over words `lo..hi`.
    fn leaf(&self, lo: usize, hi: usize) -> (u32, u32, u64) {
        let m = common_mask(self.w[lo].0, self.w[hi - 1].0);
        let c = self.w[lo..hi].iter().map(|x| x.1).sum();
        (m, self.w[lo].0 & m, c)
    }

    /// Split leaf `pos` (two or more words) at the highest bit where its words differ; the
    /// first child keeps its place in `leaves`, the second is appended.
    fn split(&mut self, pos: usize) {
        let (node, lo, hi, _) = self.leaves[pos];
        let d = self.w[lo].0 ^ self.w[hi - 1].0;
        let test = 31 - d.leading_zeros();
        let mid = lo + self.w[lo..hi].partition_point(|x| (x.0 >> test) & 1 == 0);
        let (mask, value) = match self.nodes[node as usize] {
            Node::Leaf { mask, value, .. } => (mask, value),
            Node::Inner { .. } => unreachable!("leaves list holds leaves"),
        };
        let mut kids = [0u32; 2];
        let mut new = [(0u32, 0usize, 0usize, 0u64); 2];
        for (k, (a, b)) in [(lo, mid), (mid, hi)].into_iter().enumerate() {
            let (m, v, c) = self.leaf(a, b);
            kids[k] = self.nodes.len() as u32;
            self.nodes.push(Node::Leaf {
                mask: m,
                value: v,
                bit: 0,
            });
            new[k] = (kids[k], a, b, c);
        }
        self.nodes[node as usize] = Node::Inner {
            mask,
            value,
            test,
            kids,
        };
        self.leaves[pos] = new[0];
        self.leaves.push(new[1]);
    }

    /// Steps 2 to 4: split the most accessed splittable leaf (ties: the lowest addresses) until
    /// there are `leaves` leaves or nothing splits.
    fn grow_by_accesses(&mut self, leaves: usize) {
        while self.leaves.len() < leaves {
            let Some(pos) = self
                .leaves
                .iter()
                .enumerate()
                .filter(|(_, l)| l.2 - l.1 >= 2)
                .max_by(|a, b| a.1 .3.cmp(&b.1 .3).then(b.1 .1.cmp(&a.1 .1)))
                .map(|(i, _)| i)
            else {
                break;
            };
            self.split(pos);
        }
    }

    /// Leaf index (in `leaves`) of each trained word.
    fn leaf_of_words(&self) -> Vec<u32> {
        let mut of = vec![0u32; self.w.len()];
        for (i, l) in self.leaves.iter().enumerate() {
            of[l.1..l.2].fill(i as u32);
        }
        of
    }

    /// The trie with bit `group[i]` for leaf `i` (groups numbered from 0 without gaps).
    fn finish(mut self, group: &[u32]) -> Trie {
        let n = group.iter().map(|&g| g + 1).max().unwrap_or(0);
        for (i, l) in self.leaves.iter().enumerate() {
            if let Node::Leaf { bit, .. } = &mut self.nodes[l.0 as usize] {
                *bit = group[i];
            }
        }
        Trie {
            nodes: self.nodes,
            bits: n + 1,
        }
    }
}

/// What the refinement steps did, on the training replay.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Refinement {
    /// Signature bits (catch-all included) after steps 1-4, 5, 6 and 7.
    pub bits_after_steps: [u32; 4],
    /// False conflicts on the training replay after steps 1-4, 5, 6 and 7.
    pub training_false_conflicts: [u64; 4],
}

/// The training replay's transactions as sets of trained-word indices.
struct WordTx {
    r: Vec<u32>,
    w: Vec<u32>,
}

/// Indices of `addrs` among the trained words (every address of the training replay is one).
fn word_indices(w: &[(u32, u64)], addrs: &[u32]) -> Vec<u32> {
    addrs
        .iter()
        .filter_map(|&a| w.binary_search_by_key(&(a >> 2), |x| x.0).ok())
        .map(|i| i as u32)
        .collect()
}

/// Sorted distinct bits of a word-index set under `bit_of_word`.
fn bits_of(bit_of_word: &[u32], words: &[u32], out: &mut Vec<u32>) {
    out.clear();
    out.extend(words.iter().map(|&i| bit_of_word[i as usize]));
    out.sort_unstable();
    out.dedup();
}

/// Bits in both sorted sets, appended to `out`.
fn common(a: &[u32], b: &[u32], out: &mut Vec<u32>) {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
}

/// False conflicts of the replay with one bit per word (`bit_of_word`), and per bit the number
/// of falsely conflicting pairs it is shared in (`blame`, length `nbits`), and per transaction
/// whether it conflicts at all (`conflicted`).
fn replay_false(
    replay: &Replay,
    txs: &[WordTx],
    bit_of_word: &[u32],
    nbits: usize,
    mut blame: Option<&mut Vec<u64>>,
    mut conflicted: Option<&mut Vec<bool>>,
) -> u64 {
    let sig: Vec<(Vec<u32>, Vec<u32>)> = txs
        .iter()
        .map(|t| {
            let (mut r, mut w) = (Vec::new(), Vec::new());
            bits_of(bit_of_word, &t.r, &mut r);
            bits_of(bit_of_word, &t.w, &mut w);
            (r, w)
        })
        .collect();
    if let Some(b) = blame.as_deref_mut() {
        b.clear();
        b.resize(nbits, 0);
    }
    if let Some(c) = conflicted.as_deref_mut() {
        c.clear();
        c.extend(replay.real.iter().copied());
    }
    let mut shared = Vec::new();
    let mut n = 0;
    for i in 0..txs.len() {
        if replay.real[i] {
            continue;
        }
        let mut hit = false;
        for &j in &replay.partners[i] {
            let j = j as usize;
            shared.clear();
            let (ri, wi) = (&sig[i].0, &sig[i].1);
            let (rj, wj) = (&sig[j].0, &sig[j].1);
            common(wi, wj, &mut shared);
            common(wi, rj, &mut shared);
            common(ri, wj, &mut shared);
            if shared.is_empty() {
                continue;
            }
            hit = true;
            if let Some(b) = blame.as_deref_mut() {
                shared.sort_unstable();
                shared.dedup();
                for &x in &shared {
                    b[x as usize] += 1;
                }
            } else {
                break;
            }
        }
        if hit {
            n += 1;
            if let Some(c) = conflicted.as_deref_mut() {
                c[i] = true;
            }
        }
    }
    n
}

/// Leaves the access-count trie of steps 1 to 4 keeps before step 5 grows it by false
/// conflicts (the thesis gives no number). Measured on nat-nt (150 packets, 8 contexts): 1, 4 or
/// 16 leaves give the same false conflicts on the evaluation trace from 64 bits up, where
/// starting from half the budget let access-count splits down to single training words
/// overfit (32 false conflicts of 150 at 4,096 bits against 21).
pub const INITIAL_LEAVES: usize = 4;

fn check_budget(bits: u32) -> Result<(), String> {
    if bits < 2 {
        return Err(format!(
            "a trie signature needs at least 2 bits (one leaf and the catch-all), got {bits}"
        ));
    }
    Ok(())
}

/// Bits numbered in address order of the leaves.
fn leaf_order(leaves: &[(u32, usize, usize, u64)]) -> Vec<u32> {
    let mut o: Vec<usize> = (0..leaves.len()).collect();
    o.sort_by_key(|&i| leaves[i].1);
    let mut g = vec![0u32; leaves.len()];
    for (b, &i) in o.iter().enumerate() {
        g[i] = b as u32;
    }
    g
}

/// Group numbers renumbered 0.. without gaps (in order of first use by bit number), and their count.
fn compact(group: &[u32]) -> (Vec<u32>, u32) {
    let mut ids: Vec<u32> = group.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let out = group
        .iter()
        .map(|g| ids.binary_search(g).expect("present") as u32)
        .collect();
    (out, ids.len() as u32)
}

impl Trie {
    /// Train on `(byte address, accesses)` pairs with a budget of `bits` signature bits
    /// (including the catch-all bit; at least 2): steps 1 to 4.
    pub fn train(counts: impl IntoIterator<Item = (u32, u64)>, bits: u32) -> Result<Trie, String> {
        check_budget(bits)?;
        let mut b = Builder::new(counts);
        if b.w.is_empty() {
            // Nothing to learn: every address takes the catch-all bit.
            return Ok(Trie {
                nodes: Vec::new(),
                bits: 1,
            });
        }
        b.grow_by_accesses(bits as usize - 1);
        let order = leaf_order(&b.leaves);
        Ok(b.finish(&order))
    }

    /// Steps 1 to 7: [`Trie::train`] with [`INITIAL_LEAVES`] leaves on the replay's words, each counted
    /// once per transaction that reads or writes it (step 1 records read/write sets), then the
    /// refinement steps on the replay (module documentation). At most `bits` bits (catch-all
    /// included); steps 6 and 7 may leave fewer.
    pub fn build(replay: &Replay, bits: u32) -> Result<(Trie, Refinement), String> {
        check_budget(bits)?;
        let mut counts: BTreeMap<u32, u64> = BTreeMap::new();
        for t in &replay.txs {
            for &a in t.r.iter().chain(&t.w) {
                *counts.entry(a & !3).or_default() += 1;
            }
        }
        let mut b = Builder::new(counts);
        if b.w.is_empty() {
            let t = Trie {
                nodes: Vec::new(),
                bits: 1,
            };
            return Ok((
                t,
                Refinement {
                    bits_after_steps: [1; 4],
                    training_false_conflicts: [0; 4],
                },
            ));
        }
        let budget = bits as usize - 1;
        b.grow_by_accesses(INITIAL_LEAVES.min(budget));
        let txs: Vec<WordTx> = replay
            .txs
            .iter()
            .map(|t| WordTx {
                r: word_indices(&b.w, &t.r),
                w: word_indices(&b.w, &t.w),
            })
            .collect();
        let mut report = Refinement::default();
        let mut blame = Vec::new();
        // Step 5: split the most blamed splittable leaf while bits remain.
        let (leaf_of, f) = loop {
            let leaf_of = b.leaf_of_words();
            let f = replay_false(
                replay,
                &txs,
                &leaf_of,
                b.leaves.len(),
                Some(&mut blame),
                None,
            );
            if report.bits_after_steps[0] == 0 {
                report.bits_after_steps[0] = b.leaves.len() as u32 + 1;
                report.training_false_conflicts[0] = f;
            }
            if b.leaves.len() >= budget || f == 0 {
                break (leaf_of, f);
            }
            let Some(pos) = (0..b.leaves.len())
                .filter(|&i| b.leaves[i].2 - b.leaves[i].1 >= 2 && blame[i] > 0)
                .max_by(|&x, &y| blame[x].cmp(&blame[y]).then(y.cmp(&x)))
            else {
                break (leaf_of, f);
            };
            b.split(pos);
        };
        report.bits_after_steps[1] = b.leaves.len() as u32 + 1;
        report.training_false_conflicts[1] = f;
        // Leaves in address order (`order`) and each leaf's place in it (`rank`): neighbours.
        let rank: Vec<usize> = leaf_order(&b.leaves).iter().map(|&r| r as usize).collect();
        let mut order = vec![0usize; rank.len()];
        for (i, &k) in rank.iter().enumerate() {
            order[k] = i;
        }
        let mut group: Vec<u32> = (0..b.leaves.len() as u32).collect();
        let eval = |group: &[u32], blame: Option<&mut Vec<bool>>| -> u64 {
            let bit_of_word: Vec<u32> = leaf_of.iter().map(|&l| group[l as usize]).collect();
            replay_false(replay, &txs, &bit_of_word, group.len(), None, blame)
        };
        // Step 6: from the least accessed leaf up, share a neighbour's bit when that costs no
        // false conflict.
        let mut by_accesses: Vec<usize> = (0..b.leaves.len()).collect();
        by_accesses.sort_by_key(|&i| (b.leaves[i].3, b.leaves[i].1));
        for &i in &by_accesses {
            let k = rank[i];
            let mut done = false;
            for nb in [k.checked_sub(1), Some(k + 1)].into_iter().flatten() {
                let Some(&j) = order.get(nb) else { continue };
                if done || group[j] == group[i] {
                    continue;
                }
                let (from, to) = (group[i], group[j]);
                let trial: Vec<u32> = group
                    .iter()
                    .map(|&g| if g == from { to } else { g })
                    .collect();
                if eval(&trial, None) <= f {
                    group = trial;
                    done = true;
                }
            }
        }
        let (g6, n6) = compact(&group);
        report.bits_after_steps[2] = n6 + 1;
        report.training_false_conflicts[2] = eval(&group, None);
        // Step 7: merge bits set together in more than 80% of the transactions without a
        // conflict that set either.
        let mut conflicted = Vec::new();
        eval(&g6, Some(&mut conflicted));
        let bit_of_word: Vec<u32> = leaf_of.iter().map(|&l| g6[l as usize]).collect();
        let mut alone = vec![0u64; n6 as usize];
        let mut pairs: BTreeMap<(u32, u32), u64> = BTreeMap::new();
        let mut set = Vec::new();
        for (i, t) in txs.iter().enumerate() {
            if conflicted[i] {
                continue;
            }
            set.clear();
            set.extend(t.r.iter().chain(&t.w).map(|&x| bit_of_word[x as usize]));
            set.sort_unstable();
            set.dedup();
            for (x, &a) in set.iter().enumerate() {
                alone[a as usize] += 1;
                for &c in &set[x + 1..] {
                    *pairs.entry((a, c)).or_default() += 1;
                }
            }
        }
        let mut cand: Vec<(f64, u32, u32)> = pairs
            .iter()
            .filter_map(|(&(a, c), &both)| {
                let either = alone[a as usize] + alone[c as usize] - both;
                let share = both as f64 / either as f64;
                (share > 0.8).then_some((share, a, c))
            })
            .collect();
        cand.sort_by(|x, y| y.0.total_cmp(&x.0).then((x.1, x.2).cmp(&(y.1, y.2))));
        let mut to: Vec<u32> = (0..n6).collect();
        let mut merged = vec![false; n6 as usize];
        for (_, a, c) in cand {
            if merged[a as usize] || merged[c as usize] {
                continue;
            }
            merged[a as usize] = true;
            merged[c as usize] = true;
            to[c as usize] = a;
        }
        let g7: Vec<u32> = g6.iter().map(|&g| to[g as usize]).collect();
        let (g7, n7) = compact(&g7);
        report.bits_after_steps[3] = n7 + 1;
        report.training_false_conflicts[3] = eval(&g7, None);
        Ok((b.finish(&g7), report))
    }

    /// Signature bits (leaves plus the catch-all).
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The catch-all bit.
    pub fn catch_all(&self) -> u32 {
        self.bits - 1
    }

    /// The bit of byte address `addr`.
    #[inline]
    pub fn bit(&self, addr: u32) -> u32 {
        let w = addr >> 2;
        let mut i = 0usize;
        loop {
            match self.nodes.get(i) {
                None => return self.catch_all(),
                Some(Node::Leaf { mask, value, bit }) => {
                    return if w & mask == *value {
                        *bit
                    } else {
                        self.catch_all()
                    }
                }
                Some(Node::Inner {
                    mask,
                    value,
                    test,
                    kids,
                }) => {
                    if w & mask != *value {
                        return self.catch_all();
                    }
                    i = kids[((w >> test) & 1) as usize] as usize;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hot_words_get_bits_of_their_own_and_unknown_addresses_the_catch_all() {
        // Four hot words and a cold cluster.
        let mut c = vec![(0x1000, 100), (0x1004, 90), (0x8000, 80), (0x8010, 70)];
        c.extend((0..16).map(|i| (0x4_0000 + 4 * i, 1)));
        let t = Trie::train(c, 6).unwrap();
        assert_eq!(t.bits(), 6);
        let hot: std::collections::HashSet<u32> = [0x1000, 0x1004, 0x8000, 0x8010]
            .iter()
            .map(|&a| t.bit(a))
            .collect();
        assert_eq!(hot.len(), 4, "each hot word has its own bit");
        let cold = t.bit(0x4_0000);
        assert!(!hot.contains(&cold));
        assert_eq!(
            t.bit(0x4_0000 + 4 * 7),
            cold,
            "the cold cluster shares a leaf"
        );
        assert_eq!(t.bit(0x7777_0000), t.catch_all());
        assert_eq!(t.bit(0x1002), t.bit(0x1000), "word granularity");
    }

    use crate::tm::replay::{Replay, Tx};
    use proptest::prelude::*;

    fn tx(packet: u32, r: &[u32], w: &[u32]) -> Tx {
        Tx::new(packet, r.to_vec(), w.to_vec())
    }

    #[test]
    fn step_5_splits_the_leaf_behind_a_false_conflict_and_step_6_frees_harmless_bits() {
        let (a, b) = (0x100, 0x104);
        let hot = [0x8000, 0x8004, 0x8008, 0x800c];
        // Packets 0 and 1 run side by side: 0 writes A, 1 reads B (no real conflict). Then
        // many packets only read the hot words (reads never conflict).
        let mut txs = vec![tx(0, &[], &[a]), tx(1, &[b], &[])];
        for p in 2..40 {
            txs.push(tx(p, &hot, &[]));
        }
        let replay = Replay::new(txs, 2);
        assert!(replay.real.iter().all(|&r| !r));
        let (t, r) = Trie::build(&replay, 6).unwrap();
        // Steps 1-4 by accesses: {A, B} and three leaves of hot words.
        assert_eq!(r.bits_after_steps[0], 5);
        assert_eq!(r.training_false_conflicts[0], 1, "A and B share a bit");
        assert_eq!(r.bits_after_steps[1], 6, "step 5 split {{A, B}}");
        assert_eq!(r.training_false_conflicts[1], 0);
        assert_ne!(t.bit(a), t.bit(b));
        // Step 6: B (only read beside a write to A) and the hot words (only read) share one
        // bit; A keeps its own.
        assert_eq!(r.bits_after_steps[2], 3);
        assert_eq!(r.training_false_conflicts[2], 0);
        assert_eq!(t.bit(b), t.bit(hot[0]));
        assert_eq!(t.bit(hot[3]), t.bit(hot[0]));
        assert_eq!(t.bits(), 3);
        assert_eq!(t.bit(0x7777_0000), t.catch_all());
    }

    #[test]
    fn step_7_merges_bits_that_are_set_together() {
        // X and Y are always read together; Z, between them in the address space, is written
        // by the other packets, so step 6 cannot give Z's bit to either neighbour.
        let (x, z, y) = (0x1000, 0x5000, 0x9_0000);
        let txs: Vec<Tx> = (0..20)
            .map(|p| {
                if p % 2 == 0 {
                    tx(p, &[x, y], &[])
                } else {
                    tx(p, &[], &[z])
                }
            })
            .collect();
        let (t, r) = Trie::build(&Replay::new(txs, 2), 8).unwrap();
        assert_eq!(r.bits_after_steps, [4, 4, 4, 3]);
        assert_eq!(r.training_false_conflicts, [0; 4]);
        assert_eq!(t.bit(x), t.bit(y));
        assert_ne!(t.bit(z), t.bit(x));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Every refined trie stays within its budget, maps every address to one of its bits,
        /// and its steps never add training false conflicts except by merging in step 7.
        #[test]
        fn refinement_stays_in_budget_and_step_5_never_hurts(
            sets in prop::collection::vec(
                (0u32..6, prop::collection::vec(0u32..64, 0..5), prop::collection::vec(0u32..64, 0..3)),
                1..60),
            bits in 2u32..40,
            contexts in 1u32..8,
        ) {
            let txs: Vec<Tx> = sets
                .iter()
                .map(|(p, r, w)| {
                    Tx::new(*p, r.iter().map(|x| x * 4).collect(), w.iter().map(|x| x * 4).collect())
                })
                .collect();
            let (t, r) = Trie::build(&Replay::new(txs, contexts), bits).unwrap();
            prop_assert!(t.bits() <= bits);
            prop_assert!(r.training_false_conflicts[1] <= r.training_false_conflicts[0]);
            prop_assert_eq!(r.training_false_conflicts[2], r.training_false_conflicts[1]);
            prop_assert!(r.bits_after_steps[3] <= r.bits_after_steps[2]);
            prop_assert!(r.bits_after_steps[2] <= r.bits_after_steps[1]);
            prop_assert_eq!(r.bits_after_steps[3], t.bits());
            for a in (0u32..300).step_by(4) {
                prop_assert!(t.bit(a) < t.bits());
            }
        }
    }

    #[test]
    fn budget_limits_the_bits_and_tiny_budgets_are_refused() {
        let c: Vec<(u32, u64)> = (0..1000u32).map(|i| (i * 4, 1 + i as u64 % 7)).collect();
        for b in [2u32, 3, 17, 100] {
            let t = Trie::train(c.clone(), b).unwrap();
            assert_eq!(t.bits(), b);
            for a in (0..4000u32).step_by(4) {
                assert!(t.bit(a) < t.bits());
            }
        }
        assert!(Trie::train(c, 1).is_err());
        let empty = Trie::train(Vec::new(), 8).unwrap();
        assert_eq!(empty.bit(1234), empty.catch_all());
    }
}
