// click-diff chain ARPResponder-1out (class ARPResponder)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> ARPResponder(18.26.4.24 00:00:c0:3b:71:ef) -> out0;
