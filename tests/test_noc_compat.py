"""BookSim-compatible mode, BookSim-style configuration files, the traffic and routing
registries and the adaptive plateau, as a user meets them through ``pktflow noc`` and the Python
API. Runs are tiny (short sample periods, small meshes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pktflow import noc
from cli_run import run, one_error_line

REPO = Path(__file__).resolve().parent.parent
SMALL_BS = ["--mesh", "4x4"]


def _cfg(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "run.cfg"
    p.write_text(text)
    return p


def test_compat_booksim_follows_its_conventions(capsys):
    code, out, err = run(["noc", *SMALL_BS, "--compat", "booksim", "--rates", "0.1", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["compat"] == "booksim"
    assert doc["booksim_run"]["sample_period"] == 1000 and doc["booksim_run"]["warmup_periods"] == 3
    assert doc["arch"]["node_injection_flits_per_cycle"] == 1
    assert doc["sending_nodes"] == 16  # uniform includes the source
    assert "source included" in doc["conventions"]["traffic"]
    cv = doc["points"][0]["convergence"]
    assert cv["warmup_cycles"] == 3000 and cv["converged"] and cv["measured_cycles"] % 1000 == 0
    assert doc["warmup_cycles"] is None and doc["measure_cycles"] is None
    code, out, err = run(["noc", *SMALL_BS, "--compat", "booksim", "--rates", "0.1"], capsys)
    assert code == 0 and "BookSim conventions" in out and "converged after" in out


def test_config_file_runs_and_command_line_wins(tmp_path, capsys):
    cfg = _cfg(
        tmp_path,
        "// small run\ntopology = mesh;\nk = 4; n = 2;\nrouting_function = min_adapt;\nnum_vcs = 2;\n"
        "traffic = tornado;\npacket_size = 2;\ninjection_rate = 0.05;\nsample_period = 300;\n",
    )
    code, out, err = run(["noc", "--config", str(cfg), "--vcs", "3", "--json"], capsys)
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["routing"], doc["traffic"], doc["virtual_channels"], doc["packet_flits"]) == (
        "adaptive",
        "tornado",
        3,
        2,
    )
    assert doc["points"][0]["requested_rate"] == pytest.approx(0.1)  # 0.05 packets x 2 flits
    # the run record hashes the configuration file (so `pktflow rerun` can tell it changed)
    from pktflow import _ui

    assert str(cfg) in _ui.run_record(["noc", "--config", str(cfg)])["inputs_sha256"]


@pytest.mark.parametrize(
    "text, needle",
    [
        ("k = 4;\nbogus_key = 1;\n", "line 2: unknown or unsupported key `bogus_key`"),
        ("k = 4\n", "line 1: `k = 4` does not end with `;`"),
        ("num_vcs = 12;\n", "key `num_vcs`: must be from 1 to 11, got 12"),
        ("injection_rate = inf;\n", "key `injection_rate`: must be a finite number"),
        ("sim_type = throughput;\n", "pktflow supports latency"),
        ("topology = torus;\n", "pktflow supports mesh"),
    ],
)
def test_bad_config_is_one_line_naming_file_line_and_key(tmp_path, capsys, text, needle):
    cfg = _cfg(tmp_path, text)
    code, out, err = run(["noc", "--config", str(cfg)], capsys)
    assert code == 2, (out, err)
    line = one_error_line(err)
    assert f"config `{cfg}`" in line and needle in line


def test_missing_config_file(tmp_path, capsys):
    code, out, err = run(["noc", "--config", str(tmp_path / "none.cfg")], capsys)
    assert code == 2 and "cannot read" in one_error_line(err)


def test_shipped_booksim_configs_load():
    cfgs = sorted((REPO / "experiments" / "booksim").glob("*.cfg"))
    assert len(cfgs) == 24
    # one of them end to end, at a low load, with the default BookSim measurement rule
    res = noc.sweep(config=str(REPO / "experiments" / "booksim" / "mesh4_transpose_dor_p5.cfg"), rates=[0.05])
    assert res["traffic"] == "transpose" and res["packet_flits"] == 5 and res["compat"] == "booksim"
    assert res["points"][0]["convergence"]["converged"]


@pytest.mark.parametrize("traffic", ["tornado", "neighbor", "shuffle", "hotspot", "bit_complement"])
def test_registered_traffic_patterns_run(traffic, capsys):
    code, out, err = run(
        ["noc", "--mesh", "4x4", "--traffic", traffic, "--rates", "0.05", "--warmup", "100", "--measure", "500",
         "--json"],
        capsys,
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["theory"]["pattern"] == traffic and doc["points"][0]["accepted"] > 0


def test_shuffle_needs_power_of_two_nodes(capsys):
    code, out, err = run(["noc", "--mesh", "3x3", "--traffic", "shuffle", "--rates", "0.1"], capsys)
    assert code == 2 and "power of two" in one_error_line(err)


def test_west_first_routing_and_help_lists_registries(capsys):
    code, out, err = run(
        ["noc", "--mesh", "4x4", "--routing", "west_first", "--rates", "0.1", "--warmup", "100", "--measure",
         "500", "--json"],
        capsys,
    )
    assert code == 0, err
    assert "west-first" in json.loads(out)["routing_description"]
    code, out, _ = run(["noc", "--help"], capsys)
    for word in ("tornado", "neighbor", "shuffle", "west_first", "--compat", "--config", "--ni-flits"):
        assert word in out


def test_adaptive_plateau_not_below_dor():
    """Past saturation on 4x4 uniform traffic minimal adaptive routing accepts at least as much
    as dimension-order routing (it collapsed to about half on 8x8 before)."""
    acc = {}
    for r in ("dor", "adaptive"):
        res = noc.sweep(mesh="4x4", routing=r, rates=[1.0], warmup=1000, measure=2000, drain=0)
        acc[r] = res["points"][0]["accepted"]
    assert acc["adaptive"] >= acc["dor"], acc


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    key=st.sampled_from(["sample_period", "warmup_periods", "max_samples", "latency_thres", "stopping_thres",
                         "injection_rate", "vc_buf_size", "packet_size"]),
    val=st.one_of(st.integers(min_value=-(10**12), max_value=10**12),
                  st.sampled_from(["nan", "inf", "-1", "0", "1e400", "1.5", "x", ""])),
)
def test_hypothesis_config_values(tmp_path_factory, key, val, capsys):
    v = str(val)
    if key in ("sample_period", "max_samples") and v.lstrip("-").isdigit() and int(v) > 50:
        v = str(-int(v))  # keep valid runs tiny
    d = tmp_path_factory.mktemp("cfg")
    cfg = d / "h.cfg"
    cfg.write_text(f"k = 2;\nsample_period = 40;\nmax_samples = 4;\n{key} = {v};\n".replace(
        "sample_period = 40;\n" if key == "sample_period" else "\0", "").replace(
        "max_samples = 4;\n" if key == "max_samples" else "\0", ""))
    code, out, err = run(["noc", "--config", str(cfg), "--drain", "50"], capsys)
    assert code in (0, 2), (v, err)
    if code == 2:
        one_error_line(err)


# ---- experiments/noc_booksim_compat.py: running BookSim 2 next to --compat booksim ----

import importlib.util
import os
import stat
import sys


def _compat_script():
    spec = importlib.util.spec_from_file_location(
        "noc_booksim_compat", REPO / "experiments" / "noc_booksim_compat.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_STABLE = """BEGIN Configuration File: x.cfg
