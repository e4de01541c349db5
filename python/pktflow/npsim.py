"""Network-processor timing simulator (NPIRE) from Python.

The work is in Rust (``crates/npsim``), reached through ``pktflow._core`` with JSON requests
``{"spec": {...}, "sim": {...}, "search": {...}, "bottleneck": {...}, "explore": {...}}`` (see
docs/npsim.md). Every default lives in Rust: a parameter left at ``None`` is omitted from the
request, so the Python API and the command line give identical results for the same settings.
Each result records the settings Rust resolved under ``"settings"`` (with the architecture's
parameters), enough to run it again.
"""

from __future__ import annotations

import enum
import json
from typing import Any, Callable, List, Optional, Sequence, Union

from pktflow import PktflowError, _core
from pktflow._request import choice, finished, finite_or_name

__all__ = [
    "Arrivals",
    "Destinations",
    "LockRelease",
    "Mapper",
    "Replication",
    "Scheduling",
    "Transform",
    "arch",
    "bottleneck",
    "explore",
    "explore_rows",
    "maxrate",
    "model_options",
    "parse_pes",
    "parse_transforms",
    "simulate",
]


class Replication(str, enum.Enum):
    """Where a task's replicas may run: nowhere else, on its PE's other contexts, on a subset
    of PEs, or on every PE (global task queue)."""

    none = "none"
    pe = "pe"
    subset = "subset"
    global_ = "global"


class Mapper(str, enum.Enum):
    """How tasks are assigned to PEs."""

    round_robin = "round-robin"
    greedy = "greedy"
    greedy_replicate = "greedy+replicate"
    anneal = "anneal"
    tdpm = "tdpm"
    tdpm_refine = "tdpm-refine"


class Scheduling(str, enum.Enum):
    """How a PE with a free context picks the next task instance."""

    fifo = "fifo"
    first_eligible = "first-eligible"


class LockRelease(str, enum.Enum):
    """When a critical section's lock is released."""

    after_completion = "after-completion"
    after_issue = "after-issue"


class Destinations(str, enum.Enum):
    """How synthetic packets' destinations are drawn from the application's routes."""

    zipf = "zipf"
    uniform = "uniform"
    address_space = "address-space"
    per_port = "per-port"
    transit = "transit"


class Arrivals(str, enum.Enum):
    """When packets arrive."""

    fixed = "fixed"
    recorded = "recorded"


class Transform(str, enum.Enum):
    """A task transformation of section 2 of the NPIRE paper (docs/npsim-transforms.md)."""

    split = "split"
    early = "early"
    speculate = "speculate"
    locality = "locality"


def parse_transforms(value: Any) -> Optional[str]:
    """``"split,early"``, a sequence of names or of :class:`Transform` as the comma list the
    request takes (``None`` stays ``None``: no transformation, the Rust default). Unknown or
    repeated names raise :class:`PktflowError`."""
    if value is None:
        return None
    if isinstance(value, (str, Transform)):
        items = [value.value] if isinstance(value, Transform) else value.split(",")
    else:
        items = [x.value if isinstance(x, Transform) else str(x) for x in value]
    names = [x.strip() for x in items if x.strip()]
    allowed = [t.value for t in Transform]
    if names == ["none"]:
        return "none"
    for n in names:
        if n not in allowed:
            raise PktflowError(f"--transform: {n!r} is not one of {', '.join(allowed)}")
    if len(set(names)) != len(names):
        raise PktflowError(f"--transform: a transformation is repeated in {','.join(names)!r}")
    return ",".join(names) if names else "none"


REPLICATIONS = tuple(r.value for r in Replication)
MAPPERS = tuple(m.value for m in Mapper)
SCHEDULINGS = tuple(s.value for s in Scheduling)
LOCK_RELEASES = tuple(x.value for x in LockRelease)
DESTINATIONS = tuple(d.value for d in Destinations)


class SlowPathPolicy(str, enum.Enum):
    """Where slow-path elements run (docs/protoproc.md section 6)."""

    single = "single"
    fixed = "fixed"
    floating = "floating"


