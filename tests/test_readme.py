"""Every command the README shows runs exactly as written (text output included) and succeeds.

Commands are read from the README's ```sh blocks, one per line (comment lines skipped). The one
exception is `./scripts/test` itself, the command that runs this suite. The main job (it installs
the package, then explores) runs in the serial phase of scripts/test, after the parallel suite,
so that reinstalling the package cannot disturb other tests."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SELF = "./scripts/test"


def readme_commands() -> list[str]:
    cmds = []
    for block in re.findall(r"```sh\n(.*?)```", README.read_text(), re.S):
        for line in block.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                cmds.append(line)
    return cmds


def test_readme_has_the_two_set_up_commands():
    cmds = readme_commands()
    assert SELF in cmds, "the README must show the test command"
    assert any("pip install -e ." in c and "pktflow " in c for c in cmds), "the README must show the main job"
    ci = (ROOT / ".ci" / "run").read_text()
    assert SELF.lstrip("./") in ci, ".ci/run must call exactly the README's test command"


def _run(cmd: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PKTFLOW_PROGRESS_SECONDS": "10"}
    return subprocess.run(["bash", "-c", cmd], cwd=ROOT, capture_output=True, text=True, env=env, timeout=1500)


def _check(cmd: str, r: subprocess.CompletedProcess) -> None:
    assert r.returncode == 0, f"`{cmd}` exited {r.returncode}:\n{r.stderr[-3000:]}"
    assert "Traceback" not in r.stderr, r.stderr[-3000:]
    assert "…" not in r.stdout, f"`{cmd}` cut its output off a terminal:\n{r.stdout[:3000]}"
    # a showcase must show what it names (it once showed tentacle routing falling back to DOR)
    assert "FELL BACK" not in r.stdout, f"`{cmd}` falls back from what it shows:\n{r.stdout[:3000]}"


QUICK = [c for c in readme_commands() if c != SELF and "pip install" not in c]
MAIN = [c for c in readme_commands() if "pip install" in c]


@pytest.mark.parametrize("cmd", QUICK)
def test_readme_command_runs_as_written(cmd):
    _check(cmd, _run(cmd))


@pytest.mark.serial
@pytest.mark.parametrize("cmd", MAIN)
def test_readme_main_job_runs_as_written(cmd):
    r = _run(cmd)
    _check(cmd, r)
    if "explore" in cmd:
        header = next(line for line in r.stdout.splitlines() if "PEs" in line and "binding resource" in line)
        for col in ("PEs", "replication", "packets/s", "Gb/s", "speedup", "PE busy", "replicated", "binding resource",
                    "idealized"):
            assert col in header
        # Every point names what binds it; never a shrug.
        assert "none of" not in r.stdout
        m = re.search(r"--plot (\S+)", cmd)
        if m:
            assert (ROOT / m.group(1)).is_file()
