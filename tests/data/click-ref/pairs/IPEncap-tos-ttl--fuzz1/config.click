// click-diff chain IPEncap-tos-ttl (class IPEncap)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> IPEncap(47, 18.26.4.24, 18.26.7.5, TOS 4, TTL 7, DF true) -> out0;
