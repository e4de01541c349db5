// click-diff chain SetIPAddress-StoreIPAddress (class SetIPAddress/StoreIPAddress)
src :: FromDump(in.pcap, STOP true);
out0 :: ToDump(out0.pcap);
src -> rawc :: Classifier(12/0800 14/45 33/00%01, 12/0800 14/45 33/01%01);
rawc[1] -> raws :: Strip(14); rawc[0] -> raws -> MarkIPHeader -> SetIPAddress(9.9.9.9) -> StoreIPAddress(16) -> out0;
