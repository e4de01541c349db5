FromDump(../awkward.pcap, STOP true) -> x::HostEtherFilter(00:11:22:33:44:55, DROP_OWN true);
x[0] -> ToDump(out0.pcap); x[1] -> ToDump(out1.pcap);