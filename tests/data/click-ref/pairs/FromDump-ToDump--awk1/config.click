// click-diff chain FromDump-ToDump (class FromDump/ToDump)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> out0;
