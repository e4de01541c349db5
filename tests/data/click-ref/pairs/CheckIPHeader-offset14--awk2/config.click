// click-diff chain CheckIPHeader-offset14 (class CheckIPHeader)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> ci :: CheckIPHeader(OFFSET 14); ci[0] -> out0; ci[1] -> out1;
