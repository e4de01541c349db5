// click-diff chain IPGWOptions-FixIPSrc (class FixIPSrc)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> g :: IPGWOptions(18.26.7.1) -> FixIPSrc(18.26.4.24) -> out0;
g[1] -> ICMPError(18.26.4.24, parameterproblem) -> FixIPSrc(18.26.4.24) -> out1;
