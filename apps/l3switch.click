// l3switch.click -- layer-2 bridging with MAC learning plus layer-3 forwarding
// (the L3-Switch benchmark of seed 001, 001_50c9ec885c831f52.txt section 5).
//
// Two ports bridged by a MAC-learning EtherBridge. Frames addressed to the switch's own MACs
// are routed: ARP queries answered, IPv4 checked, looked up, TTL decremented and re-framed for
// the next hop; all other frames are bridged to the port their destination was learned on
// (or flooded to the other port).
//
// Interfaces:
//   eth0  10.0.0.1/8       00:00:c0:ae:67:ef
//   eth1  192.168.1.1/24   00:00:c0:4f:71:ef

br :: EtherBridge(PORTS 2, 00:00:c0:ae:67:ef, 00:00:c0:4f:71:ef);
FromDevice(eth0) -> [0]br;
FromDevice(eth1) -> [1]br;

out0 :: Queue(200) -> ToDevice(eth0);
out1 :: Queue(200) -> ToDevice(eth1);

// Bridged frames.
br[1] -> out0;
br[2] -> out1;

// Routed frames.
c :: Classifier(12/0806 20/0001 38/0a000001, 12/0806 20/0001, 12/0800, -);
br[0] -> c;
// ARP queries for 10.0.0.1 (eth0) and for 192.168.1.1 (eth1).
c[0] -> ARPResponder(10.0.0.1 00:00:c0:ae:67:ef) -> out0;
c[1] -> ARPResponder(192.168.1.1 00:00:c0:4f:71:ef) -> out1;
c[3] -> Discard;

rt :: StaticIPLookup(10.0.0.0/8 0, 192.168.1.0/24 1, 0.0.0.0/0 10.0.0.254 0);
c[2] -> Strip(14)
     -> CheckIPHeader(INTERFACES 10.0.0.1/8 192.168.1.1/24)
     -> GetIPAddress(16)
     -> rt;
rt[0] -> dt0 :: DecIPTTL -> EtherEncap(0x0800, 00:00:c0:ae:67:ef, 00:00:c0:00:00:fe) -> out0;
rt[1] -> dt1 :: DecIPTTL -> EtherEncap(0x0800, 00:00:c0:4f:71:ef, 00:00:c0:00:01:fe) -> out1;
dt0[1] -> Discard;
dt1[1] -> Discard;
