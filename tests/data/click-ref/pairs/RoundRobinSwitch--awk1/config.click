// click-diff chain RoundRobinSwitch (class RoundRobinSwitch)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
src -> s :: RoundRobinSwitch; s[0] -> out0; s[1] -> out1; s[2] -> out2;
