// click-diff chain Tee (class Tee)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
src -> t :: Tee(3); t[0] -> out0; t[1] -> out1; t[2] -> out2;
