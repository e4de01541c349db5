// intruder.click -- the NetThreads thesis's Intruder: fragments held in a locked associative
// array with heap-allocated lists until their message is complete, then the message is
// searched for known attacks; clean messages' fragments leave on eth1, attacks are discarded.
// FREE_LISTS 8: the per-thread allocator "free of conflicts" the thesis's NetTM programs use
// in place of malloc/free (section 8.3), one free list per thread context (2 cores x 4).
FromDevice(eth0) -> det :: IntruderDetector(FREE_LISTS 8);
det[0] -> ToDevice(eth1);
det[1] -> Discard;
