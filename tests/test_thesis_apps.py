"""The NetThreads thesis's benchmark applications: each profiles on a small trace of its own
workload (written by gen-trace), and the numeric options refuse bad values in one line."""
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pktflow
from pktflow.cli import main

APPS = ["classifier", "nat-nt", "udhcp", "intruder", "intruder2", "echo"]


@pytest.mark.parametrize("app", APPS)
def test_profiles_on_its_generated_trace(app, tmp_path):
    out = tmp_path / f"{app}.pcap"
    main(["gen-trace", str(out), "-n", "200", "--seed", "3", "--app", app])
    assert out.stat().st_size > 0
    p = pktflow.profile(app, trace=str(out))
    assert p["packets"] == 200
    g = pktflow.graph(app)
    assert len(g["elements"]) >= 3


# capsys is read (and so emptied) on every example.
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.sampled_from(["0", "-1", "nan", "1e30", "x"]), app=st.sampled_from(APPS))
def test_bad_packet_counts_are_one_line_errors(n, app, capsys):
    with pytest.raises(SystemExit) as e:
        main(["profile", app, "--synthetic", n])
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:")
