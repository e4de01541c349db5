// click-diff chain FromDump-force-ip (class FromDump)
src :: FromDump(in.pcap, STOP true, FORCE_IP true);
out0 :: ToDump(out0.pcap);
src -> out0;
