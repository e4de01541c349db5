"""The scoreboard modules of the tentacle-routing (002) and protocol-processing (003) papers:
their result lists and the pure helpers their checks use (no simulation; a second or so)."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "experiments"))

from scoreboard_seeds import seed002, seed003  # noqa: E402


def test_seed002_results_list():
    ids = [rid for rid, _ in seed002.RESULTS]
    want = [f"G{i}" for i in range(1, 15)] + ["G15a", "G15b", "G16", "G17", "G18"]
    assert ids == want
    assert len(ids) == 19
    assert seed002.SEED == "002" and seed002.PAPER_FILE.startswith("002_")
    assert all(text for _, text in seed002.RESULTS)


def test_seed003_results_list():
    ids = [rid for rid, _ in seed003.RESULTS]
    want = [f"H{i}" for i in range(1, 23) if i != 14]  # the list has no H14
    assert ids == want
    assert len(ids) == 21
    assert seed003.SEED == "003" and seed003.PAPER_FILE.startswith("003_")


def test_seed002_normalized_and_gmean():
    runs = [
        {"bench": "A", "configs": {"push+adaptive": {"sat": 2.0}, "tentacle": {"sat": 4.0}}},
        {"bench": "B", "configs": {"push+adaptive": {"sat": 1.0}, "tentacle": {"sat": 1.0}}},
    ]
    n = seed002.normalized(runs)
    assert n["tentacle"] == {"A": 2.0, "B": 1.0}
    assert n["push+adaptive"] == {"A": 1.0, "B": 1.0}
    assert seed002.gmean(n["tentacle"].values()) == pytest.approx(math.sqrt(2))
    assert math.isnan(seed002.gmean([]))


def test_seed002_classification_and_ranges():
    same, diff = seed002.classification_agreement({"A", "C"}, {"A", "B"}, ["A", "B", "C", "D"])
    assert (same, diff) == (2, ["B", "C"])
    assert seed002.ranges_overlap((75, 115), (100, 2009))
    assert not seed002.ranges_overlap((75, 115), (605, 2009))


def test_seed003_worst_component():
    pairs = {"a": (100.0, 101.0), "b": (10.0, 12.0), "c": (50.0, 49.0)}
    assert seed003.worst_component(pairs) == ("b", 10.0, 12.0)
    # relative changes are compared on their factors: +10% vs +0% is further than +60% vs +50%
    inc = {"x": (0.5, 0.6), "y": (0.0, 0.1)}
    assert seed003.worst_component(inc, factor=True)[0] == "y"


def test_seed003_speedups_and_fixed_wins():
    runs = [
        {"policy": "single", "cpus": 1, "threads": 1, "time_us": 100.0},
        {"policy": "fixed", "cpus": 2, "threads": 1, "time_us": 80.0},
        {"policy": "floating", "cpus": 2, "threads": 1, "time_us": 60.0},
        {"policy": "fixed", "cpus": 4, "threads": 1, "time_us": 40.0},
        {"policy": "floating", "cpus": 4, "threads": 1, "time_us": 50.0},
    ]
    sp = seed003.speedups(runs)
    assert sp[("fixed", 2, 1)] == pytest.approx(1.25)
    assert seed003.fixed_wins({"app": sp}) == [("app", 4, 1)]


def test_seed003_share():
    row = {
        "time_us": 100.0,
        "processors": [
            {"role": "protocol", "idle_us": 10.0, "protocol_us": 90.0},
            {"role": "compute", "idle_us": 30.0, "protocol_us": 0.0},
            {"role": "compute", "idle_us": 50.0, "protocol_us": 0.0},
        ],
    }
    assert seed003.share(row, "idle_us", role="compute") == pytest.approx(0.4)
    assert seed003.share(row, "protocol_us", role="protocol") == pytest.approx(0.9)
