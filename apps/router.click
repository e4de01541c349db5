// router.click -- IP router for two interfaces.
//
// The structure of the Click IP router of Kohler, Morris, Chen, Jannotti and Kaashoek,
// "The Click modular router", ACM TOCS 18(3), 2000 (the two-interface router figure),
// written for pktflow from the documented element classes.
// Flattened: 44 elements, 57 connections (checked by crates/frontend-click/tests).
//
// Interfaces:
//   eth0  10.0.0.1/8       00:00:c0:ae:67:ef
//   eth1  192.168.1.1/24   00:00:c0:4f:71:ef
// Default route: 10.0.0.254 on eth0.
// The host ("to Linux" in the paper) is a Discard named `tohost`.
//
// Classifier outputs, per interface:
//   0. ARP queries   -> ARPResponder -> interface queue
//   1. ARP replies   -> shared Tee -> every ARPQuerier's input 1, and the host
//   2. IP            -> Paint(interface number) -> shared IP input path
//   3. other         -> Print -> Discard

// Routing table: output 0 = this host; output 1 = eth0; output 2 = eth1.
rt :: StaticIPLookup(
    10.0.0.1/32 0, 10.255.255.255/32 0, 10.0.0.0/32 0,
    192.168.1.1/32 0, 192.168.1.255/32 0, 192.168.1.0/32 0,
    10.0.0.0/8 1,
    192.168.1.0/24 2,
    0.0.0.0/0 10.0.0.254 1);

// Shared IP input path: strip the Ethernet header, check the IP header
// (dropping packets from our own or broadcast addresses), take the
// destination address annotation, route.
ip :: Strip(14)
    -> CheckIPHeader(INTERFACES 10.0.0.1/8 192.168.1.1/24)
    -> GetIPAddress(16)
    -> rt;

// ARP replies go to both ARPQueriers and to the host.
arpt :: Tee(3);
tohost :: Discard;
arpt[2] -> tohost;
rt[0] -> tohost;

// ---- eth0 ----
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice(eth0) -> c0;
out0 :: Queue(200) -> todev0 :: ToDevice(eth0);
arpq0 :: ARPQuerier(10.0.0.1, 00:00:c0:ae:67:ef) -> out0;
c0[0] -> ARPResponder(10.0.0.1 00:00:c0:ae:67:ef) -> out0;
c0[1] -> arpt;
arpt[0] -> [1]arpq0;
c0[2] -> Paint(1) -> ip;
c0[3] -> Print("eth0 non-IP") -> Discard;
// Forwarding path to eth0: drop link-level broadcasts, send a redirect when
// the packet leaves on the interface it came in on, process IP options,
// fix a missing source address, decrement the TTL, fragment to the MTU, ARP.
rt[1] -> DropBroadcasts
    -> cp0 :: PaintTee(1)
    -> gio0 :: IPGWOptions(10.0.0.1)
    -> FixIPSrc(10.0.0.1)
    -> dt0 :: DecIPTTL
    -> fr0 :: IPFragmenter(1500)
    -> [0]arpq0;
dt0[1] -> ICMPError(10.0.0.1, timeexceeded) -> rt;
fr0[1] -> ICMPError(10.0.0.1, unreachable, needfrag, MTU 1500) -> rt;
gio0[1] -> ICMPError(10.0.0.1, parameterproblem) -> rt;
cp0[1] -> ICMPError(10.0.0.1, redirect, host) -> rt;

// ---- eth1 ----
c1 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
FromDevice(eth1) -> c1;
out1 :: Queue(200) -> todev1 :: ToDevice(eth1);
arpq1 :: ARPQuerier(192.168.1.1, 00:00:c0:4f:71:ef) -> out1;
c1[0] -> ARPResponder(192.168.1.1 00:00:c0:4f:71:ef) -> out1;
c1[1] -> arpt;
arpt[1] -> [1]arpq1;
c1[2] -> Paint(2) -> ip;
c1[3] -> Print("eth1 non-IP") -> Discard;
rt[2] -> DropBroadcasts
    -> cp1 :: PaintTee(2)
    -> gio1 :: IPGWOptions(192.168.1.1)
    -> FixIPSrc(192.168.1.1)
    -> dt1 :: DecIPTTL
    -> fr1 :: IPFragmenter(1500)
    -> [0]arpq1;
dt1[1] -> ICMPError(192.168.1.1, timeexceeded) -> rt;
fr1[1] -> ICMPError(192.168.1.1, unreachable, needfrag, MTU 1500) -> rt;
gio1[1] -> ICMPError(192.168.1.1, parameterproblem) -> rt;
cp1[1] -> ICMPError(192.168.1.1, redirect, host) -> rt;
