"""Click's own example configurations (copied unchanged from Click's conf/ directory into
tests/data/click-conf/) pass `pktflow graph` and `pktflow profile` as written, and a configuration
written as a Click user writes it (FromDump, AddressInfo, ToDump, DriverManager) runs with its
own capture and prints its counters."""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import dpkt
import pktflow.cli
import pytest
from conftest import run_cli, run_json
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from cli_run import run_main as _main

ROOT = Path(__file__).resolve().parent.parent
CONF = ROOT / "tests" / "data" / "click-conf"

# Configurations whose packets enter at device elements (FromDevice, PollDevice): profiled on a
# small synthetic trace. The others generate their own packets (InfiniteSource, TimedSource,
# FastUDPSource) and are profiled as written, up to pktflow's limit of 1,000,000 packets.
DEVICE_FED = ["mazu-nat.click", "print-pings.click", "test-device.click", "udpcount.click"]
SELF_FED = ["fake-iprouter.click", "fastudpsrc.click", "test.click", "test2.click", "test3.click", "udpgen.click"]


@pytest.mark.parametrize("name", DEVICE_FED + SELF_FED)
def test_click_conf_graph(name):
    g = run_json("graph", str(CONF / name))
    assert g["elements"], name


@pytest.mark.parametrize("name", DEVICE_FED)
def test_click_conf_profile_on_a_trace(name):
    p = run_json("profile", str(CONF / name), "--synthetic", "300", "--seed", "3")
    assert p["packets"] == 300
    assert p["conservation_errors"] == 0


@pytest.mark.parametrize("name", SELF_FED)
def test_click_conf_profile_as_written(name):
    p = run_json("profile", str(CONF / name))
    assert p["packets"] > 0
    assert p["conservation_errors"] == 0


def test_test_click_runs_its_five_packets():
    # test.click: InfiniteSource(DATA, 5, 5) -> Strip(14) -> CheckIPHeader -> Print -> Discard.
    p = run_json("profile", str(CONF / "test.click"))
    assert p["packets"] == 5
    assert [(d["reason"], d["count"]) for d in p["drops"]] == [("Discard", 5)]


def test_urewrite_is_refused_as_click_21_refuses_it():
    r = run_cli("graph", str(CONF / "urewrite.click"), check=False)
    assert r.returncode == 2
    assert "input spec" in r.stderr
    assert "Traceback" not in r.stderr


def _frame(src: bytes, dst: bytes, k: int) -> bytes:
    udp = dpkt.udp.UDP(sport=1000 + k, dport=53, data=bytes([k]) * 6)
    udp.ulen = len(udp)
    ip = dpkt.ip.IP(src=src, dst=dst, p=dpkt.ip.IP_PROTO_UDP, ttl=64, data=udp, id=k)
    eth = dpkt.ethernet.Ethernet(
        dst=bytes.fromhex("0050ba8584a9"), src=bytes([2, 0, 0, 0, 0, k]), type=dpkt.ethernet.ETH_TYPE_IP, data=ip
    )
    return bytes(eth)


def test_capture_filter_as_a_click_user_writes_it(tmp_path):
    shutil.copy(ROOT / "apps" / "capture-filter.click", tmp_path / "capture-filter.click")
    server = bytes([10, 0, 0, 10])
    frames = [
        _frame(bytes([10, 0, 0, 1]), server, 1),  # to the server: kept
        _frame(bytes([10, 0, 0, 2]), bytes([10, 0, 0, 3]), 2),  # not kept
        _frame(server, bytes([192, 168, 1, 1]), 3),  # from the server: kept
        b"\xff" * 6 + bytes([2, 0, 0, 0, 0, 4]) + struct.pack("!H", 0x0806) + bytes(28),  # ARP: not IPv4
    ]
    with open(tmp_path / "capture.pcap", "wb") as f:
        w = dpkt.pcap.Writer(f)
        for i, fr in enumerate(frames):
            w.writepkt(fr, ts=1000 + i * 0.001)
    out = tmp_path / "out"
    p = run_json("profile", str(tmp_path / "capture-filter.click"), "--out-dir", str(out))
    assert p["packets"] == 4
    with open(out / "server.pcap", "rb") as f:
        kept = [bytes(b) for _, b in dpkt.pcap.Reader(f)]
    assert kept == [frames[0], frames[2]]
    dm = next(v for k, v in p["element_stats"].items() if k.startswith("DriverManager"))
    kept_bytes = len(frames[0]) + len(frames[2])
    assert dm["output"] == ["read 4 kept 2", "kept.byte_count:", str(kept_bytes)]
    # The text report prints what the DriverManager printed.
    text = run_cli("profile", str(tmp_path / "capture-filter.click"), "--out-dir", str(out)).stdout
    assert "read 4 kept 2" in text


# ---- fuzzed numeric arguments of the Click-compatibility elements --------------------------

NUMBERS = st.one_of(
    st.integers(min_value=-(10**25), max_value=10**25).map(str),
    st.sampled_from(["nan", "inf", "-inf", "1e400", "0", "-1", "0.5", "x", "", "0x10", "65536", "1Mbps", "5 furlongs"]),
)
TEMPLATES = [
    "RED({a}, {b}, {c}) -> Queue -> Discard",
    "Meter({a}, {b}) -> Discard; m[1] -> Discard; m[2] -> Discard",
    "BandwidthShaper({a})",
    "FastUDPSource({a}, {b}, {c}, 0:0:0:0:0:1, 1.0.0.1, 1, 0:0:0:0:0:2, 2.0.0.2, 2) -> Discard",
    "HashSwitch({a}, {b}) -> Discard",
    "Switch({a}) -> Discard",
    "SetTimestamp({a}) -> Discard",
    "TimedSource({a}, LIMIT {b}) -> Discard",
    "ICMPPingSource(1.0.0.1, 2.0.0.2, INTERVAL {a}, IDENTIFIER {b}, LIMIT {c}) -> Discard",
]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(k=st.integers(0, len(TEMPLATES) - 1), a=NUMBERS, b=NUMBERS, c=NUMBERS)
def test_fuzz_element_numbers_give_one_clean_line(tmp_path, capsys, k, a, b, c):
    body = TEMPLATES[k].format(a=a, b=b, c=c)
    if body.startswith("Meter"):
        # Fed, so that a Meter whose numbers are valid leaves at most the one error its output
        # count may cause (m[2] needs two rates).
        body = "InfiniteSource(LIMIT 2) -> m :: " + body
    elif body.startswith("BandwidthShaper"):
        body = "InfiniteSource(LIMIT 2) -> Queue -> " + body + " -> Discard"
    elif not body.startswith(("FastUDPSource", "TimedSource", "ICMPPingSource")):
        body = "InfiniteSource(LIMIT 2) -> " + body
    conf = tmp_path / "f.click"
    conf.write_text(body + ";\n")
    code, _, errs = _main(capsys, "graph", str(conf), "--json")
    assert "Traceback" not in errs
    if code != 0:
        assert code == 2, errs
        assert len(errs.strip().splitlines()) == 1, errs
