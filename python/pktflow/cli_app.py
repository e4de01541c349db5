"""``pktflow graph``, ``profile``, ``elements`` and ``gen-trace``: the application stages (front
end, functional run, profile, traces). Wired into the main CLI by ``pktflow.cli``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import typer
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

import pktflow
from pktflow import PktflowError
from pktflow._ui import console, emit_json, err

APP_HELP = "Built-in application (router, nat, router64, l3switch, mpls, firewall) or a Click configuration file."


def register(app: typer.Typer) -> None:
    for f in (graph, profile, elements):
        app.command()(f)
    app.command("gen-trace")(gen_trace)


def graph(
    app_name: str = typer.Argument("router", metavar="APP", help=APP_HELP),
    dot: Optional[Path] = typer.Option(None, "--dot", help="Write Graphviz DOT to this file ('-' for stdout)."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole graph as JSON."),
) -> None:
    """Parse, flatten and validate an application; print a summary."""
    g = pktflow.graph(app_name)
    for w in g.get("warnings", []):
        sys.stderr.write(w + "\n")
    if dot is not None:
        text = pktflow.graph_dot(app_name)
        if str(dot) == "-":
            sys.stdout.write(text)
            return
        dot.write_text(text)
    if as_json:
        emit_json(g)
        return
    classes: dict[str, int] = {}
    for e in g["elements"]:
        classes[e["class"]] = classes.get(e["class"], 0) + 1
    console.print(f"[bold]{g['file']}[/bold]: {len(g['elements'])} elements, {len(g['connections'])} connections")
    t = Table("class", "elements")
    for c, n in sorted(classes.items(), key=lambda kv: (-kv[1], kv[0])):
        t.add_row(c, str(n))
    console.print(t)
    if dot is not None:
        console.print(f"DOT written to {dot}")


def profile(
    app_name: str = typer.Argument("router", metavar="APP", help=APP_HELP),
    trace: Optional[Path] = typer.Option(None, "--trace", help="pcap or pcapng file to run."),
    synthetic: Optional[int] = typer.Option(
        None, "--synthetic", help="Generate this many packets instead of reading a trace."
    ),
    seed: int = typer.Option(1, "--seed", help="Seed of the synthetic trace."),
    out_dir: Path = typer.Option(Path("."), "--out-dir", help="Folder for ToDump outputs."),
    as_json: bool = typer.Option(False, "--json", help="Print the profile as one JSON document."),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Write the per-element table as CSV (pandas reads it)."),
    plot: Optional[Path] = typer.Option(
        None, "--plot", help="Write a PNG of instructions and bytes per packet by element."
    ),
) -> None:
    """Run APP functionally on packets (one thread) and print its profile: tasks, instructions
    and bytes per packet by memory type (seed 000 Table 2), critical sections, drops."""
    if trace is not None and synthetic is not None:
        raise PktflowError("give either --trace or --synthetic, not both")
    if trace is None and synthetic is None:
        synthetic = 10_000
    show_bar = not as_json and sys.stderr.isatty()
    if show_bar and synthetic:
        with Progress(
            TextColumn("[bold]profile"),
            BarColumn(),
            TextColumn("{task.completed:,}/{task.total:,} packets"),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            console=err,
            transient=True,
        ) as bar:
            task = bar.add_task("run", total=synthetic, rate="")

            def tick(done: int) -> None:
                speed = bar.tasks[0].speed or 0
                bar.update(task, completed=done, rate=f"{speed:,.0f} pkt/s")

            prof = pktflow.profile(
                app_name, trace=trace, synthetic=synthetic, seed=seed, out_dir=out_dir, progress=tick
            )
    else:
        prof = pktflow.profile(app_name, trace=trace, synthetic=synthetic, seed=seed, out_dir=out_dir)
    if csv is not None:
        from pktflow.report import profile_elements_frame

        profile_elements_frame(prof).to_csv(csv, index=False)
    if plot is not None:
        from pktflow.report import plot_profile

        plot_profile(prof, plot)
    if as_json:
        emit_json(prof)
        return
    _print_profile(prof)
    for f in (csv, plot):
        if f is not None:
            console.print(f"wrote {f}")


def _print_profile(p: dict) -> None:
    console.print(
        f"[bold]{p['app']}[/bold] on {p['source']}: {p['packets']:,} packets "
        f"({p['wire_bytes_per_packet']:.0f} B on average), "
        f"{p['packets_per_second_functional']:,.0f} packets/s functional run"
    )
    s = Table(title="per packet", show_header=True)
    s.add_column("metric")
    s.add_column("mean", justify="right")
    s.add_column("std", justify="right")
    s.add_row(
        "elements visited",
        f"{p['elements_visited_per_packet']['mean']:.2f}",
        f"{p['elements_visited_per_packet']['std']:.2f}",
    )
    s.add_row(
        "instructions", f"{p['instructions_per_packet']['mean']:.1f}", f"{p['instructions_per_packet']['std']:.1f}"
    )
    s.add_row("instructions in critical sections", f"{100 * p['critical_section_instruction_share']:.1f}%", "")
    console.print(s)
    m = Table(title="bytes per packet by memory type (seed 000 Table 2)")
    for c in ("memory type", "read", "write", "total"):
        m.add_column(c, justify="right" if c != "memory type" else "left")
    for name, rw in p["bytes_per_packet"].items():
        m.add_row(name, f"{rw['read']:.1f}", f"{rw['write']:.1f}", f"{rw['total']:.1f}")
    console.print(m)
    e = Table(title="elements")
    for c in ("element", "class", "visits/pkt", "instr/visit", "crit. instr"):
        e.add_column(c, justify="left" if c in ("element", "class") else "right")
    for el in p["elements"]:
        e.add_row(
            el["name"],
            el["class"],
            f"{el['visits_per_packet']:.3f}",
            f"{el['instructions_per_visit']:.1f}",
            f"{el['critical_section_instructions']:,}",
        )
    console.print(e)
    if p["outputs"]:
        o = Table("output", "packets", title="delivered")
        for x in p["outputs"]:
            o.add_row(x["element"], f"{x['count']:,}")
        console.print(o)
    if p["drops"]:
        d = Table("element", "reason", "packets", title="drops")
        for x in p["drops"]:
            d.add_row(x["element"], x["reason"], f"{x['count']:,}")
        console.print(d)
    if p.get("held"):
        console.print("still held at the end: " + ", ".join(f"{h['element']} {h['count']}" for h in p["held"]))


def elements(as_json: bool = typer.Option(False, "--json")) -> None:
    """List the element classes pktflow implements."""
    cl = pktflow.element_classes()
    if as_json:
        emit_json(cl)
        return
    t = Table("class", "what it does")
    for c in cl:
        t.add_row(c["name"], c["summary"])
    console.print(t)


def gen_trace(
    path: Path = typer.Argument(..., help="Output file (.pcap or .pcapng)."),
    n: int = typer.Option(10_000, "-n", "--packets", help="Number of packets."),
    seed: int = typer.Option(1, "--seed"),
    app_name: str = typer.Option(
        "router", "--app", help="Shape the traffic for this application's interfaces and routes."
    ),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Write a seeded synthetic trace (same seed, same bytes)."""
    s = pktflow.write_synthetic(path, n, seed=seed, app=app_name, pcapng=path.suffix == ".pcapng")
    if as_json:
        emit_json(s)
    else:
        console.print(f"wrote {s['packets']:,} packets ({s['bytes']:,} bytes) to {path}")


