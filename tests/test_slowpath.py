"""Slow-path policies (single, fixed, floating) on the NP simulator from the CLI and the API
(docs/protoproc.md section 6)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cli_run import one_error_line, run
from pktflow import PktflowError
from pktflow import npsim as api

BASE = ["simulate", "router", "--packets", "300", "--pes", "8", "--inter-arrival", "3000", "--warmup", "60"]


def _sim(capsys, *extra):
    code, out, err = run([*BASE, *extra, "--json"], capsys)
    assert code == 0, err
    return json.loads(out)


def test_np_simulate_cli_orders_the_policies_with_a_large_interrupt_cost(capsys):
    costs = ["--slow-path", "ARPQuerier", "--slow-interrupt-cycles", "20000", "--slow-role-switch-cycles", "0"]
    lat = {}
    for p in ("single", "fixed", "floating"):
        r = _sim(capsys, "--slow-path-policy", p, *costs)
        assert r["settings"]["sim"]["slow_path"]["policy"] == p
        lat[p] = r["latency"]["mean_cycles"]
    # Every forwarded packet pays the 20,000-cycle interrupt under single and not otherwise.
    assert lat["single"] > 20000
    assert lat["fixed"] < lat["single"]
    assert lat["floating"] < lat["single"]


def test_no_policy_leaves_the_run_unchanged(capsys):
    a = _sim(capsys)
    b = _sim(capsys, "--slow-path-policy", "single", "--slow-interrupt-cycles", "0")
    assert a["settings"]["sim"]["slow_path"]["policy"] is None
    # With a zero interrupt cost the single policy keeps the mapper's mapping: same run.
    assert a["latency"] == b["latency"]


def test_fixed_with_one_pe_is_refused(capsys):
    argv = [*BASE[:4], "--pes", "1", "--inter-arrival", "3000", "--slow-path-policy", "fixed"]
    code, _, err = run(argv, capsys)
    assert code == 2
    assert "at least 2 PEs" in one_error_line(err)


def test_costs_need_a_policy_and_unknown_elements_are_named(capsys):
    code, _, err = run([*BASE, "--slow-interrupt-cycles", "5"], capsys)
    assert code == 2 and "--slow-path-policy" in one_error_line(err)
    code, _, err = run([*BASE, "--slow-path-policy", "single", "--slow-path", "nosuch"], capsys)
    assert code == 2 and "'nosuch'" in one_error_line(err)


def test_api_slow_path_options():
    assert api.slow_path_options() == {}
    sp = api.slow_path_options("fixed", "arpq0, ICMPError", message_cycles=7)
    assert sp == {"slow_path": {"policy": "fixed", "elements": ["arpq0", "ICMPError"], "message_cycles": 7}}
    with pytest.raises(PktflowError):
        api.slow_path_options("sideways")
    with pytest.raises(PktflowError):
        api.slow_path_options("single", interrupt_cycles=-1)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    opt=st.sampled_from(["--slow-interrupt-cycles", "--slow-role-switch-cycles", "--slow-message-cycles"]),
    val=st.sampled_from(["-1", "0", "nan", "1e99", "99999999999", "abc", "20000000"]),
)
def test_hypothesis_slow_path_cost_options(opt, val, capsys):
    argv = [*BASE[:2], "--packets", "50", "--warmup", "10", "--pes", "4", "--inter-arrival", "3000"]
    code, _, err = run([*argv, "--slow-path-policy", "floating", opt, val], capsys)
    assert code in (0, 2)
    if code == 2:
        one_error_line(err)
