"""``pktflow graph``, ``profile``, ``elements`` and ``gen-trace``: the application stages (front
end, functional run, profile, traces). Wired into the main CLI by ``pktflow.cli``.

Conventions: every output file (``--dot``, ``--csv``, ``--plot``, ``--out-dir``, the trace of
``gen-trace``) is checked before the run and written atomically; options the user did not set
are not sent to the Rust core (it owns the defaults); packet counts accept ``10000``,
``10_000`` or ``1e4`` and are refused cleanly when not a whole number."""

from __future__ import annotations

import math
import sys
from enum import Enum
from pathlib import Path
from typing import Optional

import typer
from rich.table import Table

import pktflow
from pktflow import PktflowError
from pktflow._ui import Interrupted, atomic_path, atomic_write, console, emit_json, err, output_dir, output_path, progress

APP_HELP = "Built-in application (router, nat, router64, l3switch, mpls, firewall) or a Click configuration file."


class InputPortRule(str, Enum):
    """Rules that assign trace packets to input interfaces (an interface number is also accepted)."""

    auto = "auto"
    round_robin = "round-robin"
    by_dst_mac = "by-dst-mac"
    by_subnet = "by-subnet"


INPUT_PORT_HELP = (
    "Which input interface each trace packet enters: auto (pcapng: the interface it was captured on; "
    "classic pcap, which records none: by destination MAC), round-robin, by-dst-mac (the interface "
    "whose MAC is the frame's destination, else by-subnet), by-subnet (the interface whose subnet "
    "holds the source address), or an interface number."
)


def register(app: typer.Typer) -> None:
    for f in (graph, profile, elements):
        app.command()(f)
    app.command("gen-trace")(gen_trace)


def parse_count(text: Optional[str], option: str) -> Optional[int]:
    """A packet count as typed: ``10000``, ``10_000``, ``10,000`` or ``1e4``. Range checks are the
    Rust core's (0 and over-limit counts are refused there with the limit in the message)."""
    if text is None:
        return None
    t = text.strip().replace("_", "").replace(",", "")
    try:
        return int(t)
    except ValueError:
        pass
    try:
        v = float(t)
    except ValueError:
        raise PktflowError(f"{option} {text!r}: expected a whole number of packets, e.g. 10000 or 1e6") from None
    if not math.isfinite(v) or v != int(v):
        raise PktflowError(f"{option} {text!r}: expected a whole number of packets, e.g. 10000 or 1e6")
    return int(v)


def parse_input_port(text: Optional[str]) -> Optional[str]:
    if text is None:
        return None
    t = text.strip()
    if t in {r.value for r in InputPortRule} or t.isdigit():
        return t
    choices = ", ".join(r.value for r in InputPortRule)
    raise PktflowError(f"--input-port {text!r}: expected {choices} or an interface number")


def graph(
    app_name: str = typer.Argument("router", metavar="APP", help=APP_HELP),
    dot: Optional[Path] = typer.Option(None, "--dot", help="Write Graphviz DOT to this file ('-' for stdout)."),
    as_json: bool = typer.Option(False, "--json", help="Print the whole graph as JSON."),
) -> None:
    """Parse, flatten and validate an application; print a summary."""
    dot = output_path(dot, "--dot")
    g = pktflow.graph(app_name)
    for w in g.get("warnings", []):
        err.print(w, markup=False, highlight=False)
    if dot is not None:
        text = pktflow.graph_dot(app_name)
        if str(dot) == "-":
            sys.stdout.write(text)
            return
        with atomic_write(dot) as f:
            f.write(text)
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
    synthetic: Optional[str] = typer.Option(
        None,
        "--synthetic",
        metavar="N",
        help="Generate N packets shaped for APP instead of reading a trace (default when neither is given: "
        "the configuration's own FromDump/InfiniteSource, else 10,000).",
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of the synthetic trace (default 1)."),
    input_port: Optional[str] = typer.Option(None, "--input-port", metavar="RULE|N", help=INPUT_PORT_HELP),
    destinations: Optional[str] = typer.Option(
        None,
        "--destinations",
        metavar="KIND",
        help="How synthetic packets' destinations are drawn from the routes, as in pktflow simulate: zipf, uniform, "
        "address-space, per-port or transit (only routes through a gateway). Default: zipf.",
    ),
    out_dir: Optional[Path] = typer.Option(
        None,
        "--out-dir",
        help="Folder for the files ToDump elements write (default: the current folder) and, when given, one pcap "
        "per ToDevice device (DEVICE.pcap, as pktflow run writes them).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the profile as one JSON document."),
    csv: Optional[Path] = typer.Option(None, "--csv", help="Write the per-element table as CSV (pandas reads it)."),
    plot: Optional[Path] = typer.Option(
        None, "--plot", help="Write a PNG of instructions and bytes per packet by element."
    ),
) -> None:
    """Run APP functionally on packets (one thread) and print its profile: tasks, instructions
    and bytes per packet by memory type, critical sections, drops."""
    if trace is not None and synthetic is not None:
        raise PktflowError("give either --trace or --synthetic, not both")
    if trace is not None and seed is not None:
        raise PktflowError("--seed applies to synthetic traces; a --trace file is read as it is")
    n = parse_count(synthetic, "--synthetic")
    rule = parse_input_port(input_port)
    if rule is not None and trace is None:
        raise PktflowError("--input-port applies to a --trace file only")
    if destinations is not None and trace is not None:
        raise PktflowError("--destinations applies to synthetic traffic, not to a --trace file")
    csv = output_path(csv, "--csv")
    plot = output_path(plot, "--plot")
    out_dir = output_dir(out_dir, "--out-dir")
    try:
        with progress("profile", "packets", n) as bar:
            prof = pktflow.profile(
                app_name,
                trace=trace,
                synthetic=n,
                seed=seed,
                out_dir=out_dir,
                input_port=rule,
                destinations=destinations,
                progress=lambda done: bar.update(done),
            )
    except KeyboardInterrupt:
        # Nothing is half-done: no profile is printed and ToDump outputs were removed.
        raise Interrupted() from None
    if csv is not None:
        from pktflow.report import profile_elements_frame

        with atomic_write(csv, newline="") as f:
            profile_elements_frame(prof).to_csv(f, index=False)
    if plot is not None:
        from pktflow.report import plot_profile

        with atomic_path(plot) as tmp:
            plot_profile(prof, tmp, format="png")
    _warn_input_port(prof)
    if as_json:
        emit_json(prof)
        return
    _print_profile(prof)
    for f in prof.get("files_written", []):
        console.print(f"wrote {f}")
    for f in (csv, plot):
        if f is not None:
            console.print(f"wrote {f}")


