//! The hosts on the links: a functional run of a router needs its ARP queries answered, or every
//! forwarded packet would wait for an ARP reply forever. When an ARP request leaves through a
//! device (ToDevice(ethX)), the neighbour it asks for answers: an ARP reply from that IP address,
//! with a locally administered MAC derived from it (02:00:a.b.c.d), arrives on the FromDevice of
//! the same device right after. Replies are injected as packets of their own, so the router's
//! cost of learning addresses is profiled too. Turn off with `neighbors = false`.
//!
//! Optionally the far ends of flows answer too (`reply_every = k`): every k-th IPv4 TCP, UDP or
//! ICMP echo packet leaving through a device comes back on that device as a reply (addresses
//! and ports swapped, TTL 64, checksums recomputed). A NAT gateway needs this to see traffic
//! through its reverse mappings; the counter makes it deterministic.
use pktflow_traffic::checksum::{ip_checksum, l4_checksum};
use pktflow_traffic::TracePacket;

/// The MAC address the simulated neighbour with IP `ip` answers with.
pub fn neighbor_mac(ip: [u8; 4]) -> [u8; 6] {
    [0x02, 0x00, ip[0], ip[1], ip[2], ip[3]]
}

/// If `frame` is an Ethernet ARP request (IPv4 over Ethernet), the reply its target sends.
pub fn arp_reply_for(frame: &[u8], timestamp_ns: u64, iface: u16) -> Option<TracePacket> {
    let mut r = empty_packet();
    arp_reply_into(frame, timestamp_ns, iface, &mut r).then_some(r)
}

/// [`arp_reply_for`] written into `out` (its buffer reused); false, `out` unchanged, when
/// `frame` is not an ARP request.
pub fn arp_reply_into(frame: &[u8], timestamp_ns: u64, iface: u16, out: &mut TracePacket) -> bool {
    if frame.len() < 42 || frame[12..14] != [0x08, 0x06] {
        return false;
    }
    let arp = &frame[14..42];
    // htype 1, ptype 0x0800, hlen 6, plen 4, op 1 (request)
    if arp[0..8] != [0, 1, 8, 0, 6, 4, 0, 1] {
        return false;
    }
    let (sha, spa, tpa) = (&arp[8..14], &arp[14..18], &arp[24..28]);
    let mac = neighbor_mac([tpa[0], tpa[1], tpa[2], tpa[3]]);
    let r = &mut out.data;
    r.clear();
    r.resize(60, 0);
    r[0..6].copy_from_slice(sha);
    r[6..12].copy_from_slice(&mac);
    r[12..14].copy_from_slice(&[0x08, 0x06]);
    r[14..22].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 2]);
    r[22..28].copy_from_slice(&mac);
    r[28..32].copy_from_slice(tpa);
    r[32..38].copy_from_slice(sha);
    r[38..42].copy_from_slice(spa);
    out.timestamp_ns = timestamp_ns;
    out.iface = iface;
    out.orig_len = 60;
    true
}

/// If `frame` is an Ethernet IPv4 TCP/UDP packet or ICMP echo request (first fragment, valid
/// header length), the reply its destination sends back.
pub fn ip_reply_for(frame: &[u8], timestamp_ns: u64, iface: u16) -> Option<TracePacket> {
    let mut r = empty_packet();
    ip_reply_into(frame, timestamp_ns, iface, &mut r).then_some(r)
}

/// Whether [`ip_reply_for`] would answer `frame` (its checks, without building the reply).
pub fn ip_reply_due(frame: &[u8]) -> bool {
    ip_reply_shape(frame).is_some()
}

