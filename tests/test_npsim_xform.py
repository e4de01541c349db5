"""The NPIRE task transformations from the command line and the Python API: --transform on
simulate, maxrate, bottleneck and explore, the settings and report in JSON, bad names refused
with one line. Runs are tiny (a few hundred packets)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pktflow import PktflowError
from pktflow import npsim as api
from pktflow.cli import main
from cli_run import run_main

TINY = ["--packets", "300", "--pes", "4"]


def test_simulate_json_records_the_transforms_and_reports_them(capsys):
    code, out, err = run_main(
        capsys, "simulate", "nat", *TINY, "--inter-arrival", "3000", "--transform", "early,speculate,locality", "--json"
    )
    assert code == 0, err
    doc = json.loads(out)
    t = doc["settings"]["sim"]["transform"]
    assert (t["split"], t["early"], t["speculate"], t["locality"]) == (False, True, True, True)
    assert t["wide_bytes"] == 64 and t["split_iterations"] == 5
    rep = doc["transform"]
    assert rep["applied"] == "early,speculate,locality"
    loc = rep["locality"]
    assert 0 < loc["wide_requests"] < loc["word_requests"]
    s = rep["speculate"]
    assert s["rollback_cycles"] == 40
    assert s["attempts"] == s["commits"] + s["aborts"] and s["commits"] > 0
    assert rep["early"]["visits"] > 0
    assert doc["invariant_violations"] == []


def test_without_transform_the_report_has_no_transform_record(capsys):
    code, out, err = run_main(capsys, "simulate", "router", *TINY, "--inter-arrival", "3000", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert "transform" not in doc
    assert doc["settings"]["sim"]["transform"]["speculate"] is False


def test_maxrate_text_prints_one_line_per_transformation(capsys):
    code, out, err = run_main(capsys, "maxrate", "router", *TINY, "--transform", "speculate,locality")
    assert code == 0, err
    assert "speculation:" in out and "failure rate" in out
    assert "locality:" in out and "wide requests" in out


def test_split_runs_the_feedback_loop_and_logs_it():
    # Without replication packets queue before the busiest tasks: there is something to split.
    m = api.maxrate("router", pes=4, packets=300, replication="none", transform="split")
    log = m["mapping"]["split"]
    assert log["packets_per_second_unsplit"] > 0
    assert 1 <= len(log["iterations"]) <= 5
    first = log["iterations"][0]
    assert len(first["split"]) == 3 and first["mean_queue_cycles"] == sorted(first["mean_queue_cycles"], reverse=True)
    assert log["iterations"][0]["kept"] and m["report"]["transform"]["split"]["cuts"] > 0
    # The kept plan's rate is the best seen.
    kept = [it["packets_per_second"] for it in log["iterations"] if it["kept"]]
    assert m["packets_per_second"] == pytest.approx(max([log["packets_per_second_unsplit"], *kept]))


@pytest.mark.parametrize("replication", ["global", "none,global"])
def test_explore_measures_the_baseline_without_transformations(capsys, replication):
    """With the baseline's own point in the sweep (4 PEs, no replication), the transformed point
    used to become the baseline: Figure 10(b)'s "locality, no replication" read 1.06x."""
    code, out, err = run_main(
        capsys,
        "explore",
        "router",
        "--pes",
        "4",
        "--replication",
        replication,
        "--packets",
        "300",
        "--no-bottleneck",
        "--transform",
        "locality",
        "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    plain = api.maxrate("router", pes=4, replication="none", packets=300, mapper="greedy+replicate")
    assert doc["baseline_packets_per_second"] == pytest.approx(plain["packets_per_second"])
    pt = doc["points"][0]
    assert pt["transform"]["locality"]["saved_fraction"] > 0


@pytest.mark.parametrize("bad", ["spilt", "split,split", "locality,,bogus"])
def test_bad_names_exit_2_with_one_line(capsys, bad):
    code, out, err = run_main(capsys, "maxrate", "router", *TINY, "--transform", bad)
    assert code == 2
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and "--transform" in lines[0] and "Traceback" not in err


def test_api_accepts_names_enums_and_refuses_unknown():
    assert api.parse_transforms([api.Transform.split, "early"]) == "split,early"
    assert api.parse_transforms("none") == "none"
    assert api.parse_transforms(None) is None
    with pytest.raises(PktflowError):
        api.parse_transforms("speculation")


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.one_of(
        st.text(max_size=30),
        st.lists(st.sampled_from(["split", "early", "speculate", "locality", "none", "", "x"]), max_size=5).map(
            ",".join
        ),
    )
)
def test_transform_text_never_gives_a_traceback(capsys, text):
    if text.startswith("-"):
        text = "x" + text
    code, out, err = run_main(
        capsys, "simulate", "router", "--packets", "50", "--pes", "4", "--inter-arrival", "5000", "--transform", text
    )
    assert code in (0, 2), err
    assert "Traceback" not in err
    if code == 2:
        assert len([ln for ln in err.splitlines() if ln.strip()]) == 1, err
