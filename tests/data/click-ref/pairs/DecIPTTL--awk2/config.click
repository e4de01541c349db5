// click-diff chain DecIPTTL (class DecIPTTL)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> d :: DecIPTTL; d[0] -> out0; d[1] -> out1; ci[1] -> out2;
