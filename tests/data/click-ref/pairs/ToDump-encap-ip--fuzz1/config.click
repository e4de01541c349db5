// click-diff chain ToDump-encap-ip (class ToDump)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap, ENCAP IP);
src -> Strip(14) -> out0;
