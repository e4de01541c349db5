"""Tests of the network-processor timing simulator (issue 3) through the Python API and the CLI.
Runs are short (few packets, few PEs); full figures are measured by the examples and experiments."""

from __future__ import annotations

import json

import pytest
from pktflow import PktflowError
from pktflow import np as api
from pktflow.cli import app
from typer.testing import CliRunner

SMALL = dict(packets=600, pes=4)


def test_maxrate_reports_a_bracket_around_the_rate():
    m = api.maxrate("router", replication="none", **SMALL)
    lo, hi = m["bracket"]["inter_arrival_cycles"]
    assert lo < hi
    assert m["inter_arrival_cycles"] == hi
    assert m["packets_per_second"] == pytest.approx(1e9 / hi, rel=1e-6)
    assert not m["report"]["invariant_violations"]
    # Locks are per shared location: a router queue groups its index and slots.
    assert m["report"]["lock_count"] >= len(m["report"]["locks"]) > 0


def test_bottleneck_ranks_every_idealization_and_says_it_in_words():
    seen = []
    b = api.bottleneck(
        "router",
        replication="none",
        chain=False,
        extra=["ZBM"],
        progress=lambda k, label: seen.append((k, label)),
        **SMALL,
    )
    labels = [r["ideal"] for r in b["runs"]]
    assert labels[0] == "none" and b["runs"][0]["speedup"] == 1.0
    for x in ("I", "Z", "S", "B", "M", "ZBM"):
        assert labels.count(x) == 1
    assert len(labels) == 11  # baseline, 5 alone, 4 with the top one, ZBM
    assert [k for k, _ in seen] == list(range(11))
    assert sorted(f["ideal"] for f in b["ranking"]) == ["B", "I", "M", "S", "Z"]
    top = b["ranking"][0]
    assert top["gain_alone"] == max(f["gain_alone"] for f in b["ranking"])
    assert b["summary"].startswith(top["resource"]) or b["summary"].startswith("no single")
    for r in b["runs"]:
        assert r["speedup"] == pytest.approx(r["packets_per_second"] / b["baseline_packets_per_second"])


def test_bad_idealization_letter_is_a_clear_error():
    with pytest.raises(PktflowError, match="unknown idealization 'Q'"):
        api.bottleneck("router", chain=False, extra=["Q"], **SMALL)


def test_cli_bottleneck_json():
    r = CliRunner().invoke(
        app,
        ["bottleneck", "router", "--pes", "4", "--replication", "none", "--packets", "600", "--no-chain", "--json"],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout[r.stdout.index("{") :])
    assert doc["spec"]["pes"] == 4
    assert len(doc["runs"]) == 10
    assert doc["summary"]


def test_cli_rejects_unknown_replication():
    r = CliRunner().invoke(app, ["bottleneck", "--replication", "sometimes"])
    assert r.exit_code != 0
