"""The experiment files in ``experiments/``: each expands to the runs of the script it stands
for (the same commands and options, so the same numbers), every point is a command line the
CLI accepts, and a tiny run of two of them end to end gives the figures the script's own calls
give."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import typer
from pktflow import cli
from pktflow.sweep import experiment as ex

ROOT = Path(__file__).resolve().parents[1]
EXP = ROOT / "experiments"

# Points of each experiment file that stands for (part of) a script.
COUNTS = {
    "npire_fig8.toml": 2,  # router, nat
    "npire_sensitivity.toml": 14,  # 7 variants x 2 ends
    "npire_fig9.toml": 10,  # 2 apps x 5 transformations
    "npire_fig10.toml": 6,  # the figure's 6 lines
    "slowpath.toml": 54,  # 6 (app, marking) x 3 PE counts x 3 policies
    "slowpath_rtc.toml": 54,  # 6 (app, marking) x 3 core counts x 3 policies
    "netthreads_appendix_b.toml": 60,  # 2 ranges x 3 core counts x 5 splits x 2 syncs
    "tdpm_fig5.toml": 90,  # 3 apps x 5 configurations x 6 engine counts
}


def _script(name: str):
    """Import experiments/NAME.py as a module (its constants; main() is not run)."""
    spec = importlib.util.spec_from_file_location(f"_exp_{name}", EXP / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


def _main(args: list[str]) -> int:
    try:
        cli.main(args)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 0
    return 0


def _opts(argv: list[str]) -> dict:
    """``--name value`` / ``--flag`` pairs of a command line (flags map to True)."""
    out, i = {}, 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--"):
            if i + 1 < len(argv) and not argv[i + 1].startswith("--"):
                out[a[2:]] = argv[i + 1]
                i += 2
                continue
            out[a[2:]] = True
        i += 1
    return out


@pytest.mark.parametrize("name", sorted(COUNTS))
def test_experiment_file_expands_to_the_scripts_point_count(name, tmp_path, capsys):
    e = ex.load(EXP / name)
    assert e.count() == COUNTS[name]
    assert len({p.key for p in e.points()}) == COUNTS[name], "two points share a key"
    assert _main(["sweep", str(EXP / name), "--out", str(tmp_path / "o"), "--dry-run"]) == 0
    assert f"{COUNTS[name]} points" in capsys.readouterr().out


@pytest.mark.parametrize("exp", sorted(EXP.glob("*.toml")), ids=lambda p: p.name)
def test_every_point_is_a_command_line_the_cli_accepts(exp):
    """Parse each point's arguments with the command's own parser (unknown options, choices
    and types are checked; nothing runs)."""
    group = typer.main.get_command(cli.app)
    for p in ex.load(exp).points():
        cmd, rest = group, [*p.argv, "--json"]
        while hasattr(cmd, "get_command") and rest and not rest[0].startswith("-"):
            ctx = cmd.make_context("pktflow", [], resilient_parsing=True)
            sub = cmd.get_command(ctx, rest[0])
            assert sub is not None, f"{exp.name}: no command {rest[0]!r}"
            cmd, rest = sub, rest[1:]
        cmd.make_context(cmd.name, list(rest))  # raises a usage error on a bad option


def test_npire_fig8_and_sensitivity_are_the_scripts_runs():
    s = _script("npire_fig7_fig8")
    f8 = ex.load(EXP / "npire_fig8.toml")
    assert sorted(p.values["app"] for p in f8.points()) == sorted(s.APPS)
    for p in f8.points():
        o = _opts(p.argv)
        assert p.argv[:2] == ["bottleneck", p.values["app"]]
        # The script's defaults: 32 PEs (--fig8-pes), global queue, 3,000 packets, seed 1, the chain.
        assert (o["pes"], o["replication"], o["packets"], o["seed"]) == ("32", "global", "3000", "1")
        assert "no-chain" not in o and o["destinations"] == s.SETUP["destinations"] == "transit"
    sens = ex.load(EXP / "npire_sensitivity.toml").points()
    # Each script variant changes the set-up in the places its table names; the file's points
    # must make the same changes (a value false leaves the option out: the default).
    expect = []
    for _, change in s.VARIANTS:
        setup = {**s.SETUP, **change}
        d = {}
        if setup["lock_release"] != "after-issue":
            d["lock-release"] = setup["lock_release"]
        if setup["destinations"] is not None:
            d["destinations"] = setup["destinations"]
        if setup["scheduling"] != "fifo":
            d["scheduling"] = setup["scheduling"]
        if setup["wide_accesses"]:
            d["wide-accesses"] = True
        if "arch_cpi" in setup:
            d["set"] = f"np.cycles_per_instruction={setup['arch_cpi']}"
        for pes, rep, mapper in ((4, "none", "greedy"), (32, "global", "round-robin")):
            expect.append({**d, "pes": str(pes), "replication": rep, "mapper": mapper, "packets": "3000", "seed": "1"})
    got = [_opts(p.argv[2:]) for p in sens]
    assert sorted(json.dumps(x, sort_keys=True) for x in got) == sorted(json.dumps(x, sort_keys=True) for x in expect)


def test_npire_fig9_fig10_are_the_scripts_runs():
    s = _script("npire_fig9_fig10")
    assert s.SETUP["destinations"] == "per-port" and s.SETUP["scheduling"] == "fifo"
    f9 = ex.load(EXP / "npire_fig9.toml").points()
    want9 = {(app, tf or None) for app in s.APPS for _, tf in s.FIG9}
    got9 = set()
    for p in f9:
        o = _opts(p.argv[2:])
        assert (o["pes"], o["replication"], o["mapper"], o["packets"], o["seed"]) == (
            "4:32:4",
            "global",
            "greedy",
            "2000",
            "1",
        )
        assert o["destinations"] == "per-port" and o["no-bottleneck"] is True
        got9.add((p.argv[1], o.get("transform")))
    assert got9 == want9
    f10 = ex.load(EXP / "npire_fig10.toml").points()
    want10 = {(rep, tf) for _, _, rep, tf in s.FIG10}
    got10 = set()
    for p in f10:
        o = _opts(p.argv[2:])
        assert p.argv[1] == "router" and o["destinations"] == "per-port" and o["mapper"] == "greedy"
        got10.add((o["replication"], o.get("transform")))
    assert got10 == want10


@pytest.mark.parametrize(
    ("name", "size_opt", "sizes"), [("slowpath.toml", "pes", "2,4,8"), ("slowpath_rtc.toml", "cores", "1,2,4")]
)
def test_slowpath_files_are_the_scripts_runs(name, size_opt, sizes):
    s = _script("slowpath")
    want = {
        (app, ",".join(marked) or None, n, pol)
        for app, marks in s.MARKINGS.items()
        for _, marked in marks
        for n in sizes.split(",")
        for pol in s.POLICIES
    }
    got = set()
    for p in ex.load(EXP / name).points():
        o = _opts(p.argv[2:])
        assert o["packets"] == "400" and "replication" not in o
        got.add((p.argv[1], o.get("slow-path"), o[size_opt], o["slow-path-policy"]))
    assert got == want


def test_appendix_b_and_tdpm_fig5_are_the_scripts_grids():
    b = _script("netthreads_appendix_b")
    want = {
        (str(c), str(n), str(t), str(r), sync)
        for r in (1024, 8)
        for c in (2, 4, 8)
        for n, t in b.RATIOS
        for sync in ("locks", "tm")
    }
    got = set()
    for p in ex.load(EXP / "netthreads_appendix_b.toml").points():
        o = _opts(p.argv[2:])
        assert (o["scheduler"], o["criterion"], o["window-seconds"], o["packets"]) == (
            "lock-aware",
            "saturation",
            "0.01",
            "2000",
        )
        got.add((o["cores"], o["iter-non-tm"], o["iter-tm"], o["range"], o["sync"]))
    assert got == want
    t = _script("tdpm_fig5")
    want = {(app, key, str(n)) for app in t.APPS for key, _ in t.CONFIGS for n in range(1, 7)}
    got = set()
    for p in ex.load(EXP / "tdpm_fig5.toml").points():
        o = _opts(p.argv[2:])
        assert float(o["offered-gbps"]) == t.OFFERED_GBPS and o["packet-bytes"] == "64"
        got.add((p.argv[1], o["mapper"], o["engines"]))
    assert got == want


# ------------------------------------------------------------------------------ tiny runs


def test_tdpm_fig5_sweep_gives_the_scripts_figures(tmp_path, capsys):
    """Four points with few packets, end to end; each row is what the script's own call gives."""
    from pktflow import tdpm

    out = tmp_path / "tdpm"
    args = ["sweep", str(EXP / "tdpm_fig5.toml"), "--out", str(out), "--workers", "1", "--json"]
    args += ["--set", "app=l3switch", "--set", "mapper=base,tdpm", "--set", "engines=1,3", "--set", "packets=200"]
    assert _main(args) == 0
    m = json.loads(capsys.readouterr().out)
    assert (m["points"], m["failed"]) == (4, 0)
    df = pd.read_parquet(out / "results.parquet")
    assert len(df) == 4 and df["forwarding_gbps"].notna().all()
    for _, r in df.iterrows():
        want = tdpm.map_app(
            "l3switch",
            mapper=r["mapper"],
            engines=int(r["engines"]),
            packets=200,
            seed=1,
            offered_gbps=3.0,
            packet_bytes=64,
        )
        assert r["forwarding_gbps"] == pytest.approx(want["forwarding_gbps"], rel=1e-12)
        assert r["copies"] == want["copies"]


