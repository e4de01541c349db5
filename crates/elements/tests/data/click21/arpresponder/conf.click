FromDump(../awkward.pcap, STOP true) -> x::ARPResponder(10.0.0.1 00:01:02:03:04:05, 10.0.0.2/31 00:01:02:03:04:06);
x[0] -> ToDump(out0.pcap); x[1] -> ToDump(out1.pcap);