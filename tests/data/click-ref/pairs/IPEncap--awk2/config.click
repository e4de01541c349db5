// click-diff chain IPEncap (class IPEncap)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> IPEncap(4, 1.0.0.1, 2.0.0.2) -> out0;
