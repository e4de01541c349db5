"""End-to-end tests of the NoC / stream-graph subsystem through the Python API and the
CLI. Runs are short (small meshes, few thousand cycles); full reproductions are in experiments/."""

from __future__ import annotations

import json
import math

import pytest
from pktflow import noc
from typer.testing import CliRunner

try:  # the main CLI app (the lead's cli.py registers cli_noc)
    from pktflow.cli import app as main_app
except Exception:  # pragma: no cover - fall back to a private app
    main_app = None


def _app():
    import typer
    from pktflow import cli_noc

    if main_app is not None and any(c.name == "stream" for c in main_app.registered_commands):
        return main_app
    a = typer.Typer()
    cli_noc.register(a)
    return a


SHORT = dict(warmup=500, measure=3000)


def test_catalog_lists_nine_benchmarks_and_routers():
    c = noc.catalog()
    assert len(c["benchmarks"]) == 9
    assert set(c["routings"]) == {"dor", "adaptive", "tentacle", "ideal", "negotiated", "exact", "yx"}
    assert set(c["routing_help"]) == set(c["routings"])
    assert all(isinstance(h, str) and h for h in c["routing_help"].values())
    assert c["default_mesh"]["virtual_channels"] == 4
    assert c["default_mesh"]["buffer_depth_flits"] == 8


@pytest.mark.parametrize("name", ["AudioBeam", "FMRadio", "DES"])
def test_benchmark_balance_equations_hold(name):
    g = noc.graph(name)
    nodes = g["nodes"]
    for e in g["edges"]:
        assert nodes[e["src"]]["reps"] * e["push"] == nodes[e["dst"]]["reps"] * e["pop"]
    assert g["file_reps_mismatches"] == []


def test_builder_program_balances_and_saves(tmp_path):
    p = noc.program(
        "tiny",
        noc.pipeline(
            "top",
            noc.filter_("src", push=3, work=10),
            noc.splitjoin(
                "sj",
                noc.roundrobin(1, 2),
                noc.roundrobin(1, 1),
                noc.filter_("a", pop=1, push=1, work=20),
                noc.filter_("b", pop=2, push=1, work=30),
            ),
            noc.filter_("snk", pop=2, work=5),
        ),
    )
    g = p.balance()
    reps = {n["path"]: n["reps"] for n in g["nodes"]}
    assert reps["tiny/top[0]/src"] == 1
    assert reps["tiny/top[2]/snk"] == 1
    f = p.save(tmp_path / "tiny.json")
    assert noc.graph(str(f))["total_work_per_steady_state"] == g["total_work_per_steady_state"]


def test_inconsistent_rates_name_the_edge(tmp_path):
    bad = noc.program(
        "bad",
        noc.pipeline(
            "top",
            noc.filter_("src", push=1),
            noc.splitjoin(
                "sj",
                noc.duplicate(),
                noc.roundrobin(1, 1),
                noc.filter_("a", pop=1, push=1),
                noc.filter_("b", pop=1, push=2),
            ),
            noc.filter_("snk", pop=1),
        ),
    )
    with pytest.raises(Exception) as e:
        noc.graph(bad)
    msg = str(e.value)
    assert "inconsistent rates on edge" in msg and "->" in msg


def test_malformed_file_is_a_clear_error(tmp_path):
    f = tmp_path / "broken.toml"
    f.write_text("name = 'x'\n[graph]\ntype = 'pipeline'\n")
    with pytest.raises(Exception) as e:
        noc.graph(str(f))
    assert "broken.toml" in str(e.value)


def test_sweep_zero_load_latency_and_saturation_bound():
    res = noc.sweep(mesh="4x4", rates=[0.02, 0.95], **SHORT)
    lo, hi = res["points"]
    t0 = res["theory"]["zero_load_latency"]
    assert abs(lo["latency"] - t0) / t0 < 0.08
    assert abs(lo["accepted"] - lo["offered"]) < 0.01
    assert hi["accepted"] < res["theory"]["requested_rate_bound"]
    assert hi["saturated"]


def test_adaptive_overload_delivers_without_loss():
    res = noc.sweep(
        mesh="4x4", routing="adaptive", traffic="transpose", rates=[1.0], packet_flits=4, warmup=500, measure=3000
    )
    p = res["points"][0]
    assert p["accepted"] > 0.1
    assert p["flits_injected"] >= p["flits_ejected"]


