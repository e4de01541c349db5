// click-diff chain StaticSwitch (class StaticSwitch)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> s :: StaticSwitch(1); s[0] -> out0; s[1] -> out1;
