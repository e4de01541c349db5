// click-diff chain Counter (class Counter)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> c :: Counter -> out0;
DriverManager(pause, print c.count, print c.byte_count, stop);
