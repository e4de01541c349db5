// click-diff chain TCPRewriter (class TCPRewriter)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> ipc :: IPClassifier(tcp, -);
ipc[0] -> rw :: TCPRewriter(pattern 18.26.7.1 30000-30999# - - 0 1); rw[0] -> out0; rw[1] -> out1; ipc[1] -> out2;
