// click-diff chain IPClassifier-hosts-ports (class IPClassifier)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
out3 :: ToDump(out3.pcap);
out4 :: ToDump(out4.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> c :: IPClassifier(src host 18.26.4.1, dst net 18.26.7.0/24 and tcp, tcp dst port 80 or udp src port 53, icmp type echo, -);
c[0] -> out0; c[1] -> out1; c[2] -> out2; c[3] -> out3; c[4] -> out4;
