// click-diff chain DecIPTTL-ICMPError (class ICMPError)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> d :: DecIPTTL -> out0; d[1] -> ICMPError(18.26.4.24, timeexceeded) -> out1;
