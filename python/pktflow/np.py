"""Network-processor timing simulator (seed 000, NPIRE) from Python.

The work is in Rust (``crates/npsim``), reached through ``pktflow._core`` with JSON requests
``{"spec": {...}, "sim": {...}, "search": {...}}`` (see docs/npsim.md).
"""

from __future__ import annotations

import json
from typing import Callable, Optional, Sequence

from pktflow import _core

REPLICATIONS = ("none", "pe", "subset", "global")


def _request(
    app: str,
    arch: str,
    pes: Optional[int],
    replication: str,
    packets: int,
    trace: Optional[str],
    seed: int,
    subset_size: int,
    sim: Optional[dict],
    search: Optional[dict],
    bottleneck: Optional[dict] = None,
) -> str:
    spec = {
        "app": app,
        "arch": arch,
        "pes": pes,
        "replication": replication,
        "packets": packets,
        "trace": trace,
        "traffic_seed": seed,
        "subset_size": subset_size,
    }
    return json.dumps({"spec": spec, "sim": sim or {}, "search": search or {}, "bottleneck": bottleneck or {}})


def simulate(
    app: str = "router",
    *,
    inter_arrival_cycles: float,
    arch: str = "npire",
    pes: Optional[int] = None,
    replication: str = "global",
    packets: int = 20_000,
    trace: Optional[str] = None,
    seed: int = 1,
    subset_size: int = 4,
    sim: Optional[dict] = None,
) -> dict:
    """One simulation at a fixed packet inter-arrival time (PE cycles)."""
    s = dict(sim or {})
    s["inter_arrival_cycles"] = inter_arrival_cycles
    s.setdefault("warmup_packets", max(1, packets // 5))
    req = _request(app, arch, pes, replication, packets, trace, seed, subset_size, s, None)
    return json.loads(_core.simulate(req))


def maxrate(
    app: str = "router",
    *,
    arch: str = "npire",
    pes: Optional[int] = None,
    replication: str = "global",
    packets: int = 20_000,
    trace: Optional[str] = None,
    seed: int = 1,
    subset_size: int = 4,
    sim: Optional[dict] = None,
    search: Optional[dict] = None,
) -> dict:
    """Maximum sustainable rate by bisection: ``packets_per_second``, ``gbps``, ``bracket``."""
    s = dict(sim or {})
    s.setdefault("warmup_packets", max(1, packets // 5))
    req = _request(app, arch, pes, replication, packets, trace, seed, subset_size, s, search)
    return json.loads(_core.maxrate(req))


def bottleneck(
    app: str = "router",
    *,
    arch: str = "npire",
    pes: Optional[int] = None,
    replication: str = "global",
    packets: int = 20_000,
    trace: Optional[str] = None,
    seed: int = 1,
    subset_size: int = 4,
    chain: bool = True,
    extra: Sequence[str] = (),
    threshold: float = 1.05,
    sim: Optional[dict] = None,
    search: Optional[dict] = None,
    progress: Optional[Callable[[int, str], None]] = None,
) -> dict:
    """Bottleneck finding by idealized executions (seed 000 section 5, Figure 8).

    Runs the maximum-rate search with I (infinite PEs), Z (zero-cycle instructions), S (no
    synchronization), B (perfect bus pipelining) and M (1-cycle memory occupancy) each alone,
    each with the most limiting one, Figure 8's chain I, IZ, IZS, IZSB, IZSBM (``chain``) and
    ``extra`` combinations. Returns ``runs``, ``ranking`` and ``summary`` (in words).
    ``progress(done, label)`` is called before each search.
    """
    s = dict(sim or {})
    s.setdefault("warmup_packets", max(1, packets // 5))
    b = {"chain": chain, "extra": list(extra), "threshold": threshold}
    req = _request(app, arch, pes, replication, packets, trace, seed, subset_size, s, search, b)
    return json.loads(_core.bottleneck(req, progress))
