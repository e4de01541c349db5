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
from typing import Any, Callable, Optional, Sequence, Union

from pktflow import _core
from pktflow._request import choice

__all__ = ["Model", "Io", "run", "predict"]


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


def predict(
    result: dict[str, Any],
    arch: str,
    *,
    trace: Optional[Union[str, Path]] = None,
    seed: Optional[int] = None,
    arch_set: Optional[Sequence[str]] = None,
    progress: Optional[Callable[[int, int, float], None]] = None,
) -> dict[str, Any]:
    """The NP timing simulator's maximum sustainable rate (``pktflow maxrate``'s engine) for the
    mapping that corresponds to the run ``result`` (of :func:`run`), on architecture ``arch`` (a
    built-in preset such as ``"host"`` or a TOML file), beside the measured rate, with the
    relative error ``(predicted - measured) / measured``.

    Run-to-completion on N threads is global replication over N PEs (every task may run on any
    PE; one thread is one PE). The simulator is fed the same packets: ``trace`` (the run's trace
    file) or, for a synthetic run, as many synthetic packets as the run took, with ``seed`` when
    the run was given one. ``arch_set``: ``KEY=VALUE`` overrides of the architecture (as
    ``pktflow maxrate --set``). Docs: docs/runtime.md, "Prediction".
    """
    from pktflow import PktflowError, npsim

    settings = result["settings"]
    if settings.get("model", "rtc") != "rtc":
        raise PktflowError(f"--predict: the {settings.get('model')} model has no simulator mapping yet (rtc only)")
    threads = int(settings["threads"])
    from_source = int(result["packets"]["from_source"])
    if from_source == 0:
        raise PktflowError("--predict: the run took no packet from its source: nothing to compare")
    kw: dict[str, Any] = {}
    if trace is not None:
        kw["trace"] = str(trace)
    else:
        kw["packets"] = from_source
        if seed is not None:
            kw["seed"] = seed
    if arch_set:
        kw["arch_set"] = [str(x) for x in arch_set]
    m = npsim.maxrate(result["app"], arch=str(arch), pes=threads, replication="global", progress=progress, **kw)
    measured = float(result["timing"]["packets_per_second"])
    predicted = float(m["packets_per_second"])
    notes = []
    cores = m["settings"]["architecture"]["params"]["np"]["pe_count"]
    if isinstance(cores, int) and threads > cores:
        notes.append(
            f"{threads} threads on a machine of {cores} cores: the simulator gives each thread a PE of its own, "
            "the host time-shares its cores"
        )
    notes.append(
        "reading the trace and handing packets to threads are not simulated: the simulator's packets arrive for free"
    )
    return {
        "arch": str(arch),
        "pes": threads,
        "replication": "global",
        "mapping": f"run-to-completion on {threads} thread(s) = global replication over {threads} PE(s)",
        "measured_packets_per_second": measured,
        "predicted_packets_per_second": predicted,
        "relative_error": (predicted - measured) / measured if measured > 0 else None,
        "bracket_inter_arrival_cycles": m.get("bracket"),
        "simulator_settings": m.get("settings"),
        "notes": notes,
    }