def test_slowpath_sweep_point_equals_the_scripts_call(tmp_path, capsys):
    """Six points (2 PEs, Single) with few packets: each rate is the script's api.maxrate call's,
    including the markings where the file gives no --slow-path and the script an empty list."""
    from pktflow import npsim

    s = _script("slowpath")
    out = tmp_path / "slow"
    args = ["sweep", str(EXP / "slowpath.toml"), "--out", str(out), "--workers", "1", "--json"]
    args += ["--set", "pes=2", "--set", "slow-path-policy=single", "--set", "packets=60"]
    assert _main(args) == 0
    m = json.loads(capsys.readouterr().out)
    assert (m["points"], m["failed"]) == (6, 0)
    df = pd.read_parquet(out / "results.parquet")
    want = {}
    for app, marks in s.MARKINGS.items():
        for _, marked in marks:
            r = npsim.maxrate(app, pes=2, packets=60, sim={"slow_path": {"policy": "single", "elements": marked}})
            want[(app, ",".join(marked))] = r["packets_per_second"]
    got = {
        (r["app"], r["slow-path"] if isinstance(r["slow-path"], str) else ""): r["packets_per_second"]
        for _, r in df.iterrows()
    }
    assert got == pytest.approx(want, rel=1e-12)


def test_four_cycles_per_instruction_by_set_equals_the_scripts_preset_copy(tmp_path):
    """The sensitivity file's 4-CPI variant overrides the preset with --set where the script
    writes a copy of presets/npire.toml with the value replaced: the same machine."""
    from pktflow import npsim

    text = (ROOT / "presets" / "npire.toml").read_text()
    assert text.count("cycles_per_instruction = 1") == 1
    copy = tmp_path / "npire_cpi4.toml"
    copy.write_text(text.replace("cycles_per_instruction = 1", "cycles_per_instruction = 4"))
    common = dict(pes=4, replication="none", packets=150, seed=1, mapper="greedy")
    by_file = npsim.maxrate("router", arch=str(copy), **common)
    by_set = npsim.maxrate("router", arch_set=["np.cycles_per_instruction=4"], **common)
    plain = npsim.maxrate("router", **common)
    assert by_set["packets_per_second"] == by_file["packets_per_second"]
    assert by_set["packets_per_second"] < plain["packets_per_second"]


