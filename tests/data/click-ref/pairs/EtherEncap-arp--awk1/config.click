// click-diff chain EtherEncap-arp (class EtherEncap)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> EtherEncap(0x0806, 00:00:c0:3b:71:ef, ff:ff:ff:ff:ff:ff) -> out0;
