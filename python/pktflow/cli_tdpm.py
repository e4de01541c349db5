"""``pktflow map`` (throughput-driven partitioning and mapping, crates/tdpm).

Wired into the main CLI by ``pktflow.cli`` through ``register(app)``. See docs/tdpm.md. Options
left unset are not sent: the defaults live in Rust, and the JSON result records the settings it
resolved under ``"settings"``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer
from rich.markup import escape
from rich.table import Table

from pktflow import _ui, tdpm
from pktflow._ui import console, emit_json
from pktflow.cli_np import interruptible
from pktflow.tdpm import TdpmMapper


@interruptible
def map_cmd(
    app_name: str = typer.Argument(
        ...,
        metavar="APP",
        help="Built-in app (l3switch, mpls, firewall, ...), Click file, or PPF graph (.toml/.json).",
    ),
    arch: Optional[str] = typer.Option(None, "--arch", help="Network-processor preset or TOML file. Default: ixp2400."),
    arch_set: Optional[List[str]] = typer.Option(
        None,
        "--set",
        metavar="KEY=VALUE",
        help="Override one architecture parameter, value in TOML syntax (e.g. np.pe_count=6); repeatable.",
    ),
    mapper: Optional[TdpmMapper] = typer.Option(
        None,
        "--mapper",
        help="tdpm-refine (the greedy grouping then a local search; default), tdpm (the grouping and "
        "duplication heuristic as published), tdpm-s (without telling critical tasks apart), comm "
        "(fewest channels cut), res (balance resources), base (one task per PPF) or optimal "
        "(exhaustive, up to 14 PPFs).",
    ),
    engines: Optional[int] = typer.Option(
        None,
        "--engines",
        help="MicroEngines for the application (1 to 4096). Default: all the architecture leaves to it.",
    ),
    packets: Optional[int] = typer.Option(
        None, "--packets", help="Synthetic packets of the functional run (Click apps). Default: 2,000."
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of the synthetic packets. Default: 1."),
    offered: Optional[float] = typer.Option(
        None, "--offered-gbps", help="Offered load, Gb/s (positive; caps the forwarding rate). Default: uncapped."
    ),
    packet_bytes: Optional[float] = typer.Option(
        None, "--packet-bytes", help="Packet size for the Gb/s figures, bytes. Default: the mean size of the run."
    ),
    as_json: bool = typer.Option(
        False, "--json", help="Print one JSON document (with the settings used) instead of a table."
    ),
    dot: Optional[Path] = typer.Option(
        None, "--dot", help="Write the partitioned graph as Graphviz DOT to this file ('-' for stdout)."
    ),
) -> None:
    """Group an application's packet-processing functions into tasks, duplicate them over MEs,
    and predict the throughput (the TDPM method)."""
    dot = _ui.output_path(dot, "--dot")
    res = tdpm.map_app(
        app_name,
        arch=arch,
        arch_set=arch_set,
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
        with _ui.atomic_write(dot) as f:
            f.write(text)
    if as_json:
        emit_json(res)
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
    if dot is not None:
        console.print(f"DOT: {escape(str(dot))}")


def register(app: typer.Typer) -> None:
    """Add the ``map`` command to the main ``pktflow`` app."""
    app.command("map")(map_cmd)
