//! Internet checksums (RFC 1071) for IPv4 headers and TCP/UDP/ICMP, and the RFC 1624
//! incremental update the elements use when they rewrite one 16-bit word (DecIPTTL, NAT).
//!
//! Convention: every function returning a checksum returns the value to *store* in the
//! header, as a host-order `u16` to be written with `to_be_bytes()`. Running
//! [`ip_checksum`] over a header whose checksum field is correct returns 0.

/// One's-complement sum of `data` as big-endian 16-bit words (a trailing odd byte is padded
/// with zero), added to `initial`; folded only as far as 32 bits, so callers can keep
/// accumulating (pass the result as the next call's `initial`) and finish with [`fold`].
///
/// The words are added four bytes at a time: a 32-bit word `hi * 2^16 + lo` is congruent to
/// `hi + lo` modulo 0xffff (2^16 = 1), and a one's-complement sum is that residue (0 only for
/// all-zero data), so [`fold`] of the result equals the word-by-word sum's (RFC 1071, section
/// 2(B), "parallel summation"; a property test compares the two). The unfolded value itself
/// may differ from a word-by-word sum's.
#[inline]
pub fn ones_sum(data: &[u8], initial: u32) -> u32 {
    let mut sum = initial as u64;
    let mut quads = data.chunks_exact(4);
    for c in &mut quads {
        sum += u32::from_be_bytes([c[0], c[1], c[2], c[3]]) as u64;
    }
    let rest = quads.remainder();
    let mut pairs = rest.chunks_exact(2);
    for c in &mut pairs {
        sum += u16::from_be_bytes([c[0], c[1]]) as u64;
    }
    if let [last] = pairs.remainder() {
        sum += (*last as u64) << 8;
    }
    // Fold to 32 bits so callers can keep accumulating.
    while sum > 0xffff_ffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u32
}

/// Fold a 32-bit one's-complement accumulator to 16 bits (end-around carry).
#[inline]
pub fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
}

/// The Internet checksum of `data` (e.g. an IPv4 header with its checksum field zeroed):
/// the one's complement of the one's-complement sum.
#[inline]
pub fn ip_checksum(data: &[u8]) -> u16 {
    // An IPv4 header without options (almost every one) is five 32-bit words: summed
    // without the loops.
    if let Ok(w) = <&[u8; 20]>::try_from(data) {
        let word = |i: usize| u32::from_be_bytes([w[i], w[i + 1], w[i + 2], w[i + 3]]) as u64;
        let sum = word(0) + word(4) + word(8) + word(12) + word(16);
        let sum = (sum & 0xffff_ffff) + (sum >> 32);
        return !fold(((sum & 0xffff) + (sum >> 16)) as u32);
    }
    !fold(ones_sum(data, 0))
}

/// Unfolded one's-complement sum of the TCP/UDP pseudo-header: source and destination
/// address, zero, protocol, and the L4 length (header + payload).
#[inline]
pub fn pseudo_header_sum(src: [u8; 4], dst: [u8; 4], protocol: u8, l4_len: u16) -> u32 {
    u16::from_be_bytes([src[0], src[1]]) as u32
        + u16::from_be_bytes([src[2], src[3]]) as u32
        + u16::from_be_bytes([dst[0], dst[1]]) as u32
        + u16::from_be_bytes([dst[2], dst[3]]) as u32
        + protocol as u32
        + l4_len as u32
}

/// TCP or UDP checksum of `segment` (header with its checksum field zeroed, plus payload)
/// including the pseudo-header. For UDP, a computed 0 must be sent as 0xffff (RFC 768):
/// use [`udp_checksum`], which does that.
pub fn l4_checksum(src: [u8; 4], dst: [u8; 4], protocol: u8, segment: &[u8]) -> u16 {
    let len = segment.len() as u16;
    !fold(ones_sum(
        segment,
        pseudo_header_sum(src, dst, protocol, len),
    ))
}

/// UDP checksum: [`l4_checksum`] with protocol 17, 0 transmitted as 0xffff.
pub fn udp_checksum(src: [u8; 4], dst: [u8; 4], segment: &[u8]) -> u16 {
    match l4_checksum(src, dst, 17, segment) {
        0 => 0xffff,
        c => c,
    }
}

/// Does `segment` (with its checksum in place) verify against the pseudo-header?
pub fn l4_checksum_ok(src: [u8; 4], dst: [u8; 4], protocol: u8, segment: &[u8]) -> bool {
    let len = segment.len() as u16;
    fold(ones_sum(
        segment,
        pseudo_header_sum(src, dst, protocol, len),
    )) == 0xffff
}

