// click-diff chain Classifier-arp-ip (class Classifier)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
out3 :: ToDump(out3.pcap);
src -> c :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
c[0] -> out0; c[1] -> out1; c[2] -> out2; c[3] -> out3;
