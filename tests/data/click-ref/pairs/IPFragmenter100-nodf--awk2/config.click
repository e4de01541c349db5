// click-diff chain IPFragmenter100-nodf (class IPFragmenter)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> f :: IPFragmenter(100, HONOR_DF false); f[0] -> out0; f[1] -> out1;
