// click-diff chain ToDump-snaplen0 (class ToDump)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap, SNAPLEN 0);
src -> out0;
