//! Signature hash functions (appendix A of the NetThreads thesis): an address maps to one bit per
//! hash function, each hash indexing its own partition of the signature.
//!
//! Addresses are byte addresses; every scheme works on the word address (`addr >> 2`), since
//! conflicts are detected at word granularity.
use super::trie::Trie;
use serde::{Deserialize, Serialize};

/// Which hash scheme maps addresses to signature bits.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignatureKind {
    /// Exact read/write sets (no false conflicts): the reference of appendix A.
    Perfect,
    /// The least significant word-address bits.
    #[default]
    Bitsel,
    /// H3: XOR of random words selected by the address bits (h = aH).
    H3,
    /// PBX: low-order (high-entropy) bits XORed with higher-order (low-entropy) bits.
    Pbx,
    /// LE-PBX: PBX over a window that slides towards the high bits for successive hashes.
    Lepbx,
    /// Application-specific trie trained on another trace ([`Trie`]).
    Trie,
}

impl SignatureKind {
    pub const ALL: [SignatureKind; 6] = [
        SignatureKind::Perfect,
        SignatureKind::Bitsel,
        SignatureKind::H3,
        SignatureKind::Pbx,
        SignatureKind::Lepbx,
        SignatureKind::Trie,
    ];
    pub fn name(self) -> &'static str {
        match self {
            SignatureKind::Perfect => "perfect",
            SignatureKind::Bitsel => "bitsel",
            SignatureKind::H3 => "h3",
            SignatureKind::Pbx => "pbx",
            SignatureKind::Lepbx => "lepbx",
            SignatureKind::Trie => "trie",
        }
    }
    pub fn parse(s: &str) -> Result<SignatureKind, String> {
        SignatureKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!(
                    "unknown signature '{s}' (expected perfect, bitsel, h3, pbx, lepbx or trie)"
                )
            })
    }
    /// Hash functions (Bloom partitions) the scheme uses by default: the thesis uses 4 for the
    /// general-purpose multi-hash schemes, and one bit per address for bit selection (the
    /// block-RAM table of chapter 8) and the trie.
    pub fn default_hashes(self) -> u32 {
        match self {
            SignatureKind::H3 | SignatureKind::Pbx | SignatureKind::Lepbx => 4,
            _ => 1,
        }
    }
}

/// A configured hash: `k` functions, each into a partition of `part` bits.
#[derive(Clone, Debug)]
pub struct Hasher {
    pub kind: SignatureKind,
    pub k: u32,
    pub part: u32,
    /// log2 of the partition size rounded up (bits of address a hash consumes).
    width: u32,
    /// H3 matrices: `k` x 32 random words.
    h3: Vec<u32>,
    trie: Option<Trie>,
}

fn splitmix(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Hasher {
    /// `bits` signature bits split equally into `k` partitions (`bits >= k`); `seed` draws the
    /// H3 matrices; `trie` is required for [`SignatureKind::Trie`] (its leaf count sets `bits`).
    pub fn new(
        kind: SignatureKind,
        bits: u32,
        k: u32,
        seed: u64,
        trie: Option<Trie>,
    ) -> Result<Hasher, String> {
        if k == 0 || k > 8 {
            return Err(format!("signature hashes must be 1 to 8, got {k}"));
        }
        let (bits, k) = match (&trie, kind) {
            (Some(t), SignatureKind::Trie) => (t.bits(), 1),
            (None, SignatureKind::Trie) => {
                return Err("the trie signature needs a trained trie".into())
            }
            _ => (bits, k),
        };
        if bits < k {
            return Err(format!(
                "a signature of {bits} bits cannot hold {k} hash partitions"
            ));
        }
        let part = bits / k;
        let width = 32 - (part.max(2) - 1).leading_zeros();
        let mut s = seed ^ 0x4833;
        let h3 = (0..k * 32).map(|_| splitmix(&mut s) as u32).collect();
        Ok(Hasher {
            kind,
            k,
            part,
            width,
            h3,
            trie,
        })
    }

    /// Total signature bits.
    pub fn bits(&self) -> u32 {
        self.part * self.k
    }

    /// The bit of hash `i` (0..k) for byte address `addr`, as an index into the whole signature
    /// (partition `i` holds bits `i*part .. (i+1)*part`).
    #[inline]
    pub fn bit(&self, i: u32, addr: u32) -> u32 {
        let a = addr >> 2;
        let w = self.width;
        let h = match self.kind {
            SignatureKind::Perfect | SignatureKind::Bitsel => a,
            SignatureKind::H3 => {
                let m = &self.h3[(i * 32) as usize..(i * 32 + 32) as usize];
                let mut h = 0u32;
                let mut x = a;
                while x != 0 {
                    let b = x.trailing_zeros();
                    h ^= m[b as usize];
                    x &= x - 1;
                }
                h
            }
            SignatureKind::Pbx => {
                // Hash i XORs the low `w` bits with the bits (i+1)*w above them.
                a ^ a.checked_shr((i + 1) * w).unwrap_or(0)
            }
            SignatureKind::Lepbx => {
                // Hash i drops i more low bits (locality) and XORs the window with the bits
                // `w` above it, as PBX does.
                let x = a >> i;
                x ^ x.checked_shr(w).unwrap_or(0)
            }
            SignatureKind::Trie => {
                return self.trie.as_ref().map(|t| t.bit(addr)).unwrap_or(0);
            }
        };
        i * self.part + (h % self.part)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_stay_in_their_partition_for_every_scheme() {
        for kind in [
            SignatureKind::Bitsel,
            SignatureKind::H3,
            SignatureKind::Pbx,
            SignatureKind::Lepbx,
        ] {
            let h = Hasher::new(kind, 100, kind.default_hashes(), 7, None).unwrap();
            for a in (0..100_000u32).step_by(37) {
                for i in 0..h.k {
                    let b = h.bit(i, a * 4);
                    assert!(b >= i * h.part && b < (i + 1) * h.part, "{kind:?}");
                }
            }
        }
    }

    #[test]
    fn bit_selection_takes_the_low_word_address_bits() {
        let h = Hasher::new(SignatureKind::Bitsel, 1024, 1, 0, None).unwrap();
        assert_eq!(h.bit(0, 4 * 5), 5);
        assert_eq!(h.bit(0, 4 * (1024 + 5)), 5);
        assert_eq!(h.bit(0, 4 * 5 + 3), 5); // same word
    }

    #[test]
    fn lepbx_maps_neighbouring_words_to_shared_bits_in_later_hashes() {
        let h = Hasher::new(SignatureKind::Lepbx, 4096, 4, 0, None).unwrap();
        // Hash 3 drops three low bits: words 8..16 share its bit.
        let b: Vec<u32> = (8..16).map(|w| h.bit(3, w * 4)).collect();
        assert!(b.iter().all(|&x| x == b[0]));
        // Hash 0 tells them apart.
        let b0: std::collections::HashSet<u32> = (8..16).map(|w| h.bit(0, w * 4)).collect();
        assert_eq!(b0.len(), 8);
    }

    #[test]
    fn bad_sizes_are_refused() {
        assert!(Hasher::new(SignatureKind::H3, 3, 4, 0, None).is_err());
        assert!(Hasher::new(SignatureKind::H3, 64, 0, 0, None).is_err());
        assert!(Hasher::new(SignatureKind::Trie, 64, 1, 0, None).is_err());
        assert!(SignatureKind::parse("bloom").is_err());
        assert_eq!(SignatureKind::parse("lepbx").unwrap(), SignatureKind::Lepbx);
    }
}
