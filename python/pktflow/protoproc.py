"""Protocol-processing policies: when to dedicate a processor of a multiprocessor node to
protocol processing (the protocol-processing paper by Falsafi and Wood; docs/sources.md).

Three policies: ``single`` (one processor does everything), ``fixed`` (processor 0 of each node
only runs protocol handlers) and ``floating`` (every processor computes; an idle one acts as
protocol processor). :func:`model` evaluates the paper's analytic model (section 4),
:func:`simulate` runs the discrete-event simulation of a network of multiprocessor nodes
(``crates/protoproc``), :func:`table2` the paper's latency microbenchmark on it. Times are in
microseconds. Every default lives in Rust; arguments left as None are not sent, and each result
records the settings it resolved. See ``docs/protoproc.md``.

Example::

    from pktflow import protoproc
    m = protoproc.model()                       # Table 2's Lremote, Opp, Oreply
    print(m["break_even"]["r_max"])             # at most ~1.30: Fixed never gains 33%
    r = protoproc.simulate("em3d", policy="fixed", cpus=4)
    print(r["execution_time_us"], r["total"])
"""

from __future__ import annotations

import enum
import json
from typing import Any, Callable, Optional, Sequence, Union

from pktflow import PktflowError, _core
from pktflow._request import choice, finite_or_name

__all__ = ["App", "CostSet", "Notify", "Policy", "Spread", "model", "simulate", "table2"]


class App(str, enum.Enum):
    """Workloads of the simulation (docs/protoproc.md)."""

    em3d = "em3d"
    gauss = "gauss"
    tomcatv = "tomcatv"
    synthetic = "synthetic"
    microbench = "microbench"


class Policy(str, enum.Enum):
    """Who runs protocol handlers."""

    single = "single"
    fixed = "fixed"
    floating = "floating"


class Notify(str, enum.Enum):
    """How a computing processor learns of a message."""

    poll = "poll"
    interrupt = "interrupt"


class Spread(str, enum.Enum):
    """How the synthetic workload draws the computation between two requests."""

    exponential = "exponential"
    fixed = "fixed"


class CostSet(str, enum.Enum):
    """Where the simulation's costs come from."""

    table2 = "table2"
    model = "model"


