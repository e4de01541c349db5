"""The scoreboard's framework (experiments/scoreboard.py, experiments/scoreboard_seeds/common.py):
the status rule, the row checks, the seed list, the resumable run cache and the generated docs
blocks. No simulation: the seed modules' own tests hold their lists and checks."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "experiments"))

import scoreboard  # noqa: E402
from scoreboard_seeds import common  # noqa: E402

COUNTS = {"000": 44, "001": 24, "002": 19, "003": 21, "004": 74}


def test_the_status_rule_is_10_and_25_percent_on_either_side():
    assert common.status_of_ratio(1.0) == "MATCH"
    assert common.status_of_ratio(1.10) == "MATCH" and common.status_of_ratio(0.90) == "MATCH"
    assert common.status_of_ratio(1.11) == "NEAR" and common.status_of_ratio(0.76) == "NEAR"
    assert common.status_of_ratio(1.26) == "MISS" and common.status_of_ratio(0.74) == "MISS"
    assert common.status_of_ratio(float("inf")) == "MISS"


def test_rows_compute_their_ratio_and_status_and_need_a_reason_unless_they_match():
    r = common.numeric("X1", "x", 27.2, 10.4, "bound by DRAM channel 2")
    assert (r["status"], r["ratio"]) == ("MISS", pytest.approx(10.4 / 27.2, rel=1e-5))
    assert tuple(r) == common.KEYS
    assert common.numeric("X2", "x", 100, 95)["status"] == "MATCH"
    with pytest.raises(ValueError, match="X3: status MISS needs a reason"):
        common.numeric("X3", "x", 100, 50)
    # A change is compared on its factor: +5% against +57% is 1.05 / 1.57.
    c = common.change("X4", "x", 0.57, 0.05, "aborts on the lease array")
    assert c["status"] == "MISS" and c["ratio"] == pytest.approx(1.05 / 1.57, rel=1e-5)
    assert c["paper"] == "+57.0%" and c["pktflow"] == "+5.0%"
    assert common.numeric("X5", "x", 3, None, "not modelled")["status"] == "ABSENT"
    assert common.shape("X6", "x", "falls", "rises 8% -> 22%", False, "window counts any pair")["status"] == "MISS"
    assert common.out_of_scope("X7", "x", "+21% LUTs", "FPGA area")["pktflow"] is None


def test_every_seed_lists_its_papers_results_once():
    for seed, n in COUNTS.items():
        mod = scoreboard.module(seed)
        ids = [rid for rid, _ in mod.RESULTS]
        assert len(ids) == n == len(set(ids)), seed
        assert mod.SEED == seed and mod.PAPER_FILE.startswith(seed + "_") and mod.TITLE


def test_seed_selection():
    assert scoreboard.parse_seeds("all") == list(COUNTS)
    assert scoreboard.parse_seeds("0,004,4") == ["000", "004"]
    with pytest.raises(ValueError, match="--seed: '7' is not one of"):
        scoreboard.parse_seeds("7")
    with pytest.raises(ValueError, match="--seed: 'x'"):
        scoreboard.parse_seeds("0,x")


def test_rows_that_do_not_follow_the_list_are_refused():
    mod = scoreboard.module("003")
    good = [common.absent(rid, text, "-", "not measured here") for rid, text in mod.RESULTS]
    scoreboard.validate("003", mod, good)
    with pytest.raises(SystemExit, match="missing \\['H22'\\]"):
        scoreboard.validate("003", mod, good[:-1])
    bad = [dict(r) for r in good]
    bad[0]["status"] = "GOOD"
    with pytest.raises(SystemExit, match="H1 has status 'GOOD'"):
        scoreboard.validate("003", mod, bad)
    bad[0]["status"], bad[0]["reason"] = "MISS", ""
    with pytest.raises(SystemExit, match="H1 \\(MISS\\) has no reason"):
        scoreboard.validate("003", mod, bad)


def test_the_run_cache_resumes_and_fresh_measures_again(tmp_path):
    calls = []

    def run():
        calls.append(1)
        return {"pps": 1.5}

    ctx = common.Context(out=tmp_path, seed=3)
    assert not ctx.is_cached("fig 7/router")
    assert ctx.cached("fig 7/router", run) == {"pps": 1.5}
    kept = json.loads(ctx.path_of("fig 7/router").read_text())
    assert kept["seed"] == 3 and kept["value"] == {"pps": 1.5} and kept["seconds"] >= 0
    # A result measured elsewhere (a process pool) keeps the time it is given.
    ctx.cached("pooled", lambda: 1, seconds=12.5)
    assert json.loads(ctx.path_of("pooled").read_text())["seconds"] == 12.5
    # Another scoreboard run (a new context) loads it; another random seed or --fresh runs again.
    assert common.Context(out=tmp_path, seed=3).cached("fig 7/router", run) == {"pps": 1.5}
    assert len(calls) == 1
    common.Context(out=tmp_path, seed=4).cached("fig 7/router", run)
    common.Context(out=tmp_path, seed=4, fresh=True).cached("fig 7/router", run)
    assert len(calls) == 3
    assert not list(tmp_path.glob(".*.tmp"))


def test_update_docs_rewrites_only_the_marked_block(tmp_path, monkeypatch):
    doc = tmp_path / "reproductions.md"
    doc.write_text("intro\n<!-- scoreboard 003 begin -->\nold\n<!-- scoreboard 003 end -->\nafter\n")
    monkeypatch.setattr(scoreboard, "DOC", doc)
    scoreboard.update_docs({"003": "| new |\n"})
    assert doc.read_text() == "intro\n<!-- scoreboard 003 begin -->\n| new |\n<!-- scoreboard 003 end -->\nafter\n"
    with pytest.raises(SystemExit, match="no '<!-- scoreboard 004 begin -->'"):
        scoreboard.update_docs({"004": "x"})


def test_the_docs_hold_a_block_for_every_seed():
    text = (ROOT / "docs" / "reproductions.md").read_text()
    for seed in COUNTS:
        assert f"<!-- scoreboard {seed} begin -->" in text and f"<!-- scoreboard {seed} end -->" in text
