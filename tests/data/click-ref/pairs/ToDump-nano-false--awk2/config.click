// click-diff chain ToDump-nano-false (class ToDump)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap, NANO false);
src -> out0;
