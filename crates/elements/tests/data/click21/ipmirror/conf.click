FromDump(../awkward.pcap, STOP true, FORCE_IP true) -> IPMirror -> ToDump(out0.pcap);
