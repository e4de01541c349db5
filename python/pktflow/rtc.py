"""Run-to-completion packet processing on fine-grained multithreaded cores, with locks or
transactional memory (the NetThreads thesis; citation in docs/sources.md).

Every hardware thread runs a whole packet (all element visits of its functional trace); the
engine (``crates/rtc``) models the cores, their thread scheduling, the shared data cache, the
mutex unit, the input buffering and NetTM's conflict detection, and finds the maximum
sustainable packet rate. See ``docs/rtc.md`` for every convention.

Example::

    from pktflow import rtc
    r = rtc.run("nat", scheduler="lock-aware", sync="tm", window_seconds=0.01)
    print(r["packets_per_second"], r["bracket"], r["bottleneck"]["sentence"])
    c = rtc.conflicts("nat", window="2:16")
"""

from __future__ import annotations

import enum
import json
import math
from typing import Any, Callable, Optional, Sequence, Union

from pktflow import PktflowError, _core
from pktflow._request import choice, finished
from pktflow.npsim import SlowPathPolicy

__all__ = ["Scheduler", "Sync", "Mode", "Cm", "Signature", "Criterion", "run", "conflicts", "signature_study"]


class Scheduler(str, enum.Enum):
    """Thread scheduling (docs/rtc.md)."""

    round_robin = "round-robin"
    lock_aware = "lock-aware"


class Sync(str, enum.Enum):
    """Critical sections as locks, or as transactions (NetTM)."""

    locks = "locks"
    tm = "tm"


class Mode(str, enum.Enum):
    """Every thread runs whole packets, or the application is cut into one stage per thread."""

    run_to_completion = "run-to-completion"
    pipeline = "pipeline"


class Cm(str, enum.Enum):
    """NetTM contention managers."""

    cm1 = "cm1"
    cm2 = "cm2"
    cm1_2 = "cm1/2"
    cm4 = "cm4"


class Signature(str, enum.Enum):
    """Conflict-detection signature hashes."""

    perfect = "perfect"
    bitsel = "bitsel"
    h3 = "h3"
    pbx = "pbx"
    lepbx = "lepbx"
    trie = "trie"


class Criterion(str, enum.Enum):
    """How the rate is measured."""

    zero_drop = "zero-drop"
    confidence90 = "confidence90"
    saturation = "saturation"


_choice = choice


