FromDump(../awkward.pcap, STOP true, FORCE_IP true) -> x::CheckUDPHeader;
x[0] -> ToDump(out0.pcap); x[1] -> ToDump(out1.pcap);