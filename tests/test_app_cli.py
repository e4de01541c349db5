"""End-to-end tests of the application commands: graph, profile, elements, arch, gen-trace."""

from __future__ import annotations

import pktflow
import pytest
from conftest import run_cli, run_json


def test_graph_router_counts_and_json_shape():
    g = run_json("graph", "router")
    assert len(g["elements"]) == 44
    assert len(g["connections"]) == 57
    names = {e["name"] for e in g["elements"]}
    for c in g["connections"]:
        assert c["from"] in names and c["to"] in names


def test_graph_dot(tmp_path):
    out = tmp_path / "r.dot"
    run_cli("graph", "router", "--dot", str(out))
    text = out.read_text()
    assert text.startswith("digraph") and text.count("->") == 57


def test_graph_nat_and_router64():
    nat = pktflow.graph("nat")
    assert any(e["class"] == "IPRewriter" for e in nat["elements"])
    r64 = pktflow.graph("router64")
    assert sum(e["class"] == "FromDevice" for e in r64["elements"]) == 64


def test_bad_click_file_gives_file_line_col_and_no_traceback(tmp_path):
    f = tmp_path / "bad.click"
    f.write_text("a :: Queue;\nb :: Discard;\na -> b\nc :: Nope(1);\n")
    p = run_cli("graph", str(f), check=False)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert f"{f}:" in p.stderr


def test_unknown_class_and_bad_config_are_reported(tmp_path):
    f = tmp_path / "bad2.click"
    f.write_text("FromDevice(eth0) -> Qeue(10) -> ToDevice(eth0);\n")
    p = run_cli("graph", str(f), check=False)
    assert p.returncode == 2
    assert "unknown element class 'Qeue'" in p.stderr and "did you mean 'Queue'" in p.stderr
    f.write_text("FromDevice(eth0) -> Queue(ten) -> ToDevice(eth0);\n")
    p = run_cli("graph", str(f), check=False)
    assert p.returncode == 2 and "expected unsigned integer, found 'ten'" in p.stderr
    assert f"{f}:1:" in p.stderr


def test_unknown_app_name():
    p = run_cli("graph", "no-such-app", check=False)
    assert p.returncode == 2
    assert "unknown application 'no-such-app'" in p.stderr


def test_profile_router_synthetic_json():
    prof = run_json("profile", "router", "--synthetic", "3000", "--seed", "3")
    assert prof["packets"] >= 3000
    assert prof["conservation_errors"] == 0
    # the forwarding path of the SOSP router visits ~16 elements (seed 000 section 4)
    assert 12 <= prof["elements_visited_per_packet"]["mean"] <= 20
    assert prof["instructions_per_packet"]["mean"] > 100
    for m in ("packet_data", "packet_meta", "static_state", "dynamic_state", "stack"):
        assert m in prof["bytes_per_packet"]
    assert 0 < prof["critical_section_instruction_share"] < 1
    delivered = sum(o["count"] for o in prof["outputs"])
    assert delivered > 0.8 * 3000


def test_profile_is_deterministic():
    a = pktflow.profile("router", synthetic=2000, seed=11)
    b = pktflow.profile("router", synthetic=2000, seed=11)
    for k in ("packets", "elements_visited_per_packet", "instructions_per_packet", "bytes_per_packet", "drops"):
        assert a[k] == b[k]


def test_profile_nat():
    prof = pktflow.profile("nat", synthetic=3000, seed=5)
    assert prof["conservation_errors"] == 0
    assert prof["critical_section_instruction_share"] > 0
    assert any(e["class"] == "IPRewriter" for e in prof["elements"])


def test_gen_trace_then_profile_reads_it(tmp_path):
    pcap = tmp_path / "t.pcap"
    s = run_json("gen-trace", str(pcap), "-n", "500", "--seed", "9")
    assert s["packets"] == 500 and pcap.stat().st_size > 500 * 60
    prof = run_json("profile", "router", "--trace", str(pcap))
    assert prof["packets"] >= 500
    again = tmp_path / "u.pcap"
    run_json("gen-trace", str(again), "-n", "500", "--seed", "9")
    assert pcap.read_bytes() == again.read_bytes(), "same seed, same bytes"


