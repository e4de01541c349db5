FromDump(ipgw.pcap, STOP true) -> Strip(14) -> CheckIPHeader -> x::IPGWOptions(18.26.4.24, 1.0.0.1);
x[0] -> ToDump(out0.pcap, ENCAP IP); x[1] -> ToDump(out1.pcap, ENCAP IP);