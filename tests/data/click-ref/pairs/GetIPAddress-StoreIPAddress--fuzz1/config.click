// click-diff chain GetIPAddress-StoreIPAddress (class GetIPAddress/StoreIPAddress)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> GetIPAddress(30) -> StoreIPAddress(26) -> out0;