def test_stream_tentacle_vs_dor_and_ideal():
    kw = dict(mesh="4x4", scales=[0.0], warmup=1000, measure=6000, anneal_moves=3000, retries=3)
    t = noc.run_stream("AudioBeam", routing="tentacle", **kw)
    i = noc.run_stream("AudioBeam", routing="ideal", **kw)
    p = noc.run_stream("AudioBeam", routing="dor", comm="pull", **kw)
    assert t["route"]["circuits"] and not t["route"]["fallback"]
    assert t["max_link_load"] <= 1.0
    assert t["setup"]["min"] >= 5 and t["setup"]["total"] >= t["setup"]["max"]
    assert i["saturation_throughput"] >= t["saturation_throughput"] * 0.98
    assert t["saturation_throughput"] > p["saturation_throughput"]
    df = noc.link_loads_frame(t)
    assert len(df) == 48


def test_tentacle_infeasible_layout_falls_back():
    # a source with 5 consumers cannot send on disjoint paths (a router has 4 output links)
    p = noc.program(
        "fan",
        noc.pipeline(
            "top",
            noc.filter_("src", push=5, work=1),
            noc.splitjoin(
                "sj",
                noc.roundrobin(1),
                noc.roundrobin(1),
                *[noc.filter_(f"w{k}", pop=1, push=1, work=1) for k in range(5)],
            ),
            noc.filter_("snk", pop=5, work=1),
        ),
    )
    g = {"name": "fan", "graph": p.graph}
    r = noc.run_stream(g, mesh="3x3", routing="tentacle", simulate=False, anneal_moves=2000)
    assert r["route"]["circuits"] or r["route"]["fallback"]
    if r["route"]["fallback"]:
        assert r["route"]["failed_stream"] is not None
        assert all(rt["path"] is not None for rt in r["routes"])  # DOR paths are reported


def test_cli_noc_json_has_points():
    res = CliRunner().invoke(
        _app(), ["noc", "--mesh", "4x4", "--rates", "0.05,0.1", "--warmup", "300", "--measure", "2000", "--json"]
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert [round(p["offered"], 1) for p in doc["points"]] == [0.1, 0.1] or len(doc["points"]) == 2
    for p in doc["points"]:
        assert {"offered", "accepted", "latency"} <= set(p)
        assert math.isfinite(p["latency"])


def test_cli_noc_table_and_plot(tmp_path):
    png = tmp_path / "lat.png"
    res = CliRunner().invoke(
        _app(), ["noc", "--mesh", "4x4", "--rates", "0.1", "--warmup", "300", "--measure", "2000", "--plot", str(png)]
    )
    assert res.exit_code == 0, res.output
    assert "latency" in res.stdout
    assert png.stat().st_size > 1000


def test_cli_stream_json_and_heatmap(tmp_path):
    png = tmp_path / "heat.png"
    res = CliRunner().invoke(
        _app(),
        [
            "stream",
            "FMRadio",
            "--mesh",
            "4x4",
            "--routing",
            "dor",
            "--scales",
            "0",
            "--warmup",
            "500",
            "--measure",
            "3000",
            "--anneal-moves",
            "2000",
            "--json",
            "--plot",
            str(png),
        ],
    )
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)
    assert doc["graph"] == "FMRadio" and doc["points"][0]["throughput"] > 0
    assert len(doc["heatmap"]) == 4 and len(doc["heatmap"][0]) == 4
    assert png.stat().st_size > 1000


def test_cli_stream_table():
    res = CliRunner().invoke(
        _app(),
        [
            "stream",
            "DES",
            "--mesh",
            "4x4",
            "--routing",
            "tentacle",
            "--scales",
            "0",
            "--warmup",
            "500",
            "--measure",
            "3000",
            "--anneal-moves",
            "2000",
        ],
    )
    assert res.exit_code == 0, res.output
    assert "routes" in res.stdout and "heat map" in res.stdout


def test_cli_bad_input_is_an_error_not_a_traceback():
    res = CliRunner().invoke(_app(), ["stream", "NoSuchGraph", "--no-sim"])
    assert res.exit_code != 0
    assert "neither a built-in" in str(res.exception) or "neither a built-in" in res.output
