"""``pktflow run``: the real runtime (docs/runtime.md)."""

from __future__ import annotations

import json

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


@pytest.mark.parametrize("io", ["dedicated", "each"])
def test_run_router_threads_writes_one_pcap_per_device(tmp_path, trace, io):
    one, two = tmp_path / "one", tmp_path / "two"
    r1 = runtime.run("router", trace=trace, out_dir=one, threads=1)
    r2 = runtime.run("router", trace=trace, out_dir=two, threads=2, batch=4, ring_slots=4, io=io)
    assert r2["settings"]["io"] == io
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


def test_run_table_and_pipeline_table(capsys, trace):
    code, out, err = run_main(capsys, "run", "router", "--trace", str(trace))
    assert code == 0, err
    assert "packets/s" in out and "conserved" in out
    code, out, err = run_main(capsys, "run", "router", "--trace", str(trace), "--model", "pipeline", "--threads", "2")
    assert code == 0, err
    assert "pipeline" in out and "handed between threads" in out and "conserved" in out


def test_click_multithreaded_replay_on_its_threads(capsys, tmp_path):
    """Click's two-pipeline replay (one FromDump per thread, StaticThreadSched, a DriverManager
    printing the counters) runs on 2 threads: each thread its own source, the printed line as
    on one thread (docs/runtime.md, "A configuration's own tasks on threads")."""
    for k, n in [(0, 300), (1, 200)]:
        pktflow.write_synthetic(tmp_path / f"t{k}.pcap", n, seed=k + 1)
    conf = tmp_path / "two.click"
    conf.write_text(
        "fd0 :: FromDump(t0.pcap, STOP true) -> c0 :: Counter -> Discard;\n"
        "fd1 :: FromDump(t1.pcap, STOP true) -> c1 :: Counter -> Discard;\n"
        "StaticThreadSched(fd0 0, fd1 1);\n"
        'dm :: DriverManager(wait, wait, print "c0 $(c0.count) c1 $(c1.count)", stop);\n'
    )
    for threads in ["1", "2"]:
        code, out, err = run_main(capsys, "run", str(conf), "--threads", threads)
        assert code == 0, err
        assert "dm: c0 300 c1 200" in out
    # The table: each thread's packets (its own source's).
    rows = [[c.strip() for c in ln.split("│")[1:-1]] for ln in out.splitlines() if ln.count("│") > 2]
    assert [r[2] for r in rows] == ["300", "200"], out
    r = run_json("run", str(conf), "--threads", "2")
    assert r["packets"]["per_thread_from_source"] == [300, 200]
    assert [t["tasks"] for t in r["timing"]["threads"]] == [["fd0"], ["fd1"]]
    code, out, err = run_main(capsys, "run", str(conf), "--threads", "2", "--trace", str(tmp_path / "t0.pcap"))
    assert code == 2 and "reads its own packets" in one_error_line(err)
    conf.write_text(conf.read_text().replace("fd1 1", "fd1 2"))
    code, out, err = run_main(capsys, "run", str(conf), "--threads", "2")
    assert code == 2 and "out of range" in one_error_line(err)


def test_pipeline_warmup_is_recorded_and_keeps_outputs(tmp_path, trace):
    one = tmp_path / "one"
    runtime.run("router", trace=trace, out_dir=one)
    pipe = tmp_path / "pipe"
    r = run_json(
        "run", "router", "--trace", str(trace), "--out-dir", str(pipe), "--model", "pipeline", "--threads", "2",
        "--warmup", "50",
    )
    assert r["settings"]["warmup"] == 50 and r["balance"]["conserved"]
    assert _flows(pipe) == _flows(one)


def _flows(folder):
    """IPv4 records of every pcap in ``folder`` grouped by (file, symmetric 5-tuple), in order."""
    flows = {}
    for f in sorted(folder.glob("*.pcap")):
        with open(f, "rb") as fh:
            for _, buf in dpkt.pcap.Reader(fh):
                eth = dpkt.ethernet.Ethernet(buf)
                ip = eth.data
                if not isinstance(ip, dpkt.ip.IP):
                    continue
                l4 = ip.data
                ports = (0, 0)
                if isinstance(l4, (dpkt.tcp.TCP, dpkt.udp.UDP)):
                    ports = (l4.sport, l4.dport)
                ends = sorted([(ip.src, ports[0]), (ip.dst, ports[1])])
                flows.setdefault((f.name, tuple(ends), ip.p), []).append(bytes(buf))
    return flows


