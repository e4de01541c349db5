// click-diff chain ARPQuerier (class ARPQuerier)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> c :: Classifier(12/0806 20/0002, 12/0800, -);
q :: ARPQuerier(18.26.4.24, 00:00:c0:3b:71:ef);
c[0] -> [1]q; c[1] -> Strip(14) -> CheckIPHeader -> GetIPAddress(16) -> [0]q; c[2] -> out1; q -> out0;
