FromDump(../awkward.pcap, STOP true, FORCE_IP true) -> ICMPError(18.26.4.24, timeexceeded) -> ToDump(out0.pcap, ENCAP IP);
