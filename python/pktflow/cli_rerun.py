"""``pktflow rerun RESULT.json``: run again the command that produced a JSON result and say whether
the new result is the same (wall-clock figures aside). Wired into the main CLI by ``pktflow.cli``."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path
from typing import Any, Iterator

import typer

import pktflow
from pktflow import PktflowError
from pktflow import _ui
from pktflow._files import read_small_text
from pktflow._ui import _sha256, console, emit_json, err, strip_volatile


def differences(a: Any, b: Any, path: str = "") -> Iterator[str]:
    """Paths (``points[3].packets_per_second``) where two JSON documents differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            p = f"{path}.{k}" if path else k
            if k not in a:
                yield f"{p}: only in the new result"
            elif k not in b:
                yield f"{p}: only in the saved result"
            else:
                yield from differences(a[k], b[k], p)
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{path}: {len(a)} items saved, {len(b)} now"
        for i, (x, y) in enumerate(zip(a, b)):
            yield from differences(x, y, f"{path}[{i}]")
    elif a != b:
        yield f"{path}: {json.dumps(a)[:60]} saved, {json.dumps(b)[:60]} now"


@contextlib.contextmanager
def _chdir(path: str) -> Iterator[None]:
    import os

    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def _load(result: Path) -> tuple[dict, list[str]]:
    try:
        doc = json.loads(read_small_text(result, 64 << 20, "a pktflow JSON result"))
    except FileNotFoundError:
        raise PktflowError(f"{result}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise PktflowError(f"{result}: not a pktflow JSON result ({e})") from None
    run = doc.get("run") if isinstance(doc, dict) else None
    argv = run.get("argv") if isinstance(run, dict) else None
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise PktflowError(f"{result}: has no \"run\" record with the command line (made with --json by pktflow?)")
    if argv[0] == "rerun":
        raise PktflowError(f"{result}: is the result of a rerun; rerun the original result instead")
    return doc, argv


#: Options through which a command writes files (a file, or a folder for ``--out-dir``/``--out``).
OUTPUT_OPTIONS = frozenset({"--plot", "--csv", "--dot", "--html", "--out-dir", "--out"})
#: Of those, the ones naming a folder.
FOLDER_OPTIONS = frozenset({"--out-dir", "--out"})


def _outputs_of(argv: list[str], result: Path) -> list[tuple[str, str]]:
    """Check that ``argv`` is a command line of one of pktflow's own commands, with its own
    options only (parsed as the command would, nothing run), and return the files and folders
    it writes as ``(option, path)`` pairs. Anything else: one line, exit 2."""
    import typer.main

    from pktflow.cli import app

    # typer may vendor click (typer._click): recognize its classes by shape and name.
    cmd: Any = typer.main.get_command(app)
    words = list(argv)
    path_words: list[str] = []
    while isinstance(getattr(cmd, "commands", None), dict):
        if not words or words[0] not in cmd.commands:
            what = _ui.escape_controls(words[0]) if words else "nothing"
            raise PktflowError(f"{result}: records the command '{what}', which is not a pktflow command; not run")
        path_words.append(words[0])
        cmd = cmd.commands[words.pop(0)]
    name = " ".join(path_words)
    if name == "rerun":
        raise PktflowError(f"{result}: is the result of a rerun; rerun the original result instead")
    try:
        ctx = cmd.make_context(f"pktflow {name}", list(words), resilient_parsing=False)
    except Exception as e:
        kinds = {c.__name__ for c in type(e).__mro__}
        if "Exit" in kinds:
            raise PktflowError(f"{result}: its command line only asks for help; not run") from None
        if "ClickException" in kinds:
            fmt = getattr(e, "format_message", None)
            why = " ".join(str(fmt() if callable(fmt) else e).split())
            raise PktflowError(f"{result}: its command line is not one pktflow accepts ({why}); not run") from None
        raise
    outputs: list[tuple[str, str]] = []
    for prm in cmd.params:
        val = ctx.params.get(prm.name)
        if val is None or val is False:
            continue
        opts = set(getattr(prm, "opts", []))
        if opts & OUTPUT_OPTIONS:
            outputs.append((sorted(opts & OUTPUT_OPTIONS)[0], str(val)))
        elif name == "gen-trace" and prm.name == "path":
            outputs.append(("gen-trace FILE", str(val)))
    return outputs


def _check_outputs(result: Path, outputs: list[tuple[str, str]], recorded: dict) -> None:
    """Refuse (one line) a recorded command that would replace an existing file this result did
    not produce: a file output must not exist, or be the file the result recorded (the same
    SHA-256 in its ``inputs_sha256``: the run records every file its command line names, its
    outputs included), or not be a regular file (``/dev/null``, written through). A sweep's
    ``--out`` must be a sweep folder or absent; ``--out-dir`` must be a folder or absent."""
    for opt, val in outputs:
        p = Path(val)
        shown = _ui.escape_controls(val)
        if opt in FOLDER_OPTIONS:
            if p.exists() and not p.is_dir():
                raise PktflowError(f"{result}: its {opt} {shown} is not a folder; not run")
            if opt == "--out" and p.is_dir() and any(p.iterdir()) and not (p / "sweep.json").is_file():
                raise PktflowError(f"{result}: its --out {shown} is a folder that holds no sweep; not run")
            continue
        if not (p.exists() or p.is_symlink()):
            continue
        if p.exists() and not p.is_file():
            continue
        if p.is_file() and recorded.get(val) == _sha256(p):
            continue
        raise PktflowError(
            f"{result}: its command would replace {shown} ({opt}), a file this result did not produce; not run "
            "(move the file away to run it)"
        )


def rerun(
    result: Path = typer.Argument(..., help="A JSON result written by a pktflow command with --json."),
    as_json: bool = typer.Option(False, "--json", help="Print the new result and the comparison as JSON."),
) -> None:
    """Run again the command recorded in RESULT.json (from the folder it was run in) and compare:
    exit 0 when the new result is identical apart from wall-clock figures, 1 when it differs."""
    saved, argv = _load(result)
    run = saved["run"]
    notes = []
    if run.get("pktflow_version") != pktflow.__version__:
        notes.append(f"saved with pktflow {run.get('pktflow_version')}, running {pktflow.__version__}")
    cwd = run.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or not Path(cwd).is_dir()):
        shown = _ui.escape_controls(str(cwd))
        raise PktflowError(f"{result}: the folder it was run in, {shown}, is not a folder here; not run")
    recorded = run.get("inputs_sha256") or {}
    if not isinstance(recorded, dict):
        raise PktflowError(f"{result}: its \"run\" record's inputs_sha256 is not a table of files; not run")
    outputs = _outputs_of(argv, result)
    with _chdir(cwd) if cwd else contextlib.nullcontext():
        _check_outputs(result, outputs, recorded)
        for path, digest in recorded.items():
            if not Path(path).is_file():
                notes.append(f"input {path} is gone")
            elif _sha256(Path(path)) != digest:
                notes.append(f"input {path} has changed since the result was saved")
        args = list(argv) if "--json" in argv else [*argv, "--json"]
        buf = io.StringIO()
        from pktflow.cli import app

        saved_argv = _ui._ARGV
        _ui._ARGV = list(args)
        try:
            with contextlib.redirect_stdout(buf):
                app(args=args, standalone_mode=False, prog_name="pktflow")
        finally:
            _ui._ARGV = saved_argv
    try:
        new = json.loads(buf.getvalue())
    except json.JSONDecodeError:
        raise PktflowError(f"rerun of {result}: the command did not print one JSON document") from None
    diffs = list(differences(strip_volatile(saved), strip_volatile(new)))
    if as_json:
        emit_json({"result_file": str(result), "identical": not diffs, "differences": diffs, "notes": notes, "new": new})
    else:
        for n in notes:
            err.print(f"note: {n}")
        cmd = "pktflow " + " ".join(argv)
        if diffs:
            console.print(f"{result}: the new result DIFFERS from the saved one ({len(diffs)} values): {cmd}")
            for d in diffs[:20]:
                console.print(f"  {d}")
            if len(diffs) > 20:
                console.print(f"  ... and {len(diffs) - 20} more")
        else:
            console.print(f"{result}: identical result (wall-clock figures aside): {cmd}")
    if diffs:
        sys.stdout.flush()
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("rerun")(rerun)
