"""Stream graphs on 2D-mesh many-cores: a builder API for StreamIt-style stream graphs,
synthetic network sweeps and stream-graph runs on the cycle-level mesh simulator.

The heavy work is in Rust (``crates/noc``), reached through ``pktflow._core`` with JSON requests.
Source paper: Seo & Thottethodi, "Disjoint-Path Routing: Efficient Communication for Streaming
Applications", IPDPS 2009 (see docs/sources.md). See ``docs/noc.md``.

Example::

    from pktflow import noc
    g = noc.program("tiny", noc.pipeline("top",
            noc.filter_("src", push=2, work=10),
            noc.splitjoin("sj", noc.roundrobin(1, 1), noc.roundrobin(1, 1),
                          noc.filter_("a", pop=1, push=1, work=50),
                          noc.filter_("b", pop=1, push=1, work=50)),
            noc.filter_("snk", pop=2, work=5)))
    res = noc.run_stream(g, mesh="4x4", routing="tentacle")
    print(res["saturation_throughput"])
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from pktflow import _core
from pktflow._request import finished

__all__ = [
    "Program",
    "benchmarks",
    "catalog",
    "duplicate",
    "feedbackloop",
    "filter_",
    "graph",
    "link_loads_frame",
    "perturbed_routing",
    "pipeline",
    "program",
    "roundrobin",
    "run_stream",
    "splitjoin",
    "sweep",
    "sweep_frame",
    "stream_points_frame",
]

Node = dict[str, Any]


# ----------------------------------------------------------------------------- builder API


def filter_(
    name: str,
    *,
    pop: int = 0,
    push: int = 0,
    peek: Optional[int] = None,
    work: float = 0.0,
    stateful: bool = False,
) -> Node:
    """A filter: items popped/pushed per firing, peek window (>= pop), work per firing (cycles)."""
    n: Node = {
        "type": "filter",
        "name": name,
        "pop": int(pop),
        "push": int(push),
        "work": float(work),
        "stateful": bool(stateful),
    }
    if peek is not None:
        n["peek"] = int(peek)
    return n


def pipeline(name: str, *children: Node) -> Node:
    """Children connected in order."""
    return {"type": "pipeline", "name": name, "children": list(children)}


def duplicate() -> dict[str, Any]:
    """A duplicate splitter (every branch gets a copy of each item)."""
    return {"type": "duplicate", "weights": []}


def roundrobin(*weights: int) -> dict[str, Any]:
    """A round-robin splitter or joiner with one weight per branch (one weight = all equal)."""
    return {"type": "roundrobin", "weights": [int(w) for w in weights] or [1]}


def splitjoin(name: str, split: dict[str, Any], join: dict[str, Any], *branches: Node) -> Node:
    return {"type": "splitjoin", "name": name, "split": split, "join": join, "branches": list(branches)}


def feedbackloop(
    name: str, join: dict[str, Any], body: Node, loop: Node, split: dict[str, Any], delay: int = 0
) -> Node:
    """``join`` weights are (outside input, loop path); ``split`` weights are (output, loop path);
    ``delay`` items start on the loop path."""
    return {
        "type": "feedbackloop",
        "name": name,
        "join": join,
        "body": body,
        "loop": loop,
        "split": split,
        "delay": int(delay),
    }


class Program:
    """A named stream program; ``str(p)`` / ``p.to_json()`` is the file format of docs/noc.md."""

    def __init__(self, name: str, graph: Node):
        self.name = name
        self.graph = graph

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "graph": self.graph}

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def save(self, path: Union[str, Path]) -> Path:
        from pktflow import _ui

        p = Path(path)
        # As every output: replaced whole, written through a link or a device, never over them.
        with _ui.atomic_write(p) as f:
            f.write(json.dumps(self.to_dict(), indent=1))
        return p

    def balance(self) -> dict[str, Any]:
        """Solve the balance equations: nodes with ``reps``, edges with items per steady state."""
        return graph(self)

    def __str__(self) -> str:
        return self.to_json()


def program(name: str, graph_node: Node) -> Program:
    return Program(name, graph_node)


GraphSpec = Union[str, Path, Program, dict]


def _spec(g: GraphSpec) -> str:
    if isinstance(g, Program):
        return g.to_json()
    if isinstance(g, dict):
        return json.dumps(g if "graph" in g else {"name": g.get("name", "graph"), "graph": g})
    return str(g)


# ----------------------------------------------------------------------------- core calls


def catalog() -> dict[str, Any]:
    """Built-in benchmarks, routers, traffic patterns, and the ``mesh`` preset defaults."""
    return json.loads(_core.noc_catalog())


def benchmarks() -> list[str]:
    return list(catalog()["benchmarks"])


def graph(spec: GraphSpec) -> dict[str, Any]:
    """Load (benchmark name, .json/.toml path, Program or dict) and balance a stream graph."""
    return json.loads(_core.stream_graph_load(_spec(spec)))


def _plain(v: Any) -> Any:
    """JSON-ready copy of a request: a non-finite float becomes the string ``"NaN"``/``"inf"``
    so that the core names the field it is in (JSON has no NaN)."""
    if isinstance(v, float) and not math.isfinite(v):
        return repr(v)
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def _request(**fields: Any) -> str:
    """The request with only the fields the caller set (None = not set: the core's default)."""
    return json.dumps(_plain({k: v for k, v in fields.items() if v is not None}))


Progress = Callable[[int, int, str], None]


def sweep(
    *,
    rates: Optional[Sequence[float]] = None,
    mesh: Optional[str] = None,
    traffic: Optional[str] = None,
    routing: Optional[str] = None,
    vcs: Optional[int] = None,
    buffer: Optional[int] = None,
    packet_flits: Optional[int] = None,
    warmup: Optional[int] = None,
    measure: Optional[int] = None,
    drain: Optional[int] = None,
    seed: Optional[int] = None,
    hotspot_fraction: Optional[float] = None,
    arch: Optional[dict[str, Any]] = None,
    compat: Optional[str] = None,
    config: Optional[str] = None,
    ni_flits: Optional[int] = None,
    sample_period: Optional[int] = None,
    warmup_periods: Optional[int] = None,
    max_samples: Optional[int] = None,
    latency_thres: Optional[float] = None,
    warmup_thres: Optional[float] = None,
    acc_warmup_thres: Optional[float] = None,
    stopping_thres: Optional[float] = None,
    acc_stopping_thres: Optional[float] = None,
    progress: Optional[Progress] = None,
) -> dict[str, Any]:
    """Synthetic-traffic sweep on the cycle-level mesh, one point per offered load in ``rates``
    (flits per node per cycle; default 0.1, 0.2, 0.3). Unset options take the core's defaults (docs/noc.md: 8x8 mesh,
    uniform traffic, XY routing, 10,000 warm-up and 100,000 measured cycles, seed 1).

    Returns ``{"points": [{"requested_rate", "offered", "accepted", "latency", "saturated",
    "saturation_reasons", "packets_not_delivered", ...}], "saturation_offered", "theory",
    "conventions", "interrupted", ...}``. ``progress(cycles done, cycles at most, label)`` is
    called now and then. After Ctrl-C the points finished are returned with
    ``"interrupted": True``.

    ``compat="booksim"`` follows BookSim 2's conventions (docs/noc.md: destinations include the
    source, one-flit-per-cycle interfaces, one more injection cycle, round-robin VC choice,
    warm-up and measurement by its convergence rule set by ``sample_period`` ... ``acc_stopping_thres``,
    BookSim's names and defaults); ``config`` is a BookSim-style configuration file
    (``key = value;``) whose keys become these options (the ones given here win). ``ni_flits``
    sets the flits per cycle a network interface injects and ejects (1 to 4)."""
    req = _request(
        rates=[float(r) for r in rates] if rates is not None else None,
        mesh=mesh,
        traffic=getattr(traffic, "value", traffic),
        routing=getattr(routing, "value", routing),
        vcs=vcs,
        buffer=buffer,
        packet_flits=packet_flits,
        warmup=warmup,
        measure=measure,
        drain=drain,
        seed=seed,
        hotspot_fraction=hotspot_fraction,
        arch=arch,
        compat=getattr(compat, "value", compat),
        config=str(config) if config is not None else None,
        ni_flits=ni_flits,
        sample_period=sample_period,
        warmup_periods=warmup_periods,
        max_samples=max_samples,
        latency_thres=latency_thres,
        warmup_thres=warmup_thres,
        acc_warmup_thres=acc_warmup_thres,
        stopping_thres=stopping_thres,
        acc_stopping_thres=acc_stopping_thres,
    )
    return finished(json.loads(_core.noc_sweep(req, progress)))


def sweep_frame(result: dict[str, Any]):
    """The sweep points as a pandas DataFrame (one row per offered load)."""
    import pandas as pd

    return pd.DataFrame(result["points"])


def run_stream(
    graph_spec: GraphSpec,
    *,
    mesh: Optional[str] = None,
    routing: Optional[str] = None,
    comm: Optional[str] = None,
    scales: Optional[Iterable[float]] = None,
    warmup: Optional[int] = None,
    measure: Optional[int] = None,
    seed: Optional[int] = None,
    anneal_moves: Optional[int] = None,
    retries: Optional[int] = None,
    buffer_iterations: Optional[int] = None,
    corrected_work: Optional[bool] = None,
    simulate: bool = True,
    vcs: Optional[int] = None,
    buffer: Optional[int] = None,
    arch: Optional[dict[str, Any]] = None,
    progress: Optional[Progress] = None,
) -> dict[str, Any]:
    """Partition the graph onto the mesh, lay it out, route its streams and simulate it.

    ``routing``: a name of ``catalog()["routings"]`` (described in ``catalog()["routing_help"]``;
    default tentacle); a disjoint-path router that fails falls back to dor (``routing_used``,
    ``route.fallback``). ``comm``: push
    (default) or pull (pull only on dor/adaptive). ``scales``: computation scaling factors
    (cycles per unit of StreamIt work); None = automatic sweep down to 0. Returns throughput
    points (steady-state iterations per 1000 cycles), ``saturation_throughput`` (null without
    points), routes, link loads and heat map. ``progress`` as for :func:`sweep`."""
    req = _request(
        graph=_spec(graph_spec),
        mesh=mesh,
        routing=getattr(routing, "value", routing),
        comm=getattr(comm, "value", comm),
        scales=[float(x) for x in scales] if scales is not None else None,
        warmup=warmup,
        measure=measure,
        seed=seed,
        anneal_moves=anneal_moves,
        retries=retries,
        buffer_iterations=buffer_iterations,
        corrected_work=corrected_work,
        no_sim=None if simulate else True,
        vcs=vcs,
        buffer=buffer,
        arch=arch,
    )
    return finished(json.loads(_core.stream_run(req, progress)))


def stream_points_frame(result: dict[str, Any]):
    """The throughput points of a stream run as a pandas DataFrame (one row per scale)."""
    import pandas as pd

    return pd.DataFrame(result["points"])


def link_loads_frame(result: dict[str, Any]):
    """Streams per link (paper Figure 3) as a DataFrame."""
    import pandas as pd

    return pd.DataFrame(result["link_loads"])


def perturbed_routing(
    graph_spec: GraphSpec,
    *,
    mesh: Optional[str] = None,
    trials: int = 20,
    swaps: int = 2,
    seed: Optional[int] = None,
    anneal_moves: Optional[int] = None,
    exact_budget: Optional[int] = None,
) -> dict[str, Any]:
    """How often tentacle, tentacle with order retries, negotiated congestion and the exact
    search find disjoint paths on ``trials`` layouts (1 to 100,000) perturbed by ``swaps`` random
    swaps. Unset options take the core's defaults (4x4 mesh, seed 1, 20,000 annealing moves, an
    exact-search budget of 2,000,000 expansions)."""
    req = _request(
        graph=_spec(graph_spec), mesh=mesh, seed=seed, anneal_moves=anneal_moves, exact_budget=exact_budget
    )
    return json.loads(_core.noc_perturbed_routing(req, trials, swaps))
