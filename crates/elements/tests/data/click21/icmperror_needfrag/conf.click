FromDump(../awkward.pcap, STOP true) -> Strip(14) -> CheckIPHeader -> ICMPError(18.26.4.24, unreachable, needfrag) -> ToDump(out0.pcap, ENCAP IP);
