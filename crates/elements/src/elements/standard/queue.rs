//! `Queue([CAPACITY])` — stores packets pushed to it (FIFO) until they are pulled.
//!
//! Ports: 1 push input, 1 pull output. CAPACITY defaults to 1000 (Click's default). A packet
//! arriving at a full queue is dropped with reason `queue full`.
//!
//! Costs (instruction counts are pktflow estimates; the accesses follow Click's Queue, a ring of
//! packet pointers with a `_head` and a `_tail` index, on a 32-bit NP): push 14 instructions,
//! reading `_head` (dynamic state object 1, key 0, 4 B) and `_tail` (key 4, 4 B), writing the
//! packet pointer into its slot (object 0, key = slot, 4 B) and the new `_tail`; a drop costs 8
//! instructions and the two index reads. Pull: 12 instructions, reading `_head` and `_tail`,
//! the slot's pointer, and writing the new `_head`; an empty pull 4 instructions and the two
//! index reads. The queue is persistent dynamic state shared by every instance of the task:
//! its accesses become critical sections (the output buffering that the NPIRE paper, section
//! 4, names as the source of Router's synchronization).
use crate::conf::{parse_uint, Args, InitEnv};
use crate::cx::Cx;
use crate::element::{Element, Ports};
use crate::registry::ClassInfo;
use pktflow_model::AccessKind::{Read, Write};
use pktflow_traffic::Packet;
use std::collections::VecDeque;

/// Keys of the `_head` and `_tail` words in the index object (dynamic state object 1).
const HEAD: u64 = 0;
const TAIL: u64 = 4;

pub const CLASS: ClassInfo = ClassInfo {
    name: "Queue",
    summary: "FIFO packet storage: push in, pull out",
    make,
};

pub struct Queue {
    q: VecDeque<Packet>,
    capacity: usize,
    head_slot: u64,
    drops: u64,
    highwater: usize,
}

fn make(config: &str, _env: &InitEnv) -> Result<Box<dyn Element>, String> {
    let mut a = Args::parse("Queue", config, &["CAPACITY"]);
    let capacity = match a.keyword_or_positional("CAPACITY") {
        Some(s) => parse_uint(&s).map_err(|e| format!("Queue: CAPACITY: {e}"))? as usize,
        None => 1000,
    };
    a.finish()?;
    if capacity == 0 {
        return Err("Queue: CAPACITY must be at least 1".into());
    }
    Ok(Box::new(Queue {
        q: VecDeque::with_capacity(capacity.min(4096)),
        capacity,
        head_slot: 0,
        drops: 0,
        highwater: 0,
    }))
}

impl Element for Queue {
    fn ports(&self) -> Ports {
        Ports::push_to_pull(1, 1)
    }
    fn is_storage(&self) -> bool {
        true
    }
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        cx.dynamic_state(Read, 1, HEAD, 4);
        cx.dynamic_state(Read, 1, TAIL, 4);
        if self.q.len() >= self.capacity {
            cx.instr(8);
            self.drops += 1;
            cx.drop_packet(p, "queue full");
            return;
        }
        cx.instr(14);
        let slot = (self.head_slot + self.q.len() as u64) % self.capacity as u64;
        cx.dynamic_state(Write, 0, slot, 4);
        cx.dynamic_state(Write, 1, TAIL, 4);
        self.q.push_back(p);
        self.highwater = self.highwater.max(self.q.len());
    }
    fn pull(&mut self, _port: usize, cx: &mut Cx) -> Option<Packet> {
        cx.dynamic_state(Read, 1, HEAD, 4);
        cx.dynamic_state(Read, 1, TAIL, 4);
        let p = self.q.pop_front();
        if p.is_some() {
            cx.instr(12);
            cx.dynamic_state(Read, 0, self.head_slot, 4);
            cx.dynamic_state(Write, 1, HEAD, 4);
            // The next slot of the ring, wrapping (no division: `head_slot` < `capacity`).
            self.head_slot += 1;
            if self.head_slot == self.capacity as u64 {
                self.head_slot = 0;
            }
        } else {
            cx.instr(4);
        }
        p
    }
    fn held(&self) -> usize {
        self.q.len()
    }
    fn stats(&self) -> serde_json::Value {
        serde_json::json!({"length": self.q.len(), "capacity": self.capacity, "drops": self.drops, "highwater_length": self.highwater})
    }
    fn code_size(&self) -> u32 {
        120
    }
}
