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
