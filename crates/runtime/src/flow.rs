//! The flow hash that dispatches packets to run-to-completion threads.
//!
//! A flow is the IPv4 5-tuple (source and destination address, protocol, and for TCP/UDP the
//! ports of the first fragment) taken symmetrically, so both directions of a connection go to the
//! same thread. Frames that are not IPv4 over Ethernet (ARP, IPv6, short frames) all belong to
//! one flow: they keep their order among themselves.

/// A hash of the symmetric 5-tuple of an Ethernet frame; 0 for non-IPv4 frames. The two
/// endpoints, (address, port) each as one 48-bit number, are ordered so that both directions of
/// a connection hash alike, then mixed with the protocol by two multiplications and the
/// finalizer of SplitMix64 (a few instructions on words, where byte-at-a-time FNV-1a took a
/// chain of 13 dependent multiplications: the I/O thread hashes every packet, and with
/// `--io each` every worker does).
#[inline]
pub fn flow_hash(frame: &[u8]) -> u64 {
    if frame.len() < 34 || frame[12..14] != [0x08, 0x00] {
        return 0;
    }
    let ip = &frame[14..];
    if ip[0] >> 4 != 4 {
        return 0;
    }
    let ihl = ((ip[0] & 0x0f) as usize) * 4;
    let proto = ip[9];
    let src = u32::from_be_bytes([ip[12], ip[13], ip[14], ip[15]]) as u64;
    let dst = u32::from_be_bytes([ip[16], ip[17], ip[18], ip[19]]) as u64;
    let frag_offset = u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff;
    let (mut sp, mut dp) = (0u64, 0u64);
    if (proto == 6 || proto == 17) && frag_offset == 0 && ip.len() >= ihl + 4 && ihl >= 20 {
        sp = u16::from_be_bytes([ip[ihl], ip[ihl + 1]]) as u64;
        dp = u16::from_be_bytes([ip[ihl + 2], ip[ihl + 3]]) as u64;
    }
    // Order the two endpoints so (a, b) and (b, a) hash alike.
    let (a, b) = ((src << 16) | sp, (dst << 16) | dp);
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let mut h = lo.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(23)
        ^ hi.wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
        ^ proto as u64;
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (h ^ (h >> 31)) | 1
}

/// The thread (of `n`) that processes `frame`: the hash scaled to `0..n` by a multiplication
/// (its high bits; no division).
#[inline]
pub fn thread_of(frame: &[u8], n: usize) -> usize {
    ((flow_hash(frame) as u128 * n as u128) >> 64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(src: [u8; 4], dst: [u8; 4], sp: u16, dp: u16) -> Vec<u8> {
        let mut f = vec![0u8; 14 + 20 + 8];
        f[12] = 0x08;
        f[14] = 0x45;
        f[14 + 9] = 17;
        f[26..30].copy_from_slice(&src);
        f[30..34].copy_from_slice(&dst);
        f[34..36].copy_from_slice(&sp.to_be_bytes());
        f[36..38].copy_from_slice(&dp.to_be_bytes());
        f
    }

    #[test]
    fn both_directions_alike_and_flows_differ() {
        let a = frame([10, 0, 0, 1], [1, 2, 3, 4], 1000, 53);
        let b = frame([1, 2, 3, 4], [10, 0, 0, 1], 53, 1000);
        let c = frame([10, 0, 0, 1], [1, 2, 3, 4], 1001, 53);
        assert_eq!(flow_hash(&a), flow_hash(&b));
        assert_ne!(flow_hash(&a), flow_hash(&c));
        assert_eq!(flow_hash(&[0u8; 10]), 0);
        let mut arp = a.clone();
        arp[13] = 0x06;
        assert_eq!(flow_hash(&arp), 0);
    }

    #[test]
    fn many_flows_spread_over_threads() {
        let mut per = [0u32; 4];
        for i in 0..4000u32 {
            let f = frame(
                [10, 0, (i >> 8) as u8, i as u8],
                [1, 2, 3, 4],
                1000 + i as u16,
                80,
            );
            per[thread_of(&f, 4)] += 1;
        }
        assert!(per.iter().all(|&c| c > 800), "{per:?}");
    }
}
