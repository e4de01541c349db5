// click-diff chain StaticIPLookup (class StaticIPLookup)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> GetIPAddress(16) -> rt :: StaticIPLookup(18.26.4.24/32 0, 18.26.4.255/32 0, 18.26.4.0/32 0, 18.26.7.1/32 0, 18.26.7.255/32 0, 18.26.7.0/32 0, 18.26.4.0/24 1, 18.26.7.0/24 2, 0.0.0.0/0 18.26.7.2 2);
rt[0] -> out0; rt[1] -> out1; rt[2] -> out2;
