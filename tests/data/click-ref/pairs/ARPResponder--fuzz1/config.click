// click-diff chain ARPResponder (class ARPResponder)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> a :: ARPResponder(18.26.4.24 00:00:c0:3b:71:ef); a[0] -> out0; a[1] -> out1;
