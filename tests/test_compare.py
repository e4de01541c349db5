"""``pktflow compare``: every execution model an architecture supports, side by side, through
the Python API and the command line; and the TDPM plan as an NP simulator mapper. Small pools,
short windows and coarse searches keep the suite fast."""

from __future__ import annotations

import json

import pytest
from cli_run import one_error_line, run_main
from conftest import run_cli
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pktflow import PktflowError, compare, npsim

ECHO = dict(packets=50, window_seconds=0.001, precision=0.05)


def test_netthreads_compares_pipeline_locks_and_transactions():
    c = compare.run("echo", cm="cm4", **ECHO)
    assert c["arch"] == "netthreads" and c["supported"] == ["pipeline", "rtc-locks", "rtc-tm"]
    assert [r["model"] for r in c["rows"]] == ["pipeline", "rtc-locks", "rtc-tm"]
    by = {r["model"]: r for r in c["rows"]}
    for r in c["rows"]:
        assert r["engine"] == "rtc" and r["error"] is None
        lo, hi = r["bracket_pps"]
        assert lo == r["packets_per_second"] <= hi
        assert r["binding"]["what"] and 0 <= r["binding"]["share"] <= 1
        assert r["request"]["workload"]["app"] == "echo"
    # echo has no shared state: locks and transactions run the same program.
    lk, tm = by["rtc-locks"]["packets_per_second"], by["rtc-tm"]["packets_per_second"]
    assert abs(lk - tm) / lk < 0.1
    assert by["rtc-tm"]["detail"]["contention_manager"] == "cm4"
    best = max(c["rows"], key=lambda r: r["packets_per_second"])
    assert c["best"] == best["model"]
    assert_margin_rule(c)
    assert c["settings"]["request"]["window_seconds"] == 0.001 and not c["interrupted"]


def assert_margin_rule(c: dict) -> None:
    """A recommendation names a winner only when its margin exceeds the searches' spread: the
    winner's bracket lies wholly above every other rated row's (``compare --arch npire`` once
    declared winners at 1.00x-1.01x)."""
    rated = [r for r in c["rows"] if r["packets_per_second"]]
    best = max(rated, key=lambda r: r["packets_per_second"])
    others = [r for r in rated if r is not best]
    clear = all(best["bracket_pps"][0] > r["bracket_pps"][1] for r in others)
    if clear:
        assert c["recommendation"].startswith(best["label"]) and "x" in c["recommendation"], c["recommendation"]
    else:
        assert c["recommendation"].startswith("no clear winner: " + best["label"]), c["recommendation"]


def test_a_network_processor_compares_pipeline_rtc_and_the_tdpm_plan():
    c = compare.run("mpls", arch="ixp2400", packets=200, precision=0.1)
    assert [r["model"] for r in c["rows"]] == ["pipeline", "rtc-locks", "hybrid"]
    for r in c["rows"]:
        assert r["engine"] == "npsim"
        assert r["packets_per_second"] > 0, r
    pipe = c["rows"][0]
    assert pipe["detail"]["replication"] in ("none", "pe", "subset", "global")
    assert pipe["packets_per_second"] == max(s["packets_per_second"] for s in pipe["detail"]["scopes"])
    hy = c["rows"][2]
    assert hy["detail"]["mapper"] == "tdpm-refine" and hy["request"]["spec"]["mapping"]
    assert_margin_rule(c)


def test_the_router_cannot_be_planned_by_tdpm_and_keeps_an_error_row():
    c = compare.run("router", arch="ixp2400", packets=100, precision=0.2, models=["hybrid"])
    (r,) = c["rows"]
    assert r["packets_per_second"] is None and "cycle" in r["error"]
    assert c["best"] is None


def test_cli_table_json_plot_and_rerun(tmp_path, capsys):
    png = tmp_path / "cmp.png"
    args = ["compare", "echo", "--packets", "50", "--window-seconds", "0.001", "--precision", "0.05", "--cm", "cm1"]
    code, out, err = run_main(capsys, *args, "--plot", str(png))
    assert code == 0, err
    assert "recommendation:" in out and "run-to-completion with locks" in out
    assert png.stat().st_size > 1000
    out = run_cli(*args, "--json").stdout
    doc = json.loads(out)
    assert doc["run"]["argv"][:2] == ["compare", "echo"]
    f = tmp_path / "c.json"
    f.write_text(out)
    code, out, err = run_main(capsys, "rerun", str(f))
    assert code == 0, err


@pytest.mark.parametrize(
    "args, want",
    [
        (["compare", "router", "--arch", "mesh"], "stream"),
        (["compare", "mpls", "--arch", "npire", "--model", "rtc-tm"], "does not support rtc-tm"),
        (["compare", "echo", "--pes", "4"], "--pes"),
        (["compare", "mpls", "--arch", "npire", "--cores", "2"], "--cores"),
        (["compare", "echo", "--window-seconds", "0"], "--window-seconds"),
        (["compare", "echo", "--model", "warp"], "--model"),
        (["compare", "echo", "--plot", "/proc/nope/x.png"], "--plot"),
    ],
)
def test_bad_input_gets_one_line_and_exit_2(args, want, capsys):
    code, _, err = run_main(capsys, *args)
    assert code == 2
    assert want in one_error_line(err)


def test_api_refuses_bad_values_naming_the_option():
    for kw, want in (
        (dict(window_seconds=float("nan")), "--window-seconds"),
        (dict(precision=-1), "--precision"),
        (dict(packets=1.5), "--packets"),
        (dict(models=["warp"]), "--models"),
        (dict(cm="cm3"), "--cm"),
    ):
        with pytest.raises(PktflowError, match=want):
            compare.run("echo", **kw)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    window=st.sampled_from(["-1", "0", "nan", "inf", "1e-5", "0.0005", "100", "x"]),
    precision=st.sampled_from(["0", "0.6", "nan", "0.3", "-0.1"]),
    packets=st.sampled_from(["0", "-1", "20", "2000000"]),
)
def test_numeric_options_run_or_fail_with_one_line(window, precision, packets, capsys):
    code, _, err = run_main(
        capsys,
        "compare", "echo", "--model", "rtc-locks", "--window-seconds", window,
        "--precision", precision, "--packets", packets,
    )
    assert code in (0, 2), err
    if code == 2:
        one_error_line(err)


def test_the_tdpm_plan_is_a_mapper_of_the_np_simulator(capsys):
    m = npsim.maxrate("mpls", arch="ixp2400", mapper="tdpm", packets=300)
    assert m["packets_per_second"] > 0
    code, out, err = run_main(
        capsys, "explore", "mpls", "--arch", "ixp2400", "--mapper", "tdpm", "--pes", "8",
        "--replication", "none", "--packets", "200", "--json",
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["mapper"] == "tdpm" and doc["points"][0]["packets_per_second"] > 0
    code, _, err = run_main(capsys, "maxrate", "router", "--arch", "ixp2400", "--mapper", "tdpm", "--packets", "100")
    assert code == 2 and "cycle" in one_error_line(err)


def test_small_rates_keep_three_significant_digits():
    """`compare udhcp` printed 0.0 kpps for every model (the JSON had 141 and 144 packets/s)."""
    from pktflow.cli_compare import _kpps

    assert _kpps(141) == "0.141" and _kpps(144) == "0.144"
    assert _kpps(12_345) == "12.3" and _kpps(626_300) == "626.3" and _kpps(1_234_567) == "1,234.6"
