//! Application model: task graph of element instances, ports, connections, source spans, and the cost/trace vocabulary the timing models consume
