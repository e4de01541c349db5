"""Network-processor timing simulator (seed 000, NPIRE) from Python.

The work is in Rust (``crates/npsim``), reached through ``pktflow._core`` with JSON requests
``{"spec": {...}, "sim": {...}, "search": {...}}`` (see docs/npsim.md).
"""

from __future__ import annotations

import json
from typing import Callable, List, Optional, Sequence, Union

from pktflow import PktflowError, _core

REPLICATIONS = ("none", "pe", "subset", "global")
MAPPERS = ("round-robin", "greedy", "greedy+replicate", "anneal")
SCHEDULINGS = ("fifo", "first-eligible")
LOCK_RELEASES = ("after-completion", "after-issue")
DESTINATIONS = ("zipf", "uniform", "address-space", "per-port")


def model_options(
    scheduling: str = "fifo",
    lock_release: str = "after-completion",
    wide_accesses: bool = False,
) -> dict:
    """The simulator's model choices as a ``sim`` dict (docs/npsim.md, "Model choices")."""
    if scheduling not in SCHEDULINGS:
        raise PktflowError(f"scheduling must be one of {', '.join(SCHEDULINGS)}, got {scheduling!r}")
    if lock_release not in LOCK_RELEASES:
        raise PktflowError(f"lock release must be one of {', '.join(LOCK_RELEASES)}, got {lock_release!r}")
    return {
        "scheduling": scheduling.replace("-", "_"),
        "lock_release": lock_release.replace("-", "_"),
        "wide_accesses": bool(wide_accesses),
    }


def _destinations(d: Optional[str]) -> Optional[dict]:
    if d is None or d == "zipf":
        return None
    if d not in DESTINATIONS:
        raise PktflowError(f"destinations must be one of {', '.join(DESTINATIONS)}, got {d!r}")
    return {"kind": d.replace("-", "_")}


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
    mapper: str = "round-robin",
    explore: Optional[dict] = None,
    destinations: Optional[str] = None,
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
        "mapper": _check_mapper(mapper),
        "destinations": _destinations(destinations),
    }
    sim = dict(sim or {})
    sim.setdefault("warmup_packets", max(1, packets // 5))
    return json.dumps(
        {
            "spec": spec,
            "sim": sim,
            "search": search or {},
            "bottleneck": bottleneck or {},
            "explore": explore or {},
        }
    )


def _check_mapper(mapper: str) -> str:
    if mapper not in MAPPERS:
        raise PktflowError(f"unknown mapper {mapper!r} (expected {', '.join(MAPPERS)})")
    return mapper


def parse_pes(spec) -> List[int]:
    """PE counts from ``"4:32"`` (step 4), ``"4:32:2"``, ``"4,8,16"``, ``"16"`` or a sequence."""
    if not isinstance(spec, str):
        out = [int(x) for x in spec]
    elif ":" in spec:
        parts = spec.split(":")
        if len(parts) not in (2, 3):
            raise PktflowError(f"--pes {spec!r}: expected FIRST:LAST or FIRST:LAST:STEP")
        try:
            a, b = int(parts[0]), int(parts[1])
            step = int(parts[2]) if len(parts) == 3 else 4
        except ValueError:
            raise PktflowError(f"--pes {spec!r}: FIRST, LAST and STEP must be integers") from None
        if step < 1 or a > b:
            raise PktflowError(f"--pes {spec!r}: need FIRST <= LAST and STEP >= 1")
        out = list(range(a, b + 1, step))
    else:
        try:
            out = [int(x) for x in spec.split(",") if x.strip()]
        except ValueError:
            raise PktflowError(f"--pes {spec!r}: expected FIRST:LAST[:STEP] or a comma-separated list") from None
    if not out or min(out) < 1:
        raise PktflowError(f"--pes {spec!r}: PE counts must be at least 1")
    return out


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
    mapper: str = "round-robin",
    sim: Optional[dict] = None,
    destinations: Optional[str] = None,
) -> dict:
    """One simulation at a fixed packet inter-arrival time (PE cycles)."""
    s = dict(sim or {})
    s["inter_arrival_cycles"] = inter_arrival_cycles
    req = _request(
        app,
        arch,
        pes,
        replication,
        packets,
        trace,
        seed,
        subset_size,
        s,
        None,
        mapper=mapper,
        destinations=destinations,
    )
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
    mapper: str = "round-robin",
    sim: Optional[dict] = None,
    search: Optional[dict] = None,
    destinations: Optional[str] = None,
) -> dict:
    """Maximum sustainable rate by bisection: ``packets_per_second``, ``gbps``, ``bracket``."""
    req = _request(
        app,
        arch,
        pes,
        replication,
        packets,
        trace,
        seed,
        subset_size,
        sim,
        search,
        mapper=mapper,
        destinations=destinations,
    )
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
    mapper: str = "round-robin",
    sim: Optional[dict] = None,
    search: Optional[dict] = None,
    progress: Optional[Callable[[int, str], None]] = None,
    destinations: Optional[str] = None,
) -> dict:
    """Bottleneck finding by idealized executions (seed 000 section 5, Figure 8).

    Runs the maximum-rate search with I (infinite PEs), Z (zero-cycle instructions), S (no
    synchronization), B (perfect bus pipelining) and M (1-cycle memory occupancy) each alone,
    each with the most limiting one, Figure 8's chain I, IZ, IZS, IZSB, IZSBM (``chain``) and
    ``extra`` combinations. Returns ``runs``, ``ranking`` and ``summary`` (in words).
    ``progress(done, label)`` is called before each search.
    """
    b = {"chain": chain, "extra": list(extra), "threshold": threshold}
    req = _request(
        app,
        arch,
        pes,
        replication,
        packets,
        trace,
        seed,
        subset_size,
        sim,
        search,
        b,
        mapper=mapper,
        destinations=destinations,
    )
    return json.loads(_core.bottleneck(req, progress))