def slow_path_options(
    policy: Optional[Union[str, "SlowPathPolicy"]] = None,
    elements: Optional[Union[str, Sequence[str]]] = None,
    interrupt_cycles: Optional[int] = None,
    role_switch_cycles: Optional[int] = None,
    message_cycles: Optional[int] = None,
) -> dict:
    """The ``sim`` entries of a slow-path policy (only the ones given): ``policy`` single, fixed
    or floating; ``elements`` extra slow-path elements by name or class (a comma list or a
    sequence; ARPResponder and ICMPError always are); costs in PE cycles. Empty when
    nothing is given."""
    sp: dict = {}
    pol = _choice(policy, SlowPathPolicy, "slow-path policy")
    if pol is not None:
        sp["policy"] = pol
    if elements is not None:
        names = elements.split(",") if isinstance(elements, str) else [str(e) for e in elements]
        names = [n.strip() for n in names if n.strip()]
        if not names and isinstance(elements, str) and elements.strip():
            raise PktflowError("--slow-path: expected element names or classes separated by commas")
        sp["elements"] = names
    for key, v in (
        ("interrupt_cycles", interrupt_cycles),
        ("role_switch_cycles", role_switch_cycles),
        ("message_cycles", message_cycles),
    ):
        if v is not None:
            if isinstance(v, bool) or not isinstance(v, int) or v < 0:
                raise PktflowError(f"slow-path {key.replace('_', ' ')} must be a whole number of cycles >= 0, got {v!r}")
            sp[key] = v
    if sp and "policy" not in sp:
        raise PktflowError("--slow-path and the slow-path costs need --slow-path-policy")
    return {"slow_path": sp} if sp else {}


_choice = choice


def _num(x: Any) -> Any:
    """A number for the JSON request; NaN and infinities as the strings Rust's validation reads
    (JSON has no literal for them), so the error names the option."""
    if isinstance(x, bool) or x is None:
        return x
    return finite_or_name(x) if isinstance(x, float) else x


def _set(d: dict, key: str, value: Any) -> None:
    if value is not None:
        d[key] = _num(value)


def model_options(
    scheduling: Optional[Union[str, Scheduling]] = None,
    lock_release: Optional[Union[str, LockRelease]] = None,
    wide_accesses: Optional[bool] = None,
    transform: Any = None,
) -> dict:
    """The simulator's model choices as a ``sim`` dict (docs/npsim.md, "Model choices"); only
    the ones given. ``transform``: the task transformations (:func:`parse_transforms`)."""
    sim: dict = {}
    t = parse_transforms(transform)
    if t is not None:
        sim["transform"] = t
    s = _choice(scheduling, Scheduling, "scheduling")
    if s is not None:
        sim["scheduling"] = s.replace("-", "_")
    lr = _choice(lock_release, LockRelease, "lock release")
    if lr is not None:
        sim["lock_release"] = lr.replace("-", "_")
    if wide_accesses is not None:
        sim["wide_accesses"] = bool(wide_accesses)
    return sim


def _request(
    app: Optional[str],
    arch: Optional[str],
    arch_set: Optional[Sequence[str]],
    pes: Optional[int],
    replication: Any,
    packets: Optional[int],
    trace: Optional[str],
    seed: Optional[int],
    subset_size: Optional[int],
    mapper: Any,
    destinations: Any,
    sim: Optional[dict] = None,
    search: Optional[dict] = None,
    bottleneck: Optional[dict] = None,
    explore: Optional[dict] = None,
) -> str:
    spec: dict = {}
    _set(spec, "app", app)
    _set(spec, "arch", None if arch is None else str(arch))
    if arch_set:
        spec["arch_set"] = [str(x) for x in arch_set]
    _set(spec, "pes", pes)
    _set(spec, "replication", _choice(replication, Replication, "replication"))
    _set(spec, "packets", packets)
    _set(spec, "trace", None if trace is None else str(trace))
    _set(spec, "traffic_seed", seed)
    _set(spec, "subset_size", subset_size)
    _set(spec, "mapper", _choice(mapper, Mapper, "mapper"))
    d = _choice(destinations, Destinations, "destinations")
    if d is not None and d != "zipf":
        spec["destinations"] = {"kind": d.replace("-", "_")}
    req: dict = {"spec": spec}
    for name, part in (("sim", sim), ("search", search), ("bottleneck", bottleneck), ("explore", explore)):
        if part:
            req[name] = {k: _num(v) for k, v in part.items() if v is not None}
    return json.dumps(req, allow_nan=False)


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
        if a < 1 or b > 4096:
            raise PktflowError(f"--pes {spec!r}: PE counts must be 1 to 4096")
        out = list(range(a, b + 1, step))
    else:
        try:
            out = [int(x) for x in spec.split(",") if x.strip()]
        except ValueError:
            raise PktflowError(f"--pes {spec!r}: expected FIRST:LAST[:STEP] or a comma-separated list") from None
    if not out or min(out) < 1:
        raise PktflowError(f"--pes {spec!r}: PE counts must be at least 1")
    return out


