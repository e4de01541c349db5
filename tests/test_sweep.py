"""``pktflow sweep`` / ``compare-runs``: experiment files, the local pool and a Dask cluster
through the same code path, resume after a kill, seeds summarized with a 95% CI."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest
from cli_run import spawned
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pktflow import PktflowError
from pktflow.sweep import experiment as ex
from pktflow.sweep.results import compare, load_run, t975

ROOT = Path(__file__).resolve().parents[1]

SMALL = """
title = "policies"
command = "protoproc sim"
[options]
app = "synthetic"
nodes = 2
[vary]
policy = ["fixed", "floating"]
c = [50, 200]
[seeds]
values = [1, 2, 3]
[metrics]
keep = { time_us = "execution_time_us", miss_us = "mean_miss_latency_us" }
[plot]
x = "c"
series = "policy"
"""


def _main(args: list[str]) -> int:
    from pktflow.cli import main

    try:
        main(args)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 0
    return 0


@pytest.fixture
def small(tmp_path):
    p = tmp_path / "small.toml"
    p.write_text(SMALL)
    return p


# ------------------------------------------------------------------------------------ files


def test_ranges_zip_and_cross_give_the_points_and_keys():
    e = ex.parse(
        {
            "command": "noc",
            "args": [],
            "options": {"mesh": "4x4", "json-ish": True, "off": False},
            "vary": {
                "rates": {"from": 0.1, "to": 0.3, "step": 0.1},
                "routing": ["dor", "adaptive"],
                "traffic": ["uniform", "transpose"],
            },
            "zip": [["routing", "traffic"]],
            "seeds": {"count": 2},
        }
    )
    assert e.vary["rates"] == [0.1, 0.2, 0.3]
    pts = e.points()
    assert len(pts) == e.count() == 3 * 2 * 2
    # Zipped: dor goes with uniform only.
    assert {(p.values["routing"], p.values["traffic"]) for p in pts} == {("dor", "uniform"), ("adaptive", "transpose")}
    assert len({p.key for p in pts}) == len(pts)
    a = pts[0].argv
    assert a[:1] == ["noc"] and "--json-ish" in a and "--off" not in a and a[a.index("--seed") + 1] == "1"
    # The key depends on what determines the result, not on the order of the file.
    e2 = ex.parse(
        {
            "command": "noc",
            "options": {"off": False, "json-ish": True, "mesh": "4x4"},
            "vary": {"traffic": ["uniform", "transpose"], "routing": ["dor", "adaptive"], "rates": [0.1, 0.2, 0.3]},
            "zip": [["routing", "traffic"]],
            "seeds": {"values": [1, 2]},
        }
    )
    assert {p.key for p in e2.points()} == {p.key for p in pts}


def test_positional_arguments_take_variables():
    e = ex.parse({"command": "maxrate", "args": ["{app}"], "vary": {"app": ["router", "nat"], "pes": [4]}})
    assert [p.argv for p in e.points()] == [["maxrate", "router", "--pes", "4"], ["maxrate", "nat", "--pes", "4"]]


@pytest.mark.parametrize(
    "doc, words",
    [
        ({}, "command: required"),
        ({"command": "sweep"}, "cannot be swept"),
        ({"command": "noc", "bogus": 1}, "bogus: unknown key"),
        ({"command": "noc", "vary": {"a": []}}, "vary.a: has no value"),
        ({"command": "noc", "vary": {"a": {"from": 1, "to": 0}}}, "below 'from'"),
        ({"command": "noc", "vary": {"a": {"from": 0, "to": 1, "step": 0}}}, "step: must be positive"),
        ({"command": "noc", "vary": {"a": {"from": 0, "to": 1e9, "step": 1e-3}}}, "more than the limit"),
        ({"command": "noc", "vary": {"a": [float("nan")]}}, "finite numbers"),
        ({"command": "noc", "vary": {"a": [1, 2], "b": [1]}, "zip": [["a", "b"]]}, "as many values each"),
        ({"command": "noc", "vary": {"a": [1]}, "zip": [["a", "z"]]}, "'z' is not a variable"),
        ({"command": "noc", "seeds": {"count": 0}}, "seeds.count: must be 1 to 10000"),
        ({"command": "noc", "seeds": {"values": [1, 1]}}, "repeated"),
        ({"command": "noc", "metrics": {"id": ["x"]}}, "needs metrics.rows"),
        ({"command": "noc", "vary": {"a": [1, 2], "zip": [["a", "b"]]}}, "must come before the first [table]"),
        ({"command": "noc", "vary": {f"v{i}": list(range(100)) for i in range(4)}}, "more than the limit"),
    ],
)
def test_bad_experiment_files_get_one_line_naming_the_key(doc, words):
    with pytest.raises(PktflowError) as e:
        ex.parse(doc, "x.toml")
    assert words in str(e.value) and "\n" not in str(e.value)


def test_overrides_replace_variables_options_and_seeds():
    e = ex.parse(ex.tomllib.loads(SMALL))
    ex.override(e, ["c=10,20,30", "nodes=3", "--threads=2"], "5,6")
    assert e.vary["c"] == [10, 20, 30] and e.options["nodes"] == 3 and e.options["threads"] == 2
    assert e.seeds == [5, 6] and e.count() == 2 * 3 * 2
    for bad, words in (("c", "NAME=VALUE"), ("c=", "no value"), ("seed=3", "--seeds")):
        with pytest.raises(PktflowError, match=words):
            ex.override(ex.parse(ex.tomllib.loads(SMALL)), [bad], None)
    with pytest.raises(PktflowError, match="not an integer"):
        ex.override(ex.parse(ex.tomllib.loads(SMALL)), [], "1,x")


def test_t_quantiles():
    assert t975(1) == pytest.approx(12.706) and t975(2) == pytest.approx(4.303)
    assert t975(1000) == pytest.approx(1.96) and math.isnan(t975(0))


@pytest.mark.parametrize("exp", sorted((ROOT / "experiments").glob("*.toml")), ids=lambda p: p.name)
def test_every_experiment_file_parses_and_lists_its_points(exp, tmp_path, capsys):
    e = ex.load(exp)
    assert e.count() >= 1
    assert _main(["sweep", str(exp), "--out", str(tmp_path / "o"), "--dry-run"]) == 0
    assert f"{e.count()} points" in capsys.readouterr().out


# ------------------------------------------------------------------------------ running


def test_local_sweep_writes_rows_summary_and_resumes(small, tmp_path, capsys):
    out = tmp_path / "run"
    assert _main(["sweep", str(small), "--out", str(out), "--workers", "2", "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert (m["points"], m["timing"]["computed"], m["timing"]["reused"], m["failed"]) == (12, 12, 0, 0)
    assert m["timing"]["workers"] == 2 and m["timing"]["engine"] == "local"
    df = pd.read_parquet(out / "results.parquet")
    assert len(df) == 12 and set(df.columns) >= {"policy", "c", "seed", "time_us", "miss_us", "key"}
    assert df["time_us"].notna().all() and df["error"].isna().all()
    assert len(list((out / "points").glob("*.json"))) == 12
    # Each point's JSON is the command's own result, with the record of how to re-run it.
    one = json.loads(next((out / "points").glob("*.json")).read_text())
    assert one["result"]["run"]["argv"][:2] == ["protoproc", "sim"] and one["exit"] == 0
    # Seeds: the summary's mean and CI are those of the three rows.
    s = pd.read_csv(out / "summary.csv")
    assert len(s) == 4 and (s["n"] == 3).all()
    g = df[(df.policy == "fixed") & (df.c == 50)]["time_us"]
    row = s[(s.policy == "fixed") & (s.c == 50)].iloc[0]
    assert row["time_us_mean"] == pytest.approx(g.mean())
    assert row["time_us_ci95"] == pytest.approx(4.303 * g.std(ddof=1) / math.sqrt(3))
    assert g.std() > 0, "the seeds should change this workload"
    # The same command again computes nothing.
    assert _main(["sweep", str(small), "--out", str(out), "--json"]) == 0
    m2 = json.loads(capsys.readouterr().out)
    assert (m2["timing"]["computed"], m2["timing"]["reused"]) == (0, 12)
    # One more seed: only the new points run.
    assert _main(["sweep", str(small), "--out", str(out), "--seeds", "1,2,3,4", "--json"]) == 0
    m3 = json.loads(capsys.readouterr().out)
    assert (m3["timing"]["computed"], m3["timing"]["reused"]) == (4, 12)


def test_a_sweep_result_reruns_identically(small, tmp_path):
    """`pktflow rerun` of a sweep's --json: the rerun resumes (computes nothing) and the record is
    the same apart from what this run did (under "timing")."""
    res = tmp_path / "sweep.json"
    cmd = [sys.executable, "-m", "pktflow"]
    r = subprocess.run(
        [*cmd, "sweep", str(small), "--out", str(tmp_path / "o"), "--seeds", "1", "--json"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    res.write_text(r.stdout)
    r = subprocess.run([*cmd, "rerun", str(res)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and "identical result" in r.stdout, r.stdout + r.stderr


def test_compare_runs_matches_points_and_shows_differences(small, tmp_path, capsys):
    a, b = tmp_path / "a", tmp_path / "b"
    for d, extra in ((a, []), (b, ["--set", "nodes=3"])):
        assert _main(["sweep", str(small), "--out", str(d), "--workers", "2", "--seeds", "1", *extra]) == 0
    capsys.readouterr()
    same = compare(a, a)
    assert same["matched"] == 4 and same["differing"] == 0
    assert _main(["compare-runs", str(a), str(b), "--json", "--csv", str(tmp_path / "c.csv")]) == 0
    c = json.loads(capsys.readouterr().out)
    assert c["matched"] == 4 and c["differing"] == 4 and c["only_in_a"] == 0
    p = c["points"][0]
    assert p["time_us"]["diff"] == pytest.approx(p["time_us"]["b"] - p["time_us"]["a"])
    assert len(pd.read_csv(tmp_path / "c.csv")) == 4 * 2
    assert _main(["compare-runs", str(a), str(b)]) == 0
    assert "4 points matched, 4 differ" in capsys.readouterr().out


def test_dask_cluster_runs_the_same_points_as_the_local_pool(small, tmp_path, capsys):
    """A LocalCluster of two worker processes started here stands for a user's cluster: the sweep
    connects to its scheduler address exactly as with --cluster."""
    distributed = pytest.importorskip("distributed")
    local, remote = tmp_path / "local", tmp_path / "dask"
    assert _main(["sweep", str(small), "--out", str(local), "--workers", "2"]) == 0
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cl:
        capsys.readouterr()
        assert _main(["sweep", str(small), "--out", str(remote), "--cluster", cl.scheduler_address, "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["timing"]["engine"] == "dask" and m["timing"]["workers"] == 2 and m["timing"]["computed"] == 12
    assert sum(m["timing"]["per_worker"].values()) == 12
    c = compare(local, remote)
    assert c["matched"] == 12 and c["differing"] == 0


def test_a_cluster_that_is_not_there_is_one_line(small, tmp_path, capsys):
    assert _main(["sweep", str(small), "--out", str(tmp_path / "o"), "--cluster", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: --cluster tcp://127.0.0.1:9: cannot connect") and len(err) == 1


SLOW = """
command = "protoproc sim"
[options]
app = "synthetic"
nodes = 16
threads = 4
[vary]
c = [20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130]
"""


def test_killed_sweep_resumes_with_exactly_the_missing_points(tmp_path):
    """SIGKILL (no chance to clean up) after a few points; the rerun computes exactly the points
    that had no file then, and the two runs together cover every point once."""
    exp = tmp_path / "slow.toml"
    exp.write_text(SLOW)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "pktflow", "sweep", str(exp), "--out", str(out), "--workers", "1"]
    log = out / "computed.log"
    t0 = time.monotonic()
    with spawned(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL):
        while time.monotonic() - t0 < 240:
            if log.exists() and len(log.read_text().splitlines()) >= 3:
                break
            time.sleep(0.02)
        # leaving the block kills the whole process group with SIGKILL
    done_at_kill = {f.stem for f in (out / "points").glob("*.json")}
    all_keys = {pt.key for pt in ex.load(exp).points()}
    assert 3 <= len(done_at_kill) < len(all_keys), f"killed after {len(done_at_kill)} of {len(all_keys)} points"
    first = [json.loads(x)["key"] for x in log.read_text().splitlines()]
    r = subprocess.run([*cmd[:-2], "--workers", "2", "--json"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    m = json.loads(r.stdout)
    second = [json.loads(x)["key"] for x in log.read_text().splitlines()][len(first) :]
    assert set(second) == all_keys - done_at_kill and len(second) == len(set(second))
    assert m["timing"]["computed"] == len(second) and m["timing"]["reused"] == len(done_at_kill)
    _, df = load_run(out)
    assert len(df) == len(all_keys) and set(df["key"]) == all_keys


def test_ctrl_c_keeps_the_finished_points(tmp_path):
    exp = tmp_path / "slow.toml"
    exp.write_text(SLOW)
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "pktflow", "sweep", str(exp), "--out", str(out), "--workers", "1"]
    log = out / "computed.log"
    t0 = time.monotonic()
    with spawned(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        while time.monotonic() - t0 < 240 and not (log.exists() and log.read_text().strip()) and p.poll() is None:
            time.sleep(0.02)
        os.killpg(p.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the whole process group
        _, err = p.communicate(timeout=60)
    assert p.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted"
    m = json.loads((out / "sweep.json").read_text())
    assert m["interrupted"] and 1 <= m["done"] < 12
    _, df = load_run(out)
    assert len(df) == m["done"]


# ------------------------------------------------------------------------- bad options


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    opt=st.sampled_from(["--workers", "--seeds", "--set", "--cluster"]),
    val=st.one_of(
        st.sampled_from(["0", "-1", "nan", "inf", "1e400", "99999999999", "", ",", "a=b=c", "x"]),
        st.text(min_size=0, max_size=12),
    ),
)
def test_bad_option_values_are_one_line(small, tmp_path, capsys, opt, val):
    if opt == "--set":
        val = "c=" + val  # a variable's values: anything that parses is run, so keep it cheap
        if not any(ch.isdigit() for ch in val):
            val = "c="
    if opt == "--cluster" and not val.strip():
        val = "nowhere"
    code = _main(["sweep", str(small), "--out", str(tmp_path / "f"), opt, val, "--dry-run"])
    out = capsys.readouterr()
    assert code in (0, 2), out
    if code == 2:
        assert out.err.strip().count("\n") == 0 and out.err.startswith("error:"), out.err
    assert "Traceback" not in out.err


@pytest.mark.parametrize(
    "text, words",
    [
        (b"\xff\xfe", "cannot read"),
        (b"command = ", "not valid TOML"),
        (b"command = 'noc'\n[vary]\nx = 3", "vary.x: must be a list"),
    ],
)
def test_malformed_files_are_one_line(tmp_path, capsys, text, words):
    f = tmp_path / "bad.toml"
    f.write_bytes(text)
    assert _main(["sweep", str(f), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert words in err and err.strip().count("\n") == 0


def test_compare_runs_refuses_what_is_not_a_sweep(tmp_path, capsys):
    assert _main(["compare-runs", str(tmp_path), str(tmp_path)]) == 2
    assert "not a sweep folder" in capsys.readouterr().err


# ------------------------------------------------------------------- explore --workers


def test_explore_gives_the_same_result_for_any_number_of_workers(capsys):
    from pktflow._ui import strip_volatile

    docs = []
    for w in ("1", "2"):
        args = ["explore", "router", "--pes", "4,8", "--replication", "none,global", "--packets", "300"]
        assert _main([*args, "--no-bottleneck", "--workers", w, "--json"]) == 0
        docs.append(strip_volatile(json.loads(capsys.readouterr().out)))
    assert docs[0] == docs[1] and len(docs[0]["points"]) == 4
    assert [(p["pes"], p["replication"]) for p in docs[0]["points"]] == [
        (4, "none"),
        (4, "global"),
        (8, "none"),
        (8, "global"),
    ]


@pytest.mark.parametrize("bad", ["0", "-2", "100000", "x"])
def test_explore_workers_out_of_range_is_one_line(bad, capsys):
    assert _main(["explore", "router", "--pes", "4", "--workers", bad]) == 2
    err = capsys.readouterr().err.strip()
    assert "--workers" in err and "\n" not in err


# ------------------------------------------------------------ experiment scripts on every core


def test_map_ordered_keeps_the_order_of_its_arguments():
    from pktflow.sweep.pool import map_ordered

    args = [(3, k, 1000003) for k in range(40)]
    assert map_ordered(pow, args, workers=2) == [pow(*a) for a in args] == map_ordered(pow, args, workers=1)


def test_protoproc_script_output_is_the_same_on_one_and_two_workers(tmp_path):
    outs = []
    for w in ("1", "2"):
        js = tmp_path / f"w{w}.json"
        r = subprocess.run(
            [
                sys.executable,
                str(ROOT / "experiments" / "protoproc.py"),
                "--workers",
                w,
                "--json",
                str(js),
                "--markdown",
                str(tmp_path / f"w{w}.md"),
                "--plot-dir",
                str(tmp_path / f"p{w}"),
                "--requests",
                "300",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        outs.append(js.read_text())
    assert outs[0] == outs[1] and len(json.loads(outs[0])["apps"]) == 3 * 16


# ---------------------------------------------------------------------------------- fuzzing

_scalars = st.one_of(
    st.integers(-(2**70), 2**70), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=8), st.booleans()
)
_values = st.recursive(
    _scalars,
    lambda c: st.one_of(st.lists(c, max_size=4), st.dictionaries(st.text(max_size=6), c, max_size=4)),
    max_leaves=12,
)
_keys = st.sampled_from(["command", "args", "options", "vary", "zip", "seeds", "metrics", "plot", "title", "x"])


@settings(max_examples=200, deadline=None)
@given(doc=st.dictionaries(_keys, _values, max_size=6), cmd=st.sampled_from([None, "noc", "protoproc model", ""]))
def test_experiment_parser_never_fails_other_than_cleanly(doc, cmd):
    """Near-valid and arbitrary experiment tables: an Experiment whose points expand, or one
    PktflowError line; never another exception."""
    if cmd is not None:
        doc = {**doc, "command": cmd}
    try:
        e = ex.parse(doc, "f.toml")
    except PktflowError as err:
        assert "\n" not in str(err) and str(err).startswith("f.toml")
        return
    if e.count() <= 10_000:
        assert len(e.points()) == e.count()


def _fake_run(d: Path, values: list[float]) -> Path:
    d.mkdir()
    exp = {"vary": {"x": []}, "metrics": {"keep": {"y": "y"}}}
    (d / "sweep.json").write_text(json.dumps({"experiment": exp}))
    pd.DataFrame({"x": range(len(values)), "y": values, "error": [None] * len(values)}).to_parquet(
        d / "results.parquet"
    )
    return d


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tol=st.one_of(st.sampled_from(["nan", "inf", "-1", "-0.0", "1e400", "x", ""]), st.floats().map(str)))
def test_compare_runs_tolerance_is_checked(tmp_path_factory, capsys, tol):
    d = tmp_path_factory.mktemp("cmp")
    a, b = _fake_run(d / "a", [1.0, 2.0, 0.0]), _fake_run(d / "b", [1.0, 2.5, 1.0])
    code = _main(["compare-runs", str(a), str(b), "--tolerance", tol, "--json"])
    out = capsys.readouterr()
    assert code in (0, 2), out.err
    if code == 2:
        assert out.err.strip().count("\n") == 0 and "Traceback" not in out.err
    else:
        c = json.loads(out.out)
        assert c["matched"] == 3 and c["points"][2]["y"] == {"a": 0.0, "b": 1.0, "diff": 1.0, "rel": None}
        assert c["differing"] == 2 or (c["differing"] == 1 and float(tol) >= 0.25)
