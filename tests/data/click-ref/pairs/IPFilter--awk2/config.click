// click-diff chain IPFilter (class IPFilter)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> f :: IPFilter(allow tcp, 1 udp port 53, deny icmp, 1 src net 18.26.4.0/24, deny all);
f[0] -> out0; f[1] -> out1;
