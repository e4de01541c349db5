"""What every ``pktflow`` command shares: consoles and tables that stay whole in a pipe, progress
on stderr (a bar on a terminal, a line every few seconds elsewhere), output files that are checked
before the run and written atomically, JSON documents that record how to re-run them, and the
way a command stops on Ctrl-C.

Conventions (relied on by ``pktflow rerun`` and the tests):

* A JSON result is one document on stdout. Its ``"run"`` member records the pktflow version, the
  command line (``argv``, as typed after ``pktflow``), the working directory and a SHA-256 of
  every input file the command line names. Wall-clock figures live under ``"timing"`` (or in a
  key listed in :data:`VOLATILE_KEYS`); everything else is determined by the settings.
* An interrupted command prints what it finished, then one line ``interrupted`` on stderr, and
  exits 130. A usage error prints one line and exits 2.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any, Iterator, Optional, Sequence

from rich.console import Console

from pktflow._core import PktflowError

__all__ = [
    "VOLATILE_KEYS",
    "Interrupted",
    "atomic_path",
    "atomic_write",
    "escape_controls",
    "same_file",
    "console",
    "emit_json",
    "err",
    "output_path",
    "progress",
    "run_record",
    "strip_volatile",
]

#: Keys whose values are wall-clock measurements (they differ between two runs of the same
#: command): ``pktflow rerun`` ignores them when it compares.
VOLATILE_KEYS = frozenset(
    {
        "run",
        "timing",
        "wall_seconds",
        "wall_s",
        "elapsed_seconds",
        "packets_per_second_functional",
        "functional_run_seconds",
        "simulated_cycles_per_second",
        "cycles_per_second",
    }
)


_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def escape_controls(text: str) -> str:
    """``text`` with every control character but newline and tab written as ``\\xNN``, so names
    and values echoed from files (a Click file, a trace, a JSON result) cannot move the cursor,
    recolour or retitle the user's terminal. Applied to every message (:func:`pktflow.cli.main`)
    and to everything the consoles print."""
    return _CONTROLS.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


class SafeConsole(Console):
    """A rich console that escapes control characters in the text it prints (not in the styles
    it renders itself): a table cell holding an element name from a file prints as text."""

    def _render_buffer(self, buffer):  # type: ignore[override]
        from rich.segment import Segment

        return super()._render_buffer(
            seg if seg.control else Segment(escape_controls(seg.text), seg.style, seg.control) for seg in buffer
        )


def _wide_console(stderr: bool = False) -> Console:
    """On a terminal, rich's own width. Elsewhere (a pipe, a file, a CI log) a console so wide that
    no table is cut or squeezed: rich then draws every column at its natural width."""
    stream = sys.stderr if stderr else sys.stdout
    tty = stream.isatty()
    if tty:
        return SafeConsole(stderr=stderr)
    return SafeConsole(stderr=stderr, width=100_000, no_color=True, highlight=False, soft_wrap=True)


console = _wide_console()
err = _wide_console(stderr=True)


class Interrupted(Exception):
    """Raised by a command after it has printed what it finished before Ctrl-C (exit 130)."""


class Terminated(KeyboardInterrupt):
    """Raised on SIGTERM (by the handler :func:`pktflow.cli.main` installs): it stops a command
    exactly as Ctrl-C does (the Rust core's cancellation, every temporary file removed), then
    the command exits 143."""


#: Set when SIGTERM arrived (a command that stops with :class:`Interrupted` then exits 143).
TERMINATED = False


def note_unmeasured_host(arch: Optional[str]) -> None:
    """When a command uses the ``host`` preset and this machine has not been measured, say so on
    stderr: the built-in ``host`` describes the reference machine, not this one."""
    if str(arch) != "host":
        return
    from pktflow import _core

    if _core.host_measured_path() is None:
        err.print(
            "note: the host preset describes the reference machine it was measured on, not this one; "
            "`pktflow arch measure-host` measures this machine (a few seconds) for every later use"
        )


def keep_partial(fn, *args, **kw):
    """``fn(*args, **kw)`` for a command: when Ctrl-C stopped the API call
    (``pktflow.Interrupted``), the part it finished instead of the exception, so the command
    prints it and then exits 130 (a script calling the API gets the exception)."""
    from pktflow._request import Interrupted as Stopped

    try:
        return fn(*args, **kw)
    except Stopped as e:
        return e.result


# ---------------------------------------------------------------------------------------------
# progress


def _fmt_duration(s: float) -> str:
    s = max(0, int(round(s)))
    h, rem = divmod(s, 3600)
    m, sec = divmod(rem, 60)
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{sec:02d}s"
    return f"{sec}s"


class Progress:
    """Progress of one long step, on stderr.

    On a terminal: a rich bar (done/total, rate, elapsed, ETA). Elsewhere: one plain line every
    ``interval`` seconds (``PKTFLOW_PROGRESS_SECONDS``, default 5) with done/total, rate and ETA,
    and a last line when the step ends, so a CI log shows that a long run is alive.
    """

    def __init__(self, what: str, unit: str, total: Optional[float] = None, *, interval: Optional[float] = None):
        self.what = what
        self.unit = unit
        self.total = total
        self.done = 0.0
        self.label = ""
        self.t0 = time.monotonic()
        self._last = self.t0
        env = os.environ.get("PKTFLOW_PROGRESS_SECONDS")
        self.interval = interval if interval is not None else float(env) if env else 5.0
        self._tty = sys.stderr.isatty()
        self._bar = None
        self._task = None
        self._lock = threading.Lock()
        self._stop: Optional[threading.Event] = None

    def _heartbeat(self, stop: threading.Event) -> None:
        # Off a terminal, a step that runs longer than the interval between updates (one
        # simulation of a long search, one slow point) still prints its line every interval.
        while not stop.wait(self.interval):
            with self._lock:
                if time.monotonic() - self._last >= self.interval:
                    self._last = time.monotonic()
                    sys.stderr.write(self.line() + "\n")
                    sys.stderr.flush()

    def __enter__(self) -> "Progress":
        if not self._tty and self.interval > 0:
            self._stop = threading.Event()
            threading.Thread(target=self._heartbeat, args=(self._stop,), daemon=True).start()
        if self._tty:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )
            from rich.progress import Progress as RichProgress

            self._bar = RichProgress(
                TextColumn(f"[bold]{self.what}[/bold] {{task.description}}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._bar.__enter__()
            self._task = self._bar.add_task("", total=self.total, rate="")
        return self

    def rate(self) -> float:
        el = time.monotonic() - self.t0
        return self.done / el if el > 0 else 0.0

    def eta(self) -> Optional[float]:
        r = self.rate()
        if self.total is None or r <= 0:
            return None
        return max(0.0, (self.total - self.done) / r)

    def line(self) -> str:
        tot = f"/{self.total:,.0f}" if self.total is not None else ""
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        eta = self.eta()
        parts = [f"{self.what}: {self.done:,.0f}{tot} {self.unit}{pct}", f"{self.rate():,.2f} {self.unit}/s"]
        parts.append(f"ETA {_fmt_duration(eta)}" if eta is not None else "ETA unknown")
        parts.append(f"elapsed {_fmt_duration(time.monotonic() - self.t0)}")
        if self.label:
            parts.append(self.label)
        return ", ".join(parts)

    def update(self, done: float, total: Optional[float] = None, label: Optional[str] = None) -> None:
        self.done = done
        if total is not None:
            self.total = total
        if label is not None:
            self.label = label
        if self._bar is not None:
            el = time.monotonic() - self.t0
            r = f"{done / el:,.2f} {self.unit}/s" if done and el > 0 else ""
            self._bar.update(self._task, completed=done, total=self.total, description=self.label, rate=r)
            return
        with self._lock:
            now = time.monotonic()
            if now - self._last >= self.interval:
                self._last = now
                sys.stderr.write(self.line() + "\n")
                sys.stderr.flush()

    def __exit__(self, *exc) -> None:
        if self._stop is not None:
            self._stop.set()
        if self._bar is not None:
            self._bar.__exit__(*exc)
        elif time.monotonic() - self.t0 >= self.interval:
            sys.stderr.write(self.line() + (" (stopped)" if exc[0] is not None else " (done)") + "\n")
            sys.stderr.flush()


class Tasks:
    """Several progress lines at once, driven with rich's ``add_task`` / ``update`` /
    ``remove_task`` calls (the experiment scripts use it): a rich bar on a terminal, otherwise one
    :class:`Progress` line printer per task, so a log shows rate and ETA as well."""

    def __init__(self, unit: str = "steps"):
        self.unit = unit
        self._rich = None
        self._lines: dict[int, Progress] = {}
        self._next = 0

    def __enter__(self) -> "Tasks":
        if sys.stderr.isatty():
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
            from rich.progress import Progress as RichProgress

            self._rich = RichProgress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                transient=True,
            )
            self._rich.__enter__()
        return self

    def __exit__(self, *exc) -> None:
        if self._rich is not None:
            self._rich.__exit__(*exc)
        for p in self._lines.values():
            p.__exit__(*exc)
        self._lines.clear()

    def add_task(self, description: str, total: Optional[float] = None) -> int:
        if self._rich is not None:
            return self._rich.add_task(description, total=total)
        self._next += 1
        p = Progress(description, self.unit, total)
        p.__enter__()
        self._lines[self._next] = p
        return self._next

    def update(
        self,
        task: int,
        completed: Optional[float] = None,
        total: Optional[float] = None,
        description: Optional[str] = None,
    ) -> None:
        if self._rich is not None:
            self._rich.update(task, completed=completed, total=total, description=description)
            return
        p = self._lines.get(task)
        if p is not None:
            p.update(p.done if completed is None else completed, total, description)

    def remove_task(self, task: int) -> None:
        if self._rich is not None:
            self._rich.remove_task(task)
            return
        p = self._lines.pop(task, None)
        if p is not None:
            p.__exit__(None, None, None)


def progress(what: str, unit: str, total: Optional[float] = None) -> Progress:
    """``with progress("explore", "points", total) as p: ... p.update(done, total, label)``."""
    return Progress(what, unit, total)


# ---------------------------------------------------------------------------------------------
# output files


#: The command line being run (after ``pktflow``), set by :func:`pktflow.cli.main` and ``rerun``;
#: ``None``: ``sys.argv[1:]``.
_ARGV: Optional[list[str]] = None


def current_argv() -> list[str]:
    """The arguments of the command being run (after ``pktflow``)."""
    return list(_ARGV) if _ARGV is not None else list(sys.argv[1:])


def file_id(path: str | os.PathLike) -> tuple:
    """A file's identity: (device, inode) when it exists (through symbolic links), else its
    folder's real path and its name, so two names of one file compare equal."""
    p = Path(path)
    try:
        st = os.stat(p)
        return ("inode", st.st_dev, st.st_ino)
    except (OSError, ValueError):
        parent = p.parent if str(p.parent) else Path(".")
        return ("path", os.path.realpath(parent), p.name)


def same_file(a: str | os.PathLike, b: str | os.PathLike) -> bool:
    """Whether ``a`` and ``b`` are one file, compared by identity, not by name."""
    return file_id(a) == file_id(b)


def refuse_same_file(out: Path, option: str, inputs: Sequence[tuple[str, str | os.PathLike]]) -> None:
    """Refuse (one line, exit 2) an output that is the same file as one of ``inputs``
    (``(what, path)`` pairs)."""
    me = file_id(out)
    for what, p in inputs:
        if file_id(p) == me:
            raise PktflowError(
                f"{option} {out}: is {what}; refusing to replace an input (write to another file)"
            )


def _check_not_named_twice(p: Path, option: str) -> None:
    """An output file must not be a file the command line names elsewhere: an input (``--trace
    t.pcap --csv t.pcap``) or another output (``--csv x --plot x``)."""
    me = file_id(p)
    hits = []
    for a in current_argv():
        val = a.split("=", 1)[1] if a.startswith("-") and "=" in a else a
        if not val or val.startswith("-"):
            continue
        try:
            if file_id(val) == me:
                hits.append(val)
        except (OSError, ValueError):
            continue
    if len(hits) > 1:
        raise PktflowError(
            f"{option} {p}: is also named elsewhere on the command line ({hits[0]} and {hits[1]} are one file): "
            "an output must not replace an input or another output"
        )


def output_path(path: Optional[str | os.PathLike], option: str) -> Optional[Path]:
    """Check an output file named by ``option`` *before* the run: its folder is created if missing,
    and a path that is a folder, a folder that cannot be written, a symbolic link to a missing
    file, or a file the command line also names (an input, another output) is refused (exit 2)."""
    if path is None:
        return None
    p = Path(path)
    if str(p) == "-":
        return p
    if p.is_dir():
        raise PktflowError(f"{option} {p}: is a directory, expected a file name")
    if p.is_symlink() and not p.exists():
        raise PktflowError(
            f"{option} {p}: is a symbolic link to {os.readlink(p)}, which does not exist; "
            "pktflow writes through links, never over them"
        )
    _check_not_named_twice(p, option)
    parent = p.parent if str(p.parent) else Path(".")
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise PktflowError(f"{option} {p}: cannot create folder {parent}: {e.strerror}") from None
    if not os.access(parent, os.W_OK):
        raise PktflowError(f"{option} {p}: folder {parent} is not writable")
    return p


def output_dir(path: Optional[str | os.PathLike], option: str) -> Optional[Path]:
    """Check (and create) an output folder named by ``option`` before the run."""
    if path is None:
        return None
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise PktflowError(f"{option} {p}: exists and is not a directory")
    try:
        p.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise PktflowError(f"{option} {p}: cannot create folder: {e.strerror}") from None
    if not os.access(p, os.W_OK):
        raise PktflowError(f"{option} {p}: folder is not writable")
    return p


#: Temporary files being written by :func:`atomic_path` (removed on SIGTERM as on Ctrl-C).
_PARTIAL: set[str] = set()


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield the path to write ``path`` through, so that nothing of the user's is destroyed:

    * a regular file or nothing: a temporary file beside it, renamed onto it on success and
      removed on any error (or Ctrl-C, SIGTERM), so ``path`` is the complete new file or untouched;
    * a symbolic link: the same, beside the file it points at (the link stays a link); a link to
      a missing file is refused;
    * anything else (``/dev/null``, a FIFO): ``path`` itself, written directly, never replaced.
    """
    p = Path(path)
    target = p
    if p.is_symlink():
        if not p.exists():
            raise PktflowError(
                f"{p}: is a symbolic link to {os.readlink(p)}, which does not exist; "
                "pktflow writes through links, never over them"
            )
        target = Path(os.path.realpath(p))
    if target.is_dir():
        raise PktflowError(f"{p}: is a directory, expected a file name")
    if target.exists() and not target.is_file():
        yield target
        return
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".partial", dir=str(target.parent or Path(".")))
    os.close(fd)
    _PARTIAL.add(tmp)
    # mkstemp creates the file 0600; an output file gets the permissions a plain open() would
    # give it (0666 less the umask), so reports and tables stay readable by others.
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    finally:
        _PARTIAL.discard(tmp)


def remove_partial_files() -> None:
    """Remove the temporary files of writes still under way (the SIGTERM handler's last step)."""
    for tmp in list(_PARTIAL):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        _PARTIAL.discard(tmp)


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, mode: str = "w", **kw: Any) -> Iterator[IO]:
    """``open(path, mode)`` written to a temporary file and renamed on success (see atomic_path)."""
    with atomic_path(path) as tmp:
        with open(tmp, mode, **kw) as f:
            yield f


# ---------------------------------------------------------------------------------------------
# JSON results


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def run_record(argv: Optional[Sequence[str]] = None) -> dict[str, Any]:
    """How this result was made: version, command line, working directory and the SHA-256 of every
    existing file the command line names (a trace, a Click file, an architecture file...)."""
    import pktflow

    args = list(current_argv() if argv is None else argv)
    inputs = {}
    for a in args:
        val = a.split("=", 1)[1] if a.startswith("--") and "=" in a else a
        try:
            p = Path(val)
            if val and not val.startswith("-") and p.is_file():
                inputs[val] = _sha256(p)
        except (OSError, ValueError):
            continue
    return {
        "pktflow_version": pktflow.__version__,
        "argv": args,
        "cwd": os.getcwd(),
        "inputs_sha256": inputs,
    }


def emit_json(doc: Any, *, record: bool = True) -> None:
    """Print one JSON document on stdout; dict documents get the ``"run"`` record."""
    if record and isinstance(doc, dict):
        doc = {**doc, "run": run_record()}
    sys.stdout.write(json.dumps(doc, indent=2, allow_nan=False, default=_json_default))
    sys.stdout.write("\n")
    sys.stdout.flush()


def _json_default(o: Any) -> Any:
    if isinstance(o, Path):
        return str(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def strip_volatile(doc: Any) -> Any:
    """``doc`` without wall-clock figures (see :data:`VOLATILE_KEYS`), for comparing two runs."""
    if isinstance(doc, dict):
        return {k: strip_volatile(v) for k, v in doc.items() if k not in VOLATILE_KEYS}
    if isinstance(doc, list):
        return [strip_volatile(v) for v in doc]
    return doc
