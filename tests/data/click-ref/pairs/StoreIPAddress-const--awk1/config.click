// click-diff chain StoreIPAddress-const (class StoreIPAddress)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> StoreIPAddress(1.2.3.4, 26) -> out0;