def explore(
    app: str = "router",
    *,
    arch: str = "npire",
    pes: Union[str, Sequence[int]] = "4:32:4",
    replication: Sequence[str] = REPLICATIONS,
    mapper: str = "greedy+replicate",
    packets: int = 2_000,
    trace: Optional[str] = None,
    seed: int = 1,
    subset_size: int = 4,
    bottleneck: bool = True,
    threshold: float = 1.05,
    baseline_pes: int = 4,
    sim: Optional[dict] = None,
    search: Optional[dict] = None,
    progress: Optional[Callable[[int, int, str], None]] = None,
    destinations: Optional[str] = None,
) -> dict:
    """For each PE count and replication scope: the mapping ``mapper`` finds (seed 000 section
    3.1), its maximum sustainable rate, the speedup over ``baseline_pes`` PEs with no
    replication (Figure 7's normalization) and, with ``bottleneck``, a cheap ranking (S, B and M
    idealized alone). Returns ``points`` (one per PE count and scope), ``weights`` (step 1's
    compute cycles per packet), ``baseline_packets_per_second`` and ``wall_seconds``.
    ``progress(done, total, label)`` is called before each point.
    """
    counts = parse_pes(pes)
    reps = [replication] if isinstance(replication, str) else list(replication)
    for r in reps:
        if r not in REPLICATIONS:
            raise PktflowError(f"unknown replication {r!r} (expected {', '.join(REPLICATIONS)})")
    if not reps:
        raise PktflowError("no replication scope given")
    e = {
        "pes": counts,
        "replications": reps,
        "bottleneck": bottleneck,
        "threshold": threshold,
        "baseline_pes": baseline_pes,
    }
    req = _request(
        app,
        arch,
        None,
        "none",
        packets,
        trace,
        seed,
        subset_size,
        sim,
        search,
        None,
        mapper=mapper,
        explore=e,
        destinations=destinations,
    )
    doc = json.loads(_core.explore(req, progress))
    doc["threshold"] = threshold
    return doc


def explore_rows(doc: dict) -> List[dict]:
    """One flat row per point of :func:`explore` (for CSV and pandas)."""
    rows = []
    for p in doc["points"]:
        b = p.get("bottleneck") or {}
        g = b.get("gains", {})
        rows.append(
            {
                "app": doc["app"],
                "arch": doc["arch"],
                "mapper": doc["mapper"],
                "pes": p["pes"],
                "replication": p["replication"],
                "packets_per_second": p["packets_per_second"],
                "gbps": p["gbps"],
                "speedup": p["speedup"],
                "inter_arrival_cycles": p["inter_arrival_cycles"],
                "bracket_lo_cycles": p["bracket_cycles"][0],
                "bracket_hi_cycles": p["bracket_cycles"][1],
                "mean_pe_busy": p["mean_pe_busy"],
                "replicated_tasks": len(p["replicated"]),
                "max_pe_load_cycles": p["max_pe_load"],
                "gain_S": g.get("S"),
                "gain_B": g.get("B"),
                "gain_M": g.get("M"),
                "bottleneck": b.get("summary", ""),
                "searches": p["searches"],
                "wall_seconds": p["wall_seconds"],
            }
        )
    return rows
