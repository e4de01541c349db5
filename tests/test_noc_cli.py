"""The ``pktflow noc`` / ``pktflow stream`` commands as a user meets them: every bad number is one
line naming the option (exit 2), saturated points are flagged with their reason, undelivered
packets are reported, conventions and the routing actually used are stated, output files are
checked before the run, and nothing crashes when no packet is delivered. Runs are tiny."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pktflow
from pktflow import noc
from pktflow.cli import main
from cli_run import run, one_error_line

TINY = ["--warmup", "100", "--measure", "600"]


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["noc", "--measure", "0"], "--measure must be"),
        (["noc", "--vcs", "-1"], "--vcs must be"),
        (["noc", "--warmup", "-5"], "--warmup must be"),
        (["noc", "--buffer", "0"], "--buffer must be"),
        (["noc", "--packet-flits", "0"], "--packet-flits must be"),
        (["noc", "--rates", "nan"], "--rates value 1 must be"),
        (["noc", "--rates", "0.1,inf"], "--rates value 2 must be"),
        (["noc", "--rates", "-0.1"], "--rates value 1 must be"),
        (["noc", "--rates", "abc"], "--rates must be"),
        (["noc", "--hotspot-fraction", "2", "--traffic", "hotspot"], "--hotspot-fraction must be"),
        (["noc", "--mesh", "1000x1000"], "too large"),
        (["noc", "--mesh", "256x512"], "too large"),
        (["noc", "--traffic", "zigzag"], "zigzag"),
        (["stream", "FMRadio", "--measure", "0"], "--measure must be"),
        (["stream", "FMRadio", "--scales", "nan"], "--scales value 1 must be"),
        (["stream", "FMRadio", "--buffer-iterations", "0"], "--buffer-iterations must be"),
        (["stream", "FMRadio", "--routing", "bogus"], "bogus"),
    ],
)
def test_bad_numbers_name_the_option(argv, needle, capsys):
    code, out, err = run(argv, capsys)
    assert code == 2, (out, err)
    assert needle in one_error_line(err)


def test_plot_path_checked_before_the_run(tmp_path, capsys):
    d = tmp_path / "adir"
    d.mkdir()
    code, out, err = run(["noc", "--mesh", "2x2", "--rates", "0.1", "--plot", str(d), *TINY], capsys)
    assert code == 2 and "--plot" in one_error_line(err)


def test_saturation_and_conventions_are_explicit(capsys):
    code, out, err = run(
        ["noc", "--mesh", "4x4", "--traffic", "transpose", "--rates", "0.05,1.0", *TINY, "--json"], capsys
    )
    assert code == 0, err
    doc = json.loads(out)
    lo, hi = doc["points"]
    assert not lo["saturated"] and hi["saturated"] and hi["saturation_reasons"]
    assert "transpose" in doc["conventions"] and "saturation" in doc["conventions"]
    # 4 of 16 nodes send nothing: the expected offered load is 12/16 of the request
    assert lo["offered_rate_expected"] == pytest.approx(0.05 * 12 / 16)
    assert doc["theory"]["pattern"] == "transpose"
    assert doc["saturation_offered"] == pytest.approx(lo["offered"])
    assert hi["packets_not_delivered"] >= 0 and isinstance(hi["latency_is_lower_bound"], bool)
    code, out, err = run(["noc", "--mesh", "4x4", "--traffic", "transpose", "--rates", "0.05", *TINY], capsys)
    assert code == 0 and "send nothing" in out and "zero-load latency (transpose" in out


def test_zero_rate_reports_no_packet_delivered(capsys):
    code, out, err = run(["noc", "--mesh", "2x2", "--rates", "0", *TINY], capsys)
    assert code == 0, err
    assert "no packet delivered" in out
    code, out, err = run(["noc", "--mesh", "2x2", "--rates", "0", *TINY, "--json"], capsys)
    p = json.loads(out)["points"][0]
    assert p["latency"] is None and p["latency_max"] is None


def test_stream_without_delivered_packets_does_not_crash(capsys):
    # one filter pair on a 2x1 mesh whose work is so large that nothing is sent in the window
    g = json.dumps(
        {
            "name": "slow",
            "graph": {
                "type": "pipeline",
                "name": "p",
                "children": [
                    {"type": "filter", "name": "a", "push": 1, "work": 1000},
                    {"type": "filter", "name": "b", "pop": 1, "work": 1},
                ],
            },
        }
    )
    code, out, err = run(["stream", g, "--mesh", "2x1", "--routing", "dor", "--scales", "100", *TINY], capsys)
    assert code == 0, err
    assert "no packet delivered" in out
    code, out, err = run(["stream", g, "--mesh", "2x1", "--routing", "dor", "--scales", "100", *TINY, "--json"], capsys)
    assert json.loads(out)["points"][0]["mean_packet_latency"] is None


def test_stream_says_which_routing_was_used(tmp_path, capsys):
    # a source with 5 consumers cannot send on disjoint paths: tentacle falls back to dor
    p = noc.program(
        "fan",
        noc.pipeline(
            "top",
            noc.filter_("src", push=5, work=1, stateful=True),
            noc.splitjoin(
                "sj",
                noc.roundrobin(1),
                noc.roundrobin(1),
                *[noc.filter_(f"w{k}", pop=1, push=1, work=1, stateful=True) for k in range(5)],
            ),
            noc.filter_("snk", pop=5, work=1, stateful=True),
        ),
    )
    f = p.save(tmp_path / "fan.json")
    code, out, err = run(["stream", str(f), "--mesh", "3x3", "--routing", "tentacle", "--no-sim", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    if doc["route"]["fallback"]:
        assert doc["routing_used"] == "dor" and doc["routing_requested"] == "tentacle"
        code, out, err = run(["stream", str(f), "--mesh", "3x3", "--routing", "tentacle", "--no-sim"], capsys)
        assert "fell back from tentacle" in out and "FELL BACK to dor" in out
    else:
        assert doc["routing_used"] == "tentacle"


def test_feedback_loop_throughput_is_not_zero():
    f = lambda name, pop, push, work: noc.filter_(name, pop=pop, push=push, work=work, stateful=True)  # noqa: E731
    g = noc.program(
        "loop",
        noc.pipeline(
            "top",
            f("src", 0, 1, 1),
            noc.feedbackloop(
                "fb", noc.roundrobin(1, 1), f("body", 2, 2, 20), f("back", 1, 1, 10), noc.roundrobin(1, 1), delay=4
            ),
            f("snk", 1, 0, 1),
        ),
    )
    r = noc.run_stream(g, mesh="4x4", routing="dor", scales=[10.0], warmup=2000, measure=30000, anneal_moves=300)
    # the body is the bottleneck: 20 work x 10 cycles per work per iteration
    assert r["points"][0]["throughput"] == pytest.approx(1000 / 200, rel=0.05)


def test_python_api_returns_dataframes():
    import pandas as pd

    res = noc.sweep(mesh="2x2", rates=[0.1], warmup=50, measure=300)
    assert isinstance(noc.sweep_frame(res), pd.DataFrame)
    r = noc.run_stream("FMRadio", routing="dor", scales=[0.0], warmup=50, measure=300, anneal_moves=100)
    assert isinstance(noc.stream_points_frame(r), pd.DataFrame)
    assert isinstance(noc.link_loads_frame(r), pd.DataFrame)


def test_stream_routing_choices_come_from_the_registry(capsys):
    # every registered stream routing function is a --routing choice with its help line
    import typer.main

    from pktflow.cli import app

    cat = noc.catalog()
    cmd = typer.main.get_command(app).commands["stream"]
    (opt,) = [p for p in cmd.params if "--routing" in p.opts]
    from pktflow.cli_noc import StreamRouting

    assert [m.value for m in StreamRouting] == cat["routings"]
    for name in cat["routings"]:
        assert f"{name}: {cat['routing_help'][name]}" in opt.help
    # yx: circuits on the YX paths when they share no link, else every stream falls back to dor
    code, out, err = run(["stream", "AudioBeam", "--mesh", "2x2", "--routing", "yx", "--no-sim", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["routing_requested"] == "yx"
    if doc["route"]["circuits"]:
        assert doc["routing_used"] == "yx" and not doc["route"]["fallback"]
        for r in doc["routes"]:
            # Y first: no vertical move after a horizontal one
            p = r["path"]
            assert p == "".join(sorted(p, key=lambda c: c in "EW"))
    else:
        assert doc["routing_used"] == "dor" and doc["route"]["fallback"]
        assert "YX paths collide" in doc["route"]["detail"]


def test_help_lists_choices_and_every_option_has_help(capsys):
    for cmd in ("noc", "stream"):
        code, out, err = run([cmd, "--help"], capsys)
        assert code == 0
        assert "seeds/" not in out and "issue" not in out.lower()
    code, out, _ = run(["noc", "--help"], capsys)
    for word in ("uniform", "transpose", "bit_complement", "hotspot", "adaptive", "saturated"):
        assert word in out
    import typer.main

    from pktflow.cli import app

    cmd = typer.main.get_command(app)
    for name in ("noc", "stream"):
        for prm in cmd.commands[name].params:
            if prm.param_type_name == "option":
                assert prm.help, f"{name} {prm.opts} has no help"


NUM_OPTS = ["--measure", "--warmup", "--vcs", "--buffer", "--packet-flits", "--seed", "--drain", "--ni-flits"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    opt=st.sampled_from(NUM_OPTS),
    val=st.one_of(
        st.integers(min_value=-(10**20), max_value=10**20),
        st.sampled_from(["nan", "inf", "-1", "0", "1e12", "1.5", "x"]),
    ),
)
def test_hypothesis_noc_numeric_options(opt, val, capsys):
    v = str(val)
    # keep valid runs tiny: a large value goes to an option that does not lengthen the run
    if opt in ("--measure", "--warmup", "--drain") and v.lstrip("-").isdigit() and 0 <= int(v) and int(v) > 600:
        v = str(-int(v) - 1)
    argv = ["noc", "--mesh", "2x2", "--rates", "0.1", "--warmup", "50", "--measure", "200", "--drain", "50"]
    argv += [opt, v]
    code, out, err = run(argv, capsys)
    assert code in (0, 2), (argv, err)
    if code == 2:
        one_error_line(err)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rates=st.lists(
        st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, 0.5, 1.0])),
        min_size=1,
        max_size=3,
    )
)
def test_hypothesis_rates_and_scales(rates, capsys):
    text = ",".join(repr(r) for r in rates)
    code, out, err = run(["noc", "--mesh", "2x2", "--rates", text, "--warmup", "20", "--measure", "100"], capsys)
    assert code in (0, 2), err
    if code == 2:
        one_error_line(err)
    code, out, err = run(
        ["stream", "AudioBeam", "--mesh", "2x2", "--routing", "dor", "--scales", text, "--warmup", "20",
         "--measure", "100", "--anneal-moves", "50"],
        capsys,
    )
    assert code in (0, 2), err
    if code == 2:
        one_error_line(err)


def test_python_api_validates_in_the_core():
    from pktflow._core import PktflowError

    with pytest.raises(PktflowError, match=r"^measure must be an integer from 1"):
        noc.sweep(mesh="2x2", rates=[0.1], measure=0)
    with pytest.raises(PktflowError, match=r"^rates\[0\] must be a finite number"):
        noc.sweep(mesh="2x2", rates=[float("nan")])
    with pytest.raises(PktflowError, match=r"^scales\[0\] must be"):
        noc.run_stream("FMRadio", scales=[float("inf")])


def test_progress_lines_with_eta_off_a_terminal(monkeypatch, capsys):
    monkeypatch.setenv("PKTFLOW_PROGRESS_SECONDS", "0")
    code, out, err = run(["noc", "--mesh", "2x2", "--rates", "0.1,0.2", *TINY], capsys)
    assert code == 0, err
    lines = [ln for ln in err.splitlines() if ln.startswith("noc:")]
    assert lines and all("cycles" in ln and "ETA" in ln for ln in lines), err


def test_interrupted_sweep_prints_finished_points_and_exits_130(monkeypatch, capsys):
    real = noc.sweep

    def stopped(**kw):
        # what the API does on Ctrl-C: raise pktflow.Interrupted holding the finished points
        res = real(**{**kw, "rates": kw["rates"][:1]})
        res["interrupted"] = True
        raise pktflow.Interrupted(res)

    monkeypatch.setattr(noc, "sweep", stopped)
    code, out, err = run(["noc", "--mesh", "2x2", "--rates", "0.1,0.2", *TINY], capsys)
    assert code == 130
    assert "0.1000" in out and "interrupted after 1" in out
    assert err.strip().splitlines()[-1] == "interrupted"
