//! Small IPv4 / Ethernet / ARP / ICMP header helpers shared by the IP router and NAT elements.
//!
//! Everything works on byte slices in network byte order, in place, without allocating.
//! Getters take the slice starting at the header; callers check the length first with
//! [`ip_header_ok`] / [`ip_min_len_ok`] (all getters index directly and panic on short slices).
//! Checksums: the Internet checksum and RFC 1624 incremental updates come from
//! `pktflow_traffic::checksum`; the wrappers here only name what IP header code needs.

/// Ethernet header length.
pub const ETHER_LEN: usize = 14;
pub const ETHERTYPE_IP: u16 = 0x0800;
pub const ETHERTYPE_ARP: u16 = 0x0806;
/// Minimum IPv4 header length.
pub const IP_MIN_LEN: usize = 20;
pub const IP_PROTO_ICMP: u8 = 1;
pub const IP_PROTO_TCP: u8 = 6;
pub const IP_PROTO_UDP: u8 = 17;
/// Flag bits of the 16-bit flags/fragment-offset field.
pub const IP_DF: u16 = 0x4000;
pub const IP_MF: u16 = 0x2000;
pub const IP_OFFMASK: u16 = 0x1fff;
/// ARP packet length (Ethernet/IPv4), without the Ethernet header.
pub const ARP_LEN: usize = 28;
pub const ARP_OP_REQUEST: u16 = 1;
pub const ARP_OP_REPLY: u16 = 2;
pub const ETHER_BROADCAST: [u8; 6] = [0xff; 6];

#[inline]
pub fn be16(b: &[u8], off: usize) -> u16 {
    // One range check for the field, not one per byte.
    u16::from_be_bytes(b[off..off + 2].try_into().expect("two bytes"))
}
#[inline]
pub fn set_be16(b: &mut [u8], off: usize, v: u16) {
    b[off..off + 2].copy_from_slice(&v.to_be_bytes());
}
#[inline]
pub fn be32(b: &[u8], off: usize) -> u32 {
    u32::from_be_bytes(b[off..off + 4].try_into().expect("four bytes"))
}
#[inline]
pub fn set_be32(b: &mut [u8], off: usize, v: u32) {
    b[off..off + 4].copy_from_slice(&v.to_be_bytes());
}

// ---- IPv4 header fields (slice starts at the IP header) ----

#[inline]
pub fn ip_version(h: &[u8]) -> u8 {
    h[0] >> 4
}
/// Header length in bytes (IHL * 4).
#[inline]
pub fn ip_hl(h: &[u8]) -> usize {
    ((h[0] & 0x0f) as usize) * 4
}
#[inline]
pub fn ip_total_len(h: &[u8]) -> usize {
    be16(h, 2) as usize
}
#[inline]
pub fn set_ip_total_len(h: &mut [u8], v: u16) {
    set_be16(h, 2, v)
}
#[inline]
pub fn ip_id(h: &[u8]) -> u16 {
    be16(h, 4)
}
/// The 16-bit flags + fragment offset field.
#[inline]
pub fn ip_frag_field(h: &[u8]) -> u16 {
    be16(h, 6)
}
/// Fragment offset in bytes.
#[inline]
pub fn ip_frag_offset(h: &[u8]) -> usize {
    ((be16(h, 6) & IP_OFFMASK) as usize) * 8
}
#[inline]
pub fn ip_ttl(h: &[u8]) -> u8 {
    h[8]
}
#[inline]
pub fn ip_proto(h: &[u8]) -> u8 {
    h[9]
}
#[inline]
pub fn ip_sum(h: &[u8]) -> u16 {
    be16(h, 10)
}
#[inline]
pub fn ip_src(h: &[u8]) -> [u8; 4] {
    h[12..16].try_into().expect("four bytes")
}
#[inline]
pub fn ip_dst(h: &[u8]) -> [u8; 4] {
    h[16..20].try_into().expect("four bytes")
}
#[inline]
pub fn set_ip_src(h: &mut [u8], a: [u8; 4]) {
    h[12..16].copy_from_slice(&a)
}
#[inline]
pub fn set_ip_dst(h: &mut [u8], a: [u8; 4]) {
    h[16..20].copy_from_slice(&a)
}

/// At least a minimal IPv4 header is present.
#[inline]
pub fn ip_min_len_ok(h: &[u8]) -> bool {
    h.len() >= IP_MIN_LEN
}

/// Version 4, header length >= 20 and inside `h`, total length >= header length and <= `h.len()`.
pub fn ip_header_ok(h: &[u8]) -> bool {
    ip_min_len_ok(h)
        && ip_version(h) == 4
        && ip_hl(h) >= IP_MIN_LEN
        && ip_hl(h) <= h.len()
        && ip_total_len(h) >= ip_hl(h)
        && ip_total_len(h) <= h.len()
}

/// Internet checksum of `h[..hl]` with the checksum field as it is (0 when the header is valid).
#[inline]
pub fn ip_header_sum(h: &[u8]) -> u16 {
    pktflow_traffic::checksum::ip_checksum(&h[..ip_hl(h)])
}

/// Recompute and store the header checksum of the IP header at the start of `h`.
pub fn set_ip_checksum(h: &mut [u8]) {
    h[10] = 0;
    h[11] = 0;
    let s = ip_header_sum(h);
    set_be16(h, 10, s);
}

/// RFC 1624 incremental update of the header checksum at bytes 10..12 after the 16-bit word
/// at even offset `off` changed from `old` to `new`.
#[inline]
pub fn ip_sum_update16(h: &mut [u8], old: u16, new: u16) {
    let s = pktflow_traffic::checksum::incremental_update(ip_sum(h), old, new);
    set_be16(h, 10, s);
}