/// RFC 1624 equation 3: the new checksum after one 16-bit word of the covered data changes
/// from `old_word` to `new_word`, `HC' = ~(~HC + ~m + m')` in one's-complement arithmetic.
/// Unlike equation 2 of RFC 1141 it never yields 0xffff for data whose sum is non-zero, so
/// it agrees bit for bit with a full recomputation on any header that is not all zeros.
#[inline]
pub fn incremental_update(old_sum: u16, old_word: u16, new_word: u16) -> u16 {
    let sum = (!old_sum) as u32 + (!old_word) as u32 + new_word as u32;
    !fold(sum)
}

/// [`incremental_update`] for a change of a 32-bit field (an IPv4 address): two words.
#[inline]
pub fn incremental_update32(old_sum: u16, old: u32, new: u32) -> u16 {
    let s = incremental_update(old_sum, (old >> 16) as u16, (new >> 16) as u16);
    incremental_update(s, old as u16, new as u16)
}

/// Several 16-bit words of the covered data changing at once: the sum of `~m + m'` over them
/// (RFC 1624 equation 3's terms), applied to a checksum with one fold at the end
/// ([`Delta::apply`]) instead of one per word. The result is bit for bit that of
/// [`incremental_update`] applied word after word: a fold keeps the one's-complement sum's
/// value and is zero only for a zero sum, so folding once or at every step agrees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delta(u32);

