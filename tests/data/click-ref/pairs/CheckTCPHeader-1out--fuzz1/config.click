// click-diff chain CheckTCPHeader-1out (class CheckTCPHeader)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> ipc :: IPClassifier(tcp, -);
ipc[0] -> CheckTCPHeader -> out0; ipc[1] -> out1;
