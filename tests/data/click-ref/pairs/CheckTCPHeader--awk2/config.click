// click-diff chain CheckTCPHeader (class CheckTCPHeader)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> ipc :: IPClassifier(tcp, -);
ipc[0] -> t :: CheckTCPHeader; t[0] -> out0; t[1] -> out1; ipc[1] -> out2;
