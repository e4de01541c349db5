"""Network-processor timing simulator (seed 000, NPIRE) from Python.

The work is in Rust (``crates/npsim``), reached through ``pktflow._core`` with JSON requests
``{"spec": {...}, "sim": {...}, "search": {...}}`` (see docs/npsim.md).
"""

from __future__ import annotations

import json
from typing import Optional

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
    return json.dumps({"spec": spec, "sim": sim or {}, "search": search or {}})


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
