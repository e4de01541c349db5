"""``pktflow run --predict ARCH``: the NP simulator's rate for the run's mapping beside the
measured one (docs/runtime.md, "Prediction"), and the ``host`` preset (presets/host.toml)."""

from __future__ import annotations

import pytest
from cli_run import one_error_line, run_main
from conftest import run_json

from pktflow import npsim, runtime


def test_host_preset_loads_with_this_machines_shape():
    a = npsim.arch("host")
    assert a["kind"] == "np"
    np_ = a["params"]["np"]
    assert np_["pe_count"] >= 1 and np_["hardware_contexts_per_pe"] == 1
    assert np_["interface_pes"] == 0
    st = a["params"]["storage"]
    lat = {k: st[k]["unpipelined_cycles"] + st[k]["pipelined_read_cycles"] for k in ("l1", "l2", "l3", "dram")}
    assert lat["l1"] < lat["l2"] < lat["l3"] < lat["dram"], lat
    assert st["l1"]["private_per_pe"] and st["l2"]["private_per_pe"]


@pytest.mark.parametrize("threads", [1, 2])
def test_predict_reports_both_rates_and_the_error(threads):
    r = run_json("run", "router", "--synthetic", "3000", "--threads", str(threads), "--predict", "host")
    p = r["prediction"]
    assert p["arch"] == "host" and p["pes"] == threads and p["replication"] == "global"
    m, q = p["measured_packets_per_second"], p["predicted_packets_per_second"]
    assert m == r["timing"]["packets_per_second"] and m > 0 and q > 0
    assert p["relative_error"] == pytest.approx((q - m) / m)
    # The simulator ran the run's mapping on the named machine with the run's packets.
    s = p["simulator_settings"]
    assert s["spec"]["pes"] == threads and s["spec"]["arch"] == "host"
    assert s["spec"]["replication"] == "global" and s["spec"]["packets"] == 3000


def test_predict_is_the_simulators_own_figure():
    """The predicted rate is maxrate's for the same mapping, not derived from the measurement."""
    r = runtime.run("nat", synthetic=2000, threads=1)
    p = runtime.predict(r, "host")
    m = npsim.maxrate("nat", arch="host", pes=1, replication="global", packets=2000)
    assert p["predicted_packets_per_second"] == m["packets_per_second"]
    # A machine twice as fast (all cycles halved by doubling the clock) predicts more.
    fast = runtime.predict(r, "host", arch_set=["np.pe_frequency_mhz=5900"])
    assert fast["predicted_packets_per_second"] > 1.5 * p["predicted_packets_per_second"]


def test_predict_table_shows_measured_predicted_error(capsys):
    code, out, err = run_main(capsys, "run", "router", "--synthetic", "1500", "--predict", "host")
    assert code == 0, err
    assert "predicted packets/s" in out and "measured packets/s" in out and "%" in out


@pytest.mark.parametrize(
    "arch,msg",
    [
        ("nosuch", "unknown architecture"),
        ("mesh", "needs an [np] preset"),
    ],
)
def test_predict_bad_arch_is_one_line_exit_2(capsys, arch, msg):
    code, _, err = run_main(capsys, "run", "router", "--synthetic", "100", "--predict", arch)
    assert code == 2
    assert msg in one_error_line(err)


def test_predict_impossible_preset_file_is_one_line_exit_2(capsys, tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('base = "host"\n[preset]\nname = "bad"\ndescription = "no cores"\n[np]\npe_count = 0\n')
    code, _, err = run_main(capsys, "run", "router", "--synthetic", "100", "--predict", str(bad))
    assert code == 2
    assert "pe_count" in one_error_line(err)
