"""Tests of the network-processor timing simulator (issue 3) through the Python API and the CLI.
Runs are short (few packets, few PEs); full figures are measured by the examples and experiments."""

from __future__ import annotations

import json

import pytest
from pktflow import PktflowError
from pktflow import npsim as api
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
    assert b["summary"].startswith(top["resource"]) or " together (" in b["summary"] or b["summary"].startswith(
        "idealizing I, Z, S, B and M"
    )
    assert "none of" not in b["summary"]
    # The baseline run's binding resource, in words, from its statistics.
    d = b["diagnosis"]
    assert d["limits"] and d["sentence"].startswith(d["limits"][0]["sentence"])
    assert d["limits"][0]["resource"]["kind"] in ("lock", "task", "pe", "bus", "memory")
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


# ---- mapping (seed 000 section 3.1) and exploration (Figure 7) -------------------------------


def test_greedy_mapper_is_no_worse_than_round_robin_on_measured_loads():
    m = api.maxrate("router", replication="global", mapper="greedy", packets=600, pes=8)
    log = m["mapping"]["mapper"]
    assert log["mapper"] == "greedy"
    assert len(log["weights"]) == len(m["mapping"]["tasks"]) and max(log["weights"]) > 0
    assert log["max_pe_load"] <= log["round_robin_max_pe_load"] + 1e-9
    for t in m["mapping"]["tasks"]:
        assert t["pes"] and max(t["pes"]) < 8


def test_unknown_mapper_is_a_clear_error():
    with pytest.raises(PktflowError, match="mapper must be one of .*got 'best'"):
        api.maxrate("router", mapper="best", **SMALL)
    r = CliRunner().invoke(app, ["maxrate", "--mapper", "simulated"])
    assert r.exit_code != 0


def test_anneal_mapper_is_checked_by_the_full_simulator():
    m = api.maxrate("router", replication="global", mapper="anneal", packets=600, pes=8)
    a = m["mapping"]["mapper"]["anneal"]
    assert a["coarse_cycles_annealed"] <= a["coarse_cycles_base"] + 1e-9
    best = max(a["packets_per_second_base"], a["packets_per_second_annealed"] or 0.0)
    # The mapper keeps whichever mapping the full simulator rates higher.
    assert m["packets_per_second"] == pytest.approx(best)
    assert a["kept"] == (
        a["packets_per_second_annealed"] is not None and m["packets_per_second"] > a["packets_per_second_base"]
    )


def test_parse_pes_ranges_and_errors():
    assert api.parse_pes("4:32") == [4, 8, 12, 16, 20, 24, 28, 32]
    assert api.parse_pes("4:10:3") == [4, 7, 10]
    assert api.parse_pes("4,16") == [4, 16]
    for bad in ("32:4", "a:b", "0:4", "4:8:0", ""):
        with pytest.raises(PktflowError):
            api.parse_pes(bad)


def test_explore_tiny_sweep():
    seen = []
    doc = api.explore(
        "router",
        pes="4:8",
        replication=["none", "global"],
        packets=600,
        progress=lambda d, t, label: seen.append((d, t, label)),
    )
    pts = {(p["pes"], p["replication"]): p for p in doc["points"]}
    assert sorted(pts) == [(4, "global"), (4, "none"), (8, "global"), (8, "none")]
    assert pts[(4, "none")]["speedup"] == pytest.approx(1.0)
    for p in doc["points"]:
        assert p["speedup"] == pytest.approx(p["packets_per_second"] / doc["baseline_packets_per_second"])
        assert {"S", "B", "M"} <= set(p["bottleneck"]["gains"]) <= {"S", "B", "M", "SB", "SBM"}
        assert p["bottleneck"]["summary"] and "none of" not in p["bottleneck"]["summary"]
        top = p["limit"]["limits"][0]
        assert 0 <= top["share"] <= 1 and p["limit"]["sentence"].startswith(top["what"])
        assert all(max(pes) < p["pes"] for _, pes, _ in p["mapping"])
    assert pts[(8, "none")]["replicated"] == []
    assert all(c == 1 for _, _, c in pts[(8, "none")]["mapping"])
    assert seen[0][0] == 0 and seen[-1][0] == seen[-1][1] == 5  # step 1 + 4 points
    assert len(doc["weights"]) > 0 and max(w for _, w in doc["weights"]) > 0


