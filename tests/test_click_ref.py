"""pktflow against Click 2.1's recorded outputs (tests/data/click-ref), without Click.

Each recorded pair (a chain of elements, a seeded trace of awkward packets) holds the
configuration Click ran, and the pcaps and printed lines Click produced. This test runs the same
configuration with ``pktflow profile CONFIG --out-dir D --json`` (the CLI, in-process) and
compares every output record (bytes, caplen, len, timestamp; packets Click stamps with its own
clock by bytes only) and the printed lines, with the comparison of ``scripts/click-diff``.

A pair may differ only as listed in ``known-differences.toml`` (the exact set of differences,
with a reason); the test fails on an unlisted difference and on a listed one that no longer
occurs as listed, so the list stays true.
"""

from __future__ import annotations

import contextlib
import importlib.machinery
import importlib.util
import io
import json
from pathlib import Path

import pytest

from pktflow.cli import main

ROOT = Path(__file__).resolve().parent.parent
REF = ROOT / "tests" / "data" / "click-ref"


def _load_click_diff():
    path = ROOT / "scripts" / "click-diff"
    loader = importlib.machinery.SourceFileLoader("click_diff", str(path))
    spec = importlib.util.spec_from_loader("click_diff", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


cd = _load_click_diff()
KNOWN = cd.load_known(REF / "known-differences.toml")
PAIRS = sorted(p for p in (REF / "pairs").iterdir() if p.is_dir())
CHAINS = sorted({json.loads((p / "meta.json").read_text())["chain"] for p in PAIRS})


def pktflow_in_process(argv: list[str]) -> tuple[int, str, str]:
    """``pktflow ARGV`` through the CLI's entry point, in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(argv))
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    return code, out.getvalue(), err.getvalue()


def test_fixtures_are_there_and_small():
    assert len(PAIRS) >= 100, f"{len(PAIRS)} recorded pairs"
    total = sum(f.stat().st_size for f in REF.rglob("*") if f.is_file())
    assert total < 12 * 1024 * 1024, f"fixtures take {total} bytes"
    for p in PAIRS:
        meta = json.loads((p / "meta.json").read_text())
        assert (REF / "traces" / f"{meta['trace']}.pcap").is_file(), p.name
        for k in range(len(meta["outputs"])):
            assert (p / "click" / f"out{k}.pcap").is_file(), f"{p.name}: out{k}"


def test_every_listed_difference_names_a_recorded_pair():
    names = {p.name for p in PAIRS}
    assert not [k for k in KNOWN if k not in names], "listed in known-differences.toml but not recorded"
    for k, v in KNOWN.items():
        assert v["reason"].strip() and v["differs"], k


@pytest.mark.parametrize("chain", CHAINS)
def test_pktflow_matches_click(chain, tmp_path):
    failures = []
    for pd in PAIRS:
        if json.loads((pd / "meta.json").read_text())["chain"] != chain:
            continue
        r = cd.replay_pair(REF, pd, pktflow_in_process, KNOWN, tmp_path)
        if r["verdict"] in ("identical", "known"):
            continue
        listed = sorted(KNOWN[pd.name]["differs"]) if pd.name in KNOWN else []
        detail = {o: {k: x.get(k) for k in ("kinds", "click_records", "pktflow_records", "differing", "first")}
                  for o, x in r["outputs"].items() if x["kinds"]}
        failures.append(
            f"{pd.name}: {r['verdict']}: differs {r['signatures']}, listed {listed}"
            + (f"; pktflow error: {r['pktflow_error']}" if "pktflow_error" in r else "")
            + (f"; printed {r['printed']}" if "printed" in r else "")
            + f"\n  {json.dumps(detail, default=str)[:1500]}"
        )
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("mode", ["profile", "run"])
@pytest.mark.parametrize("trace", ["awk1", "awk2", "snap1"])
def test_from_dump_to_dump_is_byte_identical_to_click(mode, trace, tmp_path):
    """FromDump(in.pcap) -> ToDump(out0.pcap): the whole file, record headers included, is the
    one Click wrote (Click keeps each record's timestamp; nanosecond files by default)."""
    pd = REF / "pairs" / f"FromDump-ToDump--{trace}"
    (tmp_path / "in.pcap").write_bytes((REF / "traces" / f"{trace}.pcap").read_bytes())
    (tmp_path / "config.click").write_text((pd / "config.click").read_text())
    out = tmp_path / "out"
    code, _, err = pktflow_in_process([mode, str(tmp_path / "config.click"), "--out-dir", str(out), "--json"])
    assert code == 0, err
    assert (out / "out0.pcap").read_bytes() == (pd / "click" / "out0.pcap").read_bytes()


@pytest.mark.parametrize("mode", ["profile", "run"])
def test_trace_input_keeps_the_record_headers_as_click(mode, tmp_path):
    """Trace packets (`--trace`) entering at FromDevice keep their records' timestamps too: what
    ToDump writes is the file Click's FromDump -> ToDump wrote from the same trace."""
    pd = REF / "pairs" / "FromDump-ToDump--awk2"
    (tmp_path / "dev.click").write_text("FromDevice(eth0) -> ToDump(out0.pcap);\n")
    out = tmp_path / "out"
    code, _, err = pktflow_in_process([mode, str(tmp_path / "dev.click"), "--trace", str(REF / "traces" / "awk2.pcap"),
                                       "--out-dir", str(out), "--json"])
    assert code == 0, err
    assert (out / "out0.pcap").read_bytes() == (pd / "click" / "out0.pcap").read_bytes()
