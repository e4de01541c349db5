// click-diff chain PaintTee-nomatch (class PaintTee)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Paint(1) -> pt :: PaintTee(2); pt[0] -> out0; pt[1] -> out1;
