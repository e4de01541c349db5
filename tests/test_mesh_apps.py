"""Click applications on the mesh through ``pktflow stream APP --mesh 4x4 --rate PPS``: the router
and the NAT run with every element placed and positive throughput, doubling the rate doubles the
link loads, a Click file works, bad input is one line (exit 2). Runs are tiny (a few hundred
packets, short windows)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_run import one_error_line, run

TINY = ["--packets", "200", "--warmup", "200", "--measure", "4000", "--anneal-moves", "1500"]


def _stream(capsys, *argv: str) -> dict:
    code, out, err = run(["stream", *argv, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


def _placed(doc: dict) -> None:
    tiles = doc["tiles"]
    assert doc["elements"]
    for e in doc["elements"]:
        assert e["tile"] is not None and 0 <= e["tile"] < tiles, e
        assert sum(p["share"] for p in e["placements"]) == pytest.approx(1.0)
    assert len(doc["actors"]) <= tiles


@pytest.mark.parametrize("app", ["router", "nat"])
def test_router_and_nat_run_on_a_4x4_mesh(app, capsys):
    # 1e7 packets/s: a packet every 200 cycles at 2 GHz, 20 in the 4000 measured cycles
    doc = _stream(capsys, app, "--mesh", "4x4", "--rate", "1e7", *TINY)
    assert doc["kind"] == "application" and doc["app"] == app
    _placed(doc)
    assert doc["sustainable_rate_pps"] > 0
    assert doc["saturation_throughput"] > 0
    assert doc["at_rate"]["delivered_pps"] > 0
    assert doc["rate_pps"] == 1e7 and doc["clock_hz"] == 2e9 and doc["cycles_per_instruction"] == 1
    assert "run" in doc
    # the result's conventions say what a rate, a load and a saturated link mean
    for k in ("iteration", "rate", "work", "streams", "link_loads", "at_rate"):
        assert k in doc["conventions"]


def test_the_readme_question_router_at_1e6(capsys):
    # the command of the issue (simulation off to keep the test fast): every element placed
    doc = _stream(capsys, "router", "--mesh", "4x4", "--rate", "1e6", "--packets", "200", "--no-sim")
    _placed(doc)
    assert len(doc["elements"]) == 44
    assert doc["points"] == [] and doc["sustainable_rate_pps"] is None
    assert any(ln["flits_per_cycle"] > 0 for ln in doc["link_rate_loads"])


def test_doubling_the_rate_doubles_link_loads(capsys):
    a = _stream(capsys, "router", "--rate", "1e6", "--packets", "200", "--no-sim")
    b = _stream(capsys, "router", "--rate", "2e6", "--packets", "200", "--no-sim")
    la = [ln["flits_per_cycle"] for ln in a["link_rate_loads"]]
    lb = [ln["flits_per_cycle"] for ln in b["link_rate_loads"]]
    assert any(x > 0 for x in la)
    assert lb == pytest.approx([2 * x for x in la], rel=1e-12, abs=0)
    assert b["max_core_utilization"] == pytest.approx(2 * a["max_core_utilization"])
    assert b["analytic_max_rate_pps"] == pytest.approx(a["analytic_max_rate_pps"])


def test_a_rate_far_above_the_bound_saturates(capsys):
    a = _stream(capsys, "nat", "--rate", "1e6", "--packets", "200", "--no-sim")
    hi = min(4 * a["analytic_max_rate_pps"], 2e9)
    doc = _stream(capsys, "nat", "--rate", repr(hi), *TINY)
    assert doc["max_core_utilization"] > 1 or doc["saturated_links"]
    assert doc["at_rate"]["keeps_up"] is False
    code, out, err = run(["stream", "nat", "--rate", repr(hi), *TINY], capsys)
    assert code == 0 and "does NOT keep up" in out and "where the elements go" in out


def test_descriptors_and_table_output(capsys, tmp_path):
    doc = _stream(capsys, "router", "--rate", "1e6", "--packets", "200", "--no-sim", "--edge-bytes", "descriptor",
                  "--descriptor-bytes", "16")
    assert doc["edge_bytes"] == "descriptor" and doc["descriptor_bytes"] == 16
    for c in doc["connections"]:
        assert c["bytes_per_packet"] == pytest.approx(16 * c["packets_per_packet"])
    png = tmp_path / "heat.png"
    code, out, err = run(["stream", "router", "--rate", "1e6", *TINY, "--plot", str(png)], capsys)
    assert code == 0, err
    assert "where the elements go" in out and "sustainable rate" in out and png.stat().st_size > 0


def test_a_click_file_runs(tmp_path, capsys):
    f = tmp_path / "fwd.click"
    f.write_text("FromDevice(eth0) -> Strip(14) -> CheckIPHeader -> Queue(64) -> ToDevice(eth1);\n")
    doc = _stream(capsys, str(f), "--mesh", "2x2", "--rate", "1e7", *TINY)
    _placed(doc)
    assert len(doc["elements"]) == 5 and doc["sustainable_rate_pps"] > 0


def test_a_ppf_graph_file_runs(tmp_path, capsys):
    f = tmp_path / "demo.toml"
    f.write_text(
        'name = "demo"\npacket_bytes = 128\n'
        '[[ppf]]\nname = "cls"\nrate = 1.0\ninstructions = 100\ncode_size = 300\n'
        '[[channel]]\nfrom = "rx"\nto = "cls"\nrate = 1.0\n'
        '[[channel]]\nfrom = "cls"\nto = "tx"\nrate = 1.0\n'
    )
    doc = _stream(capsys, str(f), "--mesh", "2x2", "--rate", "1e7", "--warmup", "200", "--measure", "4000")
    _placed(doc)
    assert [e["name"] for e in doc["elements"]] == ["rx", "cls", "tx"]
    assert doc["elements"][1]["instructions_per_packet"] == pytest.approx(100)
    assert doc["sustainable_rate_pps"] > 0


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["router"], "--rate must be given"),
        (["router", "--rate", "0"], "--rate must be more than 0"),
        (["router", "--rate", "-1"], "--rate must be"),
        (["router", "--rate", "nan"], "--rate must be"),
        (["router", "--rate", "inf"], "--rate must be"),
        (["router", "--rate", "1e10"], "--rate must be at most one packet per cycle"),
        (["router", "--rate", "1e6", "--packets", "0"], "--packets must be"),
        (["router", "--rate", "1e6", "--packets", "100000000"], "--packets must be"),
        (["router", "--rate", "1e6", "--descriptor-bytes", "0"], "--descriptor-bytes must be"),
        (["router", "--rate", "1e6", "--clock-hz", "0"], "--clock-hz must be"),
        (["router", "--rate", "1e6", "--cycles-per-instruction", "0"], "--cycles-per-instruction must be"),
        (["router", "--rate", "1e6", "--scales", "1"], "--scales must not be given"),
        (["router", "--rate", "1e6", "--edge-bytes", "both"], "both"),
        (["FMRadio", "--rate", "1e6"], "is a stream graph"),
        (["nosuch.click", "--rate", "1e6"], "nosuch.click"),
    ],
)
def test_bad_input_is_one_line(argv, needle, capsys):
    code, out, err = run(["stream", *argv], capsys)
    assert code == 2, (out, err)
    assert needle in one_error_line(err)


def test_malformed_click_file_is_one_line(tmp_path, capsys):
    f = tmp_path / "bad.click"
    f.write_text("FromDevice(eth0) -> NoSuchElement -> Discard;\nx :: -> ;\n")
    code, out, err = run(["stream", str(f), "--rate", "1e6"], capsys)
    assert code == 2
    assert "bad.click" in one_error_line(err)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    opt=st.sampled_from(["--rate", "--packets", "--descriptor-bytes", "--clock-hz", "--cycles-per-instruction"]),
    val=st.one_of(
        st.integers(min_value=-(10**20), max_value=10**20),
        st.floats(allow_nan=True, allow_infinity=True),
        st.sampled_from(["nan", "inf", "-1", "0", "1e300", "1.5", "x"]),
    ),
)
def test_hypothesis_application_options(opt, val, capsys):
    v = str(val)
    # a valid large packet count would lengthen the run: make it invalid instead
    if opt == "--packets" and v.lstrip("-").isdigit() and int(v) > 300:
        v = str(-int(v))
    argv = ["stream", "nat", "--no-sim", "--packets", "50", "--anneal-moves", "100", "--rate", "1e6", opt, v]
    code, out, err = run(argv, capsys)
    assert code in (0, 2), err
    if code == 2:
        one_error_line(err)
    else:
        assert "Traceback" not in err
