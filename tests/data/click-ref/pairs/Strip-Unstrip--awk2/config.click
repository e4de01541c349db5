// click-diff chain Strip-Unstrip (class Strip/Unstrip)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> Unstrip(14) -> out0;
