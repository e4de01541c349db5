"""``pktflow map`` (throughput-driven partitioning and mapping, crates/tdpm).

Wired into the main CLI by ``pktflow.cli`` through ``register(app)``. See docs/tdpm.md.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pktflow import tdpm

console = Console()


def map_cmd(
    app_name: str = typer.Argument(
        ...,
        metavar="APP",
        help="Built-in app (l3switch, mpls, firewall, ...), Click file, or PPF graph (.toml/.json).",
    ),
    arch: str = typer.Option("ixp2400", "--arch", help="Network-processor preset."),
    mapper: Optional[str] = typer.Option(
        None,
        "--mapper",
        help="tdpm-refine (default: Figure 4 then the refinement), tdpm (the paper's Figure 4), "
        "tdpm-s, comm, res, base or optimal.",
    ),
    engines: Optional[int] = typer.Option(None, "--engines", help="MEs for the application (default: all it may use)."),
    packets: int = typer.Option(2000, "--packets", help="Synthetic packets of the functional run (Click apps)."),
    seed: int = typer.Option(1, "--seed"),
    offered: Optional[float] = typer.Option(
        None, "--offered-gbps", help="Offered load, Gb/s (caps the forwarding rate)."
    ),
    packet_bytes: Optional[float] = typer.Option(
        None, "--packet-bytes", help="Packet size for Gb/s (default: mean size of the run; the paper uses 64)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document on stdout."),
    dot: Optional[Path] = typer.Option(
        None, "--dot", help="Write the partitioned graph as Graphviz DOT ('-' for stdout)."
    ),
) -> None:
    """Group PPFs into tasks, duplicate them over MEs, and predict the throughput (seed 001)."""
    if mapper is not None and mapper not in tdpm.MAPPERS:
        raise typer.BadParameter(f"--mapper must be one of {', '.join(tdpm.MAPPERS)}, got {mapper!r}")
    res = tdpm.map_app(
        app_name,
        arch=arch,
        mapper=mapper,
        engines=engines,
        packets=packets,
        seed=seed,
        offered_gbps=offered,
        packet_bytes=packet_bytes,
        dot=dot is not None,
    )
    if dot is not None:
        text = res.pop("dot")
        if str(dot) == "-":
            sys.stdout.write(text)
            return
        dot.write_text(text)
    if as_json:
        sys.stdout.write(json.dumps(res, indent=2))
        sys.stdout.write("\n")
        return
    t = Table(title=f"{res['app']}: {res['mapper']} on {res['engines']} ME(s) ({res['arch']})")
    for col in ("task", "PPFs", "on", "d", "MEs", "util cyc/pkt", "code"):
        t.add_column(col, justify="right" if col not in ("PPFs", "on") else "left")
    for k in res["tasks"]:
        mark = " *" if k["binding"] else ""
        t.add_row(
            f"{k['task']}{mark}",
            escape(", ".join(k["ppfs"])),
            k["processor"],
            str(k["duplication"]),
            str(k["engines"]),
            f"{k['utilization']:.0f}",
            str(k["code_size"]),
        )
    console.print(t)
    console.print(
        f"predicted {res['packets_per_second'] / 1e6:.3f} Mpps = {res['gbps']:.3f} Gb/s "
        f"({res['packet_bytes']:.0f}-byte packets); copies {res['copies']}, MEs used {res['engines_used']}"
    )
    if res.get("offered_gbps") is not None:
        console.print(f"forwarding {res['forwarding_gbps']:.3f} of {res['offered_gbps']:.3f} Gb/s offered")
    console.print(f"binding: {escape(res['binding'])}")


def register(app: typer.Typer) -> None:
    """Add the ``map`` command to the main ``pktflow`` app."""
    app.command("map")(map_cmd)