def arch(name_or_path: str = "npire", overrides: Optional[Sequence[str]] = None) -> dict:
    """An architecture after its ``base`` chain and ``KEY=VALUE`` overrides (TOML values), as a
    dict: ``preset``, ``kind``, ``params`` and the supported ``limits``."""
    return json.loads(_core.arch_resolved(str(name_or_path), [str(x) for x in overrides or []]))


def simulate(
    app: Optional[str] = None,
    *,
    inter_arrival_cycles: Optional[float] = None,
    arch: Optional[str] = None,
    arch_set: Optional[Sequence[str]] = None,
    pes: Optional[int] = None,
    replication: Optional[Union[str, Replication]] = None,
    packets: Optional[int] = None,
    trace: Optional[str] = None,
    seed: Optional[int] = None,
    subset_size: Optional[int] = None,
    mapper: Optional[Union[str, Mapper]] = None,
    sim: Optional[dict] = None,
    destinations: Optional[Union[str, Destinations]] = None,
    warmup_packets: Optional[int] = None,
    progress: Optional[Callable[[int, int], None]] = None,
    transform: Any = None,
) -> dict:
    """One simulation at a fixed packet inter-arrival time (PE cycles). Parameters left at None
    take the Rust defaults (docs/npsim.md); the result's ``settings`` lists them all.
    ``progress(packets_injected, packets_expected)`` is called now and then (expected 0:
    unknown, a trace file)."""
    s = dict(sim or {})
    if transform is not None:
        s["transform"] = parse_transforms(transform)
    if inter_arrival_cycles is not None:
        s["inter_arrival_cycles"] = inter_arrival_cycles
    if warmup_packets is not None:
        s["warmup_packets"] = warmup_packets
    req = _request(app, arch, arch_set, pes, replication, packets, trace, seed, subset_size, mapper, destinations, s)
    return json.loads(_core.simulate(req, progress))


def maxrate(
    app: Optional[str] = None,
    *,
    arch: Optional[str] = None,
    arch_set: Optional[Sequence[str]] = None,
    pes: Optional[int] = None,
    replication: Optional[Union[str, Replication]] = None,
    packets: Optional[int] = None,
    trace: Optional[str] = None,
    seed: Optional[int] = None,
    subset_size: Optional[int] = None,
    mapper: Optional[Union[str, Mapper]] = None,
    sim: Optional[dict] = None,
    search: Optional[dict] = None,
    destinations: Optional[Union[str, Destinations]] = None,
    warmup_packets: Optional[int] = None,
    progress: Optional[Callable[[int, int, float], None]] = None,
    transform: Any = None,
) -> dict:
    """Maximum sustainable rate by bisection: ``packets_per_second``, ``gbps``, ``bracket``,
    ``probes``, ``report`` and ``settings``. ``progress(done, estimated_total,
    inter_arrival_cycles)`` is called before each simulation of the search."""
    s = dict(sim or {})
    if warmup_packets is not None:
        s["warmup_packets"] = warmup_packets
    if transform is not None:
        s["transform"] = parse_transforms(transform)
    req = _request(
        app, arch, arch_set, pes, replication, packets, trace, seed, subset_size, mapper, destinations, s, search
    )
    return json.loads(_core.maxrate(req, progress))


