// click-diff chain ICMPPingResponder (class ICMPPingResponder)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> p :: ICMPPingResponder; p[0] -> out0; p[1] -> out1;
