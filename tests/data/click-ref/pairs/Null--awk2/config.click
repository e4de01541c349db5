// click-diff chain Null (class Null)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Null -> out0;
