// mpls.click -- MPLS label push, swap and pop against a label table
// (the MPLS benchmark of seed 001, 001_50c9ec885c831f52.txt section 5).
//
// An edge label switch router: IPv4 frames get a label by their destination's forwarding
// equivalence class (MPLSPush), then the incoming label map swaps the label towards the next
// hop or pops it (penultimate hop) so the frame leaves as IPv4. IPv4 frames of no FEC are
// routed unlabeled. ARP queries for the interfaces are answered.
//
// Interfaces:
//   eth0  10.0.0.1/8       00:00:c0:ae:67:ef
//   eth1  192.168.1.1/24   00:00:c0:4f:71:ef

c :: Classifier(12/0806 20/0001 38/0a000001, 12/0806 20/0001, 12/0800, -);
FromDevice(eth0) -> c;
FromDevice(eth1) -> c;
out0 :: Queue(200) -> ToDevice(eth0);
out1 :: Queue(200) -> ToDevice(eth1);

// ARP queries for 10.0.0.1 (eth0) and for 192.168.1.1 (eth1).
c[0] -> ARPResponder(10.0.0.1 00:00:c0:ae:67:ef) -> out0;
c[1] -> ARPResponder(192.168.1.1 00:00:c0:4f:71:ef) -> out1;
c[3] -> Discard;

// FECs: 10.0.0.0/8 split in /12s, 192.168.1.0/24 in /26s.
push :: MPLSPush(10.0.0.0/12 1001, 10.16.0.0/12 1002, 10.32.0.0/12 1003, 10.48.0.0/12 1004,
                 10.64.0.0/12 1005, 10.80.0.0/12 1006, 10.96.0.0/12 1007, 10.112.0.0/12 1008,
                 10.128.0.0/12 1009, 10.144.0.0/12 1010, 10.160.0.0/12 1011, 10.176.0.0/12 1012,
                 10.192.0.0/12 1013, 10.208.0.0/12 1014, 10.224.0.0/12 1015, 10.240.0.0/12 1016,
                 192.168.1.0/26 2001, 192.168.1.64/26 2002, 192.168.1.128/26 2003,
                 192.168.1.192/26 2004);
// Incoming label map: most labels swapped to the next hop's label, a few popped.
sw :: MPLSSwap(1001 5001, 1002 5002, 1003 5003, 1004 5004, 1005 5005, 1006 5006,
               1007 5007, 1008 5008, 1009 5009, 1010 5010, 1011 5011, 1012 5012,
               1013 pop, 1014 pop, 1015 5015, 1016 5016,
               2001 6001, 2002 6002, 2003 pop, 2004 6004);
c[2] -> push -> sw;
sw[0] -> out1;
sw[1] -> out0;

// No FEC: plain IPv4 forwarding.
rt :: StaticIPLookup(10.0.0.0/8 0, 192.168.1.0/24 1, 0.0.0.0/0 10.0.0.254 0);
push[1] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;
rt[0] -> dt0 :: DecIPTTL -> EtherEncap(0x0800, 00:00:c0:ae:67:ef, 00:00:c0:00:00:fe) -> out0;
rt[1] -> dt1 :: DecIPTTL -> EtherEncap(0x0800, 00:00:c0:4f:71:ef, 00:00:c0:00:01:fe) -> out1;
dt0[1] -> Discard;
dt1[1] -> Discard;
