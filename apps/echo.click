// echo.click -- the NetThreads thesis's echo benchmark: every frame is returned with its
// Ethernet and IP source and destination swapped (EchoBack). 3 elements, 2 connections.
FromDevice(eth0) -> EchoBack -> ToDevice(eth0);
