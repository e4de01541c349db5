// udhcp.click -- the NetThreads thesis's UDHCP: a DHCP server for 20,000 hosts whose leases
// live in a linearly searched array; a new address is offered after its ping times out.
// DHCP replies and pings leave on eth0. 4 elements.
srv :: DHCPServer(SERVER 10.0.0.1, MAC 00:00:c0:ae:67:ef, POOL 10.0.1.0, LEASES 20000,
                  MASK 16, LEASE 3600, PING_WAIT 500, PINGS 256, POLL 1);
FromDevice(eth0) -> srv;
out :: ToDevice(eth0);
srv[0] -> out;
srv[1] -> out;
