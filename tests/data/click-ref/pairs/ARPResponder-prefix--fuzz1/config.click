// click-diff chain ARPResponder-prefix (class ARPResponder)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Classifier(12/0806 20/0001) -> ARPResponder(18.26.4.0/24 00:00:c0:3b:71:ef, 18.26.7.1 00:00:c0:4f:71:ef) -> out0;
