FromDump(../awkward.pcap, STOP true) -> Strip(14) -> CheckIPHeader -> IPClassifier(tcp) -> SetTCPChecksum(FIXOFF true) -> ToDump(out0.pcap, ENCAP IP);