impl Delta {
    /// The word `old` becomes `new`.
    #[inline]
    pub fn word(&mut self, old: u16, new: u16) {
        self.0 += (!old) as u32 + new as u32;
    }
    /// A 32-bit field (an IPv4 address): two words.
    #[inline]
    pub fn word32(&mut self, old: u32, new: u32) {
        self.word((old >> 16) as u16, (new >> 16) as u16);
        self.word(old as u16, new as u16);
    }
    /// The checksum `sum` after the changes.
    #[inline]
    pub fn apply(self, sum: u16) -> u16 {
        !fold((!sum) as u32 + self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The example IPv4 header of RFC 1071-style walkthroughs (checksum 0xb861).
    const HDR: [u8; 20] = [
        0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00, 0xc0, 0xa8, 0x00,
        0x01, 0xc0, 0xa8, 0x00, 0xc7,
    ];

    #[test]
    fn known_ipv4_header_checksum() {
        assert_eq!(ip_checksum(&HDR), 0xb861);
        let mut h = HDR;
        h[10..12].copy_from_slice(&0xb861u16.to_be_bytes());
        assert_eq!(ip_checksum(&h), 0, "a valid header sums to zero");
    }

    /// The word-by-word sum of RFC 1071, for comparison.
    fn ones_sum_by_word(data: &[u8], initial: u32) -> u32 {
        let mut sum = initial as u64;
        for c in data.chunks(2) {
            sum += (u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)])) as u64;
        }
        while sum > 0xffff_ffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        sum as u32
    }

    proptest! {
        #[test]
        fn four_bytes_at_a_time_folds_as_word_by_word(
            data in proptest::collection::vec(any::<u8>(), 0..80),
            initial in any::<u32>(),
            zeros in 0usize..9,
        ) {
            prop_assert_eq!(fold(ones_sum(&data, initial)), fold(ones_sum_by_word(&data, initial)));
            let z = vec![0u8; zeros];
            prop_assert_eq!(fold(ones_sum(&z, 0)), 0);
        }
    }

    #[test]
    fn odd_length_pads_with_zero() {
        assert_eq!(ip_checksum(&[0x01]), !0x0100);
        assert_eq!(ip_checksum(&[0x12, 0x34, 0x56]), !(0x1234u16 + 0x5600));
    }

    #[test]
    fn udp_checksum_known_value_and_zero_rule() {
        // UDP 10.0.0.1:1 -> 10.0.0.2:2, no payload, computed by hand:
        // pseudo 0x0a00+0x0001+0x0a00+0x0002+0x0011+0x0008 = 0x141c;
        // header 0x0001+0x0002+0x0008 = 0x000b; total 0x1427 -> !0x1427 = 0xebd8.
        let seg = [0, 1, 0, 2, 0, 8, 0, 0];
        assert_eq!(udp_checksum([10, 0, 0, 1], [10, 0, 0, 2], &seg), 0xebd8);
        let mut s = seg;
        s[6..8].copy_from_slice(&0xebd8u16.to_be_bytes());
        assert!(l4_checksum_ok([10, 0, 0, 1], [10, 0, 0, 2], 17, &s));
        s[7] ^= 1;
        assert!(!l4_checksum_ok([10, 0, 0, 1], [10, 0, 0, 2], 17, &s));
    }

    #[test]
    fn rfc1624_example_gives_zero_not_ffff() {
        // RFC 1624 section 4: HC = 0xdd2f, m = 0x5555 -> m' = 0x3285 must give 0x0000.
        assert_eq!(incremental_update(0xdd2f, 0x5555, 0x3285), 0x0000);
    }

    /// Replace word `w` of `h` and compare the incremental result with recomputation.
    fn check_update(h: &mut [u8], w: usize, new: u16) {
        h[10] = 0;
        h[11] = 0;
        let c = ip_checksum(h);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        let old = u16::from_be_bytes([h[2 * w], h[2 * w + 1]]);
        let inc = incremental_update(c, old, new);
        h[2 * w..2 * w + 2].copy_from_slice(&new.to_be_bytes());
        h[10] = 0;
        h[11] = 0;
        let full = ip_checksum(h);
        assert_eq!(
            inc, full,
            "word {w}: {old:#06x} -> {new:#06x}, old sum {c:#06x}"
        );
    }

    #[test]
    fn corner_cases_checksum_0000_and_ffff_sums() {
        // A header whose data sums to 0xffff has checksum 0x0000; make the update land on
        // both the 0x0000 and the (sum = 0xfffe) neighbourhood.
        let mut h = [0u8; 20];
        h[0] = 0x45;
        // Sum so far 0x4500; choose word 1 so the total is 0xffff: 0xffff - 0x4500 = 0xbaff.
        h[2..4].copy_from_slice(&0xbaffu16.to_be_bytes());
        assert_eq!(ip_checksum(&h), 0x0000);
        // Update starting from checksum 0x0000.
        check_update(&mut h.clone(), 1, 0x1234);
        // Update that makes the sum 0xffff again (checksum 0x0000) from elsewhere.
        let mut h2 = h;
        h2[2..4].copy_from_slice(&0xbafeu16.to_be_bytes());
        check_update(&mut h2, 1, 0xbaff);
        // Word changes to/from 0x0000 and 0xffff.
        check_update(&mut h.clone(), 4, 0xffff);
        let mut h3 = h;
        h3[8..10].copy_from_slice(&0xffffu16.to_be_bytes());
        check_update(&mut h3, 4, 0x0000);
        // No-op change keeps the checksum.
        check_update(&mut h.clone(), 1, 0xbaff);
    }

    #[test]
    fn update32_matches_recomputation() {
        let mut h = HDR;
        h[10..12].copy_from_slice(&0xb861u16.to_be_bytes());
        let new_src = 0x0a01_0203u32;
        let inc = incremental_update32(
            0xb861,
            u32::from_be_bytes([h[12], h[13], h[14], h[15]]),
            new_src,
        );
        h[12..16].copy_from_slice(&new_src.to_be_bytes());
        h[10] = 0;
        h[11] = 0;
        assert_eq!(inc, ip_checksum(&h));
    }

    proptest! {
        #[test]
        fn incremental_equals_full(mut h in proptest::collection::vec(any::<u8>(), 20),
                                   w in 0usize..10, new in any::<u16>()) {
            h[0] = 0x45; // never an all-zero header, as in IPv4
            prop_assume!(w != 5);
            check_update(&mut h, w, new);
        }
    }

    proptest! {
        /// A [`Delta`] of any words changed gives the checksum that updating word after word
        /// gives.
        #[test]
        fn delta_equals_word_after_word(
            sum in any::<u16>(),
            words in proptest::collection::vec((any::<u16>(), any::<u16>()), 0..8),
        ) {
            let mut d = Delta::default();
            let mut step = sum;
            for &(old, new) in &words {
                d.word(old, new);
                step = incremental_update(step, old, new);
            }
            prop_assert_eq!(d.apply(sum), step);
        }
    }

    proptest! {
        /// The five-word sum of a 20-byte header agrees with the general one.
        #[test]
        fn twenty_byte_header_checksum_agrees(h in proptest::array::uniform20(any::<u8>())) {
            prop_assert_eq!(ip_checksum(&h), !fold(ones_sum(&h, 0)));
        }
    }
}
