x::IPRewriter(keep 0 1, drop);
FromDump(../awkward.pcap, STOP true, FORCE_IP true) -> c::IPClassifier(src net 10.0.0.0/8, -);
c[0] -> [0]x; c[1] -> [1]x;
x[0] -> ToDump(out0.pcap); x[1] -> ToDump(out1.pcap);