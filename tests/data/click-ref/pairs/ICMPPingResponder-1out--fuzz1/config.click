// click-diff chain ICMPPingResponder-1out (class ICMPPingResponder)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> ICMPPingResponder -> out0;
