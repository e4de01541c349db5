// click-diff chain ToDump-nano-true (class ToDump)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap, NANO true);
src -> out0;
