"""The ``pktflow`` command line.

Each group of commands lives in its own module and registers itself here:
``cli_app`` (graph, profile, elements, gen-trace), ``cli_arch`` (arch list/show), ``cli_np``
(simulate, maxrate, bottleneck, explore), ``cli_tdpm`` (map), ``cli_noc`` (noc, stream), ``cli_protoproc`` (protoproc), ``cli_rtc``
(rtc, conflicts), ``cli_rerun`` (rerun) and ``cli_sweep`` (sweep, compare-runs, report). Shared behaviour (tables, progress, output files, JSON records) is in
``pktflow._ui``.

Exit codes: 0 success; 2 a usage error or bad input (one line on stderr naming the file, line or
option); 130 interrupted by Ctrl-C (what was finished is printed first); 143 stopped by SIGTERM
(likewise, temporary files removed); 1 an internal error.
"""

from __future__ import annotations

import signal
import sys
import threading
from typing import Optional

import typer

import pktflow
from pktflow import PktflowError
from pktflow import _ui
from pktflow._ui import Interrupted, Terminated, escape_controls

app = typer.Typer(
    name="pktflow",
    help="Parallelize packet/stream-processing task graphs for multiprocessors and report "
    "what throughput each choice reaches and what limits it.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"pktflow {pktflow.__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Optional[bool] = typer.Option(
        None, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Parallelize packet/stream-processing task graphs for multiprocessors and report what
    throughput each choice reaches and what limits it."""


def _register() -> None:
    from pktflow import (
        cli_app,
        cli_arch,
        cli_compare,
        cli_noc,
        cli_np,
        cli_protoproc,
        cli_rerun,
        cli_rtc,
        cli_runtime,
        cli_sweep,
        cli_tdpm,
    )

    for m in (
        cli_app,
        cli_arch,
        cli_np,
        cli_tdpm,
        cli_noc,
        cli_protoproc,
        cli_rtc,
        cli_runtime,
        cli_compare,
        cli_rerun,
        cli_sweep,
    ):
        m.register(app)


_register()


def _is_usage_error(e: BaseException) -> bool:
    """Click's usage errors, whichever copy of click typer uses (typer >= 0.2x vendors it as
    ``typer._click``; older typers use the ``click`` package). Recognized by class name so that
    neither package has to be importable."""
    return any(c.__name__ == "ClickException" for c in type(e).__mro__) and hasattr(e, "show")


def _stop(code: int, line: str) -> None:
    sys.stdout.flush()
    # Messages quote names and values from files: never let them drive the terminal.
    sys.stderr.write(escape_controls(line.rstrip("\n")) + "\n")
    sys.exit(code)


def _on_sigterm(signum, frame) -> None:
    _ui.TERMINATED = True
    raise Terminated()


def _install_sigterm() -> bool:
    """SIGTERM stops a command as Ctrl-C does (temporary files removed), then exit 143. Only on
    the main thread and over the default disposition (a sweep's workers set their own). Returns
    whether it was installed (then :func:`main` restores the default when the command ends)."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)
        return True
    return False


def _interrupted() -> None:
    if _ui.TERMINATED:
        _ui.remove_partial_files()
        _stop(143, "terminated")
    _stop(130, "interrupted")


def main(argv: Optional[list[str]] = None) -> None:
    """Entry point of the ``pktflow`` script (``argv`` for tests and ``pktflow rerun``)."""
    installed = _install_sigterm()
    saved_argv = _ui._ARGV
    _ui._ARGV = list(argv) if argv is not None else None
    try:
        _main(argv)
    finally:
        _ui._ARGV = saved_argv
        if installed:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _main(argv: Optional[list[str]]) -> None:
    try:
        rc = app(args=argv, standalone_mode=False, prog_name="pktflow")
        # Without standalone mode, click returns the code of a typer.Exit instead of raising it.
        # Click also turns a KeyboardInterrupt it catches into a returned 130.
        if rc == 130:
            _interrupted()
        if isinstance(rc, int) and rc != 0:
            sys.stdout.flush()
            sys.exit(rc)
    except PktflowError as e:
        msg = str(e)
        # Diagnostics already read "file:line:col: error: ..."; print them as they are.
        if ": error: " not in msg and ": warning: " not in msg:
            msg = f"error: {msg}"
        _stop(2, msg)
    except (Interrupted, KeyboardInterrupt):
        _interrupted()
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.Abort:
        _interrupted()
    except BrokenPipeError:
        # `pktflow ... | head`: the reader went away; not an error of ours.
        sys.stderr.close()
        sys.exit(0)
    except Exception as e:
        if _is_usage_error(e):
            _stop(getattr(e, "exit_code", 2), _usage_line(e))
        raise


def _usage_line(e: BaseException) -> str:
    """One line for a click usage error: the command, what is wrong, where help is.
    (Click itself prints three: the usage synopsis, a 'Try --help' hint and the error.)"""
    fmt = getattr(e, "format_message", None)
    msg = fmt() if callable(fmt) else str(e)
    msg = " ".join(str(msg).split())
    ctx = getattr(e, "ctx", None)
    path = getattr(ctx, "command_path", None) or "pktflow"
    return f"error: {path}: {msg} (see '{path} --help')"


if __name__ == "__main__":
    main()
