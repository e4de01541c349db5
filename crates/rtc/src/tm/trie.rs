//! Application-specific trie signature (appendix A of the NetThreads thesis), built greedily.
//!
//! Training (steps 1 to 4 of the thesis's construction): the word addresses that transactions
//! accessed in a training trace, with their access counts, form a binary trie of address
//! prefixes. Starting from one leaf covering every address, the leaf with the most accesses that
//! still covers two or more distinct words is split at the highest address bit on which its
//! words differ (path compression: a split always yields two non-empty children), until the
//! leaves plus one catch-all bit reach the bit budget. Each leaf is one signature bit; an address
//! that leaves the trained prefixes (not seen in training) sets the catch-all bit, so the
//! scheme stays safe (no missed conflicts). The refinement steps 5 to 7 (expanding the branches
//! that cause false conflicts on a replay, removing and merging bits) are not implemented.
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

/// Mask of the bits above and including the highest bit where `a` and `b` differ... inverted:
/// the common-prefix mask of the two words.
fn common_mask(a: u32, b: u32) -> u32 {
    let d = a ^ b;
    if d == 0 {
        u32::MAX
    } else {
        !(u32::MAX >> d.leading_zeros())
    }
}

impl Trie {
    /// Train on `(byte address, accesses)` pairs with a budget of `bits` signature bits
    /// (including the catch-all bit; at least 2).
    pub fn train(counts: impl IntoIterator<Item = (u32, u64)>, bits: u32) -> Result<Trie, String> {
        if bits < 2 {
            return Err(format!(
                "a trie signature needs at least 2 bits (one leaf and the catch-all), got {bits}"
            ));
        }
        let mut words: BTreeMap<u32, u64> = BTreeMap::new();
        for (a, c) in counts {
            *words.entry(a >> 2).or_default() += c;
        }
        let w: Vec<(u32, u64)> = words.into_iter().collect();
        let mut nodes: Vec<Node> = Vec::new();
        if w.is_empty() {
            // Nothing to learn: every address takes the catch-all bit.
            return Ok(Trie { nodes, bits: 1 });
        }
        // Leaves as (node index, lo, hi, count) over the sorted words.
        let leaf = |lo: usize, hi: usize| -> (u32, u32, u64) {
            let m = common_mask(w[lo].0, w[hi - 1].0);
            let c = w[lo..hi].iter().map(|x| x.1).sum();
            (m, w[lo].0 & m, c)
        };
        let (m, v, c) = leaf(0, w.len());
        nodes.push(Node::Leaf {
            mask: m,
            value: v,
            bit: 0,
        });
        let mut leaves: Vec<(u32, usize, usize, u64)> = vec![(0, 0, w.len(), c)];
        while (leaves.len() as u32) < bits - 1 {
            // The most accessed splittable leaf (ties: the lowest addresses).
            let Some(pos) = leaves
                .iter()
                .enumerate()
                .filter(|(_, l)| l.2 - l.1 >= 2)
                .max_by(|a, b| a.1 .3.cmp(&b.1 .3).then(b.1 .1.cmp(&a.1 .1)))
                .map(|(i, _)| i)
            else {
                break;
            };
            let (node, lo, hi, _) = leaves[pos];
            let d = w[lo].0 ^ w[hi - 1].0;
            let test = 31 - d.leading_zeros();
            let mid = lo + w[lo..hi].partition_point(|x| (x.0 >> test) & 1 == 0);
            let (mask, value) = match nodes[node as usize] {
                Node::Leaf { mask, value, .. } => (mask, value),
                Node::Inner { .. } => unreachable!("leaves list holds leaves"),
            };
            let mut kids = [0u32; 2];
            let mut new = Vec::with_capacity(2);
            for (k, (a, b)) in [(lo, mid), (mid, hi)].into_iter().enumerate() {
                let (m, v, c) = leaf(a, b);
                kids[k] = nodes.len() as u32;
                nodes.push(Node::Leaf {
                    mask: m,
                    value: v,
                    bit: 0,
                });
                new.push((kids[k], a, b, c));
            }
            nodes[node as usize] = Node::Inner {
                mask,
                value,
                test,
                kids,
            };
            leaves.swap_remove(pos);
            leaves.extend(new);
        }
        // Bits in address order of the leaves.
        leaves.sort_by_key(|l| l.1);
        for (b, l) in leaves.iter().enumerate() {
            if let Node::Leaf { bit, .. } = &mut nodes[l.0 as usize] {
                *bit = b as u32;
            }
        }
        let n = leaves.len() as u32;
        Ok(Trie { nodes, bits: n + 1 })
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
