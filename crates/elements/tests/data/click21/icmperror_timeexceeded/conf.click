FromDump(../awkward.pcap, STOP true) -> Strip(14) -> CheckIPHeader -> ICMPError(18.26.4.24, timeexceeded) -> ToDump(out0.pcap, ENCAP IP);
