// click-diff chain IPClassifier-proto (class IPClassifier)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
out3 :: ToDump(out3.pcap);
out4 :: ToDump(out4.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> c :: IPClassifier(tcp, udp, icmp, -);
c[0] -> out0; c[1] -> out1; c[2] -> out2; c[3] -> out3; ci[1] -> out4;
