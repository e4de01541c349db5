// click-diff chain IPAddrRewriter (class IPAddrRewriter)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> rw :: IPAddrRewriter(pattern 18.26.7.1 - 0 1); rw[0] -> out0; rw[1] -> out1;