def _warn_input_port(p: dict) -> None:
    """On stderr: which rule assigned trace packets to input interfaces when the trace could not
    tell (a classic pcap records no interface)."""
    warning = (p.get("input_port") or {}).get("warning")
    if warning:
        err.print(f"note: {warning} (choose with --input-port)", markup=False, highlight=False)


def _fmt(v: Optional[float], spec: str) -> str:
    return "n/a" if v is None else format(v, spec)


def _print_profile(p: dict) -> None:
    c = p.get("packet_counts", {})
    extra = []
    if c.get("neighbor_arp_replies"):
        extra.append(f"{c['neighbor_arp_replies']:,} ARP replies from simulated neighbours")
    if c.get("far_end_ip_replies"):
        extra.append(f"{c['far_end_ip_replies']:,} replies from far ends")
    made = f" = {c.get('from_source', 0):,} from the source + " + " + ".join(extra) if extra else ""
    rate = p.get("packets_per_second_functional")
    console.print(
        f"[bold]{p['app']}[/bold] on {p['source']}: {p['packets']:,} packets{made} "
        f"({_fmt(p['wire_bytes_per_packet'], '.0f')} B on average on the wire), "
        f"{_fmt(rate, ',.0f')} packets/s functional run"
    )
    if c.get("arp_requests_sent"):
        console.print(f"the application sent {c['arp_requests_sent']:,} ARP requests")
    ip = p.get("input_port") or {}
    if ip.get("rule") not in (None, "synthetic", "configuration"):
        per = ", ".join(f"{i}: {k:,}" for i, k in enumerate(ip.get("per_interface", [])))
        console.print(f"input interfaces (rule {ip['rule']}: {ip.get('reason', '')}): {per}", markup=False)
    for note in p.get("notes", []):
        console.print(f"note: {note}", markup=False, highlight=False)
    _print_script_output(p)
    if p["packets"] == 0:
        return
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
    m = Table(title="bytes per packet by memory type")
    for col in ("memory type", "read", "write", "total"):
        m.add_column(col, justify="right" if col != "memory type" else "left")
    for name, rw in p["bytes_per_packet"].items():
        m.add_row(name, f"{rw['read']:.1f}", f"{rw['write']:.1f}", f"{rw['total']:.1f}")
    console.print(m)
    e = Table(title="elements")
    for col in ("element", "class", "visits/pkt", "instr/visit", "crit. instr"):
        e.add_column(col, justify="left" if col in ("element", "class") else "right")
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


def _print_script_output(p: dict) -> None:
    """What the configuration's Script/DriverManager elements printed (their `print` and `read`
    instructions), one line each, prefixed by the element's name."""
    for name, st in (p.get("element_stats") or {}).items():
        if isinstance(st, dict) and isinstance(st.get("output"), list):
            for line in st["output"]:
                console.print(f"{name}: {line}", markup=False, highlight=False)


def elements(as_json: bool = typer.Option(False, "--json", help="Print the list as JSON.")) -> None:
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
    path: Path = typer.Argument(..., help="Output file (.pcap, or .pcapng for pcapng)."),
    n: Optional[str] = typer.Option(
        None, "-n", "--packets", metavar="N", help="Number of packets, e.g. 10000 or 1e6 (default 10,000)."
    ),
    seed: Optional[int] = typer.Option(None, "--seed", help="Seed of the trace (default 1; same seed, same bytes)."),
    app_name: Optional[str] = typer.Option(
        None, "--app", help="Shape the traffic for this application's interfaces and routes (default router)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Write a seeded synthetic trace (same seed, same bytes). The size is estimated first and
    refused if the file system has not enough free space; the file appears only when complete."""
    count = parse_count(n, "-n/--packets")
    output_path(path, "gen-trace FILE")
    try:
        with progress("gen-trace", "packets", count) as bar:
            s = pktflow.write_synthetic(
                path,
                count,
                seed=seed,
                app=app_name,
                pcapng=path.suffix == ".pcapng",
                progress=lambda done, total: bar.update(done, total),
            )
    except KeyboardInterrupt:
        # The partial file has been removed by the Rust writer.
        raise Interrupted() from None
    if as_json:
        emit_json(s)
    else:
        console.print(f"wrote {s['packets']:,} packets ({s['bytes']:,} bytes) to {path}")
