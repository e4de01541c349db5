"""Running the ``pktflow`` command line in-process from tests, shared by the test files."""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from pktflow.cli import main


def run_main(capsys, *argv: str) -> tuple[int, str, str]:
    """``pktflow ARGV`` in-process: (exit code, stdout, stderr)."""
    code = 0
    try:
        main(list(argv))
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


def run(argv, capsys) -> tuple[int, str, str]:
    """:func:`run_main` with the arguments as one list."""
    return run_main(capsys, *argv)


def one_error_line(err: str) -> str:
    """The one error line on stderr (``error: ...``; usage errors too), with no traceback."""
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.lower().startswith("error") or ": error: " in ln]
    assert len(errors) == 1 and len(lines) == 1, err
    return errors[0]


def _default_signals() -> None:
    """In the child, before exec: SIGINT and SIGTERM back to their default dispositions.

    A test runner started in the background (``nohup ./scripts/test &``, a CI script) runs with
    SIGINT ignored, and children inherit an ignored disposition; a test that sends SIGINT to a
    child needs the child to have it as a user's terminal would give it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


@contextmanager
def spawned(argv: list[str], **popen_kwargs) -> Iterator[subprocess.Popen]:
    """``Popen(argv)`` for tests that signal the child: default signal dispositions in the child
    (see :func:`_default_signals`), its own process group, and on leaving the block the whole
    group killed if anything of it still runs, so a failing test leaves no process behind."""
    popen_kwargs.setdefault("start_new_session", True)
    p = subprocess.Popen(argv, preexec_fn=_default_signals, **popen_kwargs)
    try:
        yield p
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for f in (p.stdin, p.stdout, p.stderr):
            if f is not None:
                f.close()
        p.wait()
