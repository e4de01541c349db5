// click-diff chain IPRewriter-two-inputs (class IPRewriter)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> ipc :: IPClassifier(src net 18.26.4.0/24, -);
rw :: IPRewriter(pattern 18.26.7.1 40000-40099# - - 0 1, drop);
ipc[0] -> [0]rw; ipc[1] -> [1]rw; rw[0] -> out0; rw[1] -> out1;
