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


@pytest.mark.parametrize("model", ["pipeline", "hybrid"])
def test_predict_element_groups_maps_the_runs_placement(model, tmp_path):
    """A pipeline or hybrid run is predicted with its own placement: every element on the PEs of
    the threads that ran it."""
    argv = ["run", "router", "--synthetic", "2000", "--threads", "2", "--model", model]
    if model == "hybrid":
        mapping = tmp_path / "m.json"
        mapping.write_text('{"threads": [["rt", "arpq0"], ["rt", "arpq1"]]}')
        argv += ["--mapping", str(mapping)]
    r = run_json(*argv, "--predict", "host", "--predict-costs", "estimates")
    p = r["prediction"]
    assert p["model"] == model and p["replication"] == "as placed"
    placed: dict[str, list[int]] = {}
    for st in r["placement"]["stages"]:
        for name in st["elements"]:
            placed.setdefault(name, []).append(st["thread"])
    assert {k: v["pes"] for k, v in p["simulator_mapping"].items()} == placed
    assert {k: v["pes"] for k, v in p["simulator_settings"]["spec"]["mapping"].items()} == placed
    assert any(sorted(v) == [0, 1] for v in placed.values()) == (model == "hybrid")
    q, m = p["predicted_packets_per_second"], p["measured_packets_per_second"]
    assert q > 0 and p["relative_error"] == pytest.approx((q - m) / m)
    assert any("rings" in n for n in p["notes"])


def test_predict_is_the_simulators_own_figure():
    """With the elements' estimates, the predicted rate is maxrate's for the same mapping, not
    derived from the measurement."""
    r = runtime.run("nat", synthetic=2000, threads=1)
    p = runtime.predict(r, "host", costs="estimates")
    assert p["costs"] == {"kind": "estimates"}
    m = npsim.maxrate("nat", arch="host", pes=1, replication="global", packets=2000)
    assert p["simulator_packets_per_second"] == m["packets_per_second"]
    assert "element_costs" not in p["simulator_settings"]["spec"]
    # Counted as the run counts: packets from the source, not the neighbours' answers.
    share = 2000 / m["report"]["injected"]
    assert 0 < share < 1 and p["source_share_of_simulated_packets"] == pytest.approx(share)
    assert p["predicted_packets_per_second"] == pytest.approx(share * m["packets_per_second"])
    # A machine twice as fast (all cycles halved by doubling the clock) predicts more.
    fast = runtime.predict(r, "host", costs="estimates", arch_set=["np.pe_frequency_mhz=5900"])
    assert fast["predicted_packets_per_second"] > 1.5 * p["predicted_packets_per_second"]


def _instructions_per_packet(c: dict) -> float:
    """Mean instructions per packet the cost table charges over the measured run."""
    m, t = c["measurement"], c["table"]
    per_elem = sum(e["visits"] * t["instructions_per_visit"][e["name"]] for e in m["elements"])
    return per_elem / m["packets_injected"] + t["per_packet_instructions"]


@pytest.mark.parametrize("threads", [1, 2])
def test_predict_host_charges_the_measured_cost_table(threads):
    r = run_json("run", "router", "--synthetic", "2000", "--threads", str(threads), "--predict", "host")
    p = r["prediction"]
    c = p["costs"]
    assert c["kind"] == "measured"
    m, t = c["measurement"], c["table"]
    # Measured on the run's packets: every element named, the source's visit left to the driver.
    names = {e["name"] for e in m["elements"]}
    assert set(t["instructions_per_visit"]) == names
    assert m["packets_from_source"] == 2000 and m["packets_injected"] >= 2000
    assert m["clock_ticks_per_second"] > 0 and m["driver_ns_per_packet"] > 0
    visited = [e for e in m["elements"] if e["visits"]]
    assert visited and all(e["ns_per_visit"] >= 0 for e in m["elements"])
    # ns to instructions with the preset's clock (2,950 MHz, 1 cycle per instruction).
    assert c["instructions_per_ns"] == pytest.approx(2.95)
    e = visited[0]
    assert t["instructions_per_visit"][e["name"]] == pytest.approx(2.95 * e["ns_per_visit"])
    assert t["per_packet_instructions"] == pytest.approx(2.95 * m["driver_ns_per_packet"])
    assert t["keep_accesses"] is False
    # The simulator was given the table, and the error is finite.
    given = p["simulator_settings"]["spec"]["element_costs"]
    assert given["instructions_per_visit"] == pytest.approx(t["instructions_per_visit"])
    assert given["per_packet_instructions"] == pytest.approx(t["per_packet_instructions"])
    # Run-to-completion: the interface elements run on every PE too (global replication
    # alone binds each to one PE).
    mp = p["simulator_settings"]["spec"]["mapping"]
    assert {"FromDevice@8", "todev0"} <= set(mp)
    assert all(v["pes"] == list(range(threads)) for v in mp.values())
    err = p["relative_error"]
    assert err is not None and err == err and abs(err) < 1e6
    assert any("measured on this host" in n for n in p["notes"])
    # With no memory accesses, one PE is busy for the table's instructions per packet: the
    # simulator's rate is the clock over them (within the search's bracket and the warm-up).
    per_packet = _instructions_per_packet(c)
    bound = threads * 2950e6 / per_packet
    assert 0.8 * bound < p["simulator_packets_per_second"] <= 1.05 * bound


def test_predict_table_lists_the_measured_costs(capsys):
    code, out, err = run_main(capsys, "run", "router", "--synthetic", "1000", "--predict", "host")
    assert code == 0, err
    assert "element costs measured on this host" in out and "(driver)" in out
    assert "measured costs" in out


@pytest.mark.parametrize(
    "argv,msg",
    [
        (["--predict", "host", "--predict-costs", "guessed"], "--predict-costs must be one of measured, estimates"),
        (["--predict-costs", "measured"], "--predict-costs applies to --predict ARCH"),
    ],
)
def test_predict_costs_bad_value_is_one_line_exit_2(capsys, argv, msg):
    code, _, err = run_main(capsys, "run", "router", "--synthetic", "100", *argv)
    assert code == 2
    assert msg in one_error_line(err)


def test_bad_element_cost_table_is_refused_by_the_simulator():
    import json

    from pktflow import PktflowError, _core

    req = json.loads(npsim._request("router", "host", None, 1, "global", 100, None, None, None, None, None))
    for table, msg in [
        ({"instructions_per_visit": {"nosuch": 1.0}}, "unknown element 'nosuch'"),
        ({"instructions_per_visit": {}, "per_packet_instructions": -3}, "per_packet_instructions"),
    ]:
        req["spec"]["element_costs"] = table
        with pytest.raises(PktflowError, match=msg):
            _core.maxrate(json.dumps(req), None)


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
