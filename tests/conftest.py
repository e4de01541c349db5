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


def pytest_sessionfinish(session, exitstatus):
    """A test must never leave a process behind (a killed test's child once ran on for 24
    minutes at 2.2 GB): whatever this test process still has as children when the session ends
    is listed, killed, and fails the run."""
    import psutil

    if session.config.pluginmanager.hasplugin("dsession"):
        return  # pytest-xdist's controller: its children are its workers, which check themselves
    me = psutil.Process()
    left = [c for c in me.children(recursive=True) if c.is_running() and c.status() != psutil.STATUS_ZOMBIE]
    if not left:
        return
    for c in left:
        try:
            cmd = " ".join(c.cmdline())[:160]
        except psutil.Error:
            cmd = "?"
        print(f"\nerror: a test left process {c.pid} running: {cmd}", file=sys.stderr)
        try:
            c.kill()
        except psutil.Error:
            pass
    session.exitstatus = 1
