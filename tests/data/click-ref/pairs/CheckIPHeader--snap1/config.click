// click-diff chain CheckIPHeader (class CheckIPHeader)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci[0] -> out0; ci[1] -> out1;