/// (IP header length, total length, protocol) of a frame the far end answers.
fn ip_reply_shape(frame: &[u8]) -> Option<(usize, usize, u8)> {
    if frame.len() < 34 || frame[12..14] != [0x08, 0x00] {
        return None;
    }
    let ip = &frame[14..];
    let ihl = ((ip[0] & 0x0f) as usize) * 4;
    if ip[0] >> 4 != 4 || ihl < 20 || ip.len() < ihl + 8 {
        return None;
    }
    let total = u16::from_be_bytes([ip[2], ip[3]]) as usize;
    if total < ihl + 8 || total > ip.len() || u16::from_be_bytes([ip[6], ip[7]]) & 0x1fff != 0 {
        return None;
    }
    let proto = ip[9];
    if !(proto == 6 || proto == 17 || (proto == 1 && ip[ihl] == 8)) {
        return None;
    }
    Some((ihl, total, proto))
}

/// [`ip_reply_for`] written into `out` (its buffer reused); false, `out` unchanged, when the
/// far end does not answer `frame`.
pub fn ip_reply_into(frame: &[u8], timestamp_ns: u64, iface: u16, out: &mut TracePacket) -> bool {
    let Some((ihl, total, proto)) = ip_reply_shape(frame) else {
        return false;
    };
    let ip = &frame[14..];
    let r = &mut out.data;
    r.clear();
    r.extend_from_slice(&frame[..14 + total]);
    r.copy_within(0..6, 6);
    r[0..6].copy_from_slice(&frame[6..12]);
    r[6..12].copy_from_slice(&frame[0..6]);
    let src = [ip[12], ip[13], ip[14], ip[15]];
    let dst = [ip[16], ip[17], ip[18], ip[19]];
    {
        let h = &mut r[14..];
        h[8] = 64;
        h[12..16].copy_from_slice(&dst);
        h[16..20].copy_from_slice(&src);
        h[10..12].copy_from_slice(&[0, 0]);
        let c = ip_checksum(&h[..ihl]);
        h[10..12].copy_from_slice(&c.to_be_bytes());
        let l4 = &mut h[ihl..total];
        match proto {
            6 | 17 => {
                let (sp, dp) = ([l4[0], l4[1]], [l4[2], l4[3]]);
                l4[0..2].copy_from_slice(&dp);
                l4[2..4].copy_from_slice(&sp);
                let off = if proto == 6 { 16 } else { 6 };
                if l4.len() >= off + 2 && !(proto == 17 && l4[6..8] == [0, 0]) {
                    l4[off..off + 2].copy_from_slice(&[0, 0]);
                    let c = l4_checksum(dst, src, proto, l4);
                    let c = if proto == 17 && c == 0 { 0xffff } else { c };
                    l4[off..off + 2].copy_from_slice(&c.to_be_bytes());
                }
            }
            _ => {
                l4[0] = 0;
                l4[2..4].copy_from_slice(&[0, 0]);
                let c = ip_checksum(l4);
                l4[2..4].copy_from_slice(&c.to_be_bytes());
            }
        }
    }
    if r.len() < 60 {
        r.resize(60, 0);
    }
    out.orig_len = r.len() as u32;
    out.timestamp_ns = timestamp_ns;
    out.iface = iface;
    true
}

