// click-diff chain SetTCPChecksum (class SetTCPChecksum)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> ipc :: IPClassifier(tcp, -);
ipc[0] -> SetTCPChecksum -> out0; ipc[1] -> out1;
