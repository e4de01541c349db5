// click-diff chain IPMirror (class IPMirror)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> IPMirror -> out0;
