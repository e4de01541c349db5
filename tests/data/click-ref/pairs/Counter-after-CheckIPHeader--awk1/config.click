// click-diff chain Counter-after-CheckIPHeader (class Counter)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> c :: Counter -> out0; ci[1] -> c1 :: Counter -> out1;
DriverManager(pause, print c.count, print c.byte_count, print c1.count, print c1.byte_count, stop);
