// click-diff chain Classifier-masks (class Classifier)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
out3 :: ToDump(out3.pcap);
out4 :: ToDump(out4.pcap);
src -> c :: Classifier(0/ffffffffffff, 12/0800 23/06, 12/0800 23/11 36/0035%fff0, 12/0800 !23/01, -);
c[0] -> out0; c[1] -> out1; c[2] -> out2; c[3] -> out3; c[4] -> out4;
