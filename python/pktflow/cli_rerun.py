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
    with _chdir(cwd) if cwd and Path(cwd).is_dir() else contextlib.nullcontext():
        for path, digest in (run.get("inputs_sha256") or {}).items():
            if not Path(path).is_file():
                notes.append(f"input {path} is gone")
            elif _sha256(Path(path)) != digest:
                notes.append(f"input {path} has changed since the result was saved")
        args = list(argv) if "--json" in argv else [*argv, "--json"]
        buf = io.StringIO()
        from pktflow.cli import app

        with contextlib.redirect_stdout(buf):
            app(args=args, standalone_mode=False, prog_name="pktflow")
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
