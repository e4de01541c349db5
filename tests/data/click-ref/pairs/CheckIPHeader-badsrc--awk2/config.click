// click-diff chain CheckIPHeader-badsrc (class CheckIPHeader)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> ci :: CheckIPHeader(BADSRC 18.26.4.255 18.26.7.255); ci[0] -> out0;
