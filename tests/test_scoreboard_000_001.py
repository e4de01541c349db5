"""The scoreboard modules of the NPIRE (000) and TDPM (001) papers: their result lists and the
pure helpers their checks use (no simulation; well under a second)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))

from scoreboard_seeds import common, seed000, seed001  # noqa: E402


def test_seed000_results_list():
    ids = [rid for rid, _ in seed000.RESULTS]
    want = [f"A{i}" for i in range(1, 15)] + [f"B{i}" for i in range(1, 11)] + [f"C{i}" for i in range(1, 6)]
    want += [f"D{i}" for i in range(1, 16)]
    assert ids == want
    assert len(ids) == 44
    assert seed000.SEED == "000" and seed000.PAPER_FILE.startswith("000_")
    assert all(text for _, text in seed000.RESULTS)
    assert callable(seed000.measure) and seed000.STEPS > 0


def test_seed001_results_list():
    ids = [rid for rid, _ in seed001.RESULTS]
    assert ids == [f"E{i}" for i in range(1, 12)] + [f"F{i}" for i in range(1, 14)]
    assert len(ids) == 24
    assert seed001.SEED == "001" and seed001.PAPER_FILE.startswith("001_")
    assert all(text for _, text in seed001.RESULTS)
    assert callable(seed001.measure) and seed001.STEPS > 0


def test_flat_and_constant():
    assert seed000.flat([1.0, 1.01, 1.02])
    assert not seed000.flat([1.0, 1.3])
    assert seed000.about_constant([4.9, 4.85, 5.2], 5.0)
    assert not seed000.about_constant([4.9, 7.4], 5.0)  # 7.4 is 48% above "about 5x"


def test_asymptotic_to():
    pes = [4, 8, 12, 16, 24, 30]
    ok, why = seed000.asymptotic_to(pes, [5.0, 10.0, 14.0, 17.0, 20.0, 21.0], 30)
    assert ok and why == ""
    ok, why = seed000.asymptotic_to(pes, [5.95, 10.03, 10.5, 10.51, 10.5, 10.41], 30)  # flat from 12 PEs
    assert not ok and "no gain from 16 PEs" in why and "under twice" in why
    ok, why = seed000.asymptotic_to(pes, [5.0, 10.0, 8.0, 17.0, 20.0, 21.0], 30)  # a dip
    assert not ok and "falls" in why


def test_worst_pair_scores_the_furthest_point():
    assert seed000.worst_pair([(5.0, 8.0), (6.5, 11.4)]) == (6.5, 11.4)
    assert seed000.worst_pair([(5.0, 5.1), (6.5, 3.0)]) == (6.5, 3.0)
    # a row built from it takes the status of the worse point
    p, m = seed000.worst_pair([(5.0, 5.2), (6.5, 6.3)])
    assert common.numeric("X", "x", p, m)["status"] == "MATCH"


def test_tdpm_helpers():
    assert seed001.pct_oc48(1.244) == pytest.approx(50.0)
    assert seed001.pct_oc48(3.0) == 100.0
    assert seed001.beats(1.03, 1.0) and not seed001.beats(1.01, 1.0)
    gaps = seed001.optimal_gaps({"a": 0.9, "b": 1.0}, {"a": 1.0, "b": 1.0})
    assert gaps["a"] == pytest.approx(0.1) and gaps["b"] == 0.0


def test_one_critical_task():
    me = {"processor": "me", "engines": 4, "critical": True, "rate": 1.0}
    x_light = {"processor": "xscale", "engines": 0, "critical": False, "rate": 0.01}
    x_crit = {"processor": "xscale", "engines": 0, "critical": True, "rate": 0.2}
    assert seed001.one_critical_task([me, x_light], 4)
    assert not seed001.one_critical_task([me, x_light], 6)  # not on every ME
    assert not seed001.one_critical_task([me, x_crit], 4)  # critical code left on the XScale
    assert not seed001.one_critical_task([me, dict(me, engines=2)], 4)  # two ME tasks