def test_report_draws_a_sweep_whose_variable_mixes_false_and_text(tmp_path, capsys):
    """slowpath.toml's slow-path variable is false (no extra element) or a name: the results keep
    it as text with an empty cell, and the report draws it."""
    out = tmp_path / "slow"
    args = ["sweep", str(EXP / "slowpath.toml"), "--out", str(out), "--workers", "1"]
    args += ["--set", "pes=2", "--set", "slow-path-policy=floating", "--set", "packets=40"]
    assert _main(args) == 0
    df = pd.read_csv(out / "results.csv")
    assert df["slow-path"].isna().sum() == 2 and set(df["slow-path"].dropna()) == {"arpq0", "in_arpq", "ARPQuerier"}
    assert _main(["report", str(out), "--html", str(tmp_path / "r.html")]) == 0
    page = (tmp_path / "r.html").read_text()
    assert page.count('<figure class="plot"') == 1


TINY = {
    "netthreads_appendix_b.toml": ["cores=2", "range=8", "sync=tm", "window-seconds=0.0005"],
    "slowpath_rtc.toml": ["cores=1", "slow-path-policy=single", "window-seconds=0.0005", "packets=50"],
    "npire_fig8.toml": ["app=router", "pes=8", "packets=150"],
    "npire_fig9.toml": ["app=router", "pes=4:8:4", "packets=150", "transform=speculate,locality"],
}


@pytest.mark.parametrize("name", sorted(TINY))
def test_every_kept_metric_is_found_in_a_tiny_run(name, tmp_path, capsys):
    """A path to a metric that is not in the command's result would give empty cells silently:
    each kept column has a value in some row of a tiny run (few packets, short windows)."""
    out = tmp_path / "o"
    args = ["sweep", str(EXP / name), "--out", str(out), "--workers", "1", "--json"]
    for s in TINY[name]:
        args += ["--set", s]
    assert _main(args) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["failed"] == 0 and m["done"] == m["points"] > 0
    e = ex.load(EXP / name)
    df = pd.read_parquet(out / "results.parquet")
    for col in [*e.keep, *e.keep_root, *e.row_id]:
        assert df[col].notna().any(), f"{name}: {col} is empty in every row"


@pytest.mark.parametrize(
    "engine_args",
    [
        ["--pes", "1,2", "--packets", "40"],
        ["--engine", "rtc", "--cores", "1,2", "--packets", "40", "--window-seconds", "0.0005"],
    ],
    ids=["npsim", "rtc"],
)
def test_slowpath_script_output_is_the_same_on_one_and_two_workers(engine_args, tmp_path):
    """slowpath.py runs its searches on the sweep's process pool and replays the table over the
    results in grid order: its printed table and JSON do not depend on the number of workers
    (1 PE makes Fixed fail, so the errors' rows are covered)."""
    outs = []
    for w in ("1", "2"):
        js = tmp_path / f"w{w}.json"
        r = subprocess.run(
            [sys.executable, str(EXP / "slowpath.py"), *engine_args, "--workers", w, "--json", str(js)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stderr
        outs.append((r.stdout, js.read_text()))
    assert outs[0] == outs[1]
    rows = json.loads(outs[0][1])["rows"]
    assert len(rows) == 6 * 2 and all(r["winner"] for r in rows)
