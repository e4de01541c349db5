//! The flow hash that dispatches packets to run-to-completion threads.
//!
//! A flow is the IPv4 5-tuple (source and destination address, protocol, and for TCP/UDP the
//! ports of the first fragment) taken symmetrically, so both directions of a connection go to the
//! same thread. Frames that are not IPv4 over Ethernet (ARP, IPv6, short frames) all belong to
//! one flow: they keep their order among themselves.

/// FNV-1a over the symmetric 5-tuple of an Ethernet frame; 0 for non-IPv4 frames.
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
    let src = &ip[12..16];
    let dst = &ip[16..20];
    let frag_offset = u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff;
    let (mut sp, mut dp) = ([0u8; 2], [0u8; 2]);
    if (proto == 6 || proto == 17) && frag_offset == 0 && ip.len() >= ihl + 4 && ihl >= 20 {
        sp.copy_from_slice(&ip[ihl..ihl + 2]);
        dp.copy_from_slice(&ip[ihl + 2..ihl + 4]);
    }
    // Order the two endpoints so (a, b) and (b, a) hash alike.
    let a = (src, sp);
    let b = (dst, dp);
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &x in bytes {
            h ^= x as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    };
    eat(lo.0);
    eat(&lo.1);
    eat(hi.0);
    eat(&hi.1);
    eat(&[proto]);
    h | 1
}

/// The thread (of `n`) that processes `frame`.
pub fn thread_of(frame: &[u8], n: usize) -> usize {
    let h = flow_hash(frame);
    // Mix the high bits down so that a power-of-two `n` uses all of the hash.
    ((h ^ (h >> 29) ^ (h >> 47)) % n as u64) as usize
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
