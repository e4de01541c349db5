// intruder.click -- the NetThreads thesis's Intruder: fragments held in a locked associative
// array with heap-allocated lists until their message is complete, then the message is
// searched for known attacks; clean messages' fragments leave on eth1, attacks are discarded.
FromDevice(eth0) -> det :: IntruderDetector;
det[0] -> ToDevice(eth1);
det[1] -> Discard;
