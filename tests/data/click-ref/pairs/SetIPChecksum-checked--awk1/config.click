// click-diff chain SetIPChecksum-checked (class SetIPChecksum)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> ci :: CheckIPHeader(CHECKSUM false) -> SetIPChecksum -> out0;
