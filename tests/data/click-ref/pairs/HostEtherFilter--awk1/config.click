// click-diff chain HostEtherFilter (class HostEtherFilter)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
src -> h :: HostEtherFilter(00:00:c0:3b:71:ef, DROP_OWN true, DROP_OTHER true); h[0] -> out0; h[1] -> out1;
