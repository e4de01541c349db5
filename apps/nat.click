// nat.click -- NAT gateway (network address and port translation) for pktflow.
//
// Written for pktflow from Click's documented elements, after the shape of Click's
// mazu-nat configuration, simplified: one inside and one outside interface, TCP/UDP flows
// translated by an IPRewriter with ports from a range, ICMP by an IPAddrRewriter.
//
//   inside   eth0  10.0.0.1/8     00:00:c0:ae:67:ef   (hosts 10.x.y.z)
//   outside  eth1  1.0.0.1/8      00:00:c0:4f:71:ef   (public address 1.0.0.1,
//                                                      upstream router 1.0.0.254)
//
// Outbound TCP/UDP: source rewritten to 1.0.0.1 and a port in 50000-65535; replies
// matching a mapping are rewritten back (IPRewriter output 1). Unsolicited outside
// traffic is dropped. Flattened: 30 elements, 40 connections.

define($IN_IP 10.0.0.1, $IN_MAC 00:00:c0:ae:67:ef,
       $OUT_IP 1.0.0.1, $OUT_MAC 00:00:c0:4f:71:ef, $GW 1.0.0.254);

// ---- devices, queues, ARP ----
in_dev :: FromDevice(eth0);
out_dev :: FromDevice(eth1);
to_in :: Queue(200) -> ToDevice(eth0);
to_out :: Queue(200) -> ToDevice(eth1);

// 0: ARP queries, 1: ARP replies, 2: IP, 3: other
in_cl, out_cl :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
in_dev -> in_cl;
out_dev -> out_cl;

in_arpq :: ARPQuerier($IN_IP, $IN_MAC) -> to_in;
out_arpq :: ARPQuerier($OUT_IP, $OUT_MAC) -> to_out;
in_cl[0] -> ARPResponder($IN_IP $IN_MAC) -> to_in;
out_cl[0] -> ARPResponder($OUT_IP $OUT_MAC) -> to_out;
in_cl[1] -> [1]in_arpq;
out_cl[1] -> [1]out_arpq;

drop :: Discard;
in_cl[3] -> drop;
out_cl[3] -> drop;

// ---- address translation ----
pats :: IPRewriterPatterns(NAT $OUT_IP 50000-65535 - -);
// input 0: inside->outside, new flows get pattern NAT (forward output 0, reply output 1);
// input 1: outside->inside, only packets of known flows (no new mappings) pass.
rw :: IPRewriter(pattern NAT 0 1, drop);
irw :: IPAddrRewriter(pattern $OUT_IP - 0 1, drop);

// Inside IP: check, classify, translate.
in_cl[2] -> Strip(14)
    -> CheckIPHeader(INTERFACES $IN_IP/8)
    -> in_ipc :: IPClassifier(tcp or udp, icmp, -);
in_ipc[0] -> [0]rw;
in_ipc[1] -> [0]irw;
in_ipc[2] -> drop;

// Outside IP: only traffic for the public address enters the rewriters.
out_cl[2] -> Strip(14)
    -> CheckIPHeader(INTERFACES $OUT_IP/8)
    -> out_ipc :: IPClassifier(dst host $OUT_IP and (tcp or udp), dst host $OUT_IP and icmp, -);
out_ipc[0] -> [1]rw;
out_ipc[1] -> [1]irw;
out_ipc[2] -> drop;

// ---- routing towards each side ----
// Outbound next hop: the upstream router (or the destination, if on 1/8).
out_rt :: StaticIPLookup(1.0.0.0/8 0, 0.0.0.0/0 $GW 0);
out_rt -> IPFragmenter(1500) -> [0]out_arpq;
// Inbound next hop: the inside host itself.
in_rt :: GetIPAddress(16);
in_rt -> IPFragmenter(1500) -> [0]in_arpq;

// ---- outbound (towards eth1) ----
// The rewriters update the IP and TCP/UDP checksums incrementally (RFC 1624), as Click's
// IPRewriter does; like Click's mazu-nat configuration, nothing recomputes them over the
// payload afterwards (the NPIRE paper: the NAT's packet payload is irrelevant).
outbound :: DecIPTTL;
rw[0] -> outbound;
irw[0] -> outbound;
outbound -> out_rt;
outbound[1] -> ICMPError($IN_IP, timeexceeded) -> in_rt;

// ---- inbound (towards eth0) ----
inbound :: DecIPTTL;
rw[1] -> inbound;
irw[1] -> inbound;
inbound -> in_rt;
inbound[1] -> ICMPError($OUT_IP, timeexceeded) -> out_rt;
