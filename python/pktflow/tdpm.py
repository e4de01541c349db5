"""Throughput-driven partitioning and mapping (the TDPM paper; citation in docs/sources.md).

Group an application's packet-processing functions into tasks, duplicate tasks over the
MicroEngines of a network processor and put non-critical tasks on the XScale core, guided by the
throughput cost model of the paper (section 4.2). The work is done in Rust (``crates/tdpm``); see
``docs/tdpm.md``.

Example::

    from pktflow import tdpm
    res = tdpm.map_app("mpls", engines=4)  # tdpm-refine: Figure 4, then the refinement
    paper = tdpm.map_app("mpls", mapper="tdpm", engines=4)  # Figure 4 as published
    print(res["gbps"], paper["gbps"], res["binding"])
"""

from __future__ import annotations

import enum
import json
from typing import Any, Optional, Sequence, Union

from pktflow import PktflowError, _core
from pktflow._request import finite_or_name

__all__ = ["MAPPERS", "TdpmMapper", "map_app"]


class TdpmMapper(str, enum.Enum):
    """Partitioning and mapping methods (docs/tdpm.md)."""

    tdpm_refine = "tdpm-refine"
    tdpm = "tdpm"
    tdpm_s = "tdpm-s"
    comm = "comm"
    res = "res"
    base = "base"
    optimal = "optimal"


# tdpm: the paper's Figure 4 (TDPM-all) as published; tdpm-refine: Figure 4 followed by the
# refinement (local search under the same cost model, docs/tdpm.md section 3a), the default.
MAPPERS = tuple(m.value for m in TdpmMapper)


def _num(x: float) -> Any:
    """NaN and infinities as the strings Rust's validation reads (so the error names the option)."""
    return finite_or_name(float(x))


def map_app(
    app: str,
    *,
    arch: Optional[str] = None,
    arch_set: Optional[Sequence[str]] = None,
    mapper: Optional[Union[str, TdpmMapper]] = None,
    engines: Optional[int] = None,
    packets: Optional[int] = None,
    seed: Optional[int] = None,
    offered_gbps: Optional[float] = None,
    critical_threshold: Optional[float] = None,
    packet_bytes: Optional[float] = None,
    dot: bool = False,
) -> dict[str, Any]:
    """Partition and map ``app`` (built-in name, Click file, or PPF graph ``.toml``/``.json``).

    ``mapper`` is one of :data:`MAPPERS`; None uses the default of ``crates/tdpm`` (``tdpm-refine``).
    Returns the report: ``tasks`` (PPFs, processor, duplication, engines, cost terms),
    ``packets_per_second`` and ``gbps`` predicted by the cost model, ``binding`` (the constraint
    that sets the rate; ``packet_bytes`` sets the packet size of the Gb/s figures) and, with
    ``dot=True``, a Graphviz drawing under ``dot``.
    """
    req: dict[str, Any] = {"app": str(app), "dot": bool(dot)}
    if arch is not None:
        req["arch"] = str(arch)
    if arch_set:
        req["arch_set"] = [str(x) for x in arch_set]
    if mapper is not None:
        m = mapper.value if isinstance(mapper, enum.Enum) else str(mapper)
        if m not in MAPPERS:
            raise PktflowError(f"mapper must be one of {', '.join(MAPPERS)}, got {m!r}")
        req["mapper"] = m
    if engines is not None:
        req["engines"] = int(engines)
    if packets is not None:
        req["packets"] = int(packets)
    if seed is not None:
        req["seed"] = int(seed)
    if offered_gbps is not None:
        req["offered_gbps"] = _num(offered_gbps)
    if packet_bytes is not None:
        req["packet_bytes"] = _num(packet_bytes)
    if critical_threshold is not None:
        req["critical_threshold"] = _num(critical_threshold)
    return json.loads(_core.tdpm_map(json.dumps(req, allow_nan=False)))


def simulate_plan(
    app: str,
    *,
    arch: str = "ixp2400",
    mapper: str = "tdpm",
    engines: Optional[int] = None,
    packets: int = 2000,
    seed: int = 1,
    offered_gbps: Optional[float] = None,
    critical_threshold: Optional[float] = None,
    packet_bytes: Optional[float] = None,
    sim_packets: int = 2000,
    packet_cache: bool = True,
    wide_accesses: bool = True,
    lock_free_tx: bool = False,
    search: Optional[dict[str, Any]] = None,
) -> dict[str, Any]:
    """Map a Click ``app`` with ``mapper`` and run the plan on the timing simulator (``crates/npsim``).

    ME tasks run on their MEs, XScale tasks on the control core, and a packet changing task pays
    the DRAM hand-off the cost model charges (docs/tdpm.md). Returns ``point`` (model and
    simulated packets/s and Gb/s, ``error_pct`` = (model - sim) / sim, the forwarding rates capped
    at ``offered_gbps`` and their error, the simulator's busiest resources), ``model`` (the
    report of :func:`map_app`) and ``simulation`` (rate, bracket, hand-offs per packet, the
    element mapping given to the simulator). ``packets`` profiles the PPF graph; ``sim_packets``
    is the length of each simulation; ``lock_free_tx`` lifts the transmitter queues' locks.
    Identical simulations are run once per process.
    """
    sim: dict[str, Any] = {
        "packets": int(sim_packets),
        "packet_cache": bool(packet_cache),
        "wide_accesses": bool(wide_accesses),
        "lock_free_tx": bool(lock_free_tx),
    }
    if search is not None:
        sim["search"] = dict(search)
    req: dict[str, Any] = {
        "app": str(app),
        "arch": arch,
        "mapper": mapper,
        "packets": int(packets),
        "seed": int(seed),
        "sim": sim,
    }
    if engines is not None:
        req["engines"] = int(engines)
    if offered_gbps is not None:
        req["offered_gbps"] = float(offered_gbps)
    if packet_bytes is not None:
        req["packet_bytes"] = float(packet_bytes)
    if critical_threshold is not None:
        req["critical_threshold"] = float(critical_threshold)
    return json.loads(_core.tdpm_simulate(json.dumps(req)))
