// click-diff chain IPGWOptions (class IPGWOptions)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> g :: IPGWOptions(18.26.4.24); g[0] -> out0; g[1] -> out1;
