// click-diff chain UDPIPEncap-nocsum (class UDPIPEncap)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> UDPIPEncap(1.2.3.4, 1234, 5.6.7.8, 5678, false) -> out0;
