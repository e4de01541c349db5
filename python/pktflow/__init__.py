"""pktflow: parallelize packet- and stream-processing task graphs for multiprocessors, and tell
what throughput each choice reaches and what holds it back.

The heavy work is done by the Rust core (``pktflow._core``); this package is the front: the
Python API, the ``pktflow`` command line, plots and sweeps.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterator, Optional

from pktflow import _core
from pktflow._core import PktflowError
from pktflow._request import Interrupted

__all__ = [
    "Interrupted",
    "PktflowError",
    "__version__",
    "arch",
    "arch_names",
    "element_classes",
    "graph",
    "graph_dot",
    "noc",
    "npsim",
    "profile",
    "protoproc",
    "report",
    "rtc",
    "tdpm",
    "trace",
    "write_synthetic",
]

__version__: str = _core.__version__

#: Submodules, imported on first use (``pktflow.npsim.maxrate(...)`` works after ``import pktflow``).
_SUBMODULES = ("npsim", "noc", "tdpm", "protoproc", "rtc", "runtime", "report")


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        import importlib

        return importlib.import_module(f"pktflow.{name}")
    raise AttributeError(f"module 'pktflow' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBMODULES))


def graph(app: str = "router") -> dict[str, Any]:
    """The validated, flattened application graph: ``{"file", "elements", "connections"}``.

    ``app`` is a built-in name (``router``, ``nat``, ``router64``) or a Click file path.
    """
    return json.loads(_core.graph_json(str(app)))


def graph_dot(app: str = "router") -> str:
    """Graphviz DOT text of the application graph."""
    return _core.graph_dot(str(app))


def _u64(option: str, value: Any) -> Optional[int]:
    """``value`` as an unsigned 64-bit integer for the Rust core, or a clean PktflowError
    naming ``option`` (never an OverflowError/TypeError from the binding)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise PktflowError(f"{option} must be a whole number, got {value!r}")
    if not 0 <= value < 2**64:
        raise PktflowError(f"{option} {value} is out of range (0 to 18446744073709551615)")
    return int(value)


def _dest(destinations: Any) -> Optional[str]:
    """A destinations choice by name (``"per-port"``) or member of ``npsim.Destinations``."""
    from pktflow._request import choice
    from pktflow.npsim import Destinations

    return choice(destinations, Destinations, "destinations")


def profile(
    app: str = "router",
    *,
    trace: Optional[str | Path] = None,
    synthetic: Optional[int] = None,
    seed: Optional[int] = None,
    out_dir: Optional[str | Path] = None,
    progress: Optional[Callable[[int], None]] = None,
    input_port: Optional[str | int] = None,
    destinations: Optional[str] = None,
) -> dict[str, Any]:
    """Run ``app`` functionally (one thread) on a pcap/pcapng ``trace`` or ``synthetic`` packets
    generated with ``seed`` (default 1), write each ToDump output into ``out_dir``, and return
    the profile. With neither ``trace`` nor ``synthetic``: the configuration's own sources
    (FromDump, InfiniteSource) if it has any, else 10,000 synthetic packets.

    ``input_port`` says which input interface each trace packet enters: ``"auto"`` (default:
    pcapng interface ids; classic pcap by destination MAC), ``"round-robin"``, ``"by-dst-mac"``,
    ``"by-subnet"`` or an interface number. ``progress`` (optional) is called with the number of
    packets done, every 10,000 packets. Ctrl-C stops the run (KeyboardInterrupt; no ToDump output
    is left half-written). ``destinations`` draws synthetic packets' destinations as the
    simulators' option of that name does (``"transit"``: only routes through a gateway).
    """
    return json.loads(
        _core.profile(
            str(app),
            None if trace is None else str(trace),
            _u64("--synthetic", synthetic),
            _u64("--seed", seed),
            None if out_dir is None else str(out_dir),
            progress,
            None if input_port is None else str(input_port),
            None if destinations is None else _dest(destinations),
        )
    )


def trace(
    app: str = "router",
    *,
    trace: Optional[str | Path] = None,
    synthetic: Optional[int] = None,
    seed: Optional[int] = None,
    input_port: Optional[str | int] = None,
) -> Iterator[dict[str, Any]]:
    """Stream the per-packet traces of a functional run (bounded memory for any length); the
    sources and ``input_port`` are those of :func:`profile`.

    Each item: ``{"packet", "timestamp_ns", "wire_bytes", "visits": [{"element", "port",
    "instructions", "accesses": [{"mem", "kind", "bytes", "at_instr", "object", "key"}]}],
    "fates": [...]}`` with element indices into ``graph(app)["elements"]``.
    """
    return _core.TraceStream(
        str(app),
        None if trace is None else str(trace),
        _u64("--synthetic", synthetic),
        _u64("--seed", seed),
        None if input_port is None else str(input_port),
    )


def arch(name_or_path: str) -> dict[str, Any]:
    """A validated architecture preset (built-in name or TOML path) as a dict."""
    return json.loads(_core.arch_json(str(name_or_path)))


def arch_names() -> list[str]:
    return list(_core.arch_names())


def element_classes() -> list[dict[str, str]]:
    """Every element class pktflow implements: ``[{"name", "summary"}]``."""
    return json.loads(_core.element_classes())


def write_synthetic(
    path: str | Path,
    n: Optional[int] = None,
    *,
    seed: Optional[int] = None,
    app: Optional[str] = None,
    pcapng: bool = False,
    progress: Optional[Callable[[int, int], None]] = None,
) -> dict[str, Any]:
    """Write ``n`` (default 10,000) synthetic packets shaped for ``app`` (default ``router``: its interfaces and
    routes) to a pcap (or pcapng) file, with ``seed`` (default 1). The size is estimated first
    and refused if it exceeds the free space; the file appears only when complete (Ctrl-C or an
    error leaves nothing). ``progress(done, total)`` every 10,000 packets. Returns a summary."""
    return json.loads(
        _core.write_synthetic(
            str(path),
            _u64("-n/--packets", n),
            _u64("--seed", seed),
            None if app is None else str(app),
            bool(pcapng),
            progress,
        )
    )
