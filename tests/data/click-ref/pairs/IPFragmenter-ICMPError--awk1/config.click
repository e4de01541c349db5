// click-diff chain IPFragmenter-ICMPError (class ICMPError)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> f :: IPFragmenter(576) -> out0; f[1] -> ICMPError(18.26.4.24, unreachable, needfrag) -> out1;
