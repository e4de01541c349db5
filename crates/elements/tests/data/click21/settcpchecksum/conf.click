FromDump(../awkward.pcap, STOP true) -> Strip(14) -> CheckIPHeader -> SetTCPChecksum -> ToDump(out0.pcap, ENCAP IP);
