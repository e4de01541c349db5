// click-diff chain IPFragmenter576 (class IPFragmenter)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> f :: IPFragmenter(576); f[0] -> out0; f[1] -> out1;
