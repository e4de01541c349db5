"""Running the ``pktflow`` command line in-process from tests, shared by the test files."""

from __future__ import annotations

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
