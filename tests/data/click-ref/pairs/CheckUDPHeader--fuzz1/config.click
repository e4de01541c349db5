// click-diff chain CheckUDPHeader (class CheckUDPHeader)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> ipc :: IPClassifier(udp, -);
ipc[0] -> u :: CheckUDPHeader; u[0] -> out0; u[1] -> out1; ipc[1] -> out2;
