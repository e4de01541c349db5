"""The ``pktflow`` script's entry point.

Importing the command line (typer, rich and every command module) takes a noticeable fraction
of a second; a Ctrl-C pressed during it must end like any other interruption (``interrupted``,
exit 130), not with a traceback of the import machinery. So the script starts here, where
nothing heavy is imported yet, and imports the command line inside the guard.
"""

from __future__ import annotations

import sys
from typing import Optional


def main(argv: Optional[list[str]] = None) -> None:
    try:
        from pktflow.cli import main as cli_main
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        sys.exit(130)
    cli_main(argv)
