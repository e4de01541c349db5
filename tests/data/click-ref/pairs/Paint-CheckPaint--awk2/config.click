// click-diff chain Paint-CheckPaint (class Paint/CheckPaint)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Paint(2) -> cp :: CheckPaint(2); cp[0] -> out0; cp[1] -> out1;