Packet latency average = 99.0
====== Overall Traffic Statistics ======
====== Traffic class 0 ======
Packet latency average = 21.5 (1 samples)
Network latency average = 20.0 (1 samples)
Accepted flit rate average = 0.457 (1 samples)
"""
_UNSTABLE = """Average latency for class 0 exceeded 500 cycles. Aborting simulation.
Simulation unstable, ending ...
"""


def test_booksim_output_is_parsed_from_its_overall_section():
    m = _compat_script()
    assert m.parse_booksim(_STABLE) == {"latency": 21.5, "accepted": 0.457, "unstable": False}
    assert m.parse_booksim(_UNSTABLE) == {"latency": None, "accepted": None, "unstable": True}
    with pytest.raises(ValueError):
        m.parse_booksim("Error in traffic_manager : Invalid routing function\n")
    # BookSim's parser reads "1" as an integer, which a float key refuses
    assert m.booksim_rate(1.0) == "1.0" and m.booksim_rate(0.046) == "0.046"
    assert m.booksim_rate(0.1234567) == "0.123457"


def test_knee_and_common_saturation_rule():
    m = _compat_script()
    assert m.knee([(0.3, True), (0.1, False), (0.2, False), (0.4, False)]) == 0.2
    assert m.knee([(0.1, True)]) is None
    ok = {"unstable": False, "latency": 30.0, "accepted": 0.2}
    assert not m.saturated(ok, 0.2, 20.0)
    assert m.saturated({**ok, "unstable": True}, 0.2, 20.0)
    assert m.saturated({**ok, "latency": 61.0}, 0.2, 20.0)  # > 3 x zero-load
    assert m.saturated({**ok, "accepted": 0.18}, 0.2, 20.0)  # < 95% of offered


def test_script_runs_a_booksim_executable_on_every_point(tmp_path):
    """A stand-in BookSim (prints a latency that encodes the injection rate it was given) on
    one configuration: every point gets its BookSim latency, the relative difference and the
    knee, with the packet rate R = F / packet_size on BookSim's command line."""
    fake = tmp_path / "booksim"
    fake.write_text(
        "#!" + sys.executable + "\n"
        "import sys\n"
        "r = float([a for a in sys.argv if a.startswith('injection_rate=')][0].split('=')[1])\n"
        "assert any(a.startswith('seed=') for a in sys.argv)\n"
        "if r > 0.8:\n"
        "    print('Simulation unstable, ending ...'); sys.exit(0)\n"
        "print('====== Overall Traffic Statistics ======')\n"
        "print('Packet latency average = %g (1 samples)' % (20 + 10 * r))\n"
        "print('Accepted flit rate average = %g (1 samples)' % r)\n"
        "sys.exit(255)\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    m = _compat_script()
    out = tmp_path / "out"
    code = m.main(
        ["--quick", "--booksim", str(fake), "--only", "mesh4_uniform_dor_p1", "--no-pktflow-default", "--jobs", "1", "--out", str(out)]
    )
    assert code == 0
    rows = list(__import__("csv").DictReader(open(out / "points.csv")))
    assert [float(r["rate_flits"]) for r in rows] == [0.23, 0.46, 0.69, 0.92, 1.0]
    for r in rows:
        rate = float(r["rate_flits"])
        if rate <= 0.8:
            assert float(r["booksim_latency"]) == pytest.approx(20 + 10 * rate)
            want = (float(r["compat_latency"]) - float(r["booksim_latency"])) / float(r["booksim_latency"])
            assert float(r["compat_vs_booksim"]) == pytest.approx(want, abs=1e-4)
        else:
            assert r["booksim_unstable"] == "1" and r["booksim_saturated"] == "True"
    knees = list(__import__("csv").DictReader(open(out / "knees.csv")))
    assert knees[0]["booksim_knee_offered_flits"] == "0.69"
    assert "mesh4_uniform_dor_p1" in (out / "summary.md").read_text()


def test_script_refuses_a_missing_booksim(tmp_path, capsys):
    m = _compat_script()
    assert m.main(["--booksim", str(tmp_path / "nope"), "--out", str(tmp_path)]) == 2
    assert "not an executable" in capsys.readouterr().err
