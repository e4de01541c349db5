// classifier.click -- the NetThreads thesis's Classifier: TCP flows in a global locked hash
// table with a lock per flow, payloads reassembled up to 500 bytes and searched for the HTTP
// pattern of the Linux layer-7 packet classifier, byte and rate statistics per flow; every
// packet is forwarded with its flow's class in the paint annotation. 3 elements.
// FREE_LISTS 8: the per-thread allocator "free of conflicts" the thesis's NetTM programs use
// in place of malloc/free (section 8.3), one free list per thread context (2 cores x 4).
FromDevice(eth0) -> RegexFlowClassifier(LIMIT 500, BUCKETS 1024, FLOWS 4096, TIMEOUT 60,
                                        FREE_LISTS 8) -> ToDevice(eth1);
