FromDump(../awkward.pcap, STOP true) -> UDPIPEncap(1.0.0.1, 1234, 2.0.0.2, 5678, CHECKSUM true) -> ToDump(out0.pcap, ENCAP IP);
