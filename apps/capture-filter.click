// capture-filter.click -- keep one server's traffic from a capture, Click style.
//
// Reads the Ethernet capture capture.pcap (next to this file), keeps the IPv4 packets to or
// from the server named in AddressInfo, writes them unchanged to server.pcap, and at the end
// prints how many packets were read and kept. Runs unchanged in Click 2.1
// (`click capture-filter.click`) and in pktflow (`pktflow profile capture-filter.click`).

AddressInfo(server 10.0.0.10 00:50:ba:85:84:a9);

src :: FromDump(capture.pcap, STOP true);
src -> read :: Counter
    -> eth :: Classifier(12/0800 /* IPv4 */, - /* anything else */);

eth[0] -> Strip(14)
       -> CheckIPHeader
       -> ip :: IPClassifier(src host server or dst host server, -);

ip[0]  -> Unstrip(14)
       -> kept :: Counter
       -> ToDump(server.pcap, SNAPLEN 0);
ip[1]  -> Discard;
eth[1] -> Discard;

DriverManager(wait_stop,
              print "read" $(read.count) "kept" $(kept.count),
              read kept.byte_count,
              stop);
