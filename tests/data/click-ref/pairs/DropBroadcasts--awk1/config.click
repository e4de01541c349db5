// click-diff chain DropBroadcasts (class DropBroadcasts)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> Strip(14) -> DropBroadcasts -> out0;
