//! Packets, pcap/pcapng I/O, seeded synthetic traces, routing tables
