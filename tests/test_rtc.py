"""Run to completion on multithreaded cores and NetTM (the NetThreads thesis) through the
Python API and the ``pktflow rtc`` / ``pktflow conflicts`` commands. Small pools and short
windows keep the suite fast."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pktflow import PktflowError, rtc
from pktflow.cli import main
from cli_run import run_main

SHORT = dict(window_seconds=0.002, packets=200)


def test_echo_rate_search_reports_rate_bracket_breakdown_and_settings():
    r = rtc.run("echo", **SHORT)
    lo, hi = r["bracket"]
    assert r["saturated"] and lo == r["packets_per_second"] and lo < hi <= lo * 1.011
    assert r["gbps"] == pytest.approx(r["packets_per_second"] * r["mean_packet_bytes"] * 8 / 1e9)
    assert sum(r["breakdown"].values()) == pytest.approx(1.0)
    assert r["report"]["dropped"] == 0
    assert any(p["passed"] for p in r["probes"]) and any(not p["passed"] for p in r["probes"])
    e = r["settings"]["engine"]
    assert (e["cores"], e["threads_per_core"], e["clock_mhz"], e["mutexes"]) == (2, 4, 125.0, 16)
    assert r["settings"]["window_cycles"] == 250_000
    b = r["bottleneck"]
    assert b["resource"]["kind"] and 0 <= b["share"] <= 1 and b["evidence"]
    assert b["sentence"].endswith(b["advice"])
    # One core: lower rate.
    one = rtc.run("echo", cores=1, **SHORT)
    assert one["packets_per_second"] < lo


def test_lock_aware_scheduling_and_tm_on_nat():
    base = rtc.run("nat", criterion="saturation", **SHORT)
    la = rtc.run("nat", criterion="saturation", scheduler="lock-aware", **SHORT)
    tm = rtc.run("nat", criterion="saturation", scheduler="lock-aware", sync="tm", cm="cm1", **SHORT)
    for r in (base, la, tm):
        assert r["report"]["completed"] > 0
    assert tm["report"]["commits"] > 0 and tm["commits_per_second"] > 0
    assert 0 <= tm["commit_without_abort"] <= 1
    perfect = rtc.run("nat", criterion="saturation", sync="tm", signature="perfect", **SHORT)
    assert perfect["report"]["false_conflicts"] == 0
    pipe = rtc.run("nat", criterion="saturation", mode="pipeline", **SHORT)
    assert pipe["report"]["completed"] > 0


def test_cli_table_json_and_conflicts(tmp_path):
    p = run_cli("rtc", "echo", "--window-seconds", "0.002", "--packets", "100")
    assert "maximum rate" in p.stdout and "bottleneck" in p.stdout
    doc = json.loads(
        run_cli(
            "rtc",
            "parametric",
            "--criterion",
            "saturation",
            "--sync",
            "tm",
            "--window-seconds",
            "0.001",
            "--packets",
            "100",
            "--json",
        ).stdout
    )
    assert doc["settings"]["engine"]["sync"] == "tm" and doc["report"]["commits"] > 0
    assert doc["run"]["argv"][:2] == ["rtc", "parametric"]
    c = json.loads(run_cli("conflicts", "nat", "--packets", "300", "--json").stdout)
    ws = [p["window"] for p in c["windows"]]
    assert ws == list(range(2, 17))
    assert all(0 <= p["fraction"] <= 1 for p in c["windows"])
    e = json.loads(run_cli("conflicts", "echo", "--packets", "40", "--window", "4", "--json").stdout)
    assert e["windows"][0]["conflicting"] == 0
    t = run_cli("conflicts", "parametric", "--packets", "200", "--window", "2:4")
    assert "conflicting" in t.stdout


def test_only_listed_locks_become_transactions():
    # nat's lock 0 as a transaction, the others stay locks (its sections never nest, so no lock
    # is ever taken inside a transaction).
    part = rtc.run("nat", sync="tm", tx_locks=[0], criterion="saturation", **SHORT)
    full = rtc.run("nat", sync="tm", criterion="saturation", **SHORT)
    assert 0 < part["report"]["transactions"] < full["report"]["transactions"]
    assert part["report"]["lock_failures"] > full["report"]["lock_failures"]
    assert part["settings"]["engine"]["tx_locks"] == [0]


def test_bad_input_is_one_line_exit_2(capsys):
    for argv in (
        ["rtc", "echo", "--tx-locks", "a,b"],
        ["rtc", "echo", "--cores", "0"],
        ["rtc", "echo", "--window-seconds", "nan"],
        ["rtc", "echo", "--window-seconds", "1000"],
        ["rtc", "echo", "--arch", "npire"],
        ["rtc", "echo", "--signature", "bloom"],
        ["rtc", "nosuchapp"],
        ["conflicts", "nat", "--window", "1:4"],
        ["conflicts", "nat", "--window", "x"],
    ):
        code, out, err = run_main(capsys, *argv)
        assert code == 2, (argv, err)
        assert "Traceback" not in err
        assert len([ln for ln in err.splitlines() if ln.strip()]) >= 1
    with pytest.raises(PktflowError, match="--packets"):
        rtc.run("echo", packets=0)
    with pytest.raises(PktflowError, match="--window-seconds"):
        rtc.run("echo", window_seconds=float("inf"))


NUMS = st.sampled_from(["0", "-1", "nan", "inf", "1e300", "4294967296", "0.5", "3000", "2"])


@settings(max_examples=14, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    opt=st.sampled_from(
        [
            "--cores",
            "--threads",
            "--signature-bits",
            "--window-seconds",
            "--packets",
            "--runs",
            "--tolerance",
            "--mutexes",
            "--range",
            "--iter-tm",
        ]
    ),
    val=NUMS,
)
def test_rtc_numeric_options_exit_0_or_2(capsys, opt, val):
    argv = [
        "rtc",
        "parametric",
        "--packets",
        "50",
        "--criterion",
        "saturation",
        "--window-seconds",
        "0.0005",
        "--sync",
        "tm",
        "--json",
    ]
    if opt in argv:
        argv[argv.index(opt) + 1] = val
    else:
        argv += [opt, val]
    code, out, err = run_main(capsys, *argv)
    assert code in (0, 2), err
    assert "Traceback" not in err
    if code == 2:
        # Our errors are one line; click's usage errors add the usage and a hint.
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 or lines[-1].startswith("Error: Invalid value"), err


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(val=st.sampled_from(["0", "-3", "2:1", "2:99999", "1e3", "", "3:5", "16"]))
def test_conflicts_window_exit_0_or_2(capsys, val):
    code, out, err = run_main(capsys, "conflicts", "parametric", "--packets", "60", "--window", val, "--json")
    assert code in (0, 2), err
    assert "Traceback" not in err


def test_rtc_result_reruns_identically(tmp_path):
    out = tmp_path / "rtc.json"
    p = run_cli(
        "rtc",
        "router",
        "--window-seconds",
        "0.001",
        "--packets",
        "100",
        "--scheduler",
        "lock-aware",
        "--sync",
        "tm",
        "--signature",
        "h3",
        "--json",
    )
    out.write_text(p.stdout)
    same = run_cli("rerun", str(out))
    assert "identical" in same.stdout


def test_conflicts_leave_lock_words_out_unless_asked_and_tm_ignores_them():
    # nat-nt takes its flow table's global lock in every packet: with the lock word every pair
    # of packets conflicts; without it (the default, Figure 8.1's data conflicts) far fewer do.
    data = json.loads(run_cli("conflicts", "nat-nt", "--packets", "200", "--window", "2", "--json").stdout)
    locks = json.loads(
        run_cli("conflicts", "nat-nt", "--packets", "200", "--window", "2", "--include-lock-words", "--json").stdout
    )
    assert locks["windows"][0]["fraction"] == 1.0
    assert data["windows"][0]["fraction"] < 0.9
    assert data["settings"]["include_lock_words"] is False and locks["settings"]["include_lock_words"] is True
    # Under TM no abort is attributed to the table's lock word (nat-nt state 0).
    t = rtc.run("nat-nt", sync="tm", signature="perfect", **SHORT)
    assert t["report"]["commits"] > 0
    assert not any(" state 0 " in k for k in t["report"]["aborts_by_structure"])


def test_signature_study_false_conflicts_fall_with_size():
    r = rtc.signature_study("nat-nt", packets=120, bits=[16, 4096], hashes=["bitsel", "h3", "trie"])
    assert r["transactions"] == 120 and r["settings"]["contexts"] == 8
    rate = {(p["hash"], p["bits"]): p["false_conflict_rate"] for p in r["points"]}
    for h in ("bitsel", "h3", "trie"):
        assert rate[(h, 16)] >= rate[(h, 4096)]
    assert rate[("h3", 16)] > 0
    with pytest.raises(PktflowError, match="bits"):
        rtc.signature_study("nat-nt", packets=20, bits=[1])
