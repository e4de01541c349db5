// click-diff chain ICMPError-mtu100 (class ICMPError)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> ICMPError(18.26.4.24, timeexceeded, MTU 100) -> out0; ci[1] -> out1;
