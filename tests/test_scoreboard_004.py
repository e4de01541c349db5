"""Seed 004's scoreboard module (experiments/scoreboard_seeds/seed004.py): its list of results and
its pure helpers on hand-made inputs (no simulation: a few milliseconds)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "experiments"))

from scoreboard_seeds import common, seed004  # noqa: E402


def test_results_list():
    ids = [rid for rid, _ in seed004.RESULTS]
    want = [f"I{i}" for i in range(1, 28)] + ["I28a", "I28b"] + [f"I{i}" for i in range(29, 74)]
    assert ids == want
    assert len(ids) == 74
    assert seed004.SEED == "004" and seed004.PAPER_FILE.startswith("004_")
    assert set(seed004.ROWS) == set(ids)  # one row builder per result


def test_worst_picks_the_farthest_figure():
    parts = [("a", 100, 95), ("b", 10, 30), ("c", 1, 0.5)]
    assert seed004.worst(parts)[0] == "b"  # 3x beats 2x
    assert seed004.worst([("a", 100, 100), ("z", 0, 5)])[0] == "z"  # no ratio: counted worst
    row = seed004._multi("X", "text", parts)
    assert row["status"] == "MISS" and row["paper"] == 10 and row["pktflow"] == 30
    assert "worst of 3" in row["reason"]
    ok = seed004._multi("X", "text", [("a", 100, 95), ("b", 10, 10.5)])
    assert ok["status"] == "MATCH"


def test_worst_change_uses_factors():
    parts = [("udhcp", -0.52, -0.48), ("nat", -0.48, 0.30)]
    assert seed004.worst_change(parts)[0] == "nat"
    row = seed004._multi_change("X", "text", parts)
    assert row["status"] == "MISS" and row["paper"] == "-48.0%" and row["pktflow"] == "+30.0%"


def test_plateau():
    assert seed004.plateau({16: 0.5, 32: 0.8, 64: 0.99, 128: 1.0, 256: 0.995}) == 64
    assert seed004.plateau({16: 1.0, 32: 0.99}) == 16
    assert seed004.plateau({16: 0.9, 32: 1.0, 64: 0.9}) == 64  # a later dip moves it
    assert seed004.plateau({}) is None


def test_bits_needed():
    curve = {16: 0.5, 64: 0.02, 256: 0.0}
    assert seed004.bits_needed(curve, 0.02) == 64
    assert seed004.bits_needed(curve, 0.0) == 256
    assert seed004.bits_needed({16: 0.5}, 0.01) == math.inf


def test_rows_build_from_hand_made_runs():
    """Chapter 7's rows from made-up summaries: the change and the shape checks are computed."""
    bd = dict(busy=0.1, no_packet=0.4, locked=0.5, squashed=0.0, hazard_bubble=0.0, other=0.0)
    bd_s = dict(busy=0.2, no_packet=0.2, locked=0.0, squashed=0.01, hazard_bubble=0.2, other=0.39)
    runs = {
        "RR1": dict(pps=100.0, breakdown=bd, latency_std=10.0, bound="lock", cache_misses=0),
        "S1": dict(pps=157.0, breakdown=bd_s, latency_std=6.7, bound="input"),
    }

    def S(app, cfg):
        return runs[cfg]

    r = seed004.ROWS["I26"]("I26", "text", S, None)
    assert r["status"] == "MATCH" and r["pktflow"] == "+57.0%"
    r = seed004.ROWS["I29"]("I29", "text", S, None)
    assert r["status"] == "MATCH"  # -50% against -52/-47/-48%
    r = seed004.ROWS["I31"]("I31", "text", S, None)
    assert r["status"] == "MATCH"
    runs["S1"] = dict(runs["S1"], breakdown=dict(bd_s, squashed=0.0))
    r = seed004.ROWS["I31"]("I31", "text", S, None)
    assert r["status"] == "MISS" and "squash" in r["reason"]


def test_out_of_scope_and_absent_rows_have_reasons():
    for rid in ("I4", "I5", "I6", "I7", "I11", "I13", "I34", "I60", "I65"):
        r = seed004.ROWS[rid](rid, "text", None, None)
        assert r["status"] == "OUT_OF_SCOPE" and r["reason"]
    for rid in ("I2", "I8", "I9", "I12", "I24", "I32", "I33", "I50", "I51", "I72"):
        r = seed004.ROWS[rid](rid, "text", None, None)
        assert r["status"] == "ABSENT" and r["reason"]
        assert tuple(r) == common.KEYS


def test_failed_run_becomes_absent():
    with pytest.raises(seed004._Failed):
        seed004._ok({"error": "use --packets 100 or fewer"})
    assert seed004._ok({"pps": 1}) == {"pps": 1}