/// Limited broadcast, zero, multicast (224/4) or experimental (240/4): not a legal unicast source.
#[inline]
pub fn is_bad_unicast_src(a: [u8; 4]) -> bool {
    a == [0, 0, 0, 0] || a == [255; 4] || a[0] >= 224
}

// ---- Ethernet ----

#[inline]
pub fn ether_type(e: &[u8]) -> u16 {
    be16(e, 12)
}
#[inline]
pub fn ether_dst(e: &[u8]) -> [u8; 6] {
    [e[0], e[1], e[2], e[3], e[4], e[5]]
}
#[inline]
pub fn ether_src(e: &[u8]) -> [u8; 6] {
    [e[6], e[7], e[8], e[9], e[10], e[11]]
}
/// Write a whole Ethernet header at the start of `e`.
#[inline]
pub fn write_ether(e: &mut [u8], dst: [u8; 6], src: [u8; 6], ethertype: u16) {
    // One range check for the 14 bytes (panics as the slicing did when `e` is shorter).
    let h: &mut [u8; ETHER_LEN] = (&mut e[..ETHER_LEN]).try_into().expect("14 bytes");
    h[0..6].copy_from_slice(&dst);
    h[6..12].copy_from_slice(&src);
    h[12..14].copy_from_slice(&ethertype.to_be_bytes());
}

// ---- ARP (Ethernet/IPv4; slice starts at the ARP header, after Ethernet) ----

/// Hardware type 1, protocol 0x0800, lengths 6 and 4, and 28 bytes present.
pub fn arp_ok(a: &[u8]) -> bool {
    a.len() >= ARP_LEN && be16(a, 0) == 1 && be16(a, 2) == ETHERTYPE_IP && a[4] == 6 && a[5] == 4
}
#[inline]
pub fn arp_op(a: &[u8]) -> u16 {
    be16(a, 6)
}
#[inline]
pub fn arp_sha(a: &[u8]) -> [u8; 6] {
    [a[8], a[9], a[10], a[11], a[12], a[13]]
}
#[inline]
pub fn arp_spa(a: &[u8]) -> [u8; 4] {
    [a[14], a[15], a[16], a[17]]
}
#[inline]
pub fn arp_tha(a: &[u8]) -> [u8; 6] {
    [a[18], a[19], a[20], a[21], a[22], a[23]]
}
#[inline]
pub fn arp_tpa(a: &[u8]) -> [u8; 4] {
    [a[24], a[25], a[26], a[27]]
}
/// Write a whole Ethernet/IPv4 ARP header at the start of `a`.
pub fn write_arp(a: &mut [u8], op: u16, sha: [u8; 6], spa: [u8; 4], tha: [u8; 6], tpa: [u8; 4]) {
    set_be16(a, 0, 1);
    set_be16(a, 2, ETHERTYPE_IP);
    a[4] = 6;
    a[5] = 4;
    set_be16(a, 6, op);
    a[8..14].copy_from_slice(&sha);
    a[14..18].copy_from_slice(&spa);
    a[18..24].copy_from_slice(&tha);
    a[24..28].copy_from_slice(&tpa);
}

// ---- ICMP ----

/// ICMP types that are error messages (RFC 1812 4.3.2.7: never answer them with an error):
/// unreachable, source quench, redirect, time exceeded, parameter problem.
#[inline]
pub fn icmp_is_error_type(t: u8) -> bool {
    matches!(t, 3 | 4 | 5 | 11 | 12)
}

/// Format an IPv4 address.
pub fn ip_to_string(a: [u8; 4]) -> String {
    format!("{}.{}.{}.{}", a[0], a[1], a[2], a[3])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hdr() -> [u8; 20] {
        let mut h = [0u8; 20];
        h[0] = 0x45;
        set_be16(&mut h, 2, 20);
        h[8] = 64;
        h[9] = 17;
        set_ip_src(&mut h, [10, 0, 0, 2]);
        set_ip_dst(&mut h, [192, 168, 1, 9]);
        set_ip_checksum(&mut h);
        h
    }

    #[test]
    fn header_fields_and_checks() {
        let mut h = hdr();
        assert!(ip_header_ok(&h));
        assert_eq!(ip_header_sum(&h), 0);
        assert_eq!(ip_hl(&h), 20);
        assert_eq!(ip_src(&h), [10, 0, 0, 2]);
        assert!(!ip_header_ok(&h[..19]));
        h[0] = 0x44;
        assert!(!ip_header_ok(&h));
        h[0] = 0x46;
        assert!(!ip_header_ok(&h), "header length 24 > slice");
        let mut h = hdr();
        let old = be16(&h, 8);
        h[8] -= 1;
        let new = be16(&h, 8);
        ip_sum_update16(&mut h, old, new);
        assert_eq!(ip_header_sum(&h), 0);
        assert!(is_bad_unicast_src([224, 0, 0, 1]));
        assert!(is_bad_unicast_src([0, 0, 0, 0]));
        assert!(!is_bad_unicast_src([10, 0, 0, 1]));
    }

    #[test]
    fn arp_roundtrip() {
        let mut a = [0u8; 28];
        write_arp(
            &mut a,
            ARP_OP_REQUEST,
            [1; 6],
            [10, 0, 0, 2],
            [0; 6],
            [10, 0, 0, 1],
        );
        assert!(arp_ok(&a));
        assert_eq!(arp_op(&a), 1);
        assert_eq!(arp_tpa(&a), [10, 0, 0, 1]);
        assert_eq!(arp_sha(&a), [1; 6]);
    }
}
