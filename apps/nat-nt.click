// nat-nt.click -- the NetThreads thesis's NAT: inside TCP/UDP flows (eth0) leave through eth1
// as from 1.0.0.1 with a port from 50000; replies to a mapped port come back to the inside
// host; per-flow byte, packet and rate statistics; one global locked flow table, a lock per
// flow. 5 elements.
// FREE_LISTS 8: the per-thread allocator "free of conflicts" the thesis's NetTM programs use
// in place of malloc/free (section 8.3), one free list per thread context (2 cores x 4).
nat :: FlowStatsNAT(PUBLIC 1.0.0.1, PORT_BASE 50000, FLOWS 4096, FREE_LISTS 8);
FromDevice(eth0) -> [0]nat;
FromDevice(eth1) -> [1]nat;
nat[0] -> ToDevice(eth1);
nat[1] -> ToDevice(eth0);
