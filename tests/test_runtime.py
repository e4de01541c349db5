"""``pktflow run``: the real runtime (docs/runtime.md)."""

from __future__ import annotations

import dpkt
import pytest
from cli_run import one_error_line, run_main
from conftest import run_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pktflow
from pktflow import PktflowError, runtime

TTL = """
FromDevice(eth0)
  -> c :: Classifier(12/0800, -)
  -> Strip(14)
  -> CheckIPHeader
  -> dt :: DecIPTTL
  -> Unstrip(14)
  -> Queue(1000)
  -> ToDump(out.pcap);
c[1] -> Discard;
dt[1] -> Discard;
"""


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("rt")
    p = d / "in.pcap"
    pktflow.write_synthetic(p, 600, seed=3)
    return p


def test_run_todump_identical_to_profile(tmp_path, trace):
    conf = tmp_path / "ttl.click"
    conf.write_text(TTL)
    a, b = tmp_path / "profile", tmp_path / "run"
    a.mkdir()
    b.mkdir()
    prof = run_json("profile", str(conf), "--trace", str(trace), "--out-dir", str(a))
    r = run_json("run", str(conf), "--trace", str(trace), "--out-dir", str(b))
    assert prof["conservation_errors"] == 0
    assert r["balance"]["conserved"]
    assert r["packets"]["from_source"] == 600
    assert r["timing"]["packets_per_second"] > 0
    got = (b / "out.pcap").read_bytes()
    assert len(got) > 24 and got == (a / "out.pcap").read_bytes()
    assert str(b / "out.pcap") in r["outputs"]


def test_run_router_threads_writes_one_pcap_per_device(tmp_path, trace):
    one, two = tmp_path / "one", tmp_path / "two"
    r1 = runtime.run("router", trace=trace, out_dir=one, threads=1)
    r2 = runtime.run("router", trace=trace, out_dir=two, threads=2, batch=4, ring_slots=4)
    for r in (r1, r2):
        assert r["balance"]["conserved"]
        assert r["packets"]["from_source"] == 600
    assert len(r2["timing"]["threads"]) == 2
    assert sum(r2["packets"]["per_thread_from_source"]) == 600
    assert r2["settings"]["threads"] == 2 and r2["settings"]["model"] == "rtc"
    names = sorted(p.name for p in one.iterdir())
    assert names == ["eth0.pcap", "eth1.pcap"]
    assert sorted(p.name for p in two.iterdir()) == names  # thread folders removed

    def ip_packets(path):
        with open(path, "rb") as f:
            return sorted(bytes(buf) for _, buf in dpkt.pcap.Reader(f) if buf[12:14] == b"\x08\x00")

    for n in names:
        # The same IPv4 packets leave (ARP differs: each thread asks for next hops itself).
        assert ip_packets(one / n) == ip_packets(two / n)


def test_run_table_and_model_refusal(capsys, trace):
    code, out, err = run_main(capsys, "run", "router", "--trace", str(trace))
    assert code == 0, err
    assert "packets/s" in out and "conserved" in out
    code, out, err = run_main(capsys, "run", "router", "--trace", str(trace), "--model", "pipeline")
    assert code == 2
    assert "not implemented" in one_error_line(err)


@pytest.mark.parametrize(
    "argv, needle",
    [
        (["--threads", "0"], "threads"),
        (["--threads", "100000"], "threads"),
        (["--batch", "0"], "batch"),
        (["--ring-slots", "1"], "--ring-slots"),
        (["--synthetic", "0"], "--synthetic"),
        (["--model", "bogus"], "model"),
        (["--io", "bogus"], "io"),
    ],
)
def test_run_bad_options_one_line(capsys, argv, needle):
    code, _, err = run_main(capsys, "run", "router", *argv)
    assert code == 2
    assert needle in one_error_line(err)


def test_run_bad_trace_file(tmp_path, capsys):
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(b"not a pcap at all")
    code, _, err = run_main(capsys, "run", "router", "--trace", str(bad))
    assert code == 2
    one_error_line(err)


def test_api_refuses_bad_values():
    with pytest.raises(PktflowError, match="threads"):
        runtime.run("router", synthetic=10, threads=0)
    with pytest.raises(PktflowError, match="--model"):
        runtime.run("router", synthetic=10, model="nope")


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    threads=st.one_of(st.integers(-3, 3), st.just(10**9)),
    batch=st.one_of(st.integers(-2, 5), st.just(10**9)),
    n=st.one_of(st.integers(-1, 40), st.just(10**12)),
)
def test_numeric_options_never_traceback(capsys, threads, batch, n):
    code, _, err = run_main(
        capsys, "run", "router", "--synthetic", str(n), "--threads", str(threads), "--batch", str(batch)
    )
    assert code in (0, 2)
    if code == 2:
        one_error_line(err)
