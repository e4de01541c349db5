"""A TDPM plan on the timing simulator (issue 5, seed 001 Figure 5 by simulation) through the Python
API: the model and the simulator see the same plan and the same hand-offs."""

from __future__ import annotations

import pytest
from pktflow import PktflowError, tdpm


def test_simulate_plan_compares_model_and_simulator():
    r = tdpm.simulate_plan("mpls", engines=2, packets=400, sim_packets=400, offered_gbps=3.0, packet_bytes=64)
    p, model, sim = r["point"], r["model"], r["simulation"]
    assert p["model_packets_per_second"] == pytest.approx(model["packets_per_second"])
    assert p["sim_packets_per_second"] == pytest.approx(sim["packets_per_second"])
    m, s = p["model_packets_per_second"], p["sim_packets_per_second"]
    assert p["error_pct"] == pytest.approx(100 * (m - s) / s)
    assert p["sim_forwarding_gbps"] <= 3.0 + 1e-9
    # Every PPF of an ME task runs on that task's MEs, in its group; the receiver on PE 0.
    for t in model["tasks"]:
        for name in t["ppfs"]:
            em = sim["mapping"][name]
            assert em["group"] == t["task"]
            if t["processor"] == "xscale":
                assert em["pes"] == "xscale"
            else:
                assert len(em["pes"]) == t["engines"]
    assert sim["mapping"]["FromDevice@2"]["pes"] == [0]
    # Same traffic for both: the simulator reads a header where the model charges a load.
    assert sim["handoff_reads_per_packet"] > 0.9


def test_base_runs_on_the_xscale_and_errors_are_clear():
    r = tdpm.simulate_plan("firewall", mapper="base", engines=1, packets=300, sim_packets=300)
    assert r["point"]["me_tasks"] == 0 and r["point"]["xscale_tasks"] > 0
    assert r["point"]["sim_limits"][0][0] == "xscale"
    with pytest.raises(PktflowError, match="at most 6"):
        tdpm.simulate_plan("mpls", engines=7, packets=100, sim_packets=100)
    with pytest.raises(PktflowError, match="unknown mapper"):
        tdpm.simulate_plan("mpls", mapper="nope", packets=100, sim_packets=100)
