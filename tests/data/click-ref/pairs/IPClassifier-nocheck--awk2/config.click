// click-diff chain IPClassifier-nocheck (class IPClassifier)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
out3 :: ToDump(out3.pcap);
src -> rawc :: Classifier(12/0800 14/45 33/00%01, 12/0800 14/45 33/01%01);
rawc[1] -> raws :: Strip(14); rawc[0] -> raws -> MarkIPHeader -> c :: IPClassifier(dst port 53, ip[9] = 17, tcp syn, -);
c[0] -> out0; c[1] -> out1; c[2] -> out2; c[3] -> out3;
