"""The `host` preset describes the machine it runs on once `pktflow arch measure-host` has
measured it (it said "AMD EPYC" on an Intel Xeon), says when it was measured, and commands that
use it unmeasured say so."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def _run(*args, cache):
    env = {**os.environ, "PKTFLOW_CACHE_DIR": str(cache)}
    return subprocess.run([sys.executable, "-m", "pktflow", *args], capture_output=True, text=True, env=env, timeout=300)


def _cpu_model() -> str:
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return ""


def test_measure_host_makes_host_this_machine_and_dates_it(tmp_path):
    before = json.loads(_run("arch", "list", "--json", cache=tmp_path).stdout)
    host = next(r for r in before if r["name"] == "host")
    assert "reference machine" in host["description"]
    r = _run("arch", "measure-host", "--json", cache=tmp_path)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    m = doc["measurement"]
    assert m["logical_cpus"] == os.cpu_count() or m["logical_cpus"] == len(os.sched_getaffinity(0))
    assert m["cpu_model"] == _cpu_model()
    assert os.path.dirname(doc["path"]) == str(tmp_path)
    after = json.loads(_run("arch", "show", "host", "--json", cache=tmp_path).stdout)
    d = after["preset"]["description"]
    assert d.startswith("This machine, measured ") and "UTC" in d and _cpu_model() in d
    assert after["params"]["np"]["pe_count"] == m["cores"]
    # without the measurement (another cache folder) the built-in reference preset is back
    other = json.loads(_run("arch", "show", "host", "--json", cache=tmp_path / "none").stdout)
    assert "reference machine" in other["preset"]["description"]


def test_an_unmeasured_host_is_named_as_such_where_it_is_used(tmp_path):
    r = _run("compare", "router", "--arch", "host", "--packets", "200", cache=tmp_path)
    assert "the host preset describes the reference machine" in r.stderr