def test_corrupt_pcap_error_names_offset(tmp_path):
    pcap = tmp_path / "t.pcap"
    run_json("gen-trace", str(pcap), "-n", "10", "--seed", "1")
    data = pcap.read_bytes()
    bad = tmp_path / "bad.pcap"
    bad.write_bytes(data[: len(data) - 7])
    p = run_cli("profile", "router", "--trace", str(bad), check=False)
    assert p.returncode == 2
    assert "byte offset" in p.stderr and "Traceback" not in p.stderr


def test_trace_stream_matches_profile():
    n = 0
    visits = 0
    for t in pktflow.trace("router", synthetic=300, seed=2):
        n += 1
        visits += len(t["visits"])
        for v in t["visits"]:
            assert v["instructions"] >= 0
            for a in v["accesses"]:
                assert a["mem"] in ("packet_data", "packet_meta", "static_state", "dynamic_state", "stack")
    prof = pktflow.profile("router", synthetic=300, seed=2)
    assert n == prof["packets"]
    assert visits / n == pytest.approx(prof["elements_visited_per_packet"]["mean"])


def test_elements_lists_the_router_and_nat_classes():
    names = {c["name"] for c in run_json("elements")}
    for c in (
        "Classifier",
        "ARPQuerier",
        "CheckIPHeader",
        "StaticIPLookup",
        "RadixIPLookup",
        "DecIPTTL",
        "IPFragmenter",
        "ICMPError",
        "IPClassifier",
        "IPRewriter",
        "ToDump",
        "FromDump",
        "Queue",
    ):
        assert c in names


def test_arch_presets():
    names = [r["name"] for r in run_json("arch", "list")]
    assert names == ["npire", "ixp2400", "netthreads", "mesh", "host"]
    a = run_json("arch", "show", "npire")
    assert a["kind"] == "np"
    assert a["params"]["np"]["hardware_contexts_per_pe"] == 8
    assert a["params"]["storage"]["dram"]["pipelined_read_cycles"] == 226
    out = run_cli("arch", "show", "netthreads").stdout
    assert "mutexes" in out and "16" in out


def test_impossible_arch_file(tmp_path):
    f = tmp_path / "a.toml"
    f.write_text("[preset]\nname='x'\ndescription='y'\n[netthreads]\ncores = 0\n")
    p = run_cli("arch", "show", str(f), check=False)
    assert p.returncode == 2 and str(f) in p.stderr and "Traceback" not in p.stderr


def test_require_of_unknown_package_is_a_warning(tmp_path):
    f = tmp_path / "req.click"
    f.write_text('require(package "fastclassifier");\nFromDevice(eth0) -> Queue -> ToDevice(eth0);\n')
    p = run_cli("graph", str(f))
    assert "warning" in p.stderr and "fastclassifier" in p.stderr


def test_profile_csv_and_plot(tmp_path):
    import pandas as pd

    csv = tmp_path / "p.csv"
    png = tmp_path / "p.png"
    prof = run_json("profile", "router", "--synthetic", "1000", "--csv", str(csv), "--plot", str(png))
    df = pd.read_csv(csv)
    assert set(df["element"]) == {e["name"] for e in prof["elements"]}
    assert df["instructions_per_packet"].sum() == pytest.approx(prof["instructions_per_packet"]["mean"], rel=1e-6)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_usage_errors_exit_2_without_traceback_whatever_click_typer_uses():
    """Regression: typer >= 0.2x raises its vendored click's exceptions, which are not
    ``click.ClickException``; they used to escape as a traceback with exit code 1."""
    import subprocess
    import sys

    for argv in (["maxrate", "--nonsense"], ["noc", "--rates", "x"], ["map", "mpls", "--mapper", "nope"]):
        r = subprocess.run([sys.executable, "-m", "pktflow", *argv], capture_output=True, text=True)
        assert r.returncode == 2, (argv, r.stderr)
        assert "Traceback" not in r.stderr and "error" in r.stderr.lower(), r.stderr
