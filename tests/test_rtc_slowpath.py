"""Slow-path policies (Single, Fixed, Floating) on the run-to-completion engine
(``pktflow rtc --slow-path-policy``; docs/protoproc.md section 6)."""

from __future__ import annotations

import json

from cli_run import one_error_line, run_main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pktflow import rtc

SAT = dict(criterion="saturation", window_seconds=0.002, packets=200)


def test_each_policy_runs_and_reports_the_slow_path_share():
    plain = rtc.run("router", **SAT)
    assert plain["slow_path"] is None
    rates = {}
    for policy in ("single", "fixed", "floating"):
        r = rtc.run("router", slow_path_policy=policy, slow_path="ARPQuerier", **SAT)
        sp = r["slow_path"]
        assert sp["packets"] == 200 and sp["runs_per_100_packets"] > 50 and 0 < sp["instruction_share"] < 1
        assert r["settings"]["engine"]["slow_path"]["policy"] == policy
        rates[policy] = r["packets_per_second"]
    # Every context serves the slow path under single and floating; floating's role switch
    # (140 instructions) costs less than single's interrupt (600).
    assert rates["floating"] > rates["single"]
    # Without the interrupt single costs no more than running without a policy.
    free = rtc.run("router", slow_path_policy="single", slow_path="ARPQuerier", slow_interrupt_instructions=0, **SAT)
    assert abs(free["packets_per_second"] - plain["packets_per_second"]) <= 0.02 * plain["packets_per_second"]


def test_cli_prints_the_share_and_refuses_bad_input(capsys):
    code, out, err = run_main(
        capsys, "rtc", "router", "--slow-path-policy", "fixed", "--criterion", "saturation",
        "--window-seconds", "0.002", "--packets", "100",
    )
    assert code == 0, err
    assert "slow path (fixed)" in out
    for args, want in (
        (["--slow-path-policy", "single", "--slow-path", "nope"], "'nope'"),
        (["--slow-path", "ARPQuerier"], "--slow-path-policy"),
        (["--slow-path-policy", "sometimes"], "--slow-path-policy"),
        (["--slow-path-policy", "fixed", "--cores", "1", "--threads", "1"], "at least 2"),
        (["--slow-path-policy", "single", "--mode", "pipeline"], "pipeline"),
    ):
        code, _, err = run_main(capsys, "rtc", "router", "--packets", "50", "--window-seconds", "0.001", *args)
        assert code == 2 and want in one_error_line(err), (args, err)
    code, _, err = run_main(capsys, "rtc", "echo", "--slow-path-policy", "single", "--window-seconds", "0.001")
    assert code == 2 and "traced application" in one_error_line(err)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    opt=st.sampled_from(
        ["--slow-interrupt-instructions", "--slow-role-switch-instructions", "--slow-message-instructions"]
    ),
    val=st.sampled_from(["-1", "0", "50", "10000001", "99999999999", "1.5", "x"]),
)
def test_cost_options_run_or_fail_with_one_line(opt, val, capsys):
    code, out, err = run_main(
        capsys, "rtc", "router", "--slow-path-policy", "floating", opt, val, "--criterion", "saturation",
        "--window-seconds", "0.0005", "--packets", "30", "--json",
    )
    assert code in (0, 2), err
    if code == 2:
        one_error_line(err)
    else:
        assert json.loads(out)["slow_path"] is not None
