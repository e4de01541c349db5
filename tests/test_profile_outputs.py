"""``pktflow profile --out-dir`` writes one pcap per ToDevice, byte-identical to ``pktflow run``'s
on one thread (docs/runtime.md, "Outputs"; the shared writer is ``crates/traffic/src/devices.rs``)."""

from __future__ import annotations

import dpkt
import pytest
from conftest import run_json

import pktflow


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    d = tmp_path_factory.mktemp("po")
    out = {}
    for app in ("router", "nat"):
        p = d / f"{app}.pcap"
        pktflow.write_synthetic(p, 800, seed=5, app=app)
        out[app] = p
    return out


def _pcaps(d):
    return {p.name: p.read_bytes() for p in sorted(d.glob("*.pcap"))}


@pytest.mark.parametrize("app", ["router", "nat"])
def test_profile_and_run_write_the_same_device_pcaps(tmp_path, traces, app):
    a, b = tmp_path / "profile", tmp_path / "run"
    prof = run_json("profile", app, "--trace", str(traces[app]), "--out-dir", str(a))
    r = run_json("run", app, "--trace", str(traces[app]), "--out-dir", str(b))
    pa, pb = _pcaps(a), _pcaps(b)
    assert pa.keys() == pb.keys() and len(pa) >= 2, (pa.keys(), pb.keys())
    records = 0
    for name, data in pa.items():
        assert data == pb[name], f"{app}: {name} differs between profile and run"
        with open(a / name, "rb") as f:
            records += sum(1 for _ in dpkt.pcap.Reader(f))
    assert records > 400
    assert sorted(prof["device_outputs"]) == sorted(str(a / n) for n in pa)
    assert set(str(b / n) for n in pb) <= set(r["outputs"])
    assert not list(a.glob(".*partial")) and not list(b.glob(".*partial"))


def test_profile_without_out_dir_writes_no_device_pcap(tmp_path, traces, monkeypatch):
    monkeypatch.chdir(tmp_path)
    prof = run_json("profile", "router", "--trace", str(traces["router"]))
    assert prof["device_outputs"] == []
    assert list(tmp_path.glob("*.pcap")) == []