def test_cli_explore_writes_json_csv_and_png(tmp_path):
    pd = pytest.importorskip("pandas")
    csv_path, png = tmp_path / "x.csv", tmp_path / "x.png"
    r = CliRunner().invoke(
        app,
        [
            "explore",
            "router",
            "--pes",
            "4,8",
            "--replication",
            "none,pe",
            "--packets",
            "600",
            "--no-bottleneck",
            "--mapper",
            "greedy",
            "--json",
            "--csv",
            str(csv_path),
            "--plot",
            str(png),
        ],
    )
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout[r.stdout.index("{") :])
    assert len(doc["points"]) == 4 and doc["mapper"] == "greedy"
    df = pd.read_csv(csv_path)
    assert len(df) == 4 and set(df["replication"]) == {"none", "pe"}
    assert (df["packets_per_second"] > 0).all()
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    bad = CliRunner().invoke(app, ["explore", "--pes", "32:4"])
    assert bad.exit_code != 0


def test_model_options_reach_the_simulator_and_bad_values_are_clear_errors():
    base = api.simulate("router", inter_arrival_cycles=2000, replication="global", **SMALL)
    # Per-port destinations balance the router's two output queues (Zipf sends most to eth0).
    bal = api.simulate("router", inter_arrival_cycles=2000, replication="global", destinations="per-port", **SMALL)

    def queue_visits(r):
        return {t["element"]: t["instances"] for t in r["tasks"] if t["element"] in ("out0", "out1")}

    b, z = queue_visits(bal), queue_visits(base)
    assert abs(b["out0"] - b["out1"]) < abs(z["out0"] - z["out1"])
    # Wide accesses: fewer requests than one per word.
    wide = api.simulate(
        "router", inter_arrival_cycles=2000, replication="global", sim=api.model_options(wide_accesses=True), **SMALL
    )

    def requests(r):
        return sum(s["requests"] for s in r["storage"])

    assert requests(wide) < requests(base)
    with pytest.raises(PktflowError, match="scheduling must be one of"):
        api.model_options(scheduling="lifo")
    import subprocess
    import sys

    for opt, val, msg in (
        ("--lock-release", "never", "'never' is not one of 'after-completion', 'after-issue'"),
        ("--destinations", "nowhere", "'nowhere' is not one of 'zipf'"),
    ):
        r = subprocess.run(
            [sys.executable, "-m", "pktflow", "maxrate", opt, val, "--packets", "300", "--pes", "4"],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 2 and msg in r.stderr, r.stderr
        assert "Traceback" not in r.stderr


def test_recorded_arrivals_replay_a_pcap_at_its_timestamps(tmp_path):
    import subprocess
    import sys

    pcap = tmp_path / "t.pcap"
    subprocess.run(
        [sys.executable, "-m", "pktflow", "gen-trace", str(pcap), "-n", "600", "--app", "router"],
        check=True,
        capture_output=True,
    )
    # The generator's default rate is 1 Mpackets/s: recorded arrivals offer at least that (the
    # simulated neighbours' ARP replies, one per new host of the directly connected /8, arrive
    # with the packet that asked and add to it).
    r = api.simulate(
        "router",
        inter_arrival_cycles=1.0,
        trace=str(pcap),
        pes=4,
        packets=600,
        sim={"arrivals": "recorded"},
    )
    assert 0.95e6 < r["offered_packets_per_second"] < 2.5e6
    fast = api.simulate(
        "router",
        inter_arrival_cycles=1.0,
        trace=str(pcap),
        pes=4,
        packets=600,
        sim={"arrivals": "recorded", "time_scale": 0.5},
    )
    assert fast["offered_packets_per_second"] == pytest.approx(2 * r["offered_packets_per_second"], rel=0.05)
    with pytest.raises(PktflowError, match="recorded"):
        api.maxrate("router", trace=str(pcap), pes=4, packets=600, sim={"arrivals": "recorded"})