def bottleneck(
    app: Optional[str] = None,
    *,
    arch: Optional[str] = None,
    arch_set: Optional[Sequence[str]] = None,
    pes: Optional[int] = None,
    replication: Optional[Union[str, Replication]] = None,
    packets: Optional[int] = None,
    trace: Optional[str] = None,
    seed: Optional[int] = None,
    subset_size: Optional[int] = None,
    chain: Optional[bool] = None,
    extra: Sequence[str] = (),
    threshold: Optional[float] = None,
    mapper: Optional[Union[str, Mapper]] = None,
    sim: Optional[dict] = None,
    search: Optional[dict] = None,
    progress: Optional[Callable[[int, str], None]] = None,
    destinations: Optional[Union[str, Destinations]] = None,
    warmup_packets: Optional[int] = None,
    transform: Any = None,
) -> dict:
    """Bottleneck finding by idealized executions (Figure 8 of the NPIRE paper).

    Runs the maximum-rate search with I (infinite PEs), Z (zero-cycle instructions), S (no
    synchronization), B (perfect bus pipelining) and M (1-cycle memory occupancy) each alone,
    each with the most limiting one, the chain I, IZ, IZS, IZSB, IZSBM (``chain``) and
    ``extra`` combinations. Returns ``runs``, ``ranking`` and ``summary`` (in words).
    ``progress(done, label)`` is called before each search.
    """
    s = dict(sim or {})
    if warmup_packets is not None:
        s["warmup_packets"] = warmup_packets
    if transform is not None:
        s["transform"] = parse_transforms(transform)
    b = {"chain": chain, "threshold": threshold}
    if extra:
        b["extra"] = list(extra)
    req = _request(
        app, arch, arch_set, pes, replication, packets, trace, seed, subset_size, mapper, destinations, s, search, b
    )
    return json.loads(_core.bottleneck(req, progress))


def explore(
    app: Optional[str] = None,
    *,
    arch: Optional[str] = None,
    arch_set: Optional[Sequence[str]] = None,
    pes: Optional[Union[str, Sequence[int]]] = None,
    replication: Optional[Sequence[Union[str, Replication]]] = None,
    mapper: Optional[Union[str, Mapper]] = None,
    packets: Optional[int] = None,
    trace: Optional[str] = None,
    seed: Optional[int] = None,
    subset_size: Optional[int] = None,
    bottleneck: Optional[bool] = None,
    threshold: Optional[float] = None,
    baseline_pes: Optional[int] = None,
    sim: Optional[dict] = None,
    search: Optional[dict] = None,
    progress: Optional[Callable[[int, int, str], None]] = None,
    destinations: Optional[Union[str, Destinations]] = None,
    warmup_packets: Optional[int] = None,
    transform: Any = None,
    workers: Optional[int] = None,
) -> dict:
    """For each PE count and replication scope: the mapping ``mapper`` finds, its maximum
    sustainable rate, the speedup over ``baseline_pes`` PEs with no replication (the
    normalization of Figure 7 of the NPIRE paper) and, with ``bottleneck``, a cheap ranking (S,
    B and M idealized alone). Returns ``points``, ``weights``, ``baseline_packets_per_second``,
    ``settings`` and ``interrupted`` (true when Ctrl-C stopped the sweep: ``points`` are the
    finished ones). ``progress(done, total, label)`` is called before each point.

    The points run on ``workers`` threads (default: every core); the result does not depend on
    how many.
    """
    e: dict = {"bottleneck": bottleneck, "threshold": threshold, "baseline_pes": baseline_pes, "workers": workers}
    if pes is not None:
        e["pes"] = parse_pes(pes)
    if replication is not None:
        reps = [replication] if isinstance(replication, (str, Replication)) else list(replication)
        if not reps:
            raise PktflowError("no replication scope given")
        e["replications"] = [_choice(r, Replication, "replication") for r in reps]
    s = dict(sim or {})
    if warmup_packets is not None:
        s["warmup_packets"] = warmup_packets
    if transform is not None:
        s["transform"] = parse_transforms(transform)
    req = _request(
        app, arch, arch_set, None, None, packets, trace, seed, subset_size, mapper, destinations, s, search, None, e
    )
    return finished(json.loads(_core.explore(req, progress)))


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
                "replicated": " ".join(p["replicated"]),
                "binding_resource": ((p.get("limit") or {}).get("limits") or [{}])[0].get("what", ""),
                "binding_share": ((p.get("limit") or {}).get("limits") or [{}])[0].get("share"),
                "diagnosis": (p.get("limit") or {}).get("sentence", ""),
                "max_pe_load_cycles": p["max_pe_load"],
                "gain_S": g.get("S"),
                "gain_B": g.get("B"),
                "gain_M": g.get("M"),
                "gain_SB": g.get("SB"),
                "gain_SBM": g.get("SBM"),
                "bottleneck": b.get("summary", ""),
                "searches": p["searches"],
                "wall_seconds": p["wall_seconds"],
            }
        )
    return rows
