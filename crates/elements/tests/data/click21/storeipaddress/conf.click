FromDump(../awkward.pcap, STOP true) -> Strip(14) -> CheckIPHeader -> StoreIPAddress(9.9.9.9, src) -> ToDump(out0.pcap, ENCAP IP);
