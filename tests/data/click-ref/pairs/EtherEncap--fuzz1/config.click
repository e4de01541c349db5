// click-diff chain EtherEncap (class EtherEncap)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> EtherEncap(0x0800, 1:2:3:4:5:6, 0:a:b:c:d:e) -> out0;
