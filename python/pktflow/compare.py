"""Every execution model an architecture supports, measured on the same application, side by
side: pipeline, run to completion with locks, with transactions, hybrid (docs/rtc.md,
"Comparing execution models").

Example::

    from pktflow import compare
    c = compare.run("nat", arch="netthreads", window_seconds=0.01)
    print(c["recommendation"])
    for r in c["rows"]:
        print(r["label"], r["packets_per_second"], r["binding"]["what"])
"""

from __future__ import annotations

import enum
import json
import math
from typing import Any, Callable, Optional, Sequence

from pktflow import PktflowError, _core
from pktflow._request import choice, finished
from pktflow.rtc import Cm, Scheduler

__all__ = ["Model", "run", "plot"]


class Model(str, enum.Enum):
    """Execution models (which ones an architecture supports: docs/rtc.md)."""

    pipeline = "pipeline"
    rtc_locks = "rtc-locks"
    rtc_tm = "rtc-tm"
    hybrid = "hybrid"


def _int(x: Any, option: str, hi: int = 2**32 - 1) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise PktflowError(f"{option} must be an integer, got {x!r}")
    if x < 0 or x > hi:
        # the option's own range is Rust's to check; here only what cannot be sent at all
        # ("must be 0 to 4294967295" read as the option's range where 1 to 64 is allowed)
        raise PktflowError(f"{option} must not be negative, got {x}" if x < 0 else f"{option} is too large, got {x}")
    return x


def _float(x: Any, option: str) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise PktflowError(f"{option} must be a number, got {x!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise PktflowError(f"{option} must be a positive number, got {x}")
    return v


def run(
    app: str,
    *,
    arch: Optional[str] = None,
    arch_set: Optional[Sequence[str]] = None,
    models: Optional[Sequence[Any]] = None,
    packets: Optional[int] = None,
    traffic_seed: Optional[int] = None,
    pes: Optional[int] = None,
    cores: Optional[int] = None,
    threads: Optional[int] = None,
    scheduler: Optional[Any] = None,
    cm: Optional[Any] = None,
    window_seconds: Optional[float] = None,
    precision: Optional[float] = None,
    seed: Optional[int] = None,
    progress: Optional[Callable[[int, int, str], None]] = None,
) -> dict[str, Any]:
    """Measure every model ``arch`` supports (or ``models``) on ``app``. Returns ``rows`` (per
    model: ``label``, ``engine``, ``packets_per_second``, ``gbps``, ``bracket_pps``, ``binding``
    (the harness's finding), ``detail``, ``request``, ``error``), ``best``,
    ``recommendation``, ``supported``, ``rule``, ``settings`` and ``interrupted``. Unset
    options take the Rust defaults (recorded under ``settings``)."""
    req: dict[str, Any] = {"app": str(app)}
    if arch is not None:
        req["arch"] = str(arch)
    if arch_set:
        req["arch_set"] = [str(x) for x in arch_set]
    if models is not None:
        req["models"] = [choice(m, Model, "--models") for m in models]
    for key, val, hi in (
        ("packets", packets, 2**32 - 1),
        ("traffic_seed", traffic_seed, 2**64 - 1),
        ("pes", pes, 2**32 - 1),
        ("cores", cores, 2**32 - 1),
        ("threads", threads, 2**32 - 1),
        ("seed", seed, 2**64 - 1),
    ):
        if val is not None:
            req[key] = _int(val, f"--{key.replace('_', '-')}", hi)
    for key, val, cls in (("scheduler", scheduler, Scheduler), ("cm", cm, Cm)):
        v = choice(val, cls, f"--{key}")
        if v is not None:
            req[key] = v
    if window_seconds is not None:
        req["window_seconds"] = _float(window_seconds, "--window-seconds")
    if precision is not None:
        req["precision"] = _float(precision, "--precision")
    return finished(json.loads(_core.compare_run(json.dumps(req), progress)))


def plot(result: dict[str, Any], path: str) -> None:
    """A bar per model: its maximum rate (kpps), labelled with its binding resource."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r for r in result["rows"] if r.get("packets_per_second")]
    fig, ax = plt.subplots(figsize=(7, 0.8 + 0.7 * max(1, len(rows))))
    labels = [r["label"] for r in rows]
    rates = [r["packets_per_second"] / 1e3 for r in rows]
    ax.barh(range(len(rows)), rates, color=["#4c72b0" if r["model"] != result.get("best") else "#dd8452" for r in rows])
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels(labels, fontsize=8)
    ax.invert_yaxis()
    for i, r in enumerate(rows):
        b = r.get("binding")
        ax.text(rates[i], i, f"  {b['what'] if b else ''}", va="center", fontsize=7)
    ax.set_xlabel("maximum sustainable rate (kpps)")
    ax.set_title(f"{result['app']} on {result['arch']}", fontsize=9)
    ax.set_xlim(0, max(rates or [1]) * 1.6)
    fig.tight_layout()
    from pktflow._ui import atomic_path

    try:
        with atomic_path(path) as tmp:
            fig.savefig(tmp, dpi=120, format="png")
    finally:
        plt.close(fig)
