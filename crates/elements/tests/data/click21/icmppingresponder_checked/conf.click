FromDump(../awkward.pcap, STOP true) -> Strip(14) -> CheckIPHeader -> x::ICMPPingResponder;
x[0] -> ToDump(out0.pcap, ENCAP IP); x[1] -> ToDump(out1.pcap, ENCAP IP);