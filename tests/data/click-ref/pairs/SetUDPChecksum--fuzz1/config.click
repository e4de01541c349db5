// click-diff chain SetUDPChecksum (class SetUDPChecksum)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> ipc :: IPClassifier(udp, -);
ipc[0] -> SetUDPChecksum -> out0; ipc[1] -> out1;
