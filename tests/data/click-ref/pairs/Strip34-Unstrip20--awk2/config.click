// click-diff chain Strip34-Unstrip20 (class Strip/Unstrip)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(34) -> Unstrip(20) -> out0;
