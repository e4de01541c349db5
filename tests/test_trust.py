"""What a new user meets in the first hour, checked for every command at once: the package's
imports are declared, --version works, usage errors are one clean line with exit 2, every option
has help in the user's words, choices are validated, and a JSON result can be re-run."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

import pktflow
from cli_run import spawned
from pktflow.cli import app

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _dist_name(req: str) -> str:
    return re.split(r"[\s<>=!~;\[]", req, maxsplit=1)[0].lower().replace("_", "-")


def _imports(folder: Path) -> set[str]:
    """Top-level names of every module imported by the .py files under ``folder``."""
    out: set[str] = set()
    for f in folder.rglob("*.py"):
        tree = ast.parse(f.read_text(), filename=str(f))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                out.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                out.add(node.module.split(".")[0])
    return out


def _third_party(mods: set[str]) -> set[str]:
    # The package itself, the tests' own helper modules (tests/*.py), the experiments' modules
    # and packages (the scoreboard imports experiment scripts), and tomli (3.10 only).
    exp = ROOT / "experiments"
    local = (
        {"pktflow", "tomli"}
        | {f.stem for f in (ROOT / "tests").glob("*.py")}
        | {f.stem for f in exp.glob("*.py")}
        | {d.name for d in exp.iterdir() if (d / "__init__.py").is_file()}
    )
    return {m for m in mods if m not in sys.stdlib_module_names and m not in local and not m.startswith("_")}


def _dists_of(module: str) -> set[str]:
    return {d.lower().replace("_", "-") for d in metadata.packages_distributions().get(module, [module])}


def test_every_imported_package_is_declared_and_every_declared_one_is_used():
    """A package imported but not declared works on a developer's machine and fails for a user
    (this is how `import click` slipped through); a declared one nobody imports is dead weight."""
    proj = _pyproject()["project"]
    runtime = {_dist_name(r) for r in proj["dependencies"]}
    test_extra = {_dist_name(r) for r in proj["optional-dependencies"]["test"]}
    pkg_mods = _third_party(_imports(ROOT / "python" / "pktflow"))
    for m in sorted(pkg_mods):
        assert _dists_of(m) & runtime, f"python/pktflow imports {m!r}, which pyproject.toml does not declare"
    used = set().union(*(_dists_of(m) for m in pkg_mods))
    assert runtime <= used, f"declared but never imported by the package: {sorted(runtime - used)}"
    test_mods = _third_party(_imports(ROOT / "tests") | _imports(ROOT / "experiments"))
    for m in sorted(test_mods):
        assert _dists_of(m) & (runtime | test_extra), f"tests import {m!r}, not declared in the [test] extra"


def test_click_is_not_imported_by_the_package():
    """typer >= 0.2x vendors click and no longer installs it: the package must not need it."""
    assert "click" not in _imports(ROOT / "python" / "pktflow")


def _run(*args: str, **kw) -> subprocess.CompletedProcess:
    env = {**os.environ, "PKTFLOW_PROGRESS_SECONDS": "3600"}
    return subprocess.run(
        [sys.executable, "-m", "pktflow", *args], capture_output=True, text=True, env=env, timeout=300, **kw
    )


def test_version():
    r = _run("--version")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"pktflow {pktflow.__version__}"


USAGE_ERRORS = [
    ["explore", "router", "--bogus"],
    ["map", "mpls", "--mapper", "nope"],
    ["noc", "--rates", "abc"],
    ["profile", "router", "--synthetic", "abc"],
    ["simulate", "router", "--replication", "sideways", "--inter-arrival", "100"],
    ["graph", "/nonexistent/file.click"],
    ["arch", "show", "no-such-preset"],
    ["rerun", "/nonexistent/result.json"],
    ["no-such-command"],
]


@pytest.mark.parametrize("args", USAGE_ERRORS, ids=lambda a: " ".join(a))
def test_usage_errors_are_clean(args):
    r = _run(*args)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, f"one line, not {len(lines)}: {r.stderr!r}"
    assert lines[0].startswith("error: ") or ": error: " in lines[0], lines[0]


@pytest.mark.parametrize("delay", [0.5, 1.0])
def test_ctrl_c_during_start_up_is_clean(delay):
    """Ctrl-C while the command line is still importing ends as an interruption, not with a
    traceback of the import machinery (the script starts in ``pktflow._entry``)."""
    import signal
    import time

    cmd = [sys.executable, "-m", "pktflow", "explore", "router", "--packets", "500"]
    with spawned(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        time.sleep(delay)
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=60)
    assert "Traceback" not in err, err
    # Python itself may still be starting (before any of our code runs): then the default
    # handler ends it with -SIGINT and no output. Otherwise: one line and exit 130.
    if p.returncode != -signal.SIGINT:
        assert p.returncode == 130, (p.returncode, err)
        assert err.strip().splitlines()[-1] == "interrupted"


def _commands():
    """(name, click command) for every leaf command of the CLI."""
    import typer.main

    root = typer.main.get_command(app)

    def walk(prefix, cmd):
        subs = getattr(cmd, "commands", None)
        if subs:
            for n, c in subs.items():
                yield from walk(f"{prefix} {n}".strip(), c)
        else:
            yield prefix, cmd

    return list(walk("", root))


def test_every_command_and_option_has_help_in_the_users_words():
    dev_words = re.compile(
        r"seed 00\d|\b[0-9]{3}_[0-9a-f]{16}\b|issue \d|before this change|this session", re.IGNORECASE
    )
    missing, wording = [], []
    for name, cmd in _commands():
        if not (cmd.help or "").strip():
            missing.append(f"{name}: command")
        if dev_words.search(cmd.help or ""):
            wording.append(f"{name}: {cmd.help!r}")
        for p in cmd.params:
            if p.param_type_name != "option" or p.name in ("help",):
                continue
            h = getattr(p, "help", None) or ""
            if not h.strip():
                missing.append(f"{name} {p.opts[0]}")
            if dev_words.search(h):
                wording.append(f"{name} {p.opts[0]}: {h!r}")
    assert not missing, "options without a help line: " + ", ".join(missing)
    assert not wording, "help in development-log words: " + "; ".join(wording)


def _is_choice(p) -> bool:
    """Typer >= 0.2x keeps the annotation (an Enum for choices); older typers a click Choice."""
    import enum
    import typing

    td = getattr(p, "type_descriptor", None)
    if td is not None:
        ann = td.annotation
        args = [a for a in typing.get_args(ann) if a is not type(None)]
        ann = args[0] if args else ann
        return isinstance(ann, type) and issubclass(ann, enum.Enum)
    return type(getattr(p, "type", None)).__name__ == "Choice"


def test_options_that_list_choices_validate_them():
    """An option whose help lists alternatives (a|b|c) must be a choice typer validates and lists."""
    bad = []
    for name, cmd in _commands():
        for p in cmd.params:
            h = getattr(p, "help", None) or ""
            if p.param_type_name == "option" and re.search(r"\b[a-z-]+\|[a-z-]+\b", h):
                if not _is_choice(p):
                    bad.append(f"{name} {p.opts[0]}")
    assert not bad, "choices given in help but not validated: " + ", ".join(bad)


def test_json_result_records_how_to_rerun_it_and_rerun_reproduces_it(tmp_path):
    out = tmp_path / "profile.json"
    r = _run("profile", "router", "--synthetic", "300", "--seed", "5", "--json")
    assert r.returncode == 0, r.stderr
    out.write_text(r.stdout)
    doc = json.loads(r.stdout)
    run = doc["run"]
    assert run["pktflow_version"] == pktflow.__version__
    assert run["argv"] == ["profile", "router", "--synthetic", "300", "--seed", "5", "--json"]
    same = _run("rerun", str(out))
    assert same.returncode == 0, same.stdout + same.stderr
    assert "identical" in same.stdout
    # A result that does not match what the command produces is reported, exit 1.
    doc["packets"] += 1
    out.write_text(json.dumps(doc))
    diff = _run("rerun", str(out))
    assert diff.returncode == 1
    assert "packets" in diff.stdout


def test_rerun_refuses_a_file_without_a_run_record(tmp_path):
    f = tmp_path / "x.json"
    f.write_text('{"a": 1}')
    r = _run("rerun", str(f))
    assert r.returncode == 2
    assert "run" in r.stderr and "Traceback" not in r.stderr


def test_import_pktflow_exposes_its_submodules():
    import pktflow as p

    for m in ("npsim", "noc", "tdpm", "report"):
        assert getattr(p, m).__name__ == f"pktflow.{m}"
    assert not hasattr(p, "np"), "the NP module must not be named like numpy's alias"


def test_binding_ships_type_stubs_for_every_function():
    stub = ROOT / "python" / "pktflow" / "_core.pyi"
    assert stub.is_file(), "python/pktflow/_core.pyi is missing"
    tree = ast.parse(stub.read_text())
    declared = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    declared |= {t.id for n in tree.body if isinstance(n, ast.AnnAssign) for t in [n.target] if isinstance(t, ast.Name)}
    public = {n for n in dir(pktflow._core) if not n.startswith("_")}
    assert public <= declared, f"not in _core.pyi: {sorted(public - declared)}"
    assert (ROOT / "python" / "pktflow" / "py.typed").is_file()


def test_type_stubs_match_the_binding_signatures():
    """A stub that drifts from the binding misleads every editor: parameter names must agree."""
    import inspect

    tree = ast.parse((ROOT / "python" / "pktflow" / "_core.pyi").read_text())
    wrong = []
    for n in tree.body:
        if isinstance(n, ast.FunctionDef):
            stub = [a.arg for a in n.args.args]
            real = list(inspect.signature(getattr(pktflow._core, n.name)).parameters)
            if stub != real:
                wrong.append(f"{n.name}: stub {stub}, binding {real}")
    assert not wrong, "; ".join(wrong)


def test_experiment_progress_prints_rate_and_eta_in_a_log(monkeypatch, capsys):
    """The experiment scripts' progress (``_ui.Tasks``) writes lines with a rate and an ETA when
    stderr is not a terminal (a rich bar alone would print nothing there)."""
    from pktflow._ui import Tasks

    monkeypatch.setenv("PKTFLOW_PROGRESS_SECONDS", "0")
    with Tasks("points") as t:
        k = t.add_task("Figure 7 router", total=4)
        for i in range(1, 4):
            t.update(k, completed=i, description=f"point {i}")
        t.remove_task(k)
    err = capsys.readouterr().err
    assert "Figure 7 router: 3/4 points" in err and "ETA" in err and "point 3" in err


def test_progress_prints_between_updates_off_a_terminal(monkeypatch, capsys):
    """A step longer than the progress interval (one slow simulation) still prints a line with
    rate and ETA every interval in a log, not only when the next update arrives."""
    import time

    from pktflow._ui import progress

    monkeypatch.setenv("PKTFLOW_PROGRESS_SECONDS", "0.05")
    with progress("search", "simulations", total=10) as p:
        p.update(1, label="first")
        time.sleep(0.4)  # no update meanwhile
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("search: 1/10")]
    assert len(lines) >= 3, lines
    assert all("ETA" in ln for ln in lines)


def test_output_files_get_the_permissions_of_a_plain_open(tmp_path):
    """Files written through ``_ui.atomic_write`` are not left owner-only (mkstemp's 0600)."""
    import os

    from pktflow._ui import atomic_write

    umask = os.umask(0o022)
    try:
        with atomic_write(tmp_path / "table.csv") as f:
            f.write("a,b\n")
    finally:
        os.umask(umask)
    assert (tmp_path / "table.csv").stat().st_mode & 0o777 == 0o644


_IGNORED_SIGINT_RUNNER = """
import signal, subprocess, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)  # as under `nohup ./scripts/test &`
sys.path.insert(0, sys.argv[1])
from cli_run import spawned
cmd = [sys.executable, "-m", "pktflow", "profile", "router", "--synthetic", "1e9", "--json"]
if sys.argv[2] == "plain":
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    time.sleep(3)
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=4)
        print("stopped", p.returncode)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        print("ignored")
else:
    with spawned(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as p:
        time.sleep(3)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
    print("stopped", p.returncode)
"""


def test_signal_tests_hold_when_the_runner_ignores_sigint():
    """Started in the background, the test runner has SIGINT ignored and its children inherit
    that: a plain child ignores the test's Ctrl-C (the control below shows this machine does
    that), while the tests' ``spawned`` gives the child Python's default, so it stops with 130."""
    tests = str(Path(__file__).resolve().parent)
    plain = subprocess.run(
        [sys.executable, "-c", _IGNORED_SIGINT_RUNNER, tests, "plain"], capture_output=True, text=True, timeout=60
    )
    assert plain.stdout.strip() == "ignored", plain.stdout + plain.stderr
    fixed = subprocess.run(
        [sys.executable, "-c", _IGNORED_SIGINT_RUNNER, tests, "spawned"], capture_output=True, text=True, timeout=120
    )
    assert fixed.stdout.strip() == "stopped 130", fixed.stdout + fixed.stderr
