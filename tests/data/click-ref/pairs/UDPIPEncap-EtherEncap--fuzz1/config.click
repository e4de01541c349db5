// click-diff chain UDPIPEncap-EtherEncap (class UDPIPEncap)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> UDPIPEncap(18.26.4.24, 9, 18.26.7.5, 9) -> EtherEncap(0x0800, 1:1:1:1:1:1, 2:2:2:2:2:2) -> out0;
