"""The real runtime: run an application on the host's cores, its elements compiled with cost
recording compiled out (``crates/runtime``; every convention in ``docs/runtime.md``).

Example::

    from pktflow import runtime
    r = runtime.run("router", trace="in.pcap", out_dir="out", threads=2)
    print(r["timing"]["packets_per_second"], r["balance"]["conserved"])

Only what the caller sets is sent; the defaults live in Rust and the result records them under
``"settings"``. Wall-clock figures (rates, utilization) are under ``"timing"``.
"""

from __future__ import annotations

import enum
import json
from pathlib import Path
from typing import Any, Callable, Optional, Union

from pktflow import _core
from pktflow._request import choice

__all__ = ["Model", "Io", "run"]


class Model(str, enum.Enum):
    """How the graph is spread over threads."""

    rtc = "rtc"
    pipeline = "pipeline"
    hybrid = "hybrid"


class Io(str, enum.Enum):
    """Where reading the trace runs: a core of its own, or whichever core is idle."""

    dedicated = "dedicated"
    shared = "shared"


def run(
    app: str,
    *,
    trace: Optional[Union[str, Path]] = None,
    synthetic: Optional[int] = None,
    seed: Optional[int] = None,
    input_port: Optional[str] = None,
    out_dir: Optional[Union[str, Path]] = None,
    threads: Optional[int] = None,
    model: Optional[Union[str, Model]] = None,
    io: Optional[Union[str, Io]] = None,
    pin: Optional[bool] = None,
    ring_slots: Optional[int] = None,
    batch: Optional[int] = None,
    reply_every: Optional[int] = None,
    mapping: Optional[Union[str, Path]] = None,
    profile_packets: Optional[int] = None,
    progress: Optional[Callable[[int], None]] = None,
) -> dict[str, Any]:
    """Run ``app`` on a trace file or a synthetic trace and return the result document.

    ``model``: ``rtc`` (a copy of the graph per thread), ``pipeline`` (the graph cut into
    ``threads`` groups of elements joined by rings, balanced by a quick profile of
    ``profile_packets`` packets) or ``hybrid`` (the placement of ``mapping``, a JSON file written
    by ``pktflow explore/maxrate/map --json`` or by hand: docs/runtime.md).
    """
    req: dict[str, Any] = {"app": str(app)}
    for key, val in (
        ("trace", None if trace is None else str(trace)),
        ("synthetic", synthetic),
        ("seed", seed),
        ("input_port", input_port),
        ("out_dir", None if out_dir is None else str(out_dir)),
        ("threads", threads),
        ("model", choice(model, Model, "--model")),
        ("io", choice(io, Io, "--io")),
        ("pin", pin),
        ("ring_slots", ring_slots),
        ("batch", batch),
        ("reply_every", reply_every),
        ("mapping", None if mapping is None else str(mapping)),
        ("profile_packets", profile_packets),
    ):
        if val is not None:
            req[key] = val
    return json.loads(_core.runtime_run(json.dumps(req), progress))