def _num(x: Any) -> Any:
    """A float for Rust; NaN and infinities as the strings Rust's validation reads."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise PktflowError(f"expected a number, got {x!r}")
    return finite_or_name(float(x))


def _int(name: str, x: Any, hi: int = 2**64 - 1) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise PktflowError(f"{name} must be a whole number, got {x!r}")
    if not 0 <= x <= hi:
        raise PktflowError(f"{name} must be between 0 and {hi}, got {x}")
    return int(x)


def _choice(name: str, x: Any, kind: type[enum.Enum]) -> str:
    return choice(x, kind, name)


def model(
    *,
    l_remote_us: Optional[float] = None,
    o_pp_us: Optional[float] = None,
    o_reply_us: Optional[float] = None,
    c_us: Optional[float] = None,
    c_min_us: Optional[float] = None,
    c_max_us: Optional[float] = None,
    points: Optional[int] = None,
    ratios: Optional[Sequence[float]] = None,
    requests: Optional[float] = None,
    tcs_us: Optional[float] = None,
    o_request_us: Optional[float] = None,
) -> dict[str, Any]:
    """The analytic model: ``points`` (``c_us``, ``utilization``, ``t_single``, ``t_fixed``,
    ``t_floating``, ``normalized`` = Tsingle/Tfixed) over a geometric range of C around Lremote,
    ``break_even`` (largest gain, the utilization intervals where Fixed beats Floating and where
    it is cost-effective, the overhead needed for both at several utilizations), ``curves`` (one
    per overhead ratio (2 Opp + Oreply) / Lremote, Figure 3 of the paper) and
    ``multithreading`` (the limits of section 4)."""
    req: dict[str, Any] = {}
    for k, v in (
        ("l_remote_us", l_remote_us),
        ("o_pp_us", o_pp_us),
        ("o_reply_us", o_reply_us),
        ("c_us", c_us),
        ("c_min_us", c_min_us),
        ("c_max_us", c_max_us),
        ("requests", requests),
        ("tcs_us", tcs_us),
        ("o_request_us", o_request_us),
    ):
        if v is not None:
            req[k] = _num(v)
    if points is not None:
        req["points"] = _int("points", points, 2**32 - 1)
    if ratios is not None:
        req["ratios"] = [_num(x) for x in ratios]
    return json.loads(_core.protoproc_model(json.dumps(req, allow_nan=False)))


def simulate(
    app: Optional[Union[str, App]] = None,
    *,
    policy: Optional[Union[str, Policy]] = None,
    nodes: Optional[int] = None,
    cpus: Optional[int] = None,
    threads: Optional[int] = None,
    seed: Optional[int] = None,
    costs: Optional[Union[str, CostSet]] = None,
    bus_share: Optional[float] = None,
    notify: Optional[Union[str, Notify]] = None,
    interrupt_us: Optional[float] = None,
    role_switch_us: Optional[float] = None,
    poll_interval_us: Optional[float] = None,
    network_us: Optional[float] = None,
    l_remote_us: Optional[float] = None,
    o_pp_us: Optional[float] = None,
    o_reply_us: Optional[float] = None,
    c_us: Optional[float] = None,
    requests: Optional[int] = None,
    spread: Optional[Union[str, Spread]] = None,
    iterations: Optional[int] = None,
    n: Optional[int] = None,
    misses: Optional[int] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> dict[str, Any]:
    """One simulation of ``app`` (default ``synthetic``) under ``policy`` (default ``fixed``) on
    ``nodes`` nodes (default 4) of ``cpus`` processors (default 1 for single, 2 otherwise) with
    ``threads`` threads per compute processor (default 1).

    Returns ``execution_time_us``, ``processors`` (per processor: ``compute_us``,
    ``protocol_us``, ``polling_us``, ``switch_us``, ``idle_us``), ``total``, miss counts and
    latencies, ``settings`` (everything resolved) and, for the synthetic workload with the
    model's costs, ``model`` (the analytic model's time for the same parameters and the
    difference). ``progress(misses_done, misses_expected)`` is called now and then; Ctrl-C stops
    the run (KeyboardInterrupt)."""
    req: dict[str, Any] = {}
    if app is not None:
        req["app"] = _choice("app", app, App)
    if policy is not None:
        req["policy"] = _choice("policy", policy, Policy)
    if costs is not None:
        req["costs"] = _choice("costs", costs, CostSet)
    if notify is not None:
        req["notify"] = _choice("notify", notify, Notify)
    if spread is not None:
        req["spread"] = _choice("spread", spread, Spread)
    for k, v, hi in (
        ("nodes", nodes, 2**32 - 1),
        ("cpus", cpus, 2**32 - 1),
        ("threads", threads, 2**32 - 1),
        ("iterations", iterations, 2**32 - 1),
        ("n", n, 2**32 - 1),
        ("seed", seed, 2**64 - 1),
        ("requests", requests, 2**64 - 1),
        ("misses", misses, 2**64 - 1),
    ):
        if v is not None:
            req[k] = _int(k, v, hi)
    for k, v in (
        ("bus_share", bus_share),
        ("interrupt_us", interrupt_us),
        ("role_switch_us", role_switch_us),
        ("poll_interval_us", poll_interval_us),
        ("network_us", network_us),
        ("l_remote_us", l_remote_us),
        ("o_pp_us", o_pp_us),
        ("o_reply_us", o_reply_us),
        ("c_us", c_us),
    ):
        if v is not None:
            req[k] = _num(v)
    return json.loads(_core.protoproc_sim(json.dumps(req, allow_nan=False), progress))


def table2(*, misses: Optional[int] = None, seed: Optional[int] = None) -> dict[str, Any]:
    """Table 2 of the paper on the simulator: per policy the round trip of a remote miss and the
    requester and home handler time per miss, with the paper's figures (``rows``)."""
    req: dict[str, Any] = {}
    if misses is not None:
        req["misses"] = _int("misses", misses)
    if seed is not None:
        req["seed"] = _int("seed", seed)
    return json.loads(_core.protoproc_table2(json.dumps(req)))
