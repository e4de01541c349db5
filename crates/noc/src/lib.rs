//! Stream graphs on 2D-mesh many-cores: balancing, layout, routing, cycle-level NoC simulator
