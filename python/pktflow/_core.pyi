"""Type stubs of ``pktflow._core``, the PyO3 binding of the Rust core (crates/py).

Requests and results cross as JSON text: each function documents the document it takes and
returns in the docs of its subsystem (docs/npsim.md, docs/tdpm.md, docs/noc.md). Long calls run
with the GIL released and stop promptly on Ctrl-C (KeyboardInterrupt, or a partial result marked
``"interrupted": true`` where one makes sense).
"""

from typing import Any, Callable, Iterator, Optional

__version__: str

class PktflowError(Exception):
    """A user-facing error: bad file, bad name, impossible parameters. The message names the
    file, line, option or key at fault."""

# --- application stages (crates/py/src/app.rs) -----------------------------------------------

def graph_json(app: str) -> str:
    """The validated, flattened application graph as JSON (``{"file", "elements", "connections",
    "warnings"}``)."""

def graph_dot(app: str) -> str:
    """Graphviz DOT text of the application graph."""

def arch_json(name: str) -> str:
    """A validated architecture preset (built-in name or TOML path) as JSON."""

def arch_resolved(name_or_path: str, overrides: Optional[list[str]] = None) -> str:
    """A preset after inheritance (``base = ...``) and ``KEY=VALUE`` overrides (TOML value syntax):
    JSON with ``preset``, ``kind``, ``params`` and ``limits``."""

def arch_names() -> list[str]:
    """Names of the built-in architecture presets."""

def measure_host() -> str:
    """Measure this machine for the ``host`` preset: JSON ``{"measurement", "toml", "path"}``."""

def host_measured_path() -> Optional[str]:
    """The file the name ``host`` loads on this machine once measured, else None."""

def element_classes() -> str:
    """JSON list of ``{"name", "summary"}``, one per element class."""

def profile(
    app: str,
    trace: Optional[str] = None,
    synthetic: Optional[int] = None,
    seed: Optional[int] = None,
    out_dir: Optional[str] = None,
    progress: Optional[Callable[[int], Any]] = None,
    input_port: Optional[str] = None,
    destinations: Optional[str] = None,
) -> str:
    """Functional run and profile as JSON; ``progress(packets_done)`` is called periodically.
    ``input_port``: ``auto``, ``round-robin``, ``by-dst-mac``, ``by-subnet`` or an interface number
    (which input interface each packet of a trace file enters; see docs/profile.md).
    ``destinations``: how synthetic packets' destinations are drawn (``zipf``, ``uniform``,
    ``address-space``, ``per-port``, ``transit``)."""

def write_synthetic(
    path: str,
    n: Optional[int] = None,
    seed: Optional[int] = None,
    app: Optional[str] = None,
    pcapng: bool = False,
    progress: Optional[Callable[[int, int], Any]] = None,
) -> str:
    """Write a seeded synthetic trace atomically (refused when it would not fit on the disk);
    returns a JSON summary. ``progress(packets_written, packets_total)``."""

class TraceStream(Iterator[dict[str, Any]]):
    """Per-packet traces of a functional run, streamed (bounded memory)."""

    def __init__(
        self,
        app: str,
        trace: Optional[str] = None,
        synthetic: Optional[int] = None,
        seed: Optional[int] = None,
        input_port: Optional[str] = None,
    ) -> None: ...
    def __iter__(self) -> "TraceStream": ...
    def __next__(self) -> dict[str, Any]: ...

# --- network-processor simulator (crates/py/src/npsim.rs) ------------------------------------

def simulate(request: str, progress: Optional[Callable[[int, int], Any]] = None) -> str:
    """One timing simulation at a fixed (or recorded) packet rate; request/response in docs/npsim.md.
    ``progress(packets_injected, packets_expected)`` (0 expected: unknown)."""

def maxrate(request: str, progress: Optional[Callable[[int, int, float], Any]] = None) -> str:
    """Maximum sustainable rate by bisection; ``progress(done, estimated_total, inter_arrival_cycles)``
    before each simulation."""

def bottleneck(request: str, progress: Optional[Callable[[int, str], Any]] = None) -> str:
    """Idealized executions and the ranking of what limits throughput."""

def explore(request: str, progress: Optional[Callable[[int, int, str], Any]] = None) -> str:
    """Mapping, maximum rate, speedup and bottleneck for each PE count and replication scope."""

# --- TDPM (crates/py/src/tdpm.rs) -------------------------------------------------------------

def tdpm_map(request: str) -> str:
    """Partition and map an application with one mapper under the TDPM cost model."""

def tdpm_simulate(request: str) -> str:
    """Map an application and simulate the plan on the timing simulator."""

# --- protocol-processing policies (crates/py/src/protoproc.rs) ----------------------------------

def protoproc_model(request: str) -> str:
    """The protocol-processing paper's analytic model: curves and break-even points (JSON)."""

def protoproc_sim(request: str, progress: Optional[Callable[[int, int], None]] = None) -> str:
    """One simulation of the Single/Fixed/Floating policies (JSON in, JSON out)."""

def protoproc_table2(request: str) -> str:
    """Table 2's latency microbenchmark on the simulator (JSON)."""

# --- network-on-chip and stream graphs (crates/py/src/noc.rs) ---------------------------------

def noc_sweep(request: str, progress: Optional[Callable[[int, int, str], Any]] = None) -> str:
    """Synthetic-traffic sweep on the mesh simulator; ``progress(cycles_done, cycles_at_most, label)``."""

def stream_run(request: str, progress: Optional[Callable[[int, int, str], Any]] = None) -> str:
    """Partition, lay out, route and simulate a stream graph; ``progress(cycles_done, cycles_at_most, label)``."""

def stream_graph_load(spec: str) -> str:
    """Load and balance a stream graph (benchmark name, .json/.toml path, or inline JSON)."""

def noc_perturbed_routing(request: str, trials: int, swaps: int) -> str:
    """Routing success of each router on perturbed layouts."""

def noc_catalog() -> str:
    """Built-in benchmarks, routers, traffic patterns and the mesh preset's defaults."""

# --- Run to completion and NetTM (crates/py/src/rtc.rs) ------------------------------------------

def rtc_run(request: str, progress: Optional[Callable[[int, int], None]] = None) -> str:
    """Maximum sustainable rate on the multithreaded soft multiprocessor (JSON in and out, docs/rtc.md)."""

def runtime_run(request: str, progress: Optional[Callable[[int], None]] = None) -> str:
    """Run an application on the host's cores without cost recording: copies of the graph (rtc), element groups
    joined by rings (pipeline) or a mapping file's placement (hybrid); JSON in and out, docs/runtime.md."""

def runtime_host_costs(request: str) -> str:
    """What each element costs on this host: the request's packets on one thread through the timed build of the
    elements; per element visits and mean ns per visit, the driver's ns per packet; JSON in and out, docs/runtime.md."""

def rtc_conflicts(request: str) -> str:
    """Conflicting packets within windows of consecutive packets (JSON in and out, docs/rtc.md)."""

def rtc_signature_study(request: str, progress: Optional[Callable[[int, int], None]] = None) -> str:
    """Appendix A: false-conflict rate of each signature hash against its size (JSON in and out, docs/rtc.md)."""

def compare_run(request: str, progress: Optional[Callable[[int, int, str], None]] = None) -> str:
    """Every execution model an architecture supports, side by side (JSON in and out, docs/rtc.md)."""
