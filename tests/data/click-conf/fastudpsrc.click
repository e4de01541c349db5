
PollDevice(eth1) -> ToHost;
FastUDPSource(1300000, 4000000, 60, 00:03:47:0D:39:57, 2.0.0.2, 1234,
                                    1:2:3:4:5:6, 2.0.0.1, 1234, 1, 0, 1)
  -> ToDevice(eth1);

