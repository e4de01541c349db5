// click-diff chain router (class router (SOSP))
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
out1 :: ToDump(out1.pcap);
out2 :: ToDump(out2.pcap);
out3 :: ToDump(out3.pcap);
out4 :: ToDump(out4.pcap);
out5 :: ToDump(out5.pcap);
c0 :: Classifier(12/0806 20/0001, 12/0806 20/0002, 12/0800, -);
src -> c0;
ar0 :: ARPResponder(18.26.4.24 00:00:c0:3b:71:ef);
c0[0] -> ar0 -> out0;
arpq1 :: ARPQuerier(18.26.7.1, 00:00:c0:4f:71:ef);
c0[1] -> [1]arpq1;
c0[3] -> out3;
rt :: StaticIPLookup(18.26.4.24/32 0, 18.26.4.255/32 0, 18.26.4.0/32 0, 18.26.7.1/32 0, 18.26.7.255/32 0, 18.26.7.0/32 0, 18.26.4.0/24 1, 18.26.7.0/24 2, 0.0.0.0/0 18.26.7.2 2);
c0[2] -> Paint(1) -> Strip(14) -> chk :: CheckIPHeader(INTERFACES 18.26.4.24/24 18.26.7.1/24) -> GetIPAddress(16) -> rt;
chk[1] -> out4;
rt[0] -> out2;
rt[1] -> DropBroadcasts -> cp0 :: PaintTee(1) -> gio0 :: IPGWOptions(18.26.4.24) -> FixIPSrc(18.26.4.24)
      -> dt0 :: DecIPTTL -> fr0 :: IPFragmenter(576) -> out5;
rt[2] -> DropBroadcasts -> cp1 :: PaintTee(1) -> gio1 :: IPGWOptions(18.26.7.1) -> FixIPSrc(18.26.7.1)
      -> dt1 :: DecIPTTL -> fr1 :: IPFragmenter(1500) -> [0]arpq1 -> out1;
cp0[1] -> ICMPError(18.26.4.24, redirect, host) -> rt;
cp1[1] -> ICMPError(18.26.7.1, redirect, host) -> rt;
gio0[1] -> ICMPError(18.26.4.24, parameterproblem) -> rt;
gio1[1] -> ICMPError(18.26.7.1, parameterproblem) -> rt;
dt0[1] -> ICMPError(18.26.4.24, timeexceeded) -> rt;
dt1[1] -> ICMPError(18.26.7.1, timeexceeded) -> rt;
fr0[1] -> ICMPError(18.26.4.24, unreachable, needfrag) -> rt;
fr1[1] -> ICMPError(18.26.7.1, unreachable, needfrag) -> rt;
