// click-diff chain ToDump-snaplen64 (class ToDump)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap, SNAPLEN 64);
src -> out0;
