// intruder2.click -- the NetThreads thesis's Intruder2: static reassembly slots with a lock
// each (per packet, then again after the dictionary search); clean messages' fragments leave
// on eth1, attacks are discarded.
FromDevice(eth0) -> det :: IntruderDetector2(SLOTS 1024);
det[0] -> ToDevice(eth1);
det[1] -> Discard;
