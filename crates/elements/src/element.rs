//! The element trait: what every functional element implements, and its port description.
//!
//! Elements run single-threaded inside [`crate::runtime::Router`]. Instead of calling the next
//! element directly (as Click's C++ does), an element hands packets to the context with
//! [`Cx::emit`]; the runtime delivers them depth-first, so the visit order matches Click's.
//! Every element records what it costs through the context: instructions executed and each
//! memory access with its memory type (see `pktflow_model::cost`).
use crate::cx::Cx;
use pktflow_traffic::Packet;

/// How a port moves packets (Click's push/pull processing).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Processing {
    Push,
    Pull,
    /// Push or pull, whichever its neighbours are (Click "a").
    Agnostic,
}

/// Port counts and processing of a configured element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ports {
    pub inputs: (usize, usize),
    pub outputs: (usize, usize),
    pub input_processing: Processing,
    pub output_processing: Processing,
}

impl Ports {
    /// Exactly `i` inputs and `o` outputs, agnostic (Click "a/a").
    pub const fn agnostic(i: usize, o: usize) -> Self {
        Ports {
            inputs: (i, i),
            outputs: (o, o),
            input_processing: Processing::Agnostic,
            output_processing: Processing::Agnostic,
        }
    }
    /// Exactly `i` inputs and `o` outputs, push (Click "h/h").
    pub const fn push(i: usize, o: usize) -> Self {
        Ports {
            inputs: (i, i),
            outputs: (o, o),
            input_processing: Processing::Push,
            output_processing: Processing::Push,
        }
    }
    /// Push input(s), pull output(s): a queue (Click "h/l").
    pub const fn push_to_pull(i: usize, o: usize) -> Self {
        Ports {
            inputs: (i, i),
            outputs: (o, o),
            input_processing: Processing::Push,
            output_processing: Processing::Pull,
        }
    }
    pub const fn with_inputs(mut self, min: usize, max: usize) -> Self {
        self.inputs = (min, max);
        self
    }
    pub const fn with_outputs(mut self, min: usize, max: usize) -> Self {
        self.outputs = (min, max);
        self
    }
}

/// Where injected packets enter and where packets leave the graph.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Ordinary processing element.
    Inner,
    /// Injection point for trace packets (FromDevice, PollDevice). The string is the device name.
    Source,
    /// Generates its own packets when run (InfiniteSource, RatedSource, FromDump).
    Generator,
    /// Leaves the graph (ToDevice, ToDump, Discard); drained by the runtime when pull.
    Sink,
}

pub trait Element: Send {
    /// Port counts and processing, after configuration.
    fn ports(&self) -> Ports;

    fn role(&self) -> Role {
        Role::Inner
    }

    /// Device name of a Source/Sink (e.g. `eth0`), used to bind trace interfaces.
    fn device(&self) -> Option<&str> {
        None
    }

    /// A packet arrives on input `port`. Default: [`Element::simple_action`] then output 0.
    /// (The elements mark their `simple_action` `#[inline(always)]`: this default, compiled once per
    /// element, then holds the element's work itself instead of calling it.)
    fn push(&mut self, _port: usize, p: Packet, cx: &mut Cx) {
        if let Some(p) = self.simple_action(p, cx) {
            cx.emit(0, p);
        }
    }

    /// One-in one-out processing shared by push and pull paths. `None` means the element
    /// consumed the packet (it must have called `cx.drop_packet`, `cx.output` or `cx.emit`).
    fn simple_action(&mut self, p: Packet, _cx: &mut Cx) -> Option<Packet> {
        Some(p)
    }

    /// Pull a packet from output `port` (storage elements: Queue).
    fn pull(&mut self, _port: usize, _cx: &mut Cx) -> Option<Packet> {
        None
    }

    /// True for elements whose pull output is served from storage they hold (Queue); the
    /// runtime pulls through agnostic elements until it reaches one of these.
    fn is_storage(&self) -> bool {
        false
    }

    /// Generators: produce the next packet (or `None` when exhausted / at the packet limit).
    /// The runtime pushes it out of output 0.
    fn generate(&mut self, _cx: &mut Cx) -> Option<Packet> {
        None
    }

    /// Generators: true when the packets end by themselves (FromDump: the end of its file), so a
    /// run need not be capped (`pktflow run` caps the others, an InfiniteSource may never end).
    fn finite_source(&self) -> bool {
        false
    }

    /// Packets still held at the end of a run (queue contents, ARP-pending packets).
    fn held(&self) -> usize {
        0
    }

    /// Called once at the end of a run (flush output files).
    fn finish(&mut self) -> Result<(), String> {
        Ok(())
    }

    /// Read handlers: counters and state worth reporting (e.g. `{"count": 12}`).
    fn stats(&self) -> serde_json::Value {
        serde_json::Value::Null
    }

    /// True when a push cycle through this element terminates: a packet passes it at most once
    /// (ICMPError never sends an error about an ICMP error, so the IP router's loop from the
    /// error generators back to the route lookup is safe). A push cycle with no such element is
    /// a validation error: a packet could loop forever.
    fn cycle_safe(&self) -> bool {
        false
    }

    /// Write handler `name` (Click's write handlers, called by scripts and by
    /// `Counter(COUNT_CALL ...)`). Default: the element has none.
    fn write_handler(&mut self, name: &str, _value: &str) -> Result<(), String> {
        Err(format!("no write handler '{name}'"))
    }

    /// Script elements (Script, DriverManager) lend their script to the runtime, which runs it
    /// against the other elements' handlers and gives it back with [`Element::put_script`].
    fn take_script(&mut self) -> Option<crate::elements::click::script::Script> {
        None
    }
    fn put_script(&mut self, _s: crate::elements::click::script::Script) {}

    /// True for elements with a pull input and push output(s) that move packets on their own
    /// (Unqueue, TimedSink): the runtime pulls them like sinks after every packet.
    fn pulls_actively(&self) -> bool {
        false
    }

    /// Elements with several pull inputs (RoundRobinSched, PrioSched): the order in which the
    /// runtime should try the inputs for the next pull. `None`: pull input 0 only.
    fn pull_order(&mut self, _inputs: usize) -> Option<Vec<usize>> {
        None
    }
    /// A packet was pulled from input `port` for output `_out` (after [`Element::pull_order`]).
    fn pulled(&mut self, _port: usize, p: Packet, _cx: &mut Cx) -> Option<Packet> {
        Some(p)
    }

    /// Pull-through elements that may refuse a pull at the current time (BandwidthShaper):
    /// `false` leaves the packet upstream (in its queue) for a later pull.
    fn pull_ready(&mut self, _now_ns: u64) -> bool {
        true
    }

    /// Processing of output `port` (default: [`Ports::output_processing`] for all). PullTee's
    /// output 0 follows its input while its copy outputs are push.
    fn output_processing_of(&self, _port: usize) -> Processing {
        self.ports().output_processing
    }

    /// Called once the graph is validated, with the number of connected inputs and outputs
    /// (elements whose behaviour depends on them: RandomSwitch, HashSwitch, Tee-likes).
    fn set_port_counts(&mut self, _inputs: usize, _outputs: usize) {}

    /// True for elements that read the length of the queue downstream of output 0 (RED);
    /// the runtime then sets [`Cx::downstream_queue_len`] before each visit.
    fn wants_downstream_queue(&self) -> bool {
        false
    }

    /// Static code size in instructions (the code-size model of seed 001; a task must fit an
    /// engine's control store). Override with an estimate of the element's code.
    fn code_size(&self) -> u32 {
        64
    }
}
