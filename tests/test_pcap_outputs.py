"""Output pcaps written by ToDump are read back by an independent reader (dpkt)."""

from __future__ import annotations

import dpkt
import pktflow
from conftest import run_json

CONFIG = """
// Decrement the TTL of every IP packet and write the result; non-IP frames are dropped.
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


def _read(path):
    with open(path, "rb") as f:
        return [(ts, bytes(buf)) for ts, buf in dpkt.pcap.Reader(f)]


def test_todump_output_read_by_dpkt(tmp_path):
    src = tmp_path / "in.pcap"
    pktflow.write_synthetic(src, 400, seed=4)
    conf = tmp_path / "ttl.click"
    conf.write_text(CONFIG)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    prof = run_json("profile", str(conf), "--trace", str(src), "--out-dir", str(out_dir))
    assert prof["conservation_errors"] == 0

    inputs = _read(src)
    outputs = _read(out_dir / "out.pcap")
    ip_in = [b for _, b in inputs if dpkt.ethernet.Ethernet(b).type == dpkt.ethernet.ETH_TYPE_IP]
    assert 0 < len(outputs) <= len(ip_in)
    for _, b in outputs:
        eth = dpkt.ethernet.Ethernet(b)
        ip = eth.data
        assert isinstance(ip, dpkt.ip.IP)
        # checksum still valid after the incremental update (RFC 1624)
        hdr = bytearray(bytes(ip)[: ip.hl * 4])
        s = sum(int.from_bytes(hdr[i : i + 2], "big") for i in range(0, len(hdr), 2))
        while s >> 16:
            s = (s & 0xFFFF) + (s >> 16)
        assert s == 0xFFFF
    # the TTLs went down by exactly one, in order
    ttl_in = [dpkt.ethernet.Ethernet(b).data.ttl for b in ip_in if dpkt.ethernet.Ethernet(b).data.ttl > 1]
    ttl_out = [dpkt.ethernet.Ethernet(b).data.ttl for _, b in outputs]
    assert ttl_out == [t - 1 for t in ttl_in]


def test_pcapng_trace_is_accepted(tmp_path):
    src = tmp_path / "in.pcapng"
    s = pktflow.write_synthetic(src, 200, seed=8, pcapng=True)
    assert s["packets"] == 200
    with open(src, "rb") as f:
        assert len(list(dpkt.pcapng.Reader(f))) == 200
    prof = pktflow.profile("router", trace=src)
    assert prof["packets"] >= 200