fn empty_packet() -> TracePacket {
    TracePacket::default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// An answer written into a buffer that held another (longer or shorter) packet is the
        /// answer built from scratch, and `ip_reply_due` agrees with whether there is one.
        #[test]
        fn answers_into_a_used_buffer_equal_fresh_ones(
            frames in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..120), 1..8),
            ip_like in any::<bool>(),
        ) {
            let mut used = TracePacket { timestamp_ns: 5, iface: 3, data: vec![0xee; 200], orig_len: 9 };
            for (k, mut f) in frames.into_iter().enumerate() {
                if ip_like && f.len() >= 42 {
                    // An IPv4 UDP frame whose lengths hold, so the far end answers it.
                    f[12..14].copy_from_slice(&[8, 0]);
                    f[14] = 0x45;
                    let total = (f.len() - 14) as u16;
                    f[16..18].copy_from_slice(&total.to_be_bytes());
                    f[20..22].copy_from_slice(&[0, 0]);
                    f[23] = 17;
                }
                let ts = k as u64 * 7;
                let fresh = ip_reply_for(&f, ts, 1);
                prop_assert_eq!(ip_reply_due(&f), fresh.is_some());
                let before = used.clone();
                let wrote = ip_reply_into(&f, ts, 1, &mut used);
                prop_assert_eq!(wrote, fresh.is_some());
                match fresh {
                    Some(r) => prop_assert_eq!(&used, &r),
                    None => prop_assert_eq!(&used, &before),
                }
                let fresh = arp_reply_for(&f, ts, 0);
                let before = used.clone();
                prop_assert_eq!(arp_reply_into(&f, ts, 0, &mut used), fresh.is_some());
                match fresh {
                    Some(r) => prop_assert_eq!(&used, &r),
                    None => prop_assert_eq!(&used, &before),
                }
            }
        }
    }

    #[test]
    fn udp_reply_swaps_and_keeps_checksums_valid() {
        let mut f = vec![0u8; 14 + 28 + 4];
        f[0..6].copy_from_slice(&[1, 1, 1, 1, 1, 1]);
        f[6..12].copy_from_slice(&[2, 2, 2, 2, 2, 2]);
        f[12..14].copy_from_slice(&[8, 0]);
        let ip = &mut f[14..];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&32u16.to_be_bytes());
        ip[8] = 9;
        ip[9] = 17;
        ip[12..16].copy_from_slice(&[1, 0, 0, 1]);
        ip[16..20].copy_from_slice(&[8, 8, 8, 8]);
        ip[20..22].copy_from_slice(&50000u16.to_be_bytes());
        ip[22..24].copy_from_slice(&53u16.to_be_bytes());
        ip[24..26].copy_from_slice(&12u16.to_be_bytes());
        ip[26..28].copy_from_slice(&[0xab, 0xcd]);
        let r = ip_reply_for(&f, 0, 1).unwrap();
        let h = &r.data[14..];
        assert_eq!(&h[12..16], &[8, 8, 8, 8]);
        assert_eq!(&h[16..20], &[1, 0, 0, 1]);
        assert_eq!(u16::from_be_bytes([h[20], h[21]]), 53);
        assert_eq!(u16::from_be_bytes([h[22], h[23]]), 50000);
        assert_eq!(ip_checksum(&h[..20]), 0);
        assert!(pktflow_traffic::checksum::l4_checksum_ok(
            [8, 8, 8, 8],
            [1, 0, 0, 1],
            17,
            &h[20..32]
        ));
        assert_eq!(&r.data[0..6], &[2, 2, 2, 2, 2, 2]);
    }

    #[test]
    fn answers_requests_only() {
        let mut q = vec![0u8; 60];
        q[0..6].copy_from_slice(&[0xff; 6]);
        q[6..12].copy_from_slice(&[0, 0, 0xc0, 0xae, 0x67, 0xef]);
        q[12..14].copy_from_slice(&[8, 6]);
        q[14..22].copy_from_slice(&[0, 1, 8, 0, 6, 4, 0, 1]);
        q[22..28].copy_from_slice(&[0, 0, 0xc0, 0xae, 0x67, 0xef]);
        q[28..32].copy_from_slice(&[10, 0, 0, 1]);
        q[38..42].copy_from_slice(&[10, 1, 2, 3]);
        let r = arp_reply_for(&q, 5, 0).unwrap();
        assert_eq!(&r.data[0..6], &[0, 0, 0xc0, 0xae, 0x67, 0xef]);
        assert_eq!(&r.data[20..22], &[0, 2]);
        assert_eq!(&r.data[22..28], &neighbor_mac([10, 1, 2, 3]));
        assert_eq!(&r.data[28..32], &[10, 1, 2, 3]);
        assert_eq!(&r.data[38..42], &[10, 0, 0, 1]);
        assert!(
            arp_reply_for(&r.data, 5, 0).is_none(),
            "a reply is not answered"
        );
        assert!(arp_reply_for(&q[..30], 5, 0).is_none());
    }
}