@pytest.fixture(scope="module")
def mpls_trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("mpls")
    p = d / "in.pcap"
    pktflow.write_synthetic(p, 800, seed=5, app="mpls")
    return p


def test_pipeline_and_hybrid_keep_per_flow_outputs(tmp_path, trace):
    one = tmp_path / "one"
    runtime.run("router", trace=trace, out_dir=one)
    base = _flows(one)
    assert len(base) > 20
    pipe = tmp_path / "pipe"
    r = run_json(
        "run", "router", "--trace", str(trace), "--out-dir", str(pipe), "--model", "pipeline", "--threads", "3"
    )
    assert r["settings"]["model"] == "pipeline" and r["balance"]["conserved"]
    assert len(r["placement"]["stages"]) == 3
    assert r["balance"]["handed_between_threads"] == r["balance"]["received_from_threads"] > 0
    assert {x["to_thread"] for x in r["timing"]["rings"]} == {0, 1, 2}
    assert _flows(pipe) == base
    # The mapping pktflow explore --json writes, run as hybrid.
    ex = run_json(
        "explore", "router", "--pes", "4", "--replication", "global", "--mapper", "greedy",
        "--packets", "200", "--no-bottleneck",
    )
    m = tmp_path / "explore.json"
    m.write_text(json.dumps(ex))
    hyb = tmp_path / "hyb"
    r = run_json(
        "run", "router", "--trace", str(trace), "--out-dir", str(hyb), "--model", "hybrid", "--mapping", str(m),
        "--threads", "2",
    )
    assert r["settings"]["mapping"] == str(m) and r["balance"]["conserved"]
    assert r["placement"]["origin"]["format"].startswith("explore")
    assert r["placement"]["replicated"]
    assert _flows(hyb) == base


def test_hybrid_from_pktflow_map(tmp_path, mpls_trace):
    one = tmp_path / "one"
    runtime.run("mpls", trace=mpls_trace, out_dir=one)
    mp = run_json("map", "mpls", "--engines", "4", "--packets", "300")
    m = tmp_path / "map.json"
    m.write_text(json.dumps(mp))
    hyb = tmp_path / "hyb"
    r = runtime.run("mpls", trace=mpls_trace, out_dir=hyb, threads=2, model="hybrid", mapping=m)
    assert r["balance"]["conserved"]
    assert r["placement"]["origin"]["format"].startswith("map")
    assert _flows(hyb) == _flows(one) and _flows(one)


@pytest.mark.parametrize(
    "text, needle",
    [
        ("not json", "not JSON"),
        ('{"threads": [["no_such"]]}', "no_such"),
        ('{"threads": [["rt", "rt"]]}', "twice"),
        ("{}", "no mapping found"),
        ('{"mapping": {"tasks": [{"element": "rt", "pes": []}]}}', "no processing element"),
    ],
)
def test_bad_mapping_file_one_line(tmp_path, capsys, trace, text, needle):
    m = tmp_path / "m.json"
    m.write_text(text)
    code, _, err = run_main(
        capsys, "run", "router", "--trace", str(trace), "--model", "hybrid", "--mapping", str(m), "--threads", "2"
    )
    assert code == 2
    line = one_error_line(err)
    assert str(m) in line and needle in line


def test_mapping_needs_hybrid_and_hybrid_needs_mapping(capsys, trace):
    code, _, err = run_main(capsys, "run", "router", "--trace", str(trace), "--model", "hybrid")
    assert code == 2 and "--mapping" in one_error_line(err)
    code, _, err = run_main(capsys, "run", "router", "--trace", str(trace), "--mapping", "x.json")
    assert code == 2 and "--model hybrid" in one_error_line(err)


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
        (["--io", "each", "--model", "pipeline", "--threads", "2"], "--io each"),
        (["--warmup", "10"], "--warmup"),
        (["--warmup", "-1", "--model", "pipeline"], "--warmup"),
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


def test_more_busy_threads_than_cores_is_said(tmp_path, monkeypatch, capsys):
    """`pktflow run --threads 2` on 2 cores (two workers and the I/O thread) said nothing about
    the threads taking turns; with one core allowed it must say so, and not with one thread."""
    import os

    from pktflow.cli import main

    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    for threads, expect in (("2", True), ("1", False)):
        try:
            main(["run", "router", "--synthetic", "200", "--threads", threads, "--out-dir", str(tmp_path)])
        except SystemExit as e:
            assert e.code in (0, None)
        err = capsys.readouterr().err
        assert ("share 1 core" in err) == expect, err