def _positive(x: Any, option: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise PktflowError(f"{option} must be a number, got {x!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise PktflowError(f"{option} must be a positive number, got {x}")
    return v


def _int(x: Any, option: str, hi: int = 2**32 - 1) -> int:
    """A whole number within the field's range (Rust checks the option's own limits)."""
    if isinstance(x, bool) or not isinstance(x, int):
        raise PktflowError(f"{option} must be an integer, got {x!r}")
    if x < 0 or x > hi:
        # the option's own range is Rust's to check; here only what cannot be sent at all
        # ("must be 0 to 4294967295" read as the option's range where 1 to 64 is allowed)
        raise PktflowError(f"{option} must not be negative, got {x}" if x < 0 else f"{option} is too large, got {x}")
    return x


def _workload(
    app: str,
    trace: Optional[str],
    packets: Optional[int],
    seed: Optional[int],
    packet_bytes: Optional[int],
    parametric: Optional[dict],
) -> dict:
    w: dict[str, Any] = {"app": str(app)}
    if trace is not None:
        w["trace"] = str(trace)
    if packets is not None:
        w["packets"] = _int(packets, "--packets")
    if seed is not None:
        w["traffic_seed"] = _int(seed, "--traffic-seed", 2**64 - 1)
    if packet_bytes is not None:
        w["packet_bytes"] = _int(packet_bytes, "--packet-bytes")
    if parametric:
        w["parametric"] = {k: _int(v, f"--{k.replace('_', '-')}") for k, v in parametric.items() if v is not None}
    return w


def run(
    app: str,
    *,
    arch: Optional[str] = None,
    arch_set: Optional[Sequence[str]] = None,
    cores: Optional[int] = None,
    threads: Optional[int] = None,
    scheduler: Optional[Union[str, Scheduler]] = None,
    sync: Optional[Union[str, Sync]] = None,
    mode: Optional[Union[str, Mode]] = None,
    cm: Optional[Union[str, Cm]] = None,
    signature: Optional[Union[str, Signature]] = None,
    signature_bits: Optional[int] = None,
    mutexes: Optional[int] = None,
    unlimited_mutexes: Optional[bool] = None,
    tx_locks: Optional[Sequence[int]] = None,
    criterion: Optional[Union[str, Criterion]] = None,
    window_seconds: Optional[float] = None,
    runs: Optional[int] = None,
    tolerance: Optional[float] = None,
    seed: Optional[int] = None,
    packets: Optional[int] = None,
    trace: Optional[str] = None,
    traffic_seed: Optional[int] = None,
    packet_bytes: Optional[int] = None,
    parametric: Optional[dict] = None,
    slow_path_policy: Optional[Any] = None,
    slow_path: Optional[Union[str, Sequence[str]]] = None,
    slow_interrupt_instructions: Optional[int] = None,
    slow_role_switch_instructions: Optional[int] = None,
    slow_message_instructions: Optional[int] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> dict[str, Any]:
    """Maximum sustainable rate of ``app`` (a built-in application, a Click file, ``echo`` or
    ``parametric``) on the ``netthreads`` machine. Options left None take the Rust defaults
    (recorded in the result's ``settings``). Returns ``packets_per_second``, ``gbps``,
    ``bracket``, ``breakdown`` (shares of issue slots), ``commits_per_second``,
    ``aborts_per_transaction``, ``bottleneck`` (the binding resource: ``{resource: {kind, ...}, share, evidence, advice,
    sentence}``, None when no packet completed), ``report`` (the run at that rate) and
    ``probes`` (every tested rate). ``tx_locks`` lists the lock ids that are transactional with
    ``sync="tm"`` (None: all; the others stay locks). ``parametric`` sets appendix B's benchmark:
    ``{"iter_non_tm", "iter_tm", "range", "work_instructions"}``. ``slow_path_policy``
    (single, fixed, floating) sets where slow-path work runs (ARPResponder, ICMPError and the
    elements named in ``slow_path``), with its costs in instructions (docs/protoproc.md section
    6); the result's ``slow_path`` then says how much of the workload is slow path.
    """
    engine: dict[str, Any] = {}
    for key, val in (("cores", cores), ("threads", threads), ("signature_bits", signature_bits), ("mutexes", mutexes)):
        if val is not None:
            engine[key] = _int(val, f"--{key.replace('_', '-')}")
    for key, val, cls in (
        ("scheduler", scheduler, Scheduler),
        ("sync", sync, Sync),
        ("mode", mode, Mode),
        ("cm", cm, Cm),
        ("signature", signature, Signature),
    ):
        v = _choice(val, cls, f"--{key}")
        if v is not None:
            engine[key] = v
    if unlimited_mutexes is not None:
        engine["unlimited_mutexes"] = bool(unlimited_mutexes)
    if tx_locks is not None:
        engine["tx_locks"] = [_int(x, "--tx-locks") for x in tx_locks]
    sp: dict[str, Any] = {}
    pol = _choice(slow_path_policy, SlowPathPolicy, "--slow-path-policy")
    if pol is not None:
        sp["policy"] = pol
    if slow_path is not None:
        names = slow_path.split(",") if isinstance(slow_path, str) else [str(e) for e in slow_path]
        names = [n.strip() for n in names if n.strip()]
        if not names:
            raise PktflowError("--slow-path: expected element names or classes separated by commas")
        sp["elements"] = names
    for key, val in (
        ("interrupt_instructions", slow_interrupt_instructions),
        ("role_switch_instructions", slow_role_switch_instructions),
        ("message_instructions", slow_message_instructions),
    ):
        if val is not None:
            sp[key] = _int(val, f"--slow-{key.replace('_', '-')}")
    if sp:
        engine["slow_path"] = sp
    search: dict[str, Any] = {}
    c = _choice(criterion, Criterion, "--criterion")
    if c is not None:
        search["criterion"] = c
    if window_seconds is not None:
        search["window_seconds"] = _positive(window_seconds, "--window-seconds")
    if tolerance is not None:
        search["tolerance"] = _positive(tolerance, "--tolerance")
    if runs is not None:
        search["runs"] = _int(runs, "--runs")
    if seed is not None:
        search["seed"] = _int(seed, "--seed", 2**64 - 1)
    req: dict[str, Any] = {
        "workload": _workload(app, trace, packets, traffic_seed, packet_bytes, parametric),
        "engine": engine,
        "search": search,
    }
    if arch is not None:
        req["arch"] = str(arch)
    if arch_set:
        req["arch_set"] = [str(x) for x in arch_set]
    return finished(json.loads(_core.rtc_run(json.dumps(req), progress)))


def conflicts(
    app: str,
    *,
    window: Optional[str] = None,
    packets: Optional[int] = None,
    trace: Optional[str] = None,
    traffic_seed: Optional[int] = None,
    packet_bytes: Optional[int] = None,
    parametric: Optional[dict] = None,
    include_lock_words: Optional[bool] = None,
) -> dict[str, Any]:
    """Fraction of packets whose write set meets another packet's read or write set within
    windows of consecutive packets (``window`` ``"LO:HI"``, default ``"2:16"``), from the
    functional traces alone. Data only by default; ``include_lock_words=True`` also counts the
    applications' software lock words. Returns ``windows`` (``window``, ``packets``,
    ``conflicting``, ``fraction``)."""
    req: dict[str, Any] = {"workload": _workload(app, trace, packets, traffic_seed, packet_bytes, parametric)}
    if window is not None:
        req["window"] = str(window)
    if include_lock_words is not None:
        req["include_lock_words"] = bool(include_lock_words)
    return json.loads(_core.rtc_conflicts(json.dumps(req)))


def signature_study(
    app: str,
    *,
    hashes: Optional[list[str]] = None,
    bits: Optional[list[int]] = None,
    contexts: Optional[int] = None,
    seed: Optional[int] = None,
    packets: Optional[int] = None,
    trace: Optional[str] = None,
    traffic_seed: Optional[int] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> dict[str, Any]:
    """Appendix A's study: the false-conflict rate of each signature hash (``hashes``: bitsel,
    h3, pbx, lepbx, trie) for each signature size (``bits``) on the application's transactions,
    each beside the ``contexts - 1`` before it (docs/rtc.md, "Signature study"). Returns
    ``points`` (``hash``, ``bits``, ``signature_bits``, ``false_conflict_rate``, ...),
    ``true_conflict_rate`` and ``entropy_bits``."""
    req: dict[str, Any] = {"workload": _workload(app, trace, packets, traffic_seed, None, None)}
    if hashes is not None:
        req["hashes"] = [str(h) for h in hashes]
    if bits is not None:
        req["bits"] = [int(b) for b in bits]
    if contexts is not None:
        req["contexts"] = int(contexts)
    if seed is not None:
        req["seed"] = int(seed)
    return json.loads(_core.rtc_signature_study(json.dumps(req), progress))
