"""Shared fixtures: run the CLI in-process (typer's CliRunner) or as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def run_cli(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Run ``pktflow ARGS`` as a user would (a subprocess), capturing output."""
    p = subprocess.run([sys.executable, "-m", "pktflow", *args], capture_output=True, text=True, timeout=300)
    if check and p.returncode != 0:
        raise AssertionError(f"pktflow {' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    return p


def run_json(*args: str):
    return json.loads(run_cli(*args, "--json").stdout)


@pytest.fixture
def cli():
    return run_cli


@pytest.fixture(scope="session", autouse=True)
def no_process_left_behind():
    """A test must never leave a process behind (a killed test's child once ran on for 24
    minutes at 2.2 GB): whatever this test process (or pytest-xdist worker) still has as
    children when its tests are done is listed, killed, and reported as an error."""
    import psutil

    yield
    left = []
    for c in psutil.Process().children(recursive=True):
        try:
            if not c.is_running() or c.status() == psutil.STATUS_ZOMBIE:
                continue
            cmd = " ".join(c.cmdline())
        except psutil.Error:
            continue
        # multiprocessing's own helpers (started by in-process sweeps) end with this process
        if "multiprocessing.resource_tracker" in cmd or "multiprocessing.forkserver" in cmd:
            continue
        left.append((c, cmd[:160]))
    for c, _ in left:
        try:
            c.kill()
        except psutil.Error:
            pass
    assert not left, "tests left processes running: " + "; ".join(f"{c.pid} {cmd}" for c, cmd in left)
