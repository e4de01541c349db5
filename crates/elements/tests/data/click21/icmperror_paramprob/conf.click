FromDump(../awkward.pcap, STOP true) -> Strip(14) -> CheckIPHeader -> g::IPGWOptions(18.26.4.24);
g[0] -> Discard;
g[1] -> ICMPError(18.26.4.24, parameterproblem) -> ToDump(out0.pcap, ENCAP IP);
