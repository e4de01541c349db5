"""Building the JSON requests the Python API sends to the Rust core: one way to turn a choice
(an Enum member or its value) into its string, and one way to send a float Rust must validate."""

from __future__ import annotations

import enum
import math
from typing import Any, Optional

from pktflow._core import PktflowError


class Interrupted(KeyboardInterrupt):
    """Ctrl-C stopped a long call of the API (a sweep, an exploration, a search). It is a
    KeyboardInterrupt, so a script stops as it would anywhere else; ``result`` holds what the call
    had finished (the same dict a complete call returns, with ``"interrupted": True``), for a
    caller that wants to keep it."""

    def __init__(self, result: dict[str, Any]):
        super().__init__("interrupted")
        self.result = result


def finished(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` when the call ran to its end; :class:`Interrupted` carrying it when Ctrl-C cut it
    short (the Rust core stops promptly and returns what it finished, marked interrupted)."""
    if doc.get("interrupted"):
        raise Interrupted(doc)
    return doc


def choice(value: Any, enum_cls: type[enum.Enum], option: str) -> Optional[str]:
    """The choice as its string; None stays None; anything else names the option and the
    allowed values."""
    if value is None:
        return None
    v = value.value if isinstance(value, enum.Enum) else str(value)
    allowed = [e.value for e in enum_cls]
    if v not in allowed:
        raise PktflowError(f"{option} must be one of {', '.join(allowed)}, got {v!r}")
    return v


def finite_or_name(x: float) -> Any:
    """A float for the request; NaN and infinities as the strings Rust's validation reads (JSON
    has no literal for them), so the error Rust returns names the option."""
    if math.isfinite(x):
        return x
    return "NaN" if math.isnan(x) else ("Infinity" if x > 0 else "-Infinity")
