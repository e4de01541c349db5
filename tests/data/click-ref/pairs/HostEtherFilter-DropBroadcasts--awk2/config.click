// click-diff chain HostEtherFilter-DropBroadcasts (class DropBroadcasts)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> HostEtherFilter(00:00:c0:3b:71:ef, DROP_OTHER false) -> Strip(14) -> DropBroadcasts -> out0;
