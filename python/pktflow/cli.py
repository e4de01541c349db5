"""The ``pktflow`` command line. Every command that reports numbers has ``--json`` (one JSON
document on stdout). User mistakes (bad files, bad names) print a clear message and exit 2,
never a traceback."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

import pktflow
from pktflow import PktflowError

app = typer.Typer(
    name="pktflow",
    help="Parallelize packet/stream-processing task graphs for multiprocessors and report "
    "what throughput each choice reaches.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
arch_app = typer.Typer(help="Architecture presets (TOML, every parameter with its unit).", no_args_is_help=True)
app.add_typer(arch_app, name="arch")

console = Console()
err = Console(stderr=True)

APP_HELP = "Built-in application (router, nat, router64) or a Click configuration file."


def _emit_json(doc) -> None:
    sys.stdout.write(json.dumps(doc, indent=2))
    sys.stdout.write("\n")


@app.command()
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
        _emit_json(g)
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


@app.command()
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
        _emit_json(prof)
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


@app.command()
def elements(as_json: bool = typer.Option(False, "--json")) -> None:
    """List the element classes pktflow implements."""
    cl = pktflow.element_classes()
    if as_json:
        _emit_json(cl)
        return
    t = Table("class", "what it does")
    for c in cl:
        t.add_row(c["name"], c["summary"])
    console.print(t)


@app.command("gen-trace")
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
        _emit_json(s)
    else:
        console.print(f"wrote {s['packets']:,} packets ({s['bytes']:,} bytes) to {path}")


@arch_app.command("list")
def arch_list(as_json: bool = typer.Option(False, "--json")) -> None:
    """List the built-in presets."""
    rows = [pktflow.arch(n)["preset"] | {"name": n} for n in pktflow.arch_names()]
    if as_json:
        _emit_json(rows)
        return
    t = Table("preset", "description")
    for r in rows:
        t.add_row(r["name"], r["description"])
    console.print(t)


@arch_app.command("show")
def arch_show(
    name: str = typer.Argument(..., help="Preset name or TOML file."),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Print an architecture with every parameter and its unit."""
    a = pktflow.arch(name)
    if as_json:
        _emit_json(a)
        return
    console.print(f"[bold]{a['preset']['name']}[/bold] ({a['kind']}): {a['preset']['description']}")
    if a["preset"].get("source"):
        console.print(f"source: {a['preset']['source']}")
    t = Table("parameter", "value")

    def walk(prefix: str, v) -> None:
        if isinstance(v, dict):
            for k, x in v.items():
                walk(f"{prefix}.{k}" if prefix else k, x)
        else:
            t.add_row(prefix, str(v))

    walk("", a["params"])
    console.print(t)


def _register_optional() -> None:
    from pktflow import cli_np  # pktflow simulate / maxrate (crates/npsim)

    cli_np.register(app)
    from pktflow import cli_tdpm  # pktflow map (crates/tdpm)

    cli_tdpm.register(app)
    try:
        from pktflow import cli_noc
    except ImportError:  # the NoC commands are optional while being built
        return
    cli_noc.register(app)


_register_optional()


def main() -> None:
    try:
        app(standalone_mode=False)
    except PktflowError as e:
        msg = str(e)
        # Diagnostics already read "file:line:col: error: ..."; print them as they are, unwrapped.
        if ": error: " not in msg and ": warning: " not in msg:
            msg = f"error: {msg}"
        sys.stderr.write(msg.rstrip("\n") + "\n")
        sys.exit(2)
    except (typer.Abort, KeyboardInterrupt):
        sys.exit(130)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except Exception as e:  # usage errors (click's, or the copy of click newer typers vendor)
        if isinstance(e, _click_exceptions()):
            e.show()
            sys.exit(e.exit_code)
        raise


def _click_exceptions() -> tuple:
    """ClickException classes: click's, and typer's vendored copy (typer >= 0.2x raises
    ``typer._click.exceptions.BadParameter``, which is not a ``click.ClickException``)."""
    import click

    types = [click.ClickException]
    try:
        from typer._click.exceptions import ClickException as TyperClickException

        types.append(TyperClickException)
    except ImportError:
        pass
    return tuple(types)


if __name__ == "__main__":
    main()
