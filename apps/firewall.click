// firewall.click -- ordered 5-tuple rules, first match wins
// (the Firewall benchmark of seed 001, 001_50c9ec885c831f52.txt section 5).
//
// A filtering router: IPv4 frames pass FirewallRules (a few written rules, then 300 generated
// rules of realistic shape protecting the two interface networks, default deny), then are
// routed. ARP queries for the interfaces are answered.
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

fw :: FirewallRules(deny tcp any any any 23,
                    deny udp any any any 137-139,
                    allow tcp any 192.168.1.0/24 any 80,
                    allow tcp any 192.168.1.0/24 any 443,
                    allow udp any any any 53,
                    RANDOM 300, SEED 1, NETS 10.0.0.0/8 192.168.1.0/24,
                    DEFAULT deny);
fw[1] -> Discard;

rt :: StaticIPLookup(10.0.0.0/8 0, 192.168.1.0/24 1, 0.0.0.0/0 10.0.0.254 0);
c[2] -> fw -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> rt;
rt[0] -> dt0 :: DecIPTTL -> EtherEncap(0x0800, 00:00:c0:ae:67:ef, 00:00:c0:00:00:fe) -> out0;
rt[1] -> dt1 :: DecIPTTL -> EtherEncap(0x0800, 00:00:c0:4f:71:ef, 00:00:c0:00:01:fe) -> out1;
dt0[1] -> Discard;
dt1[1] -> Discard;
