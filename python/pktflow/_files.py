"""Reading the small text files a command is given (experiment files, JSON results) without
trusting their size: ``/dev/zero`` or a multi-gigabyte file is refused after reading one byte
more than the limit, not read whole first."""

from __future__ import annotations

from pathlib import Path

from pktflow._core import PktflowError


def read_small_text(path: Path, limit: int, what: str) -> str:
    """The UTF-8 text of ``path``, at most ``limit`` bytes; errors name the file and say why.
    FileNotFoundError and IsADirectoryError propagate for the caller's own wording."""
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise PktflowError(f"{path}: larger than {limit // (1 << 20)} MiB, not {what}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PktflowError(f"{path}: cannot read: not UTF-8 text ({e.reason} at byte {e.start}), not {what}") from None
