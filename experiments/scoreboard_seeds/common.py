"""What every seed's scoreboard module shares: the row, the status rule and a run cache.

A row is one quantitative result of a paper (the ids and wording of the project's list of the
papers' results) held against what pktflow measures. Its keys, in this order:

- ``id``: the result's label (``A1``, ``I28a``...), only a label;
- ``result``: what the paper states, in words;
- ``paper``: the paper's figure (a number, or the shape in words);
- ``pktflow``: pktflow's measured figure (a number, or the shape it shows in words), ``None``
  when nothing was measured (``ABSENT``, ``OUT_OF_SCOPE``);
- ``ratio``: pktflow / paper when both are numbers, else ``None``;
- ``status``: ``MATCH`` (within 10%, or the same shape), ``NEAR`` (within 25%), ``MISS``,
  ``ABSENT`` (pktflow has no reproduction yet) or ``OUT_OF_SCOPE`` (a simulator cannot say:
  FPGA area, clock frequency...);
- ``reason``: why, required for every status but ``MATCH``; with the measured mechanism for a
  ``MISS``.

The status of a numeric result is computed here, never written by hand: ``|pktflow / paper - 1|``
at most 0.10 is MATCH, at most 0.25 NEAR, otherwise MISS. For a relative change (a speedup of
+57%), the ratio is taken on the factors (1.57 against the measured 1 + change), so that a +5%
gain is not "within 10%" of a 0% one by accident of small numbers. A shape result (an ordering,
"does not scale", "the second CPU changes little") is judged by a check the seed module writes
out as code, and its ``pktflow`` cell says what was measured.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

STATUSES = ("MATCH", "NEAR", "MISS", "ABSENT", "OUT_OF_SCOPE")
MATCH_TOL = 0.10
NEAR_TOL = 0.25
KEYS = ("id", "result", "paper", "pktflow", "ratio", "status", "reason")


def status_of_ratio(ratio: float) -> str:
    """MATCH within 10%, NEAR within 25%, else MISS (the rule every numeric row follows)."""
    if not math.isfinite(ratio):
        return "MISS"
    d = abs(ratio - 1.0)
    if d <= MATCH_TOL + 1e-12:
        return "MATCH"
    if d <= NEAR_TOL + 1e-12:
        return "NEAR"
    return "MISS"


def _num(x: float) -> float:
    return float(f"{x:.6g}")


def numeric(rid: str, result: str, paper: float, measured: Optional[float], reason: str = "") -> dict:
    """A numeric row: status from pktflow / paper. ``measured`` None makes the row ABSENT (then
    ``reason`` says why nothing was measured)."""
    if measured is None or (isinstance(measured, float) and not math.isfinite(measured)):
        return absent(rid, result, paper, reason or "no measurement")
    if paper == 0:
        ratio = math.inf if measured != 0 else 1.0
    else:
        ratio = measured / paper
    st = status_of_ratio(ratio)
    return _row(rid, result, paper, _num(measured), None if not math.isfinite(ratio) else _num(ratio), st, reason)


def change(rid: str, result: str, paper_change: float, measured_change: Optional[float], reason: str = "") -> dict:
    """A relative change (+0.57 for +57%): the ratio is (1 + measured) / (1 + paper)."""
    if measured_change is None or not math.isfinite(measured_change):
        return absent(rid, result, f"{100 * paper_change:+.1f}%", reason or "no measurement")
    ratio = (1.0 + measured_change) / (1.0 + paper_change)
    return _row(
        rid,
        result,
        f"{100 * paper_change:+.1f}%",
        f"{100 * measured_change:+.1f}%",
        _num(ratio),
        status_of_ratio(ratio),
        reason,
    )


def shape(rid: str, result: str, paper: str, measured: str, holds: bool, reason: str = "") -> dict:
    """A shape result: ``holds`` is the seed module's check, written as code on measured numbers;
    ``measured`` says in words (with the numbers) what pktflow shows."""
    return _row(rid, result, paper, measured, None, "MATCH" if holds else "MISS", reason)


def absent(rid: str, result: str, paper: Any, reason: str) -> dict:
    return _row(rid, result, paper, None, None, "ABSENT", reason)


def out_of_scope(rid: str, result: str, paper: Any, reason: str) -> dict:
    return _row(rid, result, paper, None, None, "OUT_OF_SCOPE", reason)


def _row(rid, result, paper, measured, ratio, status, reason) -> dict:
    if status != "MATCH" and not reason:
        raise ValueError(f"scoreboard row {rid}: status {status} needs a reason")
    return {
        "id": rid,
        "result": result,
        "paper": paper,
        "pktflow": measured,
        "ratio": ratio,
        "status": status,
        "reason": reason,
    }


@dataclass
class Context:
    """What a seed module's ``measure`` gets: where to keep its runs, the base seed, and a
    progress callback ``step(label)``. ``cached(name, fn)`` runs ``fn()`` once per output folder
    and keeps its JSON result there, so an interrupted scoreboard resumes where it stopped."""

    out: Path
    seed: int = 1
    step: Callable[[str], None] = lambda label: None
    fresh: bool = False
    #: Wall seconds the runs took when they were measured (kept runs count their own time).
    run_seconds: float = 0.0
    _memo: dict = field(default_factory=dict)

    def path_of(self, name: str) -> Path:
        """Where the result of run ``name`` is kept."""
        return self.out / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".json")

    def is_cached(self, name: str) -> bool:
        """Whether ``cached(name, ...)`` would load a kept result instead of running (so a seed
        module can hand only the other runs to a process pool)."""
        if name in self._memo:
            return True
        if self.fresh:
            return False
        try:
            return json.loads(self.path_of(name).read_text()).get("seed") == self.seed
        except (OSError, ValueError, AttributeError):
            return False

    def cached(self, name: str, fn: Callable[[], Any], seconds: Optional[float] = None) -> Any:
        """``fn()``'s result, kept as ``name``; ``seconds``: the run's wall time when ``fn`` only
        hands over a result measured elsewhere (a process pool)."""
        if name in self._memo:
            return self._memo[name]
        path = self.path_of(name)
        if path.is_file() and not self.fresh:
            try:
                doc = json.loads(path.read_text())
                if doc.get("seed") == self.seed:
                    self._memo[name] = doc["value"]
                    self.run_seconds += float(doc.get("seconds", 0.0))
                    return doc["value"]
            except (OSError, ValueError, KeyError):
                pass
        self.step(name)
        t0 = time.monotonic()
        value = fn()
        seconds = time.monotonic() - t0 if seconds is None else float(seconds)
        self.run_seconds += seconds
        self.out.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"seed": self.seed, "seconds": seconds, "value": value}, default=str))
        os.replace(tmp, path)
        self._memo[name] = value
        return value
