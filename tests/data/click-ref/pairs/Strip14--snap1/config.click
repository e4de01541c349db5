// click-diff chain Strip14 (class Strip)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> out0;
