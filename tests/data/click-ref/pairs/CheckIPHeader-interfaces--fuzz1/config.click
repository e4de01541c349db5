// click-diff chain CheckIPHeader-interfaces (class CheckIPHeader)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> Strip(14) -> ci :: CheckIPHeader(INTERFACES 18.26.4.24/24 18.26.7.1/24); ci[0] -> out0; ci[1] -> out1;
