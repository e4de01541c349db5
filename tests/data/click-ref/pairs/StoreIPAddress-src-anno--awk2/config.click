// click-diff chain StoreIPAddress-src-anno (class StoreIPAddress)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> ci :: CheckIPHeader;
ci -> GetIPAddress(16) -> StoreIPAddress(src) -> out0;
